/**
 * The boundary between tenants that do not trust each other is access to the store (README,
 * "Tenants, each with its own key"). In Redis: each tenant its own `--redis-prefix` and a Redis ACL
 * user limited to that prefix's keys and channels. This holds only if every key Weft and its BullMQ
 * queues write, and its Pub/Sub channel, is under the prefix — tested here on a private Redis:
 *
 * - acme's run on workers (`--dispatch bullmq`, a `weft worker` with acme's user) completes, and
 *   every key in the server is under `acme:`;
 * - globex's user, pointed at acme's prefix, is refused by Redis (`NOPERM`) and reads nothing;
 * - `--dispatch auto` with a user that may not run `CLIENT LIST` says it cannot choose and starts
 *   no invocation, instead of guessing "no worker" and running the world effects in its own process.
 *
 * Needs `redis-server` on PATH (skipped with a notice elsewhere, fails under CI).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseTravelState } from '../examples/travel/state.js';
import { assertBuilt, weft, type CliResult } from './support/cli.js';
import { NO_REDIS_MESSAGE, requireRedis, startRedis, type RedisServer } from './support/redis-server.js';
import { startWeftWorker, type WorkerProcess } from './support/weft-processes.js';

const available = requireRedis();
if (!available && process.env.CI === 'true') {
  test('redis-server is installed (required under CI)', () => {
    throw new Error(NO_REDIS_MESSAGE);
  });
}

const root = mkdtempSync(path.join(tmpdir(), 'weft-tenant-acl-'));
let server: RedisServer;
let admin: Redis;
let keys = '';
let worker: WorkerProcess | undefined;
const env = () => ({ WEFT_SIGNING_KEY: path.join(keys, 'weft.key'), WEFT_REDIS_URL: '', WEFT_DEBUG: '' });
const show = (r: CliResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
const last = (r: CliResult) => JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, any>;
const intent = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';
const as = (user: string) => `redis://${user}:pw-${user}@127.0.0.1:${server.port}/0`;

beforeAll(async () => {
  if (!available) return;
  assertBuilt();
  server = await startRedis();
  admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
  // As README says: keys and channels under the tenant's prefix, no dangerous commands (FLUSHALL,
  // KEYS, CONFIG SET, CLIENT LIST…), CONFIG GET and INFO for Weft's durability check.
  for (const tenant of ['acme', 'globex']) {
    await admin.call('ACL', 'SETUSER', tenant, 'on', `>pw-${tenant}`, `~${tenant}:*`, `&${tenant}:*`, '+@all', '-@dangerous', '+config|get', '+info');
  }
  const dir = mkdtempSync(path.join(root, 'key-'));
  const keygen = await weft(['keygen', '--out', dir]);
  if (keygen.code !== 0) throw new Error(`weft keygen: ${show(keygen)}`);
  keys = dir;
}, 120_000);
afterAll(async () => {
  await worker?.kill();
  admin?.disconnect();
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!available)('a tenant per Redis prefix, with a Redis ACL user', () => {
  test("acme's run on workers keeps every key under acme:; globex's user cannot read them", async () => {
    const on = ['--redis', as('acme'), '--redis-prefix', 'acme'];
    worker = await startWeftWorker(['--domain', 'travel', ...on, '--dir', mkdtempSync(path.join(root, 'worker-'))], env());
    const dir = mkdtempSync(path.join(root, 'run-'));
    const run = await weft(['run', 'travel', intent, '--seed', '4', '--as-of', '2026-06-01T09:00:00Z', '--tenant', 'acme', ...on, '--dispatch', 'bullmq', '--dir', dir, '--json'], env(), dir);
    expect(run.code, show(run)).toBe(0);
    const done = last(run);
    expect(done.status).toBe('completed');
    await worker.stop();
    worker = undefined;

    // Everything Weft, BullMQ and the travel world wrote is under the prefix.
    const all = (await admin.keys('*')).sort();
    expect(all.length).toBeGreaterThan(0);
    expect(all.filter((k) => !k.startsWith('acme:'))).toEqual([]);
    expect(all.some((k) => k.startsWith('acme:bull:'))).toBe(true);
    const world = parseTravelState((await admin.get(`acme:travel:{${done.id}}:providers`))!);
    expect(world.charges.map((c) => c.amount)).toEqual([780]);

    // globex's user over acme's prefix: Redis itself refuses, and nothing of acme's is shown.
    const other = mkdtempSync(path.join(root, 'globex-'));
    for (const args of [['ls', '--json'], ['show', done.id, '--json'], ['replay', done.id, '--json']]) {
      const foreign = await weft([...args, '--redis', as('globex'), '--redis-prefix', 'acme', '--dir', other], env(), other);
      expect(foreign.code, `${args[0]}: ${show(foreign)}`).not.toBe(0);
      expect(foreign.stdout + foreign.stderr, args[0]).toMatch(/NOPERM/);
      expect(foreign.stdout + foreign.stderr, args[0]).not.toContain(intent);
    }
    // Its own prefix is empty to it.
    const own = await weft(['ls', '--json', '--redis', as('globex'), '--redis-prefix', 'globex', '--dir', other], env(), other);
    expect(own.code, show(own)).toBe(0);
    expect(JSON.parse(own.stdout)).toEqual([]);
  }, 180_000);

  test('--dispatch auto with a user that may not count workers says so and starts no invocation', async () => {
    // BullMQ's own queue metadata (`globex:bull:<queue>:meta`) may be written by asking; no invocation is.
    const invocationKeys = async () => (await admin.keys('globex:*')).filter((k) => !k.startsWith('globex:bull:')).sort();
    const before = await invocationKeys();
    const dir = mkdtempSync(path.join(root, 'auto-'));
    const run = await weft(['run', 'travel', intent, '--seed', '5', '--as-of', '2026-06-01T09:00:00Z', '--tenant', 'globex', '--redis', as('globex'), '--redis-prefix', 'globex', '--dir', dir, '--json'], env(), dir);
    expect(run.code, show(run)).not.toBe(0);
    expect(run.stderr).toMatch(/Redis refused to say which workers consume queue weft-effects-travel \(NOPERM[^)]*\), so --dispatch auto cannot choose: pass --dispatch bullmq/);
    expect(await invocationKeys()).toEqual(before);
  }, 120_000);
});
