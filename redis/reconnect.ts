/**
 * How long a Redis client keeps reconnecting once its server is gone. ioredis' default never gives
 * up: a command that loses its server waits for it forever (its retries backing off to 2 s), and so
 * does every command queued behind it — a `weft run` whose Redis died would hang, and a test's child
 * would outlive its test. A short-lived command gives up instead: `reconnectStrategy(ms)` retries
 * with a backoff capped at one second until the server has been unreachable for `ms`, then ends the
 * connection, so every pending and later command fails at once (a store reports that as the server
 * being unreachable: `isConnectionLoss` below).
 * Long-lived processes (`weft serve`, `weft worker`) keep reconnecting, their backoff bounded.
 *
 * ioredis restarts the count after a successful connection, so each outage gets the whole budget.
 *
 * The first PING (`RedisStore.reachable`) waits the same budget, on a clock started once the client
 * library is loaded — under load, loading ioredis alone took longer than any sane budget — and
 * `answerWithin` lets a reply already waiting on the socket win over a timer that fired in the same
 * turn of a busy event loop.
 *
 * How a lost connection is told is here too: `isConnectionLoss` recognises ioredis' errors for it;
 * the error a user reads names the server by `redisServerName` (./url.ts), never its credentials.
 */

/** What a command waits for an unreachable Redis before giving up, unless told otherwise (WEFT_REDIS_GIVE_UP_MS). */
export const DEFAULT_REDIS_GIVE_UP_MS = 10_000;

/** An ioredis `retryStrategy`: a delay in ms, or null to stop reconnecting. */
export type RetryStrategy = (times: number) => number | null;

/**
 * Reconnect after 100 ms, doubling to at most 1 s, until the server has been unreachable for
 * `giveUpAfterMs`; with no budget, reconnect for ever (the same bounded backoff). The last wait is
 * cut to what is left of the budget, so the client gives up at the budget, not up to a second later.
 */
export function reconnectStrategy(giveUpAfterMs: number | undefined, now: () => number = Date.now): RetryStrategy {
  let downSince = 0;
  return (times) => {
    if (times <= 1) downSince = now();
    const backoff = Math.min(100 * 2 ** Math.max(0, times - 1), 1_000);
    if (giveUpAfterMs === undefined) return backoff;
    const left = giveUpAfterMs - (now() - downSince);
    return left <= 0 ? null : Math.min(backoff, left);
  };
}

/**
 * `answer`, or `late()` once `ms` have passed without it. When the timer fires, the rejection waits
 * one turn of the event loop (setImmediate: after its I/O phase), so a reply that reached the
 * socket while the process was busy — the timer and the reply both due in one turn, timers first —
 * is read and wins: only a server that really did not answer in time is called late.
 */
export function answerWithin<T>(answer: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let turn: NodeJS.Immediate | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => (turn = setImmediate(() => reject(late()))), ms);
  });
  return Promise.race([answer, deadline]).finally(() => {
    clearTimeout(timer);
    if (turn) clearImmediate(turn);
  });
}

/** The socket errors of a server out of reach, by code (Node's) or in a message (BullMQ passes ioredis' on). */
const UNREACHABLE_CODE = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EPIPE|EAI_AGAIN)$/;
const UNREACHABLE_TEXT = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|Connection is closed|connect E/i;

/**
 * True for the errors of a connection to Redis that is gone: ioredis failing a command because the
 * client ended (gave up reconnecting, or was closed) or, without a give-up budget, because the
 * command outlived its per-command retry limit; and a socket that could not reach the server (what
 * BullMQ's workers report). A store reports these as the server being unreachable, never as is; a
 * worker counts them as an outage (not, say, a lost job lock).
 */
export function isConnectionLoss(err: unknown): err is Error {
  if (!(err instanceof Error)) return false;
  if (err.message === 'Connection is closed.' || err.name === 'MaxRetriesPerRequestError') return true;
  const { code } = err as { code?: unknown };
  return (typeof code === 'string' && UNREACHABLE_CODE.test(code)) || UNREACHABLE_TEXT.test(err.message);
}
