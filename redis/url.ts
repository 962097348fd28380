/**
 * What of a Redis URL may be shown to a user. An error names the server by `redisServerName`
 * (host, port and database, never a user or a password); a printed hint quotes a URL only when
 * `holdsCredentials` says it holds none (queue/shell-words.ts, cli/hints.ts).
 */

/** `redis://host:port/db` for a Redis URL, credentials left out: how an error names the server. */
export function redisServerName(url: string): string {
  try {
    const u = new URL(url);
    if (u.protocol === 'redis:' || u.protocol === 'rediss:') {
      const db = Number(u.pathname.replace(/^\//, '') || u.searchParams.get('db') || 0);
      return `${u.protocol}//${u.hostname || 'localhost'}:${u.port || 6379}/${Number.isSafeInteger(db) ? db : 0}`;
    }
  } catch {
    /* not a URL: a socket path */
  }
  return url.startsWith('/') ? `redis+unix://${url}` : `redis:${url}`;
}

/**
 * Whether a Redis URL holds credentials — a user or a password, or `password=` / `username=` in its
 * query (ioredis reads them there too) — and so must never be printed. A URL that does not parse is
 * treated as holding some: nothing is printed that cannot be checked.
 */
export function holdsCredentials(url: string): boolean {
  try {
    const u = new URL(url);
    return u.username !== '' || u.password !== '' || u.searchParams.has('password') || u.searchParams.has('username');
  } catch {
    return !url.startsWith('/'); // a socket path holds none
  }
}
