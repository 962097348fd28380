/**
 * `npm run bench -- runtime [--steps N] [--reps R] [--resume-records N]` — the runtime's per-step
 * cost, each figure beside a baseline from the same run:
 *
 *   1. memory store: steps/s of a no-op world-effect step through the invocation machine (timed
 *      from entering `execute` to leaving it), beside a bare XState machine that invokes one
 *      promise actor per step, the same no-op called directly, and the raw store appends of the
 *      same records. Goal: ≥ 50 % of the bare machine's rate.
 *   2. file store: per-step time beside two raw fsync'd appends of the same bytes, flushed as the
 *      store flushes: the default ('auto', one invocation: blocking) and `flush: 'thread-pool'`.
 *      Goal: ≤ 1.5× two raw appends.
 *   3. resume from a snapshot at ~10k journal records (until the machine is rehydrated and at
 *      rest: an invocation awaiting approval, which a resume restores and leaves there) vs a full
 *      replay of the same journal. Goal: ≤ 2 ms.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { assign, createActor, fromPromise, setup } from 'xstate';
import { canonicalize } from '../journal/canonical.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import type { JournalStore } from '../journal/store.js';
import { FileStore } from '../stores/file.js';
import { MemoryStore } from '../stores/memory.js';
import { JournalWriter } from '../journal/writer.js';
import { createRuntime, type Runtime } from '../runtime/index.js';
import { ScriptedModel } from '../actors/model/scripted.js';
import { LibraryBuilder, add, atom, del, exists, not } from '../htn/library/builder.js';
import type { AdmissionPolicy } from '../machines/policy.js';
import { rawAppends } from './raw-appends.js';
import { BENCH_INTENT, noopActuator, noopActuators, noopLibrary, noopModel } from './noop-app.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(9));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

function runtimeOver(store: JournalStore, steps: number): Runtime {
  return createRuntime({ store, libraries: [noopLibrary], actuators: noopActuators(steps), observe: 'bench.observe', model: noopModel(), signingKey: key, limits: { maxNodes: 10_000_000, maxDepth: 1_000_000 } });
}

/**
 * For figure 3: epoch 1 runs its steps, then epoch 2 (a one-step goal) asks a person and the
 * invocation rests awaiting approval. Resuming it restores that rest and stays there — unlike a
 * hibernated one, which `resume` wakes (the decision to go on) — so every repetition restores the
 * same snapshot over the same journal.
 */
const restsAtEpoch2: AdmissionPolicy = {
  id: 'bench-rest-at-epoch-2@1',
  admitEpoch: ({ epoch }) => (epoch >= 2 ? { decision: 'require_approval', reason: 'bench: rest here' } : { decision: 'allow' }),
};
/** The no-op library and a one-step task (touch the first pending item): epoch 2's small plan, so the resting snapshot stays small. */
const restLibrary = new LibraryBuilder('bench-noop-rest')
  .type('item')
  .predicate('pending', { '?i': 'item' })
  .predicate('touched', { '?i': 'item' })
  .task('touch_all', {})
  .task('touch_one', {})
  .operator('touch', { params: { '?i': 'item' }, precondition: atom('pending', '?i'), effect: [del('pending', '?i'), add('touched', '?i')], actuator: { actuator: 'noop', args: { item: '?i' } } })
  .method('touch-next', { task: ['touch_all'], params: { '?i': 'item' }, precondition: atom('pending', '?i'), subtasks: [['touch', '?i'], ['touch_all']] })
  .method('all-touched', { task: ['touch_all'], precondition: not(exists({ '?i': 'item' }, atom('pending', '?i'))), subtasks: [] })
  .method('touch-first', { task: ['touch_one'], params: { '?i': 'item' }, precondition: atom('pending', '?i'), subtasks: [['touch', '?i']] })
  .build();
function restingRuntimeOver(store: JournalStore, steps: number): Runtime {
  const goals = ['touch_all', 'touch_one'];
  const model = new ScriptedModel({ model: 'bench-rest', entries: goals.map((task, i) => ({ match: { intent: BENCH_INTENT, epoch: i + 1 }, reply: { goal: { task, args: [] } } })) });
  return createRuntime({ store, libraries: [restLibrary], actuators: noopActuators(steps), observe: 'bench.observe', model, policy: restsAtEpoch2, signingKey: key, limits: { maxNodes: 10_000_000, maxDepth: 1_000_000 } });
}

/** Time (ms) the machine spent in `execute` for one invocation of `steps` no-op steps. */
async function machineExecuteMs(store: JournalStore, steps: number, seed: number): Promise<number> {
  const handle = await runtimeOver(store, steps).start(BENCH_INTENT, { tenant: 'bench', seed, asOf: '2026-01-01T00:00:00Z' });
  let entered = 0;
  let left = 0;
  handle.on('state', (value: string) => {
    if (value === 'execute') entered = performance.now();
    else if (entered && !left) left = performance.now();
  });
  const result = await handle.done;
  if (result.status !== 'completed') throw new Error(`bench invocation ended ${result.status}: ${result.reason}`);
  return left - entered;
}

/** A bare XState machine that invokes one promise actor per step. */
async function bareMachineMs(steps: number): Promise<number> {
  const machine = setup({
    types: { context: {} as { i: number; n: number } },
    actors: { step: fromPromise(async ({ input }: { input: { item: string } }) => noopActuator.run(input, undefined as never)) },
  }).createMachine({
    context: { i: 0, n: steps },
    initial: 'run',
    states: {
      run: {
        always: { guard: ({ context }) => context.i >= context.n, target: 'done' },
        invoke: { src: 'step', input: ({ context }) => ({ item: `item-${context.i}` }), onDone: { target: 'run', reenter: true, actions: assign({ i: ({ context }) => context.i + 1 }) } },
      },
      done: { type: 'final' },
    },
  });
  const t0 = performance.now();
  await new Promise<void>((resolve) => {
    const actor = createActor(machine);
    actor.subscribe({ complete: () => resolve() });
    actor.start();
  });
  return performance.now() - t0;
}

async function directCallsMs(steps: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < steps; i++) await noopActuator.run({ item: `item-${i}` }, undefined as never);
  return performance.now() - t0;
}

/** Raw appends of the records one step writes (dispatched + completed), pre-chained, to a store. */
async function rawStoreAppendMs(store: JournalStore, steps: number, source: MemoryStore, id: string): Promise<number> {
  const records = (await source.read(id)).filter((r) => r.kind === 'step.dispatched' || r.kind === 'step.completed');
  const first = (await source.read(id, 0, 1))[0]!;
  const pinned = first.body as unknown as { invocation: string; tenant: string; intent: string; pin: never };
  const copy = `${id}-raw-${Math.floor(performance.now())}`;
  const writer = await JournalWriter.create(store, { invocation: copy, tenant: pinned.tenant, intent: pinned.intent, pin: pinned.pin }, { writer: 'bench' });
  const drafts = records.slice(0, steps * 2).map((r) => ({ kind: r.kind, epoch: r.epoch, body: r.body }));
  const t0 = performance.now();
  for (const d of drafts) await writer.append(d);
  const ms = performance.now() - t0;
  await writer.close();
  return ms;
}

/** Time (ms) of raw fsync'd appends of the same JSONL bytes to a plain file, one per record (bench/raw-appends.ts). */
async function rawFsyncMs(lines: string[], dir: string, pool: boolean): Promise<number> {
  const file = path.join(dir, `raw-${pool ? 'pool' : 'blocking'}-${lines.length}-${Math.floor(performance.now())}.jsonl`);
  const chunks = lines.map((line) => Buffer.from(line, 'utf8'));
  const t0 = performance.now();
  await rawAppends(file, chunks, pool);
  return performance.now() - t0;
}

export async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { steps: { type: 'string' }, 'file-steps': { type: 'string' }, reps: { type: 'string' }, 'resume-records': { type: 'string' } } });
  const steps = Number(values.steps ?? 2000);
  const fileSteps = Number(values['file-steps'] ?? 300);
  const reps = Number(values.reps ?? 5);
  const resumeRecords = Number(values['resume-records'] ?? 10_000);

  // 1. memory store vs bare XState, direct calls, raw store appends — interleaved.
  const weft: number[] = [];
  const bare: number[] = [];
  const direct: number[] = [];
  const raw: number[] = [];
  for (let r = 0; r < reps + 1; r++) {
    const store = new MemoryStore();
    const b = await bareMachineMs(steps);
    const w = await machineExecuteMs(store, steps, r);
    const d = await directCallsMs(steps);
    const ids = await store.list();
    const a = await rawStoreAppendMs(new MemoryStore(), steps, store, ids[0]!);
    if (r === 0) continue; // warm-up
    bare.push(b);
    weft.push(w);
    direct.push(d);
    raw.push(a);
  }
  const rate = (ms: number, n = steps) => (n / ms) * 1000;
  const out: string[] = [];
  out.push(`runtime: ${steps} no-op world-effect steps per epoch, median of ${reps}`);
  out.push(`  memory store   weft machine           ${fmt(rate(median(weft)))} steps/s   (${fmt((median(weft) / steps) * 1000, 1)} µs/step)`);
  out.push(`                 bare XState, 1 actor/step ${fmt(rate(median(bare)))} steps/s   → weft at ${fmt((median(bare) / median(weft)) * 100, 0)} % of it (goal ≥ 50 %)`);
  out.push(`                 no-op called directly  ${fmt(rate(median(direct)))} calls/s`);
  out.push(`                 raw store appends (2/step) ${fmt(rate(median(raw)))} steps/s`);

  // 2. file store vs two raw fsync'd appends per step.
  const dir = mkdtempSync(path.join(tmpdir(), 'weft-bench-runtime-'));
  try {
    const samples = { auto: [] as number[], rawBlocking: [] as number[], pool: [] as number[], rawPool: [] as number[] };
    for (let r = 0; r < Math.max(3, Math.ceil(reps / 2)); r++) {
      // Alternate which mode goes first, so neither always runs on the other's leftovers.
      for (const flush of r % 2 === 0 ? (['auto', 'thread-pool'] as const) : (['thread-pool', 'auto'] as const)) {
        const store = new FileStore(path.join(dir, `store-${flush}-${r}`), { flush });
        const w = await machineExecuteMs(store, fileSteps, 100 + r);
        const id = (await store.list())[0]!;
        const lines = (await store.read(id)).filter((x) => x.kind === 'step.dispatched' || x.kind === 'step.completed').map((x) => canonicalize(x) + '\n');
        // The baseline flushes as the store did: 'auto' with one invocation blocks.
        const raw = await rawFsyncMs(lines, dir, flush === 'thread-pool');
        samples[flush === 'auto' ? 'auto' : 'pool'].push(w / fileSteps);
        samples[flush === 'auto' ? 'rawBlocking' : 'rawPool'].push(raw / fileSteps);
      }
    }
    const stepLine = (label: string, weftMs: number[], rawMs: number[]) => [
      `  ${label.padEnd(13)}  weft machine           ${fmt(1000 / median(weftMs))} steps/s   (${fmt(median(weftMs) * 1000, 0)} µs/step)`,
      `                 2 raw fsync'd appends  ${fmt(1000 / median(rawMs))} steps/s   (${fmt(median(rawMs) * 1000, 0)} µs/step) → weft step = ${fmt(median(weftMs) / median(rawMs), 2)}× (goal ≤ 1.5×)`,
    ];
    out.push(...stepLine('file store', samples.auto, samples.rawBlocking), "                 (the default flush, 'auto': one invocation, so it blocks; raw flushed the same way)");
    out.push(...stepLine('file, pool', samples.pool, samples.rawPool), "                 (flush: 'thread-pool'; raw flushed on the pool too)");

    // 3. resume from a snapshot at ~resumeRecords records vs a full replay.
    for (const [label, makeStore] of [
      ['memory', () => new MemoryStore()],
      ['file', () => new FileStore(path.join(dir, 'resume'))],
    ] as Array<[string, () => JournalStore]>) {
      const store = makeStore();
      // Epoch 1's steps are ~3 records each (admission, dispatch, completion).
      const n = Math.floor((resumeRecords - 20) / 3);
      const rt = restingRuntimeOver(store, n);
      const handle = await rt.start(BENCH_INTENT, { tenant: 'bench', seed: 'resume', asOf: '2026-01-01T00:00:00Z' });
      const paused = await handle.done;
      if (paused.status !== 'awaiting_approval') throw new Error(`the resume figure's invocation ended ${paused.status}, not awaiting_approval`);
      const records = await store.length(paused.id);
      const resumeMs: number[] = [];
      const replayMs: number[] = [];
      // Resumes first, each by a fresh runtime (as a new process would), then the full replays:
      // a replay's garbage would otherwise land in the next resume's timing.
      for (let r = 0; r < reps; r++) {
        const fresh = restingRuntimeOver(store, n);
        const t0 = performance.now();
        const h = await fresh.resume(paused.id);
        const t1 = performance.now();
        if (h.state?.value !== 'awaitingApproval') throw new Error(`resumed into ${h.state?.value}`);
        await h.abandon();
        resumeMs.push(t1 - t0);
      }
      for (let r = 0; r < reps; r++) {
        const t2 = performance.now();
        await restingRuntimeOver(store, n).replay(paused.id);
        replayMs.push(performance.now() - t2);
      }
      out.push(`  resume (${label.padEnd(6)}) at ${records} records: from snapshot ${fmt(median(resumeMs), 2)} ms (goal ≤ 2 ms) vs full replay ${fmt(median(replayMs), 1)} ms`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(out.join('\n') + '\n');
}
