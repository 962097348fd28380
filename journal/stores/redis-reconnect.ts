/**
 * How long a Redis client keeps reconnecting once its server is gone. ioredis' default never gives
 * up: a command that loses its server waits for it forever (its retries backing off to 2 s), and so
 * does every command queued behind it — a `weft run` whose Redis died would hang, and a test's child
 * would outlive its test. A short-lived command gives up instead: `reconnectStrategy(ms)` retries
 * with a backoff capped at one second until the server has been unreachable for `ms`, then ends the
 * connection, so every pending and later command fails at once with ioredis' "Connection is closed".
 * Long-lived processes (`weft serve`, `weft worker`) keep reconnecting, their backoff bounded.
 *
 * ioredis restarts the count after a successful connection, so each outage gets the whole budget.
 */

/** What a command waits for an unreachable Redis before giving up, unless told otherwise (WEFT_REDIS_GIVE_UP_MS). */
export const DEFAULT_REDIS_GIVE_UP_MS = 10_000;

/** An ioredis `retryStrategy`: a delay in ms, or null to stop reconnecting. */
export type RetryStrategy = (times: number) => number | null;

/**
 * Reconnect after 100 ms, doubling to at most 1 s, until the server has been unreachable for
 * `giveUpAfterMs`; with no budget, reconnect for ever (the same bounded backoff).
 */
export function reconnectStrategy(giveUpAfterMs: number | undefined, now: () => number = Date.now): RetryStrategy {
  let downSince = 0;
  return (times) => {
    if (times <= 1) downSince = now();
    if (giveUpAfterMs !== undefined && now() - downSince >= giveUpAfterMs) return null;
    return Math.min(100 * 2 ** Math.max(0, times - 1), 1_000);
  };
}
