/**
 * Behaviour flag 13 — a refusal is not an attempt — on the runtime alone: travel with a dispatcher
 * whose "worker" refuses `airline.hold` (as an old worker whose build lacks it does, queue/worker.ts),
 * in this process. The process-level scenarios with Redis and `weft worker` are in
 * worker-refusals.test.ts.
 *
 * - Today: each refusal is recorded (`step.refused`, naming the worker) between the step's
 *   `step.dispatched` and its completion, the same attempt is dispatched again as the n-th re-dispatch
 *   (`job.refusals`), and the step completes as attempt 1 — applied once; the journal replays (the
 *   refusals read back) and verifies.
 * - A refusal that never ends: after `refusalWaitMs` the run rests suspended (`step.no_capable_worker`),
 *   naming the worker and what to do — not failed, not handed off — and a resume with a capable
 *   worker completes it, the step still attempt 1.
 * - A journal pinned before flag 13 keeps the old rule: each refusal is a transient `step.failed`
 *   that spends an attempt, and it replays as written on today's runtime.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test, vi } from 'vitest';
import '../journal/sha256-node.js';
import type { Actuator } from '../actors/actuator.js';
import { travelDomain } from '../examples/travel/domain.js';
import { readTravelState } from '../examples/travel/state.js';
import type { JournalRecord } from '../journal/records.js';
import { publicKeyOf, signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { FLAG_REFUSALS } from '../machines/flags.js';
import type { Job, JobOutcome } from '../queue/dispatcher.js';
import { InProcessDispatcher } from '../queue/in-process.js';
import { createRuntime } from '../runtime/index.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(13));
const root = mkdtempSync(path.join(tmpdir(), 'weft-refusal-flag-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Body = Record<string, any>;
const REFUSER = 'old-host:4242';

/** The in-process dispatcher, with a worker in front that refuses `refuse` jobs of `actuator` (Infinity: all), as queue/worker.ts does. */
class RefusingDispatcher extends InProcessDispatcher {
  readonly seen: Array<Pick<Job, 'key' | 'attempt' | 'refusals' | 'delayMs'>> = [];
  constructor(
    actuators: Actuator[],
    private readonly actuator: string,
    public refuse: number,
  ) {
    super(actuators);
  }
  override async dispatch(job: Job): Promise<JobOutcome> {
    if (job.actuator !== this.actuator) return super.dispatch(job);
    this.seen.push({ key: job.key, attempt: job.attempt, ...(job.refusals === undefined ? {} : { refusals: job.refusals }), ...(job.delayMs === undefined ? {} : { delayMs: job.delayMs }) });
    if (this.refuse <= 0) return super.dispatch(job);
    this.refuse--;
    await new Promise((resolve) => setTimeout(resolve, 2));
    const reason = `job ${job.key} names actuator ${job.actuator}, which this worker's domain travel does not have: run a worker of a build of travel that has it`;
    return { ok: false, failure: { class: 'transient', code: 'worker.no_actuator', message: `a worker refused the job: worker.no_actuator: [worker ${REFUSER}] ${reason}` }, refused: { reason }, worker: REFUSER };
  }
}

type CreateRuntime = typeof createRuntime;
function runtimeOver(create: CreateRuntime, refuse: number, options: { storeDir?: string; stateDir?: string; refusalWaitMs?: number } = {}) {
  const stateDir = options.stateDir ?? mkdtempSync(path.join(root, 'state-'));
  const dispatcher = new RefusingDispatcher(travelDomain.actuators({ stateDir }), 'airline.hold', refuse);
  const store = new FileStore(options.storeDir ?? mkdtempSync(path.join(root, 'store-')));
  const runtime = create({ store, domain: travelDomain, stateDir, dispatcher, signingKey: key, sleep: async () => undefined, ...(options.refusalWaitMs === undefined ? {} : { refusalWaitMs: options.refusalWaitMs }) });
  return { runtime, stateDir, dispatcher, store };
}
const start = (seed: string) => ({ tenant: 't1', seed, asOf: travelDomain.asOf! });
/** The airline hold's records from its dispatch to its completion, as `kind@attempt`. */
const holdTrail = (records: JournalRecord[]) => {
  const from = records.findIndex((r) => r.kind === 'step.dispatched' && (r.body as Body).actuator === 'airline.hold');
  const holdKey = (records[from]!.body as Body).key;
  return records.filter((r, i) => i >= from && (r.body as Body).key === holdKey).map((r) => `${r.kind}@${(r.body as Body).attempt}`);
};
const appliedOnce = (stateDir: string, id: string) => {
  const world = readTravelState(path.join(stateDir, id, 'providers.json'));
  for (const [k, e] of Object.entries(world.ledger)) expect(e.applied, `effect ${k}`).toBe(1);
  return world;
};

describe('a refusal is not an attempt (flag 13)', () => {
  test('refusals are recorded between the dispatch and the completion; the same attempt goes back with its refusal count; the step completes as attempt 1, applied once; replay reads the refusals back', async () => {
    const { runtime, stateDir, dispatcher } = runtimeOver(createRuntime, 2);
    const handle = await runtime.start(travelDomain.intent!, start('refused-twice'));
    const result = await handle.done;
    expect(result.status).toBe('completed');
    const records = await runtime.store.read(handle.id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.flags).toContain(FLAG_REFUSALS);
    expect(holdTrail(records)).toEqual(['step.dispatched@1', 'step.refused@1', 'step.refused@1', 'step.completed@1']);
    const refused = records.filter((r) => r.kind === 'step.refused').map((r) => r.body as Body);
    expect(refused).toEqual([0, 1].map(() => ({ step: 0, key: expect.stringMatching(/\.2\.0$/), attempt: 1, code: 'worker.no_actuator', reason: expect.stringContaining('names actuator airline.hold'), worker: REFUSER })));
    expect(records.some((r) => r.kind === 'step.failed')).toBe(false);
    // The same attempt, dispatched again with the refusals the journal holds (its job id's part) and a growing backoff.
    expect(dispatcher.seen.map((j) => [j.attempt, j.refusals ?? 0, j.delayMs ?? 0])).toEqual([
      [1, 0, 0],
      [1, 1, 250],
      [1, 2, 500],
    ]);
    const world = appliedOnce(stateDir, handle.id);
    expect(world.ledger[refused[0]!.key]).toMatchObject({ actuator: 'airline.hold', attempts: 1, applied: 1 });
    expect(await runtime.replay(handle.id)).toMatchObject({ status: 'completed', sealed: true, fingerprint: result.fingerprint });
    expect((await runtime.verify(handle.id, publicKeyOf(key))).ok).toBe(true);
  });

  test('refused for longer than refusalWaitMs: the run rests suspended naming the worker and the fix; resumed with a capable worker it completes, the step still attempt 1', async () => {
    const storeDir = mkdtempSync(path.join(root, 'store-'));
    const first = runtimeOver(createRuntime, Number.POSITIVE_INFINITY, { storeDir, refusalWaitMs: 30 });
    const handle = await first.runtime.start(travelDomain.intent!, start('refused-always'));
    const result = await handle.done;
    expect(result.status).toBe('suspended');
    expect(result.suspension).toMatchObject({ class: 'runtime', code: 'step.no_capable_worker', state: 'execute' });
    expect(result.reason).toContain('no worker that can run step 0 (airline.hold) took it within 30 ms');
    expect(result.reason).toContain(`${REFUSER} (worker.no_actuator: its build lacks the actuator: upgrade it)`);
    expect(result.reason).toContain(`weft resume ${handle.id}`);
    const suspended = await first.runtime.store.read(handle.id);
    expect(suspended.at(-1)!.kind).toBe('step.refused');
    expect(suspended.some((r) => r.kind === 'step.failed' || r.kind === 'invocation.failed' || r.kind === 'invocation.handed_off')).toBe(false);
    const refusals = suspended.filter((r) => r.kind === 'step.refused').length;
    expect(refusals).toBeGreaterThanOrEqual(1);
    // ls says why.
    const row = (await first.runtime.list()).find((r) => r.id === handle.id);
    expect(row).toMatchObject({ status: 'suspended', reason: expect.stringContaining(REFUSER) });

    // A capable worker now: the resume reads the refusals back and dispatches the same attempt, refusal count and all.
    const second = runtimeOver(createRuntime, 0, { storeDir, stateDir: first.stateDir });
    const resumed = await (await second.runtime.resume(handle.id)).done;
    expect(resumed.status).toBe('completed');
    const records = await second.runtime.store.read(handle.id);
    expect(records.slice(0, suspended.length).map((r) => r.hash)).toEqual(suspended.map((r) => r.hash));
    expect(holdTrail(records)).toEqual(['step.dispatched@1', ...Array<string>(refusals).fill('step.refused@1'), 'step.completed@1']);
    expect(second.dispatcher.seen).toEqual([{ key: expect.any(String), attempt: 1, refusals, delayMs: expect.any(Number) }]);
    appliedOnce(first.stateDir, handle.id);
    expect(await second.runtime.replay(handle.id)).toMatchObject({ status: 'completed', fingerprint: resumed.fingerprint });
  });

  test('a journal pinned before flag 13 keeps the old rule — each refusal a transient step.failed that spends an attempt — and replays as written on today’s runtime', async () => {
    const storeDir = mkdtempSync(path.join(root, 'store-'));
    vi.resetModules();
    vi.doMock('../machines/flags.js', async (original) => {
      const real = await original<typeof import('../machines/flags.js')>();
      return { ...real, IMPLEMENTED_FLAGS: real.IMPLEMENTED_FLAGS.filter((f) => f !== real.FLAG_REFUSALS) };
    });
    const older = (await import('../runtime/index.js')).createRuntime;
    vi.doUnmock('../machines/flags.js');
    vi.resetModules();
    const { runtime: old, stateDir } = runtimeOver(older, 2, { storeDir });
    const handle = await old.start(travelDomain.intent!, start('refused-old'));
    const result = await handle.done;
    expect(result.status).toBe('completed');
    const records = await old.store.read(handle.id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.flags).not.toContain(FLAG_REFUSALS);
    expect(holdTrail(records)).toEqual(['step.dispatched@1', 'step.failed@1', 'step.dispatched@2', 'step.failed@2', 'step.dispatched@3', 'step.completed@3']);
    expect(records.filter((r) => r.kind === 'step.failed').map((r) => r.body as Body)).toEqual([1, 2].map((attempt) => expect.objectContaining({ attempt, class: 'transient', code: 'worker.no_actuator' })));
    expect(records.some((r) => r.kind === 'step.refused')).toBe(false);
    appliedOnce(stateDir, handle.id);
    const { runtime: today } = runtimeOver(createRuntime, 0, { storeDir });
    expect(await today.replay(handle.id)).toMatchObject({ status: 'completed', sealed: true, fingerprint: result.fingerprint });
  });
});
