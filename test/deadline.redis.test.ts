/**
 * A deadline passing while a run rests, in the distributed mode (issue 23: "serve enforces deadlines
 * on resting invocations too", in both modes): `weft run --redis … --hibernate --deadline 2s` rests
 * in a private Redis after its searches; a `weft serve` in another folder, started once the deadline
 * has passed, records `deadline.passed`, ends the run failed (policy) and seals it. The world in
 * Redis holds nothing; `weft replay` from a third folder is identical and `weft verify` checks the
 * journal with the public key. Needs `redis-server` on PATH (skipped with a notice elsewhere, fails
 * under CI).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { parseTravelState } from '../examples/travel/state.js';
import type { JournalRecord } from '../journal/records.js';
import { RedisStore } from '../stores/redis.js';
import { assertBuilt, weft, type CliResult } from './support/cli.js';
import { NO_REDIS_MESSAGE, requireRedis, startRedis, type RedisServer } from './support/redis-server.js';
import { spawnWeft, waitFor, type Spawned } from './support/weft-processes.js';

const available = requireRedis();
if (!available && process.env.CI === 'true') {
  test('redis-server is installed (required under CI)', () => {
    throw new Error(NO_REDIS_MESSAGE);
  });
}

const root = mkdtempSync(path.join(tmpdir(), 'weft-deadline-redis-'));
let folders = 0;
const fresh = (name: string) => mkdtempSync(path.join(root, `${name}-${++folders}-`));
const running: Spawned[] = [];
let server: RedisServer;
let keys = '';
const env = () => ({ WEFT_SIGNING_KEY: path.join(keys, 'weft.key'), WEFT_REDIS_URL: '', WEFT_DEBUG: '' });
const show = (r: CliResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
const last = (r: CliResult) => JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, any>;
const intent = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';

beforeAll(async () => {
  if (!available) return;
  assertBuilt();
  server = await startRedis();
  keys = fresh('key');
  const keygen = await weft(['keygen', '--out', keys]);
  if (keygen.code !== 0) throw new Error(`weft keygen: ${show(keygen)}`);
}, 120_000);
afterAll(async () => {
  for (const p of running) p.signal('SIGKILL');
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!available)('deadlines on Redis', () => {
  test('a run hibernated in Redis past its deadline is ended by weft serve in another folder; replay and verify agree', async () => {
    const on = ['--redis', server.url, '--redis-prefix', 'dl', '--dispatch', 'in-process'];
    const a = fresh('run');
    const run = await weft(['run', 'travel', intent, '--seed', '4', '--as-of', '2026-06-01T09:00:00Z', ...on, '--hibernate', '--deadline', '2s', '--dir', a, '--json'], env(), a);
    expect(run.code, show(run)).toBe(0);
    const rested = last(run);
    expect(rested.status).toBe('hibernated');

    const store = new RedisStore({ redis: server.url, prefix: 'dl' });
    try {
      const before = await store.read(rested.id);
      const deadline = (before[0] as JournalRecord<'invocation.pinned'>).body.pin.deadline!;
      await waitFor('the pinned deadline to pass', async () => (Date.now() > Date.parse(deadline) ? true : undefined), 30_000);

      const b = fresh('serve');
      const serve = spawnWeft(['serve', '--domain', 'travel', ...on, '--poll-ms', '200', '--dir', b], env());
      running.push(serve);
      const stopped = await waitFor('serve ending the run', async () => new RegExp(`^stopped\\s+${rested.id} (\\w+)`, 'm').exec(serve.stdout())?.[1], 90_000);
      serve.signal('SIGTERM');
      await serve.done;
      expect(stopped).toBe('failed');

      const records = await store.read(rested.id);
      expect(records.slice(0, before.length)).toEqual(before);
      expect(records.slice(before.length).map((r) => r.kind)).toEqual(['deadline.passed', 'invocation.failed', 'invocation.sealed']);
      expect(records[before.length]!.body).toMatchObject({ deadline });
      expect(records[before.length + 1]!.body).toMatchObject({ class: 'policy', code: 'invocation.deadline_passed' });
      expect((await store.indexed()).find((entry) => entry.id === rested.id)?.status).toBe('failed');

      const redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
      try {
        const world = parseTravelState((await redis.get(`dl:travel:{${rested.id}}:providers`))!);
        expect({ holds: world.holds, charges: world.charges }).toEqual({ holds: [], charges: [] });
      } finally {
        redis.disconnect();
      }

      const c = fresh('replay');
      const replay = await weft(['replay', rested.id, ...on.slice(0, 4), '--dir', c, '--json'], env(), c);
      expect(replay.code, show(replay)).toBe(0);
      expect(last(replay)).toMatchObject({ identical: true, status: 'failed', fingerprint: records.at(-1)!.prev });
      const verify = await weft(['verify', rested.id, ...on.slice(0, 4), '--public-key', path.join(keys, 'weft.pub'), '--dir', c], env(), c);
      expect(verify.code, show(verify)).toBe(0);
    } finally {
      await store.close().catch(() => undefined);
    }
  }, 180_000);
});
