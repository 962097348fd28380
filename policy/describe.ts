/**
 * One line per rule, for `weft policy check` and `weft policy explain`: what the rule says, in
 * words (`approve-above: a person approves an epoch spending more than 500 amount`). Pure.
 */
import type { Rule } from './schema.js';
import { verdictOf, type RuleVerdict } from './verdict.js';

/** What happens to an epoch a rule applies to, by its verdict: "a person approves …", "… is refused", "… warns". */
function epochUnder(verdict: RuleVerdict, epoch: string): string {
  return verdict === 'approval' ? `a person approves ${epoch}` : verdict === 'block' ? `${epoch} is refused` : `${epoch} goes on with a warning`;
}

const list = (values: readonly string[]) => (values.length === 0 ? 'none' : values.join(', '));

export function describeRule(rule: Rule): string {
  switch (rule.rule) {
    case 'spend-cap':
      return `at most ${rule.cap} ${rule.arg} spent per invocation${rule.actuators ? ` (by ${list(rule.actuators)})` : ''}`;
    case 'actuators':
      return `steps may dispatch only ${list(rule.allow)}`;
    case 'recipients':
      return `${rule.arg} must be one of ${list(rule.allowed)}${rule.actuators ? ` (on ${list(rule.actuators)})` : ''}`;
    case 'steps-per-fragment':
      return `a model-authored fragment has at most ${rule.max} steps`;
    case 'dispatches-per-epoch':
      return `at most ${rule.max} dispatches per epoch`;
    case 'authored-effects':
      return typeof rule.admit === 'string'
        ? rule.admit === 'allow' ? 'world effects the model authored are admitted' : 'world effects the model authored need a person'
        : `world effects the model authored are admitted when they dispatch ${list(rule.admit.actuators)} and spend at most ${rule.admit.spendAtMost}${rule.admit.per === 'run' ? " this run (the sum over the run's authored effects)" : ''}; else a person approves`;
    case 'tenant-actuators':
      return `per tenant, the actuators its steps may dispatch: ${Object.keys(rule.tenants).sort().map((t) => `${t}: ${list(rule.tenants[t]!)}`).join('; ')}`;
    case 'read-only-free':
      return 'read-only steps are admitted freely';
    case 'approve-mutations':
      return epochUnder(verdictOf(rule), 'any epoch with a world effect');
    case 'approve-above':
      return epochUnder(verdictOf(rule), `an epoch spending more than ${rule.amount} ${rule.arg}`);
    case 'authoring':
      return `the model authoring a fragment${rule.tasks ? ` for ${list(rule.tasks)}` : ''}: ${rule.decision}`;
    case 'pivot-last':
      return `${epochUnder(verdictOf(rule), 'an epoch with a pivot (a world effect nothing undoes) before another step').replace(/ is refused$/, ' is denied')}${rule.undoable?.length ? ` (undoing themselves: ${list(rule.undoable)})` : ''}`;
    case 'predicate':
      return `when ${rule.predicate} holds for the ${rule.on}: ${rule.decision ?? rule.verdict} (${rule.reason})`;
  }
}
