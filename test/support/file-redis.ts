/**
 * One private redis-server per test file, a key prefix per test — as BullMQ's own suite runs a
 * fresh `test-<uuid>` queue per test: a server costs a process start and stop, a prefix nothing.
 *
 * `fileRedis()`, called at a file's top level, registers the hooks: the server starts in a
 * `beforeAll` (before the file's own, registered later) with an admin client, and stops in an
 * `afterAll` that runs after the file's own (hooks unwind in reverse: workers stopped first, then the
 * server). Without `redis-server` on PATH, `available` is false: under CI (CI=true) the file gets a
 * failing test naming what is missing; elsewhere a loud notice, and the file skips its tests
 * (`describe.skipIf(!redis.available)`).
 *
 * `freshPrefix(name)` gives a prefix no other test of the file uses (`<name>-<8 hex>`): journals,
 * worlds and BullMQ queues (`<prefix>:bull`) of one test never meet another's, so tests need no
 * clean-up between them and may run side by side. A test that kills, restarts or misconfigures its
 * server (outages, AOF or eviction settings, passwords) starts one of its own with `startRedis`.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, test } from 'vitest';
import { NO_REDIS_MESSAGE, requireRedis, startRedis, type RedisServer, type StartRedisOptions } from './redis-server.js';

export interface FileRedis {
  /** Whether redis-server is on PATH (the file's tests run only then). */
  readonly available: boolean;
  /** The file's server (started in beforeAll). */
  readonly server: RedisServer;
  /** `redis://127.0.0.1:<port>/0` of the file's server. */
  readonly url: string;
  /** A client on the file's server, for the tests' own looks at keys (disconnected in afterAll). */
  readonly admin: Redis;
  /** A prefix of its own for one test (or one scenario): `<name>-<8 hex>`. */
  freshPrefix(name?: string): string;
}

/** Start one redis-server for this file (see the header); `options` as startRedis's. */
export function fileRedis(options: StartRedisOptions = {}): FileRedis {
  const available = requireRedis();
  if (!available && process.env.CI === 'true') {
    test('redis-server is installed (required under CI)', () => {
      throw new Error(NO_REDIS_MESSAGE);
    });
  }
  let server: RedisServer | undefined;
  let admin: Redis | undefined;
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the file's Redis ${what} is used before its beforeAll ran (or without redis-server)`);
    return value;
  };
  beforeAll(async () => {
    if (!available) return;
    server = await startRedis(options);
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.stop();
  });
  return {
    available,
    get server() {
      return started(server, 'server');
    },
    get url() {
      return started(server, 'server').url;
    },
    get admin() {
      return started(admin, 'client');
    },
    freshPrefix: (name = 'test') => `${name}-${randomUUID().slice(0, 8)}`,
  };
}
