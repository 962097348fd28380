/**
 * What mining reads from a journal: its gap-path epochs (goal, the authored fragment, the recorded
 * observation, how the epoch closed) and all its derived epochs (goal, observation, plan digest) —
 * the corpus a candidate method must leave unchanged.
 *
 * Where each part is in the records of one epoch (runtime/epoch/model-steps.ts, plan-steps.ts):
 * - the observation: `state.observed` (body.state) — what the planner, and the author, saw;
 * - the fragment: the last `model.completed` of purpose `author` before the epoch's
 *   `epoch.derived { source: 'authored' }` — the reply the judge accepted, `{ steps: [{ operator, args }] }`
 *   with explicit args only;
 * - the goal and the library it was derived on: `epoch.derived` (body.goal, body.library);
 * - the ending: `epoch.closed` (outcome completed / compensated / denied); a compensation
 *   dispatched in the epoch, or no close at all (the run failed or was handed off mid-epoch), counts
 *   as not completed; nor does an epoch of a shadow run that shadowed a world effect (`step.shadowed`):
 *   its effects never happened, so it is no evidence that the fragment works (`shadowed`).
 *
 * Pure: records in, data out. A journal whose records do not have these shapes yields nothing
 * from that epoch (mining only ever learns from what it can read exactly).
 */
import type { JournalRecord } from '../journal/records.js';
import type { Fact, Goal, WorldState } from '../htn/library/schema.js';

/** One gap-path epoch of a recorded run. */
export interface GapSource {
  invocation: string;
  epoch: number;
  goal: Goal;
  /** The observed state the fragment was authored for and certified on. */
  state: WorldState;
  /** The authored fragment: operator calls with explicit (ground) args. */
  fragment: Goal[];
  /** The digest of the library the epoch was derived on. */
  library: string;
  /** How the epoch ended: `completed` only when it closed completed with no compensation and nothing shadowed. */
  outcome: 'completed' | 'compensated' | 'denied' | 'unfinished' | 'shadowed';
}

/** One derived epoch (either source): a decomposition the corpus recorded. */
export interface DerivedEpoch {
  invocation: string;
  epoch: number;
  source: 'htn' | 'authored';
  goal: Goal;
  state: WorldState;
  library: string;
  plan: string;
}

function asState(value: unknown): WorldState | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as { objects?: unknown; facts?: unknown };
  if (!Array.isArray(v.objects) || !Array.isArray(v.facts)) return undefined;
  return { objects: v.objects as WorldState['objects'], facts: v.facts as Fact[] };
}

/** The steps of an author reply, or undefined when the text is not one. */
export function fragmentOf(reply: unknown): Goal[] | undefined {
  let value: unknown = reply;
  if (typeof reply === 'string') {
    try {
      value = JSON.parse(reply);
    } catch {
      return undefined;
    }
  }
  const steps = (value as { steps?: unknown } | null)?.steps;
  if (!Array.isArray(steps) || steps.length === 0) return undefined;
  const out: Goal[] = [];
  for (const s of steps) {
    const step = s as { operator?: unknown; args?: unknown };
    if (typeof step?.operator !== 'string' || !Array.isArray(step.args)) return undefined;
    if (!step.args.every((a) => (typeof a === 'string' && a.length > 0) || (typeof a === 'number' && Number.isFinite(a)))) return undefined;
    out.push({ task: step.operator, args: step.args as Array<string | number> });
  }
  return out;
}

interface EpochParts {
  state?: WorldState;
  author?: unknown;
  derived?: JournalRecord<'epoch.derived'>;
  closed?: string;
  compensated: boolean;
  /** A shadow run's world effect was recorded in it (`step.shadowed`), not applied. */
  shadowed?: boolean;
}

function byEpoch(records: readonly JournalRecord[]): { invocation: string; epochs: Map<number, EpochParts> } {
  const first = records[0] as JournalRecord<'invocation.pinned'> | undefined;
  const invocation = first?.kind === 'invocation.pinned' ? first.body.invocation : '';
  const epochs = new Map<number, EpochParts>();
  for (const r of records) {
    let parts = epochs.get(r.epoch);
    if (!parts) epochs.set(r.epoch, (parts = { compensated: false }));
    switch (r.kind) {
      case 'state.observed':
        parts.state = asState((r as JournalRecord<'state.observed'>).body.state);
        break;
      case 'model.completed': {
        const body = (r as JournalRecord<'model.completed'>).body;
        // The last author reply before the derivation is the accepted one (earlier ones were rejected).
        if (body.purpose === 'author' && !parts.derived) parts.author = body.reply;
        break;
      }
      case 'epoch.derived':
        parts.derived = r as JournalRecord<'epoch.derived'>;
        break;
      case 'compensation.dispatched':
        parts.compensated = true;
        break;
      case 'step.shadowed':
        parts.shadowed = true;
        break;
      case 'epoch.closed':
        parts.closed = (r as JournalRecord<'epoch.closed'>).body.outcome;
        break;
      default:
        break;
    }
  }
  return { invocation, epochs };
}

/** The gap-path epochs of one journal, in epoch order. */
export function gapSourcesOf(records: readonly JournalRecord[]): GapSource[] {
  const { invocation, epochs } = byEpoch(records);
  const out: GapSource[] = [];
  for (const [epoch, p] of [...epochs].sort((a, b) => a[0] - b[0])) {
    const d = p.derived?.body;
    if (!d || d.source !== 'authored' || !p.state) continue;
    const fragment = fragmentOf(p.author);
    if (!fragment) continue;
    const outcome = p.shadowed ? 'shadowed' : p.compensated ? 'compensated' : p.closed === 'completed' ? 'completed' : p.closed === 'compensated' || p.closed === 'denied' ? p.closed : 'unfinished';
    out.push({ invocation, epoch, goal: { task: d.goal.task, args: d.goal.args as Goal['args'] }, state: p.state, fragment, library: d.library, outcome });
  }
  return out;
}

/** Every derived epoch of one journal, in epoch order. */
export function derivedEpochsOf(records: readonly JournalRecord[]): DerivedEpoch[] {
  const { invocation, epochs } = byEpoch(records);
  const out: DerivedEpoch[] = [];
  for (const [epoch, p] of [...epochs].sort((a, b) => a[0] - b[0])) {
    const d = p.derived?.body;
    if (!d || !p.state) continue;
    out.push({ invocation, epoch, source: d.source, goal: { task: d.goal.task, args: d.goal.args as Goal['args'] }, state: p.state, library: d.library, plan: d.plan });
  }
  return out;
}
