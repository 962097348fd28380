/**
 * Pure helpers the epoch's actors share: what an epoch's outcome was (for the model's next parse
 * request), what the library offers the model as tasks, and the retry backoff — each a function of
 * recorded data only, so live runs, resumes and replays compute the same values.
 */
import type { Library } from '../htn/library/schema.js';
import type { EpochOutcome, InvocationContext } from './context.js';


export function epochOutcome(context: InvocationContext): EpochOutcome {
  const goal = context.goal ?? { task: '(none)', args: [] };
  const all = context.done.map((d) => ({ step: d.step, operator: d.operator, result: d.result }));
  const keep = context.limits.resultsPerOutcome;
  const results = all.slice(0, keep);
  const omitted = all.length - results.length;
  const failure = context.failure;
  const base = { epoch: context.epoch, goal, results, ...(omitted > 0 ? { omitted } : {}) };
  if (!failure) return { ...base, outcome: 'completed' };
  return { ...base, outcome: failure.code === 'epoch.denied' ? 'denied' : 'compensated', reason: failure.message };
}

/**
 * The outcomes the model sees when it forms the next goal, kept bounded so that neither prompts
 * nor hibernation images grow with the length of the run: the last `outcomeWindow` epochs keep
 * their step results; older ones keep their goal, outcome and reason.
 */
export function compactOutcomes(outcomes: readonly EpochOutcome[], outcomeWindow: number): EpochOutcome[] {
  const cut = outcomes.length - outcomeWindow;
  return outcomes.map((o, i) => (i >= cut || o.results.length === 0 ? o : { ...o, results: [], omitted: (o.omitted ?? 0) + o.results.length }));
}

/** The tasks a model may name as a goal: the library's compound tasks, then its operators. */
export function taskCatalogue(library: Library): Array<{ name: string; params: Array<{ name: string; type: string }> }> {
  return [
    ...library.tasks.map((t) => ({ name: t.name, params: t.params.map((p) => ({ name: p.name, type: p.type })) })),
    ...library.operators.map((o) => ({ name: o.name, params: o.params.map((p) => ({ name: p.name, type: p.type })) })),
  ];
}

/**
 * Delay before retry `attempt + 1` of a transient failure: exponential (base · 2^(attempt-1),
 * capped) with up to 25 % jitter drawn from `unit` — a value the caller derives from the seeded
 * PRNG stream of the step's idempotency key, never from Math.random.
 */
export function backoffMs(attempt: number, unit: number, baseMs = 200, capMs = 30_000): number {
  const exp = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp * (1 + 0.25 * unit));
}
