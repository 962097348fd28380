/**
 * Which store a command works on: the workspace's FileStore (`--dir`, the embedded default) or, in
 * the distributed mode, Redis — `--redis URL` or `WEFT_REDIS_URL` (`--redis-prefix P`, default
 * `weft`). A Redis store is opened only after the server's durability settings are checked
 * (`--redis-durability relaxed` accepts a weaker server, with one loud warning). The stores a
 * command opened are closed when it ends (`closeStores`, closing.ts), so the process can exit.
 *
 * A command gives up on a Redis that has been unreachable for `--redis-give-up-ms MS` (or
 * `WEFT_REDIS_GIVE_UP_MS`; default 10 s, redis/reconnect.ts) rather than reconnecting
 * for ever; the long-lived `serve`, `worker` and `inspect` keep reconnecting. The same budget bounds
 * every command's first PING — serve's too — timed from when the client library is loaded, not from
 * the start of the process. A server that refuses the URL's credentials or the user's ACL is
 * `store.auth_refused`, never unreachable (stores/access-refused.ts).
 */
import type { JournalStore } from '../journal/store.js';
import { FileStore } from '../stores/file.js';
import { DEFAULT_REDIS_GIVE_UP_MS, holdsCredentials } from '../redis/index.js';
import { UsageError, type OptionSpec } from './args.js';
import { closeAtExit } from './closing.js';

export { closeAtExit, closeStores } from './closing.js';

export const storeOptions: OptionSpec = {
  redis: { type: 'string' },
  'redis-prefix': { type: 'string' },
  'redis-durability': { type: 'string' },
  'redis-give-up-ms': { type: 'string' },
};

export const storeUsage = '[--redis URL [--redis-prefix P] [--redis-durability strict|relaxed] [--redis-give-up-ms MS]]';

export interface StoreChoice {
  dir: string;
  /**
   * `giveUpAfterMs`: how long an unreachable server is waited for; undefined: for ever (serve).
   * `reachWithinMs`: how long the first PING may wait, for every command.
   */
  redis?: { url: string; prefix: string; durability: 'strict' | 'relaxed'; giveUpAfterMs?: number; reachWithinMs?: number };
}

/**
 * The store the flags (and WEFT_REDIS_URL) choose; throws UsageError for a bad value. A
 * `longLived` process (serve) reconnects to Redis for ever; any other gives up (see the header).
 */
export function storeChoice(dir: string, strings: Record<string, string | undefined>, { longLived = false } = {}): StoreChoice {
  const url = strings.redis ?? process.env.WEFT_REDIS_URL;
  if (url === undefined || url === '') {
    if (strings['redis-prefix'] !== undefined || strings['redis-durability'] !== undefined || strings['redis-give-up-ms'] !== undefined) throw new UsageError('--redis-prefix, --redis-durability and --redis-give-up-ms go with --redis URL (or WEFT_REDIS_URL)');
    return { dir };
  }
  if (!/^rediss?:\/\//.test(url)) throw new UsageError(`--redis takes a redis:// or rediss:// URL, got ${holdsCredentials(url) ? 'another (not shown: it may hold a password)' : JSON.stringify(url)}`);
  const durability = strings['redis-durability'] ?? 'strict';
  if (durability !== 'strict' && durability !== 'relaxed') throw new UsageError(`--redis-durability is strict or relaxed, got ${JSON.stringify(durability)}`);
  const budget = redisGiveUpMs(strings['redis-give-up-ms']);
  return { dir, redis: { url, prefix: strings['redis-prefix'] ?? 'weft', durability, giveUpAfterMs: longLived ? undefined : budget, reachWithinMs: budget } };
}

/** --redis-give-up-ms, else WEFT_REDIS_GIVE_UP_MS, else the default: how long a command waits for an unreachable Redis. */
function redisGiveUpMs(flag: string | undefined): number {
  const [name, text] = flag !== undefined ? ['--redis-give-up-ms', flag] : ['WEFT_REDIS_GIVE_UP_MS', process.env.WEFT_REDIS_GIVE_UP_MS];
  if (text === undefined || text === '') return DEFAULT_REDIS_GIVE_UP_MS;
  const ms = Number(text);
  if (!Number.isInteger(ms) || ms <= 0) throw new UsageError(`${name} is a positive whole number of milliseconds, got ${JSON.stringify(text)}`);
  return ms;
}

/** Open the chosen store (a Redis one checked for durability first). */
export async function openStore(choice: StoreChoice): Promise<JournalStore> {
  if (!choice.redis) return new FileStore(choice.dir);
  const { url, prefix, durability, giveUpAfterMs, reachWithinMs } = choice.redis;
  // Loaded here, not at the top: a command on the file store never loads the Redis store's modules.
  const { RedisStore } = await import('../stores/redis.js');
  const store = await RedisStore.open({ redis: url, prefix, durability, giveUpAfterMs, reachWithinMs, warn: (message) => process.stderr.write(`weft: WARNING: ${message}\n`) });
  closeAtExit(store);
  return store;
}
