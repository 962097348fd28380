/**
 * A private redis-server for tests: the one launcher the benches use too (bench/redis-server.ts: a
 * free port, its own temp directory, AOF with fsync on every write unless `aof: false`, `args` to add
 * or override settings; `stop`, `kill`, `restart`), its process spawned by `spawnTracked`, so a server
 * still running when the test that started it ends is SIGKILLed (./children.ts).
 *
 * `redisAvailable()` says whether `redis-server` is on PATH. Test files use `requireRedis()`:
 * without one, tests fail under CI (CI=true) and are skipped, loudly, elsewhere.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { startPrivateRedis, type PrivateRedis, type PrivateRedisOptions } from '../../bench/redis-server.js';
import { spawnTracked } from './children.js';

export { freePort } from '../../bench/redis-server.js';

/** A private server: its url, port and directory, and `stop`, `kill` (a crash), `restart`. */
export type RedisServer = PrivateRedis;

/** `aof` (default true: `--appendonly yes --appendfsync always`) and `args`, extra settings that override the defaults. */
export type StartRedisOptions = Pick<PrivateRedisOptions, 'aof' | 'args'>;

/** Whether `redis-server` is an executable on PATH. */
export function redisAvailable(): boolean {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, 'redis-server'), constants.X_OK);
      return true;
    } catch {
      /* next */
    }
  }
  return false;
}

export const NO_REDIS_MESSAGE = 'redis-server is not on PATH: the Redis store tests need it (apt-get install redis-server, brew install redis, or put a redis-server binary on PATH)';

/**
 * Whether the Redis tests can run. Without redis-server it returns false: under CI (CI=true) the
 * test file then registers a failing test (NO_REDIS_MESSAGE), so the suite cannot pass vacuously;
 * elsewhere this prints a loud notice and the tests are skipped.
 */
export function requireRedis(): boolean {
  if (redisAvailable()) return true;
  if (process.env.CI === 'true') return false;
  console.warn(`\n${'!'.repeat(78)}\n!! SKIPPING the Redis store tests: ${NO_REDIS_MESSAGE}\n${'!'.repeat(78)}\n`);
  return false;
}

/** Spawn a private redis-server (bench/redis-server.ts), tracked as the test's child, and wait until it answers PING. */
export function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  return startPrivateRedis({ ...options, spawn: spawnTracked });
}
