/**
 * The Redis connection policy — the public face of redis/, one home for what every Redis client of
 * Weft follows: the journal's Redis store, the BullMQ dispatcher and its workers, the CLI's hints and
 * the travel example's world. How long a client keeps reconnecting and when it gives up, which errors
 * mean the server is gone, and what of a URL may be printed.
 *
 * It imports nothing of the house (it is the ground under journal/ and queue/), and no client library:
 * an ioredis or BullMQ connection takes its `retryStrategy` from here, never the other way round.
 */
export { answerWithin, DEFAULT_REDIS_GIVE_UP_MS, isConnectionLoss, reconnectStrategy, type RetryStrategy } from './reconnect.js';
export { holdsCredentials, redisServerName } from './url.js';
