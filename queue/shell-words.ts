/**
 * Words of a command printed for a person to run (a hint, a notice, a refusal): each one as a POSIX
 * shell reads it back, so the command works as printed. Pure, and imported by both the CLI's hints
 * (cli/hints.ts) and the start-a-worker command the runtime and workers name (queue/bullmq.ts).
 *
 * A Redis URL that holds credentials — a user or password, or `password=` in its query (ioredis
 * reads it there too) — is never printed: the command names it as `"$WEFT_REDIS_URL"`, which works
 * as printed once that variable holds the URL (and already does when the URL came from it).
 */
import { holdsCredentials } from '../redis/index.js';

/** How a command names a Redis URL that holds a password. */
export const REDIS_URL_VARIABLE = '"$WEFT_REDIS_URL"';

/** A word as a POSIX shell reads it: as it is when it is plain, else single-quoted. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_/.:@%+=,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A Redis URL as a command names it: the URL as a shell word, or `"$WEFT_REDIS_URL"` when it holds credentials. */
export function redisUrlWord(url: string): string {
  return holdsCredentials(url) ? REDIS_URL_VARIABLE : shellWord(url);
}
