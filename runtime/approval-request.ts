/**
 * What an epoch awaiting a person's approval asks for: the policy's reason (the epoch's
 * `approval.requested` record) and the steps it would run. The journal keeps only the plan's
 * digest; the steps themselves are in the resting snapshot's context (`plan`), which is used only
 * when its epoch and digest are the ones the approval names — a stale or foreign snapshot asks for
 * nothing. Shared by the listing (list.ts) and the description of an invocation (describe.ts), so
 * `weft ls` and `weft show` say the same.
 *
 * Pure. The snapshot is read defensively (it is a file or a Redis value anyone could have edited):
 * a field of the wrong type is left out, never trusted and never thrown on. Args and operators may
 * come from a model (a gap-path fragment): they are data, never interpreted.
 */
import type { Snapshot } from '../journal/store.js';

/** One step of the plan an approval asks for. */
export interface AskedStep {
  /** The step's index in its epoch's plan (the `step` of its records). */
  step: number;
  /** The primitive task (operator) of the library the step carries out. */
  operator: string;
  /** The actuator it dispatches, null when the library binds none. */
  actuator: string | null;
  /** The explicit args it dispatches with. */
  args: Record<string, string | number>;
  /** Read-only steps change nothing in the world. */
  readOnly: boolean;
}

/** The plan a snapshot's context holds, with the epoch it belongs to. */
export interface SnapshotPlan {
  epoch: number;
  source: 'htn' | 'authored';
  digest: string;
  steps: AskedStep[];
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isScalar = (value: unknown): value is string | number => typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));

function stepOf(value: unknown, index: number): AskedStep | undefined {
  if (!isRecord(value) || typeof value.operator !== 'string') return undefined;
  const args: Record<string, string | number> = {};
  if (isRecord(value.actuatorArgs)) {
    for (const key of Object.keys(value.actuatorArgs).sort()) {
      const arg = value.actuatorArgs[key];
      if (isScalar(arg)) args[key] = arg;
    }
  }
  return { step: index, operator: value.operator, actuator: typeof value.actuator === 'string' ? value.actuator : null, args, readOnly: value.readOnly === true };
}

/** The plan in a snapshot's context (`data.context.plan` at `data.context.epoch`), or undefined. */
export function snapshotPlan(snapshot: Snapshot | undefined): SnapshotPlan | undefined {
  const context = isRecord(snapshot?.data) ? snapshot.data.context : undefined;
  if (!isRecord(context) || !isRecord(context.plan) || typeof context.epoch !== 'number') return undefined;
  const { source, digest, steps } = context.plan;
  if ((source !== 'htn' && source !== 'authored') || typeof digest !== 'string' || !Array.isArray(steps)) return undefined;
  const asked: AskedStep[] = [];
  for (let i = 0; i < steps.length; i++) {
    const step = stepOf(steps[i], i);
    if (!step) return undefined; // a plan with a step that cannot be read is not shown in part
    asked.push(step);
  }
  return { epoch: context.epoch, source, digest, steps: asked };
}

/**
 * The steps an approval of `plan` (its digest) in `epoch` asks for, from the snapshot; undefined
 * when the snapshot holds another epoch's or another plan's steps, or none.
 */
export function askedSteps(snapshot: Snapshot | undefined, epoch: number, plan: string): AskedStep[] | undefined {
  const held = snapshotPlan(snapshot);
  return held && held.epoch === epoch && held.digest === plan ? held.steps : undefined;
}
