/**
 * Default invocation limits, and the machine input an invocation's first records imply (a fork's
 * first two: its pin and `invocation.forked`, whose state the machine starts from). Every
 * limit is pinned in `invocation.pinned` (pin.limits), so an invocation resumes and replays under
 * the limits it started with, not today's defaults (those only fill limits a journal predates).
 */
import type { JournalRecord } from '../journal/records.js';
import type { EpochOutcome, InvocationInput, InvocationLimits } from '../machines/context.js';
import { FLAG_FAIL_CLOSED, hasFlag } from '../machines/flags.js';
import { DEFAULT_LIMITS } from '../machines/limits.js';

/** The defaults live on the pure side (machines/limits.ts): mining plans with them too. */
export { DEFAULT_LIMITS };

/** Caps a journal pinned before flag 1 never had: it replays without them. */
const UNCAPPED = { maxIntentChars: Number.MAX_SAFE_INTEGER, maxReplyChars: Number.MAX_SAFE_INTEGER, maxArgChars: Number.MAX_SAFE_INTEGER, maxSummaryChars: Number.MAX_SAFE_INTEGER };

/** The machine input of an invocation, from its `invocation.pinned` record (seq 0). */
export function inputFromPinned(first: JournalRecord<'invocation.pinned'>): InvocationInput {
  const { invocation, tenant, intent, pin, intentCut } = first.body;
  const defaults = hasFlag(pin, FLAG_FAIL_CLOSED) ? DEFAULT_LIMITS : { ...DEFAULT_LIMITS, ...UNCAPPED };
  return {
    invocation,
    tenant,
    intent,
    pin,
    limits: { ...defaults, ...(pin.limits as Partial<InvocationLimits> | undefined) },
    ...(intentCut ? { intentCut } : {}),
    seq: 1,
    tail: first.hash,
  };
}

/**
 * The machine input of an invocation from its first records: `inputFromPinned`, and for a fork (its
 * second record `invocation.forked`) the state it starts from and the position after that record.
 */
export function inputFromJournal(records: readonly JournalRecord[]): InvocationInput {
  const input = inputFromPinned(records[0] as JournalRecord<'invocation.pinned'>);
  const second = records[1];
  if (second?.kind !== 'invocation.forked') return input;
  const { state } = (second as JournalRecord<'invocation.forked'>).body;
  return {
    ...input,
    from: {
      epoch: state.epoch,
      outcomes: state.outcomes as unknown as EpochOutcome[],
      spent: typeof state.spent === 'number' ? state.spent : 0,
      replans: state.replans,
      kept: state.effects.map((e) => ({ epoch: e.epoch, step: e.step, actuator: e.actuator, key: e.key })),
      ...(state.authored?.length ? { authored: state.authored } : {}),
    },
    ...((second as JournalRecord<'invocation.forked'>).body.world === undefined ? {} : { world: (second as JournalRecord<'invocation.forked'>).body.world }),
    seq: 2,
    tail: second.hash,
  };
}
