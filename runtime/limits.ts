/**
 * Default invocation limits, and the machine input an invocation's first record implies. Every
 * limit is pinned in `invocation.pinned` (pin.limits), so an invocation resumes and replays under
 * the limits it started with, not today's defaults (those only fill limits a journal predates).
 */
import type { JournalRecord } from '../journal/records.js';
import type { InvocationInput, InvocationLimits } from '../machines/context.js';

export const DEFAULT_LIMITS: InvocationLimits = {
  maxReprompts: 2,
  maxReplans: 2,
  maxAttempts: 3,
  maxEpochs: 12,
  maxNodes: 200_000,
  maxDepth: 10_000,
  outcomeWindow: 8,
  resultsPerOutcome: 32,
};

/** The machine input of an invocation, from its `invocation.pinned` record (seq 0). */
export function inputFromPinned(first: JournalRecord<'invocation.pinned'>): InvocationInput {
  const { invocation, tenant, intent, pin } = first.body;
  return {
    invocation,
    tenant,
    intent,
    pin,
    limits: { ...DEFAULT_LIMITS, ...(pin.limits as Partial<InvocationLimits> | undefined) },
    seq: 1,
    tail: first.hash,
  };
}
