/**
 * The warnings an admission records (behaviour flag 12): the rules that applied with the verdict
 * `warn` (policy/verdict.ts), beside whichever decision was taken, as `admission.decided`'s
 * `warnings: [{rule, reason}]` — at most MAX_RECORDED_WARNINGS, each reason clipped, so a policy in
 * code that returns more cannot grow a record without bound. Under a pin without flag 12, or with no
 * warning, nothing: the body is exactly as before. A warning stops nothing; this only says what is
 * written. A refusal the runtime's own checks make before the policy is asked (certification, task
 * constraints, the contract envelope) carries none: no rule of the pack was asked. Pure.
 */
import type { InvocationContext } from '../../machines/context.js';
import { FLAG_WARNINGS, hasFlag } from '../../machines/flags.js';
import type { Admission, AdmissionWarning } from '../../machines/policy.js';
import { clip } from '../../machines/untrusted-text.js';

/** At most this many warnings on one record (a policy pack has at most as many warn rules, policy/schema.ts). */
export const MAX_RECORDED_WARNINGS = 32;
const REASON_CHARS = 500;

/** The `warnings` member of an `admission.decided` body for `admission`: `{}` when none is recorded. */
export function recordedWarnings(ctx: Pick<InvocationContext, 'pin'>, admission: Admission): { warnings?: AdmissionWarning[] } {
  const given = admission.warnings;
  if (!hasFlag(ctx.pin, FLAG_WARNINGS) || given === undefined || given.length === 0) return {};
  return { warnings: given.slice(0, MAX_RECORDED_WARNINGS).map((w) => ({ rule: clip(w.rule || '?', 200), reason: clip(w.reason || '(no reason given)', REASON_CHARS) })) };
}
