/**
 * Shadow runs in the distributed mode: a private redis-server, a `weft worker` process, and
 * `weft run … --redis URL --dispatch bullmq --shadow` — separate processes, each scenario under its
 * own `--redis-prefix`.
 *
 * - travel (no shadow results): the worker runs the observations and the read-only searches and
 *   nothing else — no job at all is sent for a world effect; the travel world in Redis holds no
 *   hold, charge, booking or message; the journal is the embedded shadow run's, fingerprint and all.
 * - a domain whose actuators have `shadow` (support/shadow-refunds-domain.mjs): each shadow result
 *   is computed on the worker (a job with op `shadow`), `run` is never called anywhere, and the run
 *   goes on past its first epoch to the model's own summary.
 *
 * Needs `redis-server` on PATH (under CI=true its absence fails; elsewhere skipped loudly) and the
 * build (`npm run build`).
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signingKeyFromSecret } from '../journal/seal.js';
import { writeKeyPair } from '../runtime/keys.js';
import { assertBuilt, repoRoot, weft, type CliResult } from './support/cli.js';
import { fileRedis } from './support/file-redis.js';
import { startWeftWorker, type WorkerProcess } from './support/weft-processes.js';

const SHADOW_REFUNDS = path.join(repoRoot, 'test', 'support', 'shadow-refunds-domain.mjs');

interface RunJson {
  id: string;
  status: string;
  fingerprint: string | null;
  journal: string | null;
}
interface Rec {
  seq: number;
  kind: string;
  epoch: number;
  hash: string;
  body: Record<string, unknown> & { key?: string; actuator?: string; source?: string; result?: unknown };
}

/** The file's private Redis (AOF, fsync always); each scenario under its own --redis-prefix. */
const redis = fileRedis();
const redisOk = redis.available;
const root = mkdtempSync(path.join(tmpdir(), 'weft-shadow-redis-'));
const workers: WorkerProcess[] = [];

const sharedKeys = path.join(root, 'shared-keys');
await writeKeyPair(sharedKeys, signingKeyFromSecret(new Uint8Array(32).fill(29)));
function dir(name: string): string {
  const folder = path.join(root, name);
  if (!existsSync(path.join(folder, 'keys'))) cpSync(sharedKeys, path.join(folder, 'keys'), { recursive: true });
  return folder;
}

beforeAll(async () => {
  if (!redisOk) return;
  assertBuilt();
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  rmSync(root, { recursive: true, force: true });
});

async function worker(prefix: string, name: string, domain: string, env: Record<string, string> = {}): Promise<WorkerProcess> {
  const w = await startWeftWorker(['--domain', domain, '--redis', redis.url, '--redis-prefix', prefix, '--dir', dir(name)], env);
  workers.push(w);
  return w;
}

function parsed(r: CliResult): RunJson {
  expect(r.code, `exit ${r.code} / ${r.signal}; stderr:\n${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout) as RunJson;
}

const journalOf = async (prefix: string, id: string) => (await redis.admin.lrange(`${prefix}:{${id}}:journal`, 0, -1)).map((l) => JSON.parse(l) as Rec);
/** Every job id BullMQ has on the queue (completed, failed, waiting…): what was sent to workers. */
const jobIds = async (prefix: string, queue: string) => (await redis.admin.keys(`${prefix}:bull:${queue}:*`)).map((k) => k.slice(`${prefix}:bull:${queue}:`.length)).filter((id) => id.includes('.a') && !id.includes(':'));

describe.skipIf(!redisOk)('shadow runs with a weft worker process', () => {
  test('travel --shadow --dispatch bullmq: no job is sent for a world effect, the world in Redis is untouched by them, the journal is the embedded shadow run’s', async () => {
    const embedded = parsed(await weft(['run', 'travel', '--dir', dir('embedded'), '--seed', '5', '--shadow', '--json']));
    expect(embedded.status).toBe('completed');
    const reference = readFileSync(embedded.journal!, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Rec);

    await worker('tshadow', 'travel-worker', 'travel');
    const out = parsed(await weft(['run', 'travel', '--redis', redis.url, '--redis-prefix', 'tshadow', '--dispatch', 'bullmq', '--dir', dir('travel-runtime'), '--seed', '5', '--shadow', '--json']));
    expect(out).toMatchObject({ id: embedded.id, status: 'completed', fingerprint: embedded.fingerprint });
    const records = await journalOf('tshadow', out.id);
    expect(records.filter((r) => r.kind !== 'invocation.sealed').map((r) => r.hash)).toEqual(reference.filter((r) => r.kind !== 'invocation.sealed').map((r) => r.hash));
    expect(records.filter((r) => r.kind === 'step.dispatched').map((r) => r.body.actuator)).toEqual(['flights.search', 'hotels.search']);
    expect(records.filter((r) => r.kind === 'step.shadowed').map((r) => r.body.actuator)).toEqual(['airline.hold', 'hotel.hold', 'card.charge', 'airline.confirm', 'hotel.confirm']);

    // What reached the worker: the observations and the two searches — their keys, nothing else.
    const searched = new Set(records.filter((r) => r.kind === 'step.dispatched' || r.kind === 'state.observed').map((r) => r.body.key!));
    const sent = await jobIds('tshadow', 'weft-effects-travel');
    expect(sent.length).toBeGreaterThan(0);
    for (const id of sent) expect(searched.has(id.replace(/\.a\d+(\.r[0-9a-f]+-\d+)?$/, '')), `job ${id} is an observation or a search`).toBe(true);

    // The world in Redis: no hold, charge, booking, message or reminder; the ledger holds the searches alone.
    const world = JSON.parse((await redis.admin.get(`tshadow:travel:{${out.id}}:providers`))!) as Record<string, unknown> & { ledger: Record<string, { actuator: string }> };
    for (const part of ['holds', 'charges', 'bookings', 'messages', 'reminders']) expect(world[part], part).toEqual([]);
    expect(new Set(Object.values(world.ledger).map((e) => e.actuator))).toEqual(new Set(['flights.search', 'hotels.search']));

    // ls over Redis marks it.
    const ls = await weft(['ls', '--redis', redis.url, '--redis-prefix', 'tshadow']);
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.stdout).toMatch(new RegExp(`${out.id}\\s+completed \\(shadow\\)`));
  });

  test('a domain whose actuators have shadow(): each shadow result is computed on the worker (op shadow), run is never called, the run goes past epoch 1', async () => {
    const calls = path.join(root, 'refund-calls.jsonl');
    const env = { WEFT_TEST_CALLS_FILE: calls };
    const w = await worker('rshadow', 'refunds-worker', SHADOW_REFUNDS, env);
    const out = parsed(await weft(['run', SHADOW_REFUNDS, '--redis', redis.url, '--redis-prefix', 'rshadow', '--dispatch', 'bullmq', '--dir', dir('refunds-runtime'), '--shadow', '--json'], env));
    expect(out.status).toBe('completed');
    const records = await journalOf('rshadow', out.id);
    expect(records.find((r) => r.kind === 'invocation.completed')!.body.summary).toBe('refunded ana and bob, and told them');
    const shadowed = records.filter((r) => r.kind === 'step.shadowed');
    expect(shadowed.map((r) => [r.epoch, r.body.actuator, r.body.source, r.body.result])).toEqual([
      [1, 'refund.issue', 'actuator', { id: 'would-be:refund.issue', amount: 600 }],
      [1, 'email.send', 'actuator', { id: 'would-be:email.send', amount: 600 }],
      [2, 'refund.issue', 'actuator', { id: 'would-be:refund.issue', amount: 100 }],
      [2, 'email.send', 'actuator', { id: 'would-be:email.send', amount: 100 }],
    ]);
    expect(records.some((r) => r.kind === 'step.dispatched')).toBe(false);
    const seen = readFileSync(calls, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { op: string; actuator: string; key: string; pid: number });
    expect(seen.filter((c) => c.op === 'run')).toEqual([]);
    const shadows = seen.filter((c) => c.op === 'shadow');
    expect(shadows.map((c) => c.key)).toEqual(shadowed.map((r) => `${r.body.key}.shadow`));
    expect(new Set(shadows.map((c) => c.pid)), 'every shadow call ran in the worker process').toEqual(new Set([w.pid]));
  });
});
