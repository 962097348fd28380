/**
 * The distributed mode at scale: one runtime (this process) starts 200 invocations at once over a
 * private redis-server, and two real `weft worker --concurrency 8` processes run their world
 * effects — 10 per invocation (test/support/ten-step-domain.mjs: one goal, ten steps, each deduped
 * in Redis on its idempotency key with SET NX).
 *
 * - Every invocation ends `completed`, sealed with the runtime's key, and verifies offline: through
 *   `runtime.verify(id, publicKey)`, byte for byte from the journal lines Redis holds
 *   (`readJournalBytes`), and for a sample through `weft export … > bundle.json` then
 *   `weft verify bundle.json --public-key weft.pub` (exit 0, same fingerprint): the first of the
 *   sample as `weft` processes, end to end; the others through the same commands' code in this
 *   process (test/support/command-in-process.ts: export's own run; test/support/journals-here.ts: verify's own check), with the same output
 *   and exit code.
 * - Every idempotency key was applied exactly once: 2000 `<prefix>:done:<key>` keys, exactly the
 *   journals' step keys; the per-key applied counter is 1 for each; the per-key run count equals
 *   the attempts the journal recorded for it.
 * - The jobs were spread over both workers (each worker's per-process counter `<prefix>:by:<pid>`
 *   is > 0; together they account for every run), and BullMQ finished every job the journals imply.
 *
 * The number of invocations is WEFT_SCALE_INVOCATIONS (default 200). Needs `redis-server` on PATH
 * (under CI=true its absence fails; elsewhere skipped loudly) and the build (`npm run build`).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Domain, Runtime } from '../dist/index.js';
import { fromDist } from './support/dist.js';
import { assertBuilt, pool, repoRoot, weft } from './support/cli.js';
import { weftHere } from './support/command-in-process.js';
import { verifyBundle } from './support/journals-here.js';
import { NO_REDIS_MESSAGE, requireRedis, startRedis, type RedisServer } from './support/redis-server.js';
import { startWeftWorker, type WorkerProcess } from './support/weft-processes.js';

const DOMAIN_MODULE = path.join(repoRoot, 'test', 'support', 'ten-step-domain.mjs');
const N = Number(process.env.WEFT_SCALE_INVOCATIONS ?? 200);
const STEPS = 10;
const PREFIX = 'scale';
/** The ten-step domain's own queue (queueForDomain). */
const QUEUE = 'weft-effects-ten-steps';
const CONCURRENCY = 8;
const SAMPLE = 5;
const TENANT = 'scale';
const AS_OF = '2026-06-01T09:00:00Z';

interface Rec {
  seq: number;
  kind: string;
  body: Record<string, unknown> & { key?: string; attempt?: number; class?: string; code?: string; message?: string; outcome?: string };
}
interface TenStepModule {
  default: Domain;
  closeTenStepRedis(): Promise<void>;
  tenStepKeys(prefix: string): { done(key: string): string; applied: string; runs: string; by(pid: number): string; observed(pid: number): string };
}

const redisOk = requireRedis();
const root = mkdtempSync(path.join(tmpdir(), 'weft-workers-scale-'));
/**
 * The compiled library (dist/, imported by Node: test/support/dist.ts), the copy the ten-step domain
 * imports and the workers run — one copy in play, and none for vitest to transform.
 */
const { createRuntime, publicKeyOf, readJournalBytes, signingKeyFromSecret, writeKeyPair } = await fromDist<typeof import('../dist/index.js')>('index.js');
await fromDist('journal/sha256-node.js');
await fromDist('journal/ed25519-node.js');
const signingKey = signingKeyFromSecret(new Uint8Array(32).fill(42));
const publicKey = publicKeyOf(signingKey);
let server: RedisServer;
let admin: Redis;
let mod: TenStepModule;
const workers: WorkerProcess[] = [];
const timings: Record<string, number> = {};

beforeAll(async () => {
  if (!redisOk) return;
  assertBuilt();
  server = await startRedis({ aof: true });
  admin = new Redis(server.url);
  mod = await fromDist<TenStepModule>(path.relative(path.join(repoRoot, 'dist'), DOMAIN_MODULE));
  await writeKeyPair(path.join(root, 'keys'), signingKey);
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  await mod?.closeTenStepRedis();
  admin?.disconnect();
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
  if (Object.keys(timings).length) console.log(`workers-scale timings (ms): ${JSON.stringify(timings)}`);
});

if (!redisOk && process.env.CI === 'true') {
  test('redis-server is installed (required under CI)', () => {
    throw new Error(NO_REDIS_MESSAGE);
  });
}

/** Every key matching `pattern`, by SCAN (never KEYS). */
async function scanKeys(pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    found.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

const journalLines = (id: string) => admin.lrange(`${PREFIX}:{${id}}:journal`, 0, -1);

describe.skipIf(!redisOk)(`${N} invocations × ${STEPS} world effects on two weft workers`, () => {
  test('all complete, all verify offline, every idempotency key applied exactly once, jobs on both workers', async () => {
    const t0 = Date.now();
    const args = (name: string) => ['--domain', DOMAIN_MODULE, '--redis', server.url, '--redis-prefix', PREFIX, '--concurrency', String(CONCURRENCY), '--dir', path.join(root, name)];
    workers.push(...(await Promise.all([startWeftWorker(args('worker-a')), startWeftWorker(args('worker-b'))])));
    const probe = new Queue(QUEUE, { connection: { url: server.url }, prefix: `${PREFIX}:bull` });
    try {
      expect(await probe.getWorkersCount(), 'both workers consume the queue').toBe(2);
    } finally {
      await probe.close();
    }
    timings.workersReady = Date.now() - t0;

    const runtime: Runtime = createRuntime({ redis: server.url, redisPrefix: PREFIX, dispatch: 'bullmq', domain: mod.default, signingKey });
    let results;
    const started = Date.now();
    try {
      const intents = Array.from({ length: N }, (_, i) => `Scale run #${i}: apply the ten steps.`);
      const handles = await Promise.all(intents.map((intent, i) => runtime.start(intent, { tenant: TENANT, seed: i, asOf: AS_OF })));
      timings.allStarted = Date.now() - started;
      results = await Promise.all(handles.map((h) => h.done));
      timings.allDone = Date.now() - started;

      // ── every invocation completed, sealed, and verifies with the runtime's public key ──
      const notCompleted = results.filter((r) => r.status !== 'completed');
      expect(notCompleted.map((r) => `${r.id}: ${r.status}`), 'every invocation completed').toEqual([]);
      expect(new Set(results.map((r) => r.id)).size, 'distinct invocations').toBe(N);
      for (const r of results) {
        expect(r.fingerprint, `${r.id} has a fingerprint`).toMatch(/^[0-9a-f]{64}$/);
        const report = await runtime.verify(r.id, publicKey);
        expect(report.ok, `${r.id}: ${report.error?.message}`).toBe(true);
        expect(report.sealed).toBe(true);
        expect(report.fingerprint).toBe(r.fingerprint);
      }
      timings.runtimeVerify = Date.now() - started - timings.allDone;
    } finally {
      await runtime.close();
    }

    // ── the stored bytes: each journal, line for line from Redis, through the byte verifier ──
    const stepAttempts = new Map<string, number>(); // idempotency key → step.dispatched records
    let observations = 0;
    const expectedJobs = new Set<string>();
    const failedSteps: string[] = [];
    const badEpochs: string[] = [];
    for (const r of results) {
      const lines = await journalLines(r.id);
      const report = readJournalBytes(new TextEncoder().encode(lines.map((l) => `${l}\n`).join('')), { publicKey });
      expect(report.ok, `${r.id} (bytes): ${report.error?.message}`).toBe(true);
      expect(report.fingerprint).toBe(r.fingerprint);
      const records = lines.map((l) => JSON.parse(l) as Rec);
      // The scripted model says done at epoch 2 whatever epoch 1 did: the journal says whether it did it all.
      failedSteps.push(...records.filter((x) => x.kind === 'step.failed').map((x) => `${x.body.key}.a${x.body.attempt}: ${x.body.class} ${x.body.code} — ${x.body.message}`));
      const closed = records.filter((x) => x.kind === 'epoch.closed').map((x) => x.body.outcome);
      if (closed.join() !== 'completed') badEpochs.push(`${r.id}: epochs closed ${JSON.stringify(closed)}`);
      if (failedSteps.length > 0 || badEpochs.length > 0) continue; // reported below, all together
      const dispatched = records.filter((x) => x.kind === 'step.dispatched');
      const completed = records.filter((x) => x.kind === 'step.completed');
      const keys = new Set(dispatched.map((x) => x.body.key!));
      expect(keys.size, `${r.id}: ${STEPS} distinct step keys`).toBe(STEPS);
      expect(new Set(completed.map((x) => x.body.key!)), `${r.id}: every step completed`).toEqual(keys);
      for (const x of dispatched) {
        stepAttempts.set(x.body.key!, (stepAttempts.get(x.body.key!) ?? 0) + 1);
        expectedJobs.add(`${x.body.key}.a${x.body.attempt ?? 1}`);
      }
      for (const x of records.filter((y) => y.kind === 'state.observed')) {
        observations += 1;
        expectedJobs.add(`${x.body.key}.a${x.body.attempt ?? 1}`);
      }
    }
    expect(failedSteps.slice(0, 5), `${failedSteps.length} step attempt(s) failed (first 5 shown)`).toEqual([]);
    expect(badEpochs.slice(0, 5), `${badEpochs.length} invocation(s) whose epoch 1 did not close completed`).toEqual([]);
    expect(stepAttempts.size, 'idempotency keys across all journals').toBe(N * STEPS);

    // ── exactly once: one done key per step key, applied once, run as often as the journal says ──
    const keys = mod.tenStepKeys(PREFIX);
    const doneKeys = await scanKeys(`${PREFIX}:done:*`);
    expect(doneKeys.length, `${PREFIX}:done:* keys`).toBe(N * STEPS);
    expect(new Set(doneKeys.map((k) => k.slice(`${PREFIX}:done:`.length)))).toEqual(new Set(stepAttempts.keys()));
    const applied = await admin.hgetall(keys.applied);
    expect(Object.keys(applied).length).toBe(N * STEPS);
    const twice = Object.entries(applied).filter(([, n]) => n !== '1');
    expect(twice, 'keys applied more than once').toEqual([]);
    const runs = await admin.hgetall(keys.runs);
    const mismatched = [...stepAttempts].filter(([key, n]) => Number(runs[key]) !== n);
    expect(mismatched.map(([key, n]) => `${key}: journal ${n} attempt(s), actuator ran ${runs[key]}`)).toEqual([]);
    const retried = [...stepAttempts.values()].filter((n) => n > 1).length;
    timings.retriedSteps = retried;

    // ── BullMQ ran every job the journals imply, and both workers took a share ──
    // (an observation's job id carries a per-dispatch suffix, `.r<dispatcher>-<n>`: cut off, one per recorded attempt)
    const completedJobs = new Set((await admin.zrange(`${PREFIX}:bull:${QUEUE}:completed`, '0', '-1')).map((id) => id.replace(/\.r[0-9a-f]+-\d+$/, '')));
    const missing = [...expectedJobs].filter((id) => !completedJobs.has(id));
    expect(missing.slice(0, 10), `${missing.length} jobs the journals imply are not completed in BullMQ`).toEqual([]);
    const perWorker = await Promise.all(workers.map(async (w) => ({ pid: w.pid, effects: Number(await admin.get(keys.by(w.pid))), observations: Number(await admin.get(keys.observed(w.pid))) })));
    for (const w of perWorker) expect(w.effects, `worker ${w.pid} ran world effects (${JSON.stringify(perWorker)})`).toBeGreaterThan(0);
    const runCount = Object.values(runs).reduce((sum, n) => sum + Number(n), 0);
    expect(perWorker.reduce((sum, w) => sum + w.effects, 0), 'the two workers ran every world effect').toBe(runCount);
    expect(perWorker.reduce((sum, w) => sum + w.observations, 0), 'the two workers made every observation').toBe(observations);
    expect(await scanKeys(`${PREFIX}:by:*`), 'no other process ran an effect').toHaveLength(2);
    console.log(`workers-scale: per worker ${JSON.stringify(perWorker)}; ${retried} step(s) retried`);

    // ── a sample, as an auditor would: weft export from Redis, weft verify the bundle offline ──
    const exported = Date.now();
    const sample = results.filter((_, i) => i % Math.max(1, Math.floor(N / SAMPLE)) === 0).slice(0, SAMPLE);
    const pub = path.join(root, 'keys', 'weft.pub');
    // The first as `weft` processes; the others, one after another, through the commands' code here.
    await pool(1, sample.map((r, i) => async () => {
      const exportArgs = [r.id, '--redis', server.url, '--redis-prefix', PREFIX];
      const ex = i === 0 ? await weft(['export', ...exportArgs]) : await weftHere(['export', ...exportArgs]);
      expect(ex.code, `weft export ${r.id}: ${ex.stderr}`).toBe(0);
      const bundle = path.join(root, `${r.id}.bundle.json`);
      writeFileSync(bundle, ex.stdout);
      let v: { code: number | null; text: string; json: () => unknown };
      if (i === 0) {
        const run = await weft(['verify', bundle, '--public-key', pub, '--json']);
        v = { code: run.code, text: run.stdout + run.stderr, json: () => JSON.parse(run.stdout) };
      } else {
        const made = await verifyBundle(bundle, pub);
        v = { code: made.code, text: JSON.stringify(made.json), json: () => made.json };
      }
      expect(v.code, `weft verify ${bundle}: ${v.text}`).toBe(0);
      const out = v.json() as { ok: boolean; fingerprint: string; invocation: string; signatureChecked: boolean; keyId: string };
      expect(out).toMatchObject({ ok: true, fingerprint: r.fingerprint, invocation: r.id, signatureChecked: true, keyId: signingKey.keyId });
      expect(JSON.parse(readFileSync(bundle, 'utf8'))).toBeTypeOf('object');
    }));
    timings.exportVerifySample = Date.now() - exported;
    timings.total = Date.now() - t0;
  }, 180_000);
});
