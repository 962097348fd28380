/**
 * A rule's verdict — what it does when it applies, in the verifier's words (seed 001 §11.4):
 * `block` (the admission is denied), `approval` (a person decides first) or `warn` (the run goes on,
 * and the warning is recorded on `admission.decided` with the rule's id and reason). A rule that
 * states no `verdict` keeps its kind's own, so a pack written before verdicts existed decides, and
 * digests, exactly as it did: `approve-above` and `approve-mutations` ask a person, `pivot-last`
 * and `tenant-actuators` block, a `predicate` does what its `decision` says.
 *
 * Pure.
 */
import type { Rule } from './schema.js';

export type RuleVerdict = 'block' | 'warn' | 'approval';

/** The decision an admission records for a verdict that stops the run (warn stops nothing). */
export const DECISION_OF = { block: 'deny', approval: 'require_approval' } as const;

/** What `rule` does when it applies: the verdict it states, else its kind's own. */
export function verdictOf(rule: Rule): RuleVerdict {
  switch (rule.rule) {
    case 'approve-above':
    case 'approve-mutations':
      return rule.verdict ?? 'approval';
    case 'pivot-last':
      return rule.verdict ?? 'block';
    case 'predicate':
      return rule.verdict ?? (rule.decision === 'require_approval' ? 'approval' : 'block');
    default:
      return 'block';
  }
}

/** The words for a verdict in what a person reads ("the pack warns on …", "asks a person to approve …"). */
export function verdictWords(verdict: RuleVerdict): string {
  return verdict === 'warn' ? 'warns on' : verdict === 'block' ? 'refuses' : 'asks a person to approve';
}
