/**
 * Cancel in the distributed mode (issue 23: "everything works in both modes"): a run on Redis whose
 * world effects run on a `weft worker` process is cancelled mid-epoch by `weft cancel` in a third
 * process. The run's second effect is held at a gate in the worker (support/gated-domain.mjs); the
 * cancel waits in the invocation's inbox (the holder is live, so the canceller waits for it); the
 * gate opens; the holder sees the request before its third step, records `cancel.requested`,
 * compensates the two effects in reverse order — on the worker — and ends cancelled, sealed. The
 * journal replays to the same fingerprint and verifies offline with the key that sealed it.
 * Runs against the suite's private redis-server, never the system one.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import type { JournalRecord } from '../journal/records.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { RedisStore } from '../stores/redis.js';
import { writeKeyPair } from '../runtime/keys.js';
import { assertBuilt, repoRoot, weft } from './support/cli.js';
import { NO_REDIS_MESSAGE, requireRedis, startRedis, type RedisServer } from './support/redis-server.js';
import { spawnWeft, startWeftWorker, waitFor, type Spawned, type WorkerProcess } from './support/weft-processes.js';

const redisOk = requireRedis();
if (!redisOk && process.env.CI === 'true') {
  test('redis-server is installed (required under CI)', () => {
    throw new Error(NO_REDIS_MESSAGE);
  });
}

const GATED = path.join(repoRoot, 'test', 'support', 'gated-domain.mjs');
const root = mkdtempSync(path.join(tmpdir(), 'weft-cancel-workers-'));
const keys = path.join(root, 'keys');
const calls = path.join(root, 'calls.jsonl');
const gateFile = path.join(root, 'gate-open');
const env = { WEFT_TEST_CALLS_FILE: calls, WEFT_TEST_GATE_FILE: gateFile, WEFT_HOME: path.join(root, 'home') };
let server: RedisServer;
let store: RedisStore;
const children: Spawned[] = [];
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  if (!redisOk) return;
  assertBuilt();
  await writeKeyPair(keys, signingKeyFromSecret(new Uint8Array(32).fill(41)));
  server = await startRedis({ aof: true });
  store = new RedisStore({ redis: server.url, prefix: 'cw' });
});
afterAll(async () => {
  for (const c of children) c.signal('SIGKILL');
  await worker?.kill();
  await store?.close();
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

type Call = { op: string; actuator: string; key: string; pid: number };
const seen = (): Call[] => {
  try {
    return readFileSync(calls, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Call);
  } catch {
    return [];
  }
};
const label = (r: JournalRecord) => ((r.body as { step?: number }).step === undefined ? r.kind : `${r.kind}#${(r.body as { step: number }).step}`);

describe.skipIf(!redisOk)('cancel with BullMQ workers', () => {
  test('a run held mid-epoch on a worker, cancelled by weft cancel in a third process: both effects undone on the worker in reverse order, the third never run', async () => {
    const onRedis = ['--redis', server.url, '--redis-prefix', 'cw', '--signing-key', path.join(keys, 'weft.key')];
    worker = await startWeftWorker(['--domain', GATED, '--redis', server.url, '--redis-prefix', 'cw', '--dir', path.join(root, 'worker')], env);
    const run = spawnWeft(['run', GATED, ...onRedis, '--dispatch', 'bullmq', '--dir', path.join(root, 'runtime'), '--json'], env);
    children.push(run);
    // The worker holds effect.b at its gate: the run is live, mid-epoch, with effect.a done.
    await waitFor('effect.b running on the worker', () => seen().some((c) => c.op === 'run' && c.actuator === 'effect.b'), 120_000);
    const [id] = await store.list();
    expect(id).toBeDefined();
    expect((await store.holder(id!))?.live).toBe(true);

    const cancel = spawnWeft(['cancel', id!, ...onRedis, '--domain', GATED, '--dir', path.join(root, 'canceller'), '--reason', 'the customer called', '--by', 'ops', '--wait', '120', '--json'], env);
    children.push(cancel);
    await waitFor('the cancel in the inbox', async () => (await store.peekInbox(id!))?.type === 'cancel', 60_000);
    writeFileSync(gateFile, 'open');

    const cancelled = await cancel.done;
    expect(cancelled.code, cancelled.stderr).toBe(0);
    const line = JSON.parse(cancelled.stdout.trim().split('\n').at(-1)!) as { status: string; fingerprint: string; publicKey: string; kept: unknown[] };
    expect(line).toMatchObject({ status: 'cancelled', kept: [] });
    const ran = await run.done;
    expect(JSON.parse(ran.stdout.trim().split('\n').at(-1)!)).toMatchObject({ id, status: 'cancelled', fingerprint: line.fingerprint });

    const records = await store.read(id!);
    const from = records.findIndex((r) => r.kind === 'cancel.requested');
    expect(records.slice(0, from).filter((r) => r.kind === 'step.completed').map(label)).toEqual(['step.completed#0', 'step.completed#1']);
    expect(records.slice(from).map(label)).toEqual([
      'cancel.requested',
      'compensation.dispatched#1',
      'compensation.completed#1',
      'compensation.dispatched#0',
      'compensation.completed#0',
      'invocation.cancelled',
      'invocation.sealed',
    ]);
    expect(records[from]!.body).toMatchObject({ by: 'ops', reason: 'the customer called' });

    // The world, as the worker saw it: a, b run; b, then a, undone — all on the worker; c never run.
    const effects = seen().map((c) => `${c.op} ${c.actuator}`);
    expect(effects).toEqual(['run effect.a', 'run effect.b', 'compensate effect.b', 'compensate effect.a']);
    expect(new Set(seen().map((c) => c.pid))).toEqual(new Set([worker.pid]));

    const replay = await weft(['replay', id!, '--redis', server.url, '--redis-prefix', 'cw', '--domain', GATED, '--json'], env);
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ status: 'cancelled', fingerprint: line.fingerprint });
    const verified = await weft(['verify', id!, '--redis', server.url, '--redis-prefix', 'cw', '--public-key', path.join(keys, 'weft.pub')], env);
    expect(verified.code, verified.stderr + verified.stdout).toBe(0);
  }, 300_000);
});
