/**
 * How a Redis refusal is told from an outage and from damage. The server answered, and said no:
 *
 * - `NOPERM` — an ACL user whose rules do not cover a key or command: on the keys of an invocation
 *   (a tenant's user pointed at another tenant's prefix) it is StoreAccessRefusedError
 *   (`store.access_refused`); at connect (PING, CONFIG GET, INFO) it is StoreAuthRefusedError
 *   (`store.auth_refused`), naming the permission to grant;
 * - `WRONGPASS` / `NOAUTH` — a wrong password or user, or none where one is required:
 *   StoreAuthRefusedError, whatever the command.
 *
 * None of these is "unreachable" (the server is up) nor "damaged" (nothing was read), and waiting
 * changes nothing: a person fixes the URL's credentials or the user's ACL. The errors live in the
 * one registry, journal/errors.ts.
 */
import { StoreAccessRefusedError, StoreAuthRefusedError } from '../journal/errors.js';

export { StoreAccessRefusedError, StoreAuthRefusedError };

/** Redis refused a command to this user's ACL (`NOPERM …`). */
export function isAccessRefused(err: unknown): err is Error {
  return err instanceof Error && /^NOPERM\b/.test(err.message);
}

/** Redis refused this client's credentials (`WRONGPASS …`, `NOAUTH …`). */
export function isCredentialsRefused(err: unknown): err is Error {
  return err instanceof Error && /^(WRONGPASS|NOAUTH)\b/.test(err.message);
}

/** Whether `err` is Redis refusing this client at connect: credentials (WRONGPASS, NOAUTH) or a permission (NOPERM). */
export function isConnectRefusal(err: unknown): err is Error {
  return isCredentialsRefused(err) || isAccessRefused(err);
}

/**
 * The refusal of a client at connect, in Weft's words: what Redis said and what to do. `store` names
 * the server (no credentials). For a NOPERM, the command refused is read from Redis's words
 * (`… to run the 'config|get' command`), else `command` is named.
 */
export function connectRefusal(store: string, err: Error, command = 'ping'): StoreAuthRefusedError {
  const said = err.message.split('\n')[0]!;
  if (isAccessRefused(err)) {
    const refused = (/run the '([^']+)' command/.exec(said)?.[1] ?? command).toLowerCase();
    const fix = refused === 'config|get'
      ? 'grant it (ACL SETUSER <user> +config|get: Weft reads appendonly, appendfsync and maxmemory-policy at start), pass --redis-durability relaxed, or use another user in the URL'
      : `grant it (ACL SETUSER <user> +${refused}; Weft needs +ping +info +config|get at connect) or use another user in the URL`;
    return new StoreAuthRefusedError(store, said, `this Redis ACL user may not run ${refused.toUpperCase().replace('|', ' ')}, which Weft needs at connect: ${fix}`);
  }
  if (/^NOAUTH\b/.test(said)) return new StoreAuthRefusedError(store, said, 'this server requires a password: put it in the URL (redis://:PASSWORD@host:port, or redis://USER:PASSWORD@… for an ACL user), in --redis or WEFT_REDIS_URL');
  return new StoreAuthRefusedError(store, said, 'check the password (and the user, for an ACL user) in the URL given to --redis or WEFT_REDIS_URL: redis://USER:PASSWORD@host:port');
}
