/**
 * What a tenant's token is never told: where the server keeps things. The store's name
 * (`file:/srv/weft/.weft`, a Redis URL and prefix), its folder and the CLI flags naming it
 * (`--dir /srv/weft`) — each also as it reads inside a JSON string — are written as "the store" in
 * every answer to a tenant-scoped request or socket: the HTTP routes (server.ts `send`), the
 * approver's answers and error texts (approve.ts `reply`), and the `/live` WebSocket's refusals and
 * list rows (live.ts) — a damaged row's `fix` names its folder, an unknown id's refusal the store.
 *
 * A journal's own lines are not rewritten (over HTTP nor the socket): they are the tenant's sealed
 * records, which the page verifies byte for byte.
 *
 * Pure but for `hideFrom`/`scrubbedFor`, which key the paths by the response they apply to.
 */
import type { ServerResponse } from 'node:http';

/** What a tenant is told instead of a server path. */
export const STORE_WORDS = 'the store';

/** Where the viewer reads from, as the server knows it. */
export interface ServerWhere {
  /** The store's name (JournalStore.name). */
  storeName: string;
  /** The CLI's location flags (`--dir D`, `--redis URL`), as `weft inspect` completes commands with. */
  location?: string | undefined;
}

/**
 * The strings that say where the server keeps things, longest first (so a folder inside a name is
 * replaced as part of the name). Short ones are left out: they would match ordinary words.
 */
export function serverPathsOf(where: ServerWhere): string[] {
  const names = [where.storeName, where.storeName.replace(/^file:/, ''), where.location ?? ''].filter((name) => name.length >= 4);
  const all = names.flatMap((name) => [name, JSON.stringify(name).slice(1, -1)]);
  return [...new Set(all)].sort((a, b) => b.length - a.length);
}

/** `text` with every one of `paths` written as "the store". */
export function scrubbed(text: string, paths: readonly string[]): string {
  let out = text;
  for (const path of paths) if (out.includes(path)) out = out.split(path).join(STORE_WORDS);
  return out;
}

/** The server paths to keep from each response to a tenant's request (set once its scope is decided). */
const hidden = new WeakMap<ServerResponse, readonly string[]>();

/** Keep `paths` out of whatever `res` answers (a tenant's request). */
export function hideFrom(res: ServerResponse, paths: readonly string[]): void {
  hidden.set(res, paths);
}

/** `text` as `res` may send it: scrubbed when `res` answers a tenant's request, else as it is. */
export function scrubbedFor(res: ServerResponse, text: string): string {
  const paths = hidden.get(res);
  return paths ? scrubbed(text, paths) : text;
}
