/**
 * Mining: gap-path epochs in, a new library version and a report out.
 *
 * 1. Each gap-path epoch is generalised into a candidate method (generalise.ts); epochs whose
 *    fragments generalise to the same shape — the same fragment seen with other constants — are
 *    one candidate, supported by all of them.
 *    An epoch the policy denied (it never ran) or that has not completed is reported and left out.
 * 2. Candidates are judged in a fixed order (by name, a digest of the shape), each against the
 *    library accepted so far:
 *    - no epoch it came from was compensated (its steps ran and failed);
 *    - it is supported by at least `minSupport` epochs;
 *    - it is not already in the library;
 *    - on each recorded state it came from, the plan it derives keeps its task's constraints (the
 *      bindings of an effect's args to the goal's above all), as admission would check them;
 *    - placed after its task's existing methods, on each recorded state it came from it re-derives
 *      exactly the authored fragment (the real planner);
 *    - on every derived epoch of the corpus (every journal of the store, not only the ones mined)
 *      where the base library produced a plan, the new version produces the same plan digest.
 * 3. The accepted methods form the new version (the base library plus them); its digest is the
 *    hash of its canonical JSON (htn/library/digest.ts).
 *
 * Deterministic: inputs are deduplicated by (invocation, epoch) and sorted, so the same journals in
 * any order give the same library digest and report; one epoch given twice with different content
 * is refused (merge the journals by id first: journals.ts). Reasons quote args (a model wrote
 * them); the text is raw otherwise — a terminal renders it inert (cli/terminal-text.ts). Pure: the
 * caller reads the journals.
 */
import { canonicalize } from '../journal/canonical.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Goal, Library, Method } from '../htn/library/schema.js';
import { validateLibrary } from '../htn/library/validate.js';
import { checkTaskConstraints } from '../machines/constraints.js';
import type { EpochStep } from '../machines/context.js';
import { quoteValue } from '../machines/untrusted-text.js';
import { generalise } from './generalise.js';
import { digestOfPlanned, planOn, stepsOf, type PlanningOptions } from './planning.js';
import type { CandidateReport, MiningReport, SourceRef } from './report.js';
import type { DerivedEpoch, GapSource } from './sources.js';

export interface MiningInput {
  /** The library version mined from (the new version extends it). */
  library: Library;
  /** The gap-path epochs to learn from (gapSourcesOf over the journals given). */
  gaps: readonly GapSource[];
  /** Every derived epoch of the store(s) (derivedEpochsOf over every journal): what must not change. */
  corpus: readonly DerivedEpoch[];
  /** Epochs a candidate must be seen in (default 1). */
  minSupport?: number;
  planning?: PlanningOptions;
  /** Told as each candidate is judged (the CLI's progress on stderr). */
  onProgress?: (done: number, total: number, candidate: string) => void;
}

export interface MiningResult {
  library: Library;
  digest: string;
  report: MiningReport;
}

const refOf = (s: { invocation: string; epoch: number }): SourceRef => ({ invocation: s.invocation, epoch: s.epoch });
const byRef = (a: SourceRef, b: SourceRef) => (a.invocation < b.invocation ? -1 : a.invocation > b.invocation ? 1 : a.epoch - b.epoch);
const refKey = (s: SourceRef) => `${s.invocation}#${s.epoch}`;

/**
 * `items` once each by (invocation, epoch), sorted. The same epoch twice must be the same epoch: two
 * different ones (a copy of a journal cut before the epoch closed, and the finished journal) would
 * make the result depend on which came first, so they are refused — merge the journals first
 * (journals.ts mergeJournal keeps the longer of a journal and its prefix).
 */
function unique<T extends SourceRef>(items: readonly T[], what: string): T[] {
  const seen = new Map<string, { item: T; text: string }>();
  for (const item of [...items].sort(byRef)) {
    const text = canonicalize(item as never);
    const held = seen.get(refKey(item));
    if (!held) seen.set(refKey(item), { item, text });
    else if (held.text !== text) throw new Error(`two different ${what} for ${refKey(item)}: the journal of ${item.invocation} was given twice with different content (merge the journals by id first: mergeJournal)`);
  }
  return [...seen.values()].map((s) => s.item);
}

/** A goal or step as a reason shows it: its args quoted and bounded (they come from a model). */
const call = (g: Goal) => `${g.task}(${g.args.map((a) => quoteValue(a)).join(', ')})`;

/** The shape of a method: everything but its name. */
export function shapeOf(m: Method): string {
  return canonicalize({ task: m.task, params: m.params, precondition: m.precondition, subtasks: m.subtasks });
}

/** `library` with `method` after the methods its task already has (or last, when it has none). */
export function withMethod(library: Library, method: Method): Library {
  let at = library.methods.length;
  for (let i = library.methods.length - 1; i >= 0; i--) {
    if (library.methods[i]!.task.task === method.task.task) {
      at = i + 1;
      break;
    }
  }
  return { ...library, methods: [...library.methods.slice(0, at), method, ...library.methods.slice(at)] };
}

const sameSteps = (a: readonly Goal[] | undefined, b: readonly Goal[]) => a !== undefined && canonicalize(a) === canonicalize(b);

/**
 * The first source on whose state the candidate's plan for the source's goal breaks the goal task's
 * constraints (machines/constraints.ts, as admission checks them; per-run counts see only this plan,
 * since a method has no run), with the reason; undefined when they hold or there is no plan.
 */
function constraintBreak(library: Library, sources: readonly GapSource[], planning: PlanningOptions): { source: GapSource; reason: string } | undefined {
  for (const source of sources) {
    const planned = planOn(library, source.state, source.goal, planning);
    if (planned.kind !== 'plan') continue;
    const reason = checkTaskConstraints(library, source.goal, JSON.parse(JSON.stringify(planned.steps)) as EpochStep[]);
    if (reason !== undefined) return { source, reason };
  }
  return undefined;
}

export function mine(input: MiningInput): MiningResult {
  const base = input.library;
  const baseDigest = libraryDigest(base);
  const planning = input.planning ?? {};
  const minSupport = input.minSupport ?? 1;
  const gaps = unique(input.gaps, 'gap-path epochs');
  const corpus = unique(input.corpus, 'derived epochs');
  const reports: CandidateReport[] = [];

  // 1. Generalise, and group by shape.
  const groups = new Map<string, { method: Method; sources: GapSource[] }>();
  for (const gap of gaps) {
    // An epoch the policy denied never ran, and one still open has not completed: neither is evidence for or against its shape.
    // Nor is a shadow run's epoch: its world effects were recorded, never applied.
    if (gap.outcome === 'denied' || gap.outcome === 'unfinished' || gap.outcome === 'shadowed') {
      const why =
        gap.outcome === 'denied' ? 'the epoch was denied before any step ran'
        : gap.outcome === 'shadowed' ? 'the epoch ran in a shadow run (its world effects were never applied)'
        : 'the epoch has not completed (the run failed, was handed off, or is still open)';
      reports.push({ candidate: refKey(gap), task: gap.goal.task, verdict: 'failed-or-compensated', reason: `${why}: not mined`, sources: [refOf(gap)] });
      continue;
    }
    const g = generalise(gap.goal, gap.fragment, gap.state, base);
    if (g.kind === 'not-general') {
      reports.push({ candidate: refKey(gap), task: gap.goal.task, verdict: 'does-not-generalise', reason: g.reason, sources: [refOf(gap)] });
      continue;
    }
    const group = groups.get(g.shape);
    if (group) group.sources.push(gap);
    else groups.set(g.shape, { method: g.method, sources: [gap] });
  }

  // 2. Judge each candidate, in name order, against what was accepted before it.
  const ordered = [...groups.values()].sort((a, b) => (a.method.name < b.method.name ? -1 : a.method.name > b.method.name ? 1 : 0));
  const baseDigests = new Map<string, string | undefined>();
  const basePlan = (e: DerivedEpoch) => {
    const key = refKey(e);
    if (!baseDigests.has(key)) baseDigests.set(key, digestOfPlanned(planOn(base, e.state, e.goal, planning)));
    return baseDigests.get(key);
  };
  const existing = new Set(base.methods.map(shapeOf));
  let accepted = base;
  let count = 0;
  for (const [i, { method, sources }] of ordered.entries()) {
    input.onProgress?.(i, ordered.length, method.name);
    const report: CandidateReport = { candidate: method.name, task: method.task.task, verdict: 'accepted', sources: sources.map(refOf), method };
    reports.push(report);
    const refuse = (verdict: CandidateReport['verdict'], reason: string) => {
      report.verdict = verdict;
      report.reason = reason;
    };
    const bad = sources.filter((s) => s.outcome !== 'completed');
    if (bad.length > 0) {
      refuse('failed-or-compensated', `the same fragment failed and was compensated in ${bad.map(refKey).join(', ')}`);
      continue;
    }
    if (sources.length < minSupport) {
      refuse('below-min-support', `seen ${sources.length === 1 ? 'only once' : `only ${sources.length} times`}; --min-support ${minSupport} asks for ${minSupport}`);
      continue;
    }
    if (existing.has(shapeOf(method))) {
      refuse('already-in-library', `library ${baseDigest} already has this method`);
      continue;
    }
    let candidate: Library;
    try {
      candidate = validateLibrary(withMethod(accepted, method));
    } catch (err) {
      refuse('does-not-generalise', `the generalised method is not a valid method: ${(err as Error).message}`);
      continue;
    }
    // The task's constraints hold on what the method derives — the bindings above all: a fragment an
    // older library let drift from its goal must not become a method that drifts on every run.
    const broken = constraintBreak(candidate, sources, planning);
    if (broken) {
      refuse('breaks-constraints', `on the state recorded in ${refKey(broken.source)} the plan it derives breaks a constraint: ${broken.reason}`);
      continue;
    }
    const notRederived = sources.find((s) => !sameSteps(stepsOf(planOn(candidate, s.state, s.goal, planning)), s.fragment));
    if (notRederived) {
      const got = stepsOf(planOn(candidate, notRederived.state, notRederived.goal, planning));
      const what = got ? `it derives ${got.map(call).join(', ')}` : 'it derives no plan';
      refuse('fails-rederivation', `on the state recorded in ${refKey(notRederived)} ${what}, not the authored ${notRederived.fragment.map(call).join(', ')}`);
      continue;
    }
    const changed = corpus.find((e) => {
      const before = basePlan(e);
      return before !== undefined && digestOfPlanned(planOn(candidate, e.state, e.goal, planning)) !== before;
    });
    if (changed) {
      refuse('conflicts', `it changes the decomposition of ${call(changed.goal)} recorded in ${refKey(changed)}`);
      continue;
    }
    accepted = candidate;
    count++;
  }
  input.onProgress?.(ordered.length, ordered.length, '');
  reports.sort((a, b) => (a.candidate < b.candidate ? -1 : a.candidate > b.candidate ? 1 : byRef(a.sources[0]!, b.sources[0]!)));
  const digest = count > 0 ? libraryDigest(accepted) : baseDigest;
  return {
    library: count > 0 ? accepted : base,
    digest,
    report: { base: baseDigest, library: digest, accepted: count, candidates: reports, gapEpochs: gaps.length, checkedEpochs: corpus.length },
  };
}
