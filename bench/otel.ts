/**
 * `npm run bench -- otel [--steps N] [--rounds R]` — what tracing costs a run: throughput (steps/s
 * of a whole run, start to seal) and the step p50
 * (dispatch to completion) of a no-op app on the memory store, with the OpenTelemetry SDK on (Weft's
 * provider: batch span processor, an exporter that drops every span) against the same run with no
 * provider registered. R rounds of the two arms back to back, order alternating; the figure is the
 * median of the rounds' throughput ratios (as bench/stately-relay.ts does). Goal: ≥ 0.95×.
 * Fairness: two full-size warm-up rounds of each arm first (the SDK's code and the runtime's are
 * compiled before anything is measured). BENCH_GC=1 adds a full garbage collection before each arm
 * (neither arm pays for the other's garbage); off by default: on a loaded machine it made both arms
 * slower and the rounds noisier, without moving the ratio's median much.
 */
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { signingKeyFromSecret } from '../journal/seal.js';
import { MemoryStore } from '../stores/memory.js';
import { createRuntime } from '../runtime/index.js';
import type { JournalRecord } from '../journal/records.js';
import { installTracing } from '../telemetry/setup.js';
import { BENCH_INTENT, noopActuators, noopLibrary, noopModel } from './noop-app.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(9));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** Spans are made, batched and handed over — then dropped. */
const dropEverything = { export: (_spans: unknown[], done: (r: { code: number }) => void) => done({ code: 0 }), shutdown: async () => undefined, forceFlush: async () => undefined };

let seed = 0;

/** A full collection between arms with BENCH_GC=1 (V8's gc(), exposed for this process without a command-line flag). */
const collectGarbage = (): void => {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
};

/** One run of `steps` no-op steps: steps/s from start to sealed (model, planning and seal included, the same in both arms), and each step's dispatch-to-completion time (ms). */
async function oneRun(steps: number): Promise<{ rate: number; stepMs: number[]; cpuUs: number }> {
  const cpu = process.cpuUsage();
  const runtime = createRuntime({ store: new MemoryStore(), libraries: [noopLibrary], actuators: noopActuators(steps), observe: 'bench.observe', model: noopModel(), signingKey: key, limits: { maxNodes: 10_000_000, maxDepth: 1_000_000 } });
  const began = performance.now();
  const handle = await runtime.start(BENCH_INTENT, { tenant: 'bench', seed: String(++seed), asOf: '2026-01-01T00:00:00Z' });
  const dispatched = new Map<string, number>();
  const stepMs: number[] = [];
  handle.on('record', (record: JournalRecord) => {
    const body = record.body as { key?: string };
    if (record.kind === 'step.dispatched') dispatched.set(body.key!, performance.now());
    else if (record.kind === 'step.completed') stepMs.push(performance.now() - dispatched.get(body.key!)!);
  });
  const result = await handle.done;
  const ended = performance.now();
  const used = process.cpuUsage(cpu);
  await runtime.close();
  if (result.status !== 'completed') throw new Error(`bench invocation ended ${result.status}: ${result.reason}`);
  return { rate: (steps / (ended - began)) * 1000, stepMs, cpuUs: (used.user + used.system) / steps };
}

async function arm(traced: boolean, steps: number): Promise<{ rate: number; stepMs: number[]; cpuUs: number }> {
  if (process.env.BENCH_GC === '1') collectGarbage();
  if (!traced) return oneRun(steps);
  const tracing = await installTracing({ exporter: dropEverything });
  try {
    return await oneRun(steps);
  } finally {
    await tracing.shutdown(2_000);
  }
}

export async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { steps: { type: 'string' }, rounds: { type: 'string' } } });
  const steps = Number(values.steps ?? 300);
  const rounds = Number(values.rounds ?? 9);
  for (let w = 0; w < 2; w++) {
    // warm-up, both arms, full size, not measured
    await arm(false, steps);
    await arm(true, steps);
  }
  const ratios: number[] = [];
  const bare: number[] = [];
  const traced: number[] = [];
  const bareStep: number[] = [];
  const tracedStep: number[] = [];
  const bareCpu: number[] = [];
  const tracedCpu: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? [false, true] : [true, false];
    const got = new Map<boolean, { rate: number; stepMs: number[]; cpuUs: number }>();
    for (const t of order) got.set(t, await arm(t, steps));
    const b = got.get(false)!;
    const t = got.get(true)!;
    bare.push(b.rate);
    traced.push(t.rate);
    bareStep.push(median(b.stepMs));
    tracedStep.push(median(t.stepMs));
    ratios.push(t.rate / b.rate);
    bareCpu.push(b.cpuUs);
    tracedCpu.push(t.cpuUs);
    process.stderr.write(`otel: round ${r + 1}/${rounds}: ${fmt(b.rate)} steps/s without a provider, ${fmt(t.rate)} with the SDK on (×${fmt(t.rate / b.rate, 3)}); CPU ${fmt(b.cpuUs)} → ${fmt(t.cpuUs)} µs/step\n`);
  }
  const ratio = median(ratios);
  process.stdout.write(
    [
      `otel: ${steps} no-op steps per run, memory store, ${rounds} rounds alternating`,
      `  throughput  no provider ${fmt(median(bare))} steps/s   SDK on (batch, no-op exporter) ${fmt(median(traced))} steps/s`,
      `  step p50    no provider ${fmt(median(bareStep), 3)} ms          SDK on ${fmt(median(tracedStep), 3)} ms`,
      `  CPU/step    no provider ${fmt(median(bareCpu))} µs          SDK on ${fmt(median(tracedCpu))} µs (this process; less sensitive to a loaded machine)`,
      `  median of the rounds' throughput ratios: ${fmt(ratio, 3)}× (goal ≥ 0.95×) ${ratio >= 0.95 ? 'ok' : 'BELOW GOAL'}`,
    ].join('\n') + '\n',
  );
}
