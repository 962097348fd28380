/**
 * Who may talk to the viewer. It binds loopback by default; any other address needs a token, and
 * then every request must carry it: `Authorization: Bearer T`, or `?token=T` in the URL (the URL
 * `weft inspect` prints), after which a cookie carries it for the page's own requests. Without it:
 * 401. Tokens are compared in constant time.
 *
 * A token is scoped: `--token T` sees everything, `--tenant-token tenant=T` one tenant's
 * invocations. Every request gets ONE access decision (`scopeOf`: a Scope, or undefined for 401),
 * computed here, and every route asks it the same question: `visible(scope, tenant)`, or for an
 * invocation id `visibleInvocation(store, scope, id)` (the tenant its journal's first record names).
 * Another tenant's invocation is answered as if it did not exist (404), so its id does not leak.
 *
 * A loopback viewer also refuses a request whose Host header names anything but loopback: a web page
 * elsewhere that rebinds its own name to 127.0.0.1 (DNS rebinding) would otherwise read the store
 * through the person's browser.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { JournalStore } from '../journal/store.js';

export const TOKEN_COOKIE = 'weft_inspect_token';

/** Whether `host` is a loopback address (what needs no token). */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/** The token a request carries, and whether it came in the URL (then the response sets the cookie). */
export function presentedToken(req: IncomingMessage, url: URL): { token: string | undefined; fromUrl: boolean } {
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && auth.startsWith('Bearer ')) return { token: auth.slice(7).trim(), fromUrl: false };
  const query = url.searchParams.get('token');
  if (query !== null) return { token: query, fromUrl: true };
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === TOKEN_COOKIE) return { token: decodeURIComponent(value.join('=')), fromUrl: false };
  }
  return { token: undefined, fromUrl: false };
}

/** Constant-time equality of two tokens (their digests are compared, so lengths leak nothing). */
export function sameToken(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** The Set-Cookie header that keeps the token for the page's later requests. */
export function tokenCookie(token: string): string {
  return `${TOKEN_COOKIE}=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=Strict`;
}

/** Whether a request's Host header (`name[:port]`) names a loopback address. */
export function loopbackHostHeader(host: string | undefined): boolean {
  if (host === undefined) return false;
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '');
  return isLoopback(name);
}

/** What one request may see: everything, or one tenant's invocations. */
export type Scope = { kind: 'all' } | { kind: 'tenant'; tenant: string };

export const ALL: Scope = Object.freeze({ kind: 'all' });

/** The viewer's tokens: none (loopback, everything visible), an all-seeing one, tenants' ones. */
export interface AccessTokens {
  /** Sees every invocation. */
  token?: string;
  /** Each sees only its tenant's invocations. */
  tenantTokens?: ReadonlyArray<{ tenant: string; token: string }>;
}

/** Whether the viewer has any token (then every request must carry one). */
export function needsToken(tokens: AccessTokens): boolean {
  return tokens.token !== undefined || (tokens.tenantTokens?.length ?? 0) > 0;
}

/**
 * The scope a presented token grants, or undefined (401). Without any token configured, everything
 * (a loopback viewer). Every configured token is compared, in constant time, whichever matches.
 */
export function scopeOf(tokens: AccessTokens, presented: string | undefined): Scope | undefined {
  if (!needsToken(tokens)) return ALL;
  let scope: Scope | undefined;
  if (tokens.token !== undefined && sameToken(presented, tokens.token)) scope = ALL;
  for (const t of tokens.tenantTokens ?? []) if (sameToken(presented, t.token) && scope === undefined) scope = { kind: 'tenant', tenant: t.tenant };
  return scope;
}

/** Whether an invocation of `tenant` (a listing row, a description: anything with a tenant) may be shown. */
export function visible(scope: Scope, of: { tenant?: string | null } | string | null | undefined): boolean {
  if (scope.kind === 'all') return true;
  const tenant = typeof of === 'object' && of !== null ? of.tenant : of;
  return tenant === scope.tenant;
}

/** Only the rows `scope` may see. */
export function visibleRows<T extends { tenant?: string | null }>(scope: Scope, rows: readonly T[]): T[] {
  return scope.kind === 'all' ? [...rows] : rows.filter((row) => visible(scope, row));
}

/**
 * Whether invocation `id` may be shown: always for an all-seeing scope; for a tenant's, when the
 * journal's first record (its pin) names that tenant — an unreadable or empty journal is not shown.
 */
export async function visibleInvocation(store: JournalStore, scope: Scope, id: string): Promise<boolean> {
  if (scope.kind === 'all') return true;
  try {
    const [first] = await store.read(id, 0, 1);
    const tenant = first?.kind === 'invocation.pinned' ? (first.body as { tenant?: unknown }).tenant : undefined;
    return typeof tenant === 'string' && visible(scope, tenant);
  } catch {
    return false;
  }
}

/** The invocation id a URL path is about (`/api/invocations/<id>…`, `/invocations/<id>`), undecoded; else undefined. */
export function invocationOfPath(path: string): string | undefined {
  return /^\/(?:api\/)?invocations\/([^/]+)(?:\/.*)?$/.exec(path)?.[1];
}

const scopes = new WeakMap<IncomingMessage, Scope>();

/** Remember the scope server.ts decided for `req` (once, before any route runs). */
export function rememberScope(req: IncomingMessage, scope: Scope): void {
  scopes.set(req, scope);
}

/** The scope decided for `req`: what a route that lists or searches filters by (visibleRows). Throws when none was decided (a route reached without the gate). */
export function requestScope(req: IncomingMessage): Scope {
  const scope = scopes.get(req);
  if (!scope) throw new Error('weft inspect: a route ran before the access decision (server.ts decides it first)');
  return scope;
}
