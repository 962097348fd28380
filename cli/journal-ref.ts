/**
 * A journal kept in Redis, named by one string a script can hand to `weft verify` or `weft log`
 * as it would a journal file's path: `redis://HOST:PORT/DB#ID`, with `?prefix=P` before the `#`
 * when the store's key prefix is not the default `weft`. `weft run --json` (and resume, approve,
 * fork) prints it as `journal` in the Redis mode, where there is no file to name.
 *
 * The reference never holds credentials (the server's name only: redisServerName); reading it back,
 * a password comes from WEFT_REDIS_URL when that names the same server. Pure but for that variable.
 */
import { redisServerName } from '../redis/index.js';

const DEFAULT_PREFIX = 'weft';

/** The reference of invocation `id`'s journal in the Redis store at `url` under `prefix`. */
export function redisJournalRef(url: string, prefix: string, id: string): string {
  return `${redisServerName(url)}${prefix === DEFAULT_PREFIX ? '' : `?prefix=${encodeURIComponent(prefix)}`}#${id}`;
}

/** A reference read back: the URL to connect to, the prefix and the id; undefined when `text` is not one. */
export function parseRedisJournalRef(text: string, variable: string | undefined = process.env.WEFT_REDIS_URL): { url: string; prefix: string; id: string } | undefined {
  const match = /^(rediss?:\/\/[^?#]+)(?:\?prefix=([^#]*))?#(.+)$/.exec(text);
  if (!match) return undefined;
  const server = match[1]!;
  const url = variable && redisServerName(variable) === redisServerName(server) ? variable : server;
  return { url, prefix: match[2] === undefined ? DEFAULT_PREFIX : decodeURIComponent(match[2]), id: match[3]! };
}
