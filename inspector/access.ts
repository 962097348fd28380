/**
 * Who may talk to the viewer. It binds loopback by default; any other address needs a token, and
 * then every request must carry it: `Authorization: Bearer T`, or `?token=T` in the URL (the URL
 * `weft inspect` prints), after which a cookie carries it for the page's own requests. Without it:
 * 401. Tokens are compared in constant time.
 *
 * A loopback viewer also refuses a request whose Host header names anything but loopback: a web page
 * elsewhere that rebinds its own name to 127.0.0.1 (DNS rebinding) would otherwise read the store
 * through the person's browser.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

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
