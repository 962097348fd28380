/**
 * The default invocation limits: what a run started today pins (runtime/limits.ts fills a journal's
 * missing limits from them) and the search limits mining plans with (mining/planning.ts). Pure data,
 * on the replay side so both can import it without reaching into the runtime.
 */
import type { InvocationLimits } from './context.js';

export const DEFAULT_LIMITS: InvocationLimits = {
  maxReprompts: 2,
  maxReplans: 2,
  maxAttempts: 3,
  maxEpochs: 12,
  maxNodes: 200_000,
  maxDepth: 10_000,
  outcomeWindow: 8,
  resultsPerOutcome: 32,
  maxIntentChars: 16_384,
  maxReplyChars: 65_536,
  maxArgChars: 512,
  maxSummaryChars: 2_000,
  modelAttempts: 3,
  modelTimeoutMs: 60_000,
};
