/**
 * Default invocation limits. Every limit is pinned in `invocation.pinned` (pin.limits), so an
 * invocation resumes and replays under the limits it started with, not today's defaults.
 */
import type { InvocationLimits } from '../machines/context.js';

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
