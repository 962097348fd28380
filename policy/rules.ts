/**
 * How a policy pack decides — the three admissions (authoring call, epoch, step at dispatch), each
 * over the pack's rules in declared order. Every rule that applies gives a verdict (verdict.ts); the
 * strongest decision wins (deny over require_approval over allow) and, among equals, the first in
 * the pack — so the order of rules never lets an approval hide a denial. The decision names the rule
 * that decided: `weft:default` when no rule objected. A rule whose verdict is `warn` decides nothing:
 * it is collected beside the decision, in pack order, as `warnings` (rule and reason) — whichever
 * rule decided, a denial and an approval included. With no warning the decision has no `warnings`
 * field at all, so a pack without warn rules decides exactly as before verdicts existed.
 *
 * `read-only-free` takes read-only steps out of the approval and predicate rules: an epoch of read-only
 * steps only, and a read-only step at dispatch, are allowed by it (named) unless a contract rule
 * (tenant actuators, pivots) denies them. The contract envelope (spend cap, actuators, recipients,
 * sizes, authored effects) is not checked here: the pack hands it to the runtime as `envelope`,
 * which checks it before these rules, with the rule ids in `envelopeRules` (compile.ts).
 *
 * Pure: the verdicts depend only on the rules, the registered predicates and the request.
 */
import type { EpochStep } from '../machines/context.js';
import type { Admission, AdmissionWarning, AuthoringAdmissionRequest, EpochAdmissionRequest, StepAdmissionRequest } from '../machines/policy.js';
import { clip, QUOTE_CHARS } from '../machines/untrusted-text.js';
import { pivotBeforeFallible } from './pivot.js';
import type { PolicyPredicate } from './predicates.js';
import type { Rule } from './schema.js';
import { DECISION_OF, verdictOf, verdictWords } from './verdict.js';

/** The rule id of an allow no rule objected to. */
export const DEFAULT_RULE = 'weft:default';

type Verdict = Admission & { rule: string };
const RANK = { deny: 2, require_approval: 1, allow: 0 } as const;

/** What the rules that applied said: decisions, and warnings apart (a warn decides nothing). */
class Findings {
  readonly verdicts: Verdict[] = [];
  readonly warnings: AdmissionWarning[] = [];

  /** `rule` applies, for `reason`: its verdict (verdict.ts) makes it a decision or a warning. */
  applies(rule: Rule, reason: string): void {
    const v = verdictOf(rule);
    if (v === 'warn') this.warnings.push({ rule: rule.id, reason });
    else this.verdicts.push({ decision: DECISION_OF[v], reason, rule: rule.id });
  }

  /** The strongest decision, the first among equals (`fallback` when there is none), with the warnings beside it. */
  strongest(fallback: Verdict): Verdict {
    let best: Verdict | undefined;
    for (const v of this.verdicts) if (best === undefined || RANK[v.decision] > RANK[best.decision]) best = v;
    const decided = best ?? fallback;
    return this.warnings.length === 0 ? decided : { ...decided, warnings: [...this.warnings] };
  }
}

const list = (values: readonly string[]) => clip(values.join(', ') || 'none', 200);

function stepName(step: EpochStep, index: number | undefined): string {
  const op = clip(step.operator, QUOTE_CHARS);
  return index === undefined ? `step ${op}` : `step ${index} (${op})`;
}

/** The actuators `tenant` may dispatch under a tenant-actuators rule ('*' for a tenant not listed; none without it). */
function tenantAllowed(rule: Extract<Rule, { rule: 'tenant-actuators' }>, tenant: string): readonly string[] {
  if (Object.hasOwn(rule.tenants, tenant)) return rule.tenants[tenant]!;
  return Object.hasOwn(rule.tenants, '*') ? rule.tenants['*']! : [];
}

/** Why `step` (and, at the epoch, its compensation) may not run for `tenant`; undefined when it may. */
function tenantViolation(rule: Extract<Rule, { rule: 'tenant-actuators' }>, tenant: string, step: EpochStep, index: number | undefined, withCompensation: boolean): string | undefined {
  const allowed = tenantAllowed(rule, tenant);
  const who = `tenant ${clip(JSON.stringify(tenant), QUOTE_CHARS)}`;
  if (step.actuator === undefined || !allowed.includes(step.actuator)) {
    return `${stepName(step, index)} dispatches ${step.actuator === undefined ? 'no actuator' : clip(step.actuator, QUOTE_CHARS)}; the pack allows ${who} only ${list(allowed)}`;
  }
  if (withCompensation && step.compensate && !allowed.includes(step.compensate.actuator)) {
    return `${stepName(step, index)} is undone by ${clip(step.compensate.actuator, QUOTE_CHARS)}; the pack allows ${who} only ${list(allowed)}`;
  }
  return undefined;
}

/** What the epoch's spending steps move under `arg` (spendApprovalPolicy's sum: the pinned spenders, else every world effect). */
function spentBy(request: EpochAdmissionRequest, arg: string): number {
  const spenders = request.spenders;
  let total = 0;
  for (const step of request.plan.steps) {
    const amount = step.actuatorArgs?.[arg];
    const spends = spenders === undefined || spenders.size === 0 || (step.actuator !== undefined && spenders.has(step.actuator));
    if (!step.readOnly && spends && typeof amount === 'number') total += amount;
  }
  return total;
}

export function admitEpochByRules(rules: readonly Rule[], predicates: ReadonlyMap<string, PolicyPredicate>, request: EpochAdmissionRequest): Verdict {
  const steps = request.plan.steps;
  const free = rules.find((r) => r.rule === 'read-only-free');
  const freed = free !== undefined && steps.every((s) => s.readOnly);
  const found = new Findings();
  for (const rule of rules) {
    switch (rule.rule) {
      case 'tenant-actuators': {
        for (let i = 0; i < steps.length; i++) {
          const reason = tenantViolation(rule, request.tenant, steps[i]!, i, true);
          if (reason !== undefined) {
            found.applies(rule, reason);
            break;
          }
        }
        break;
      }
      case 'pivot-last': {
        const reason = pivotBeforeFallible(steps, new Set(rule.undoable ?? []));
        if (reason !== undefined) found.applies(rule, reason);
        break;
      }
      case 'approve-mutations': {
        const first = steps.findIndex((s) => !s.readOnly);
        if (first >= 0) {
          const n = steps.filter((s) => !s.readOnly).length;
          found.applies(rule, `the epoch has ${n} world effect(s), the first ${stepName(steps[first]!, first)}; the pack ${verdictWords(verdictOf(rule))} any epoch with a mutation`);
        }
        break;
      }
      case 'approve-above': {
        const total = spentBy(request, rule.arg);
        if (total > rule.amount) found.applies(rule, `the epoch spends ${total}, above the ${rule.amount} limit`);
        break;
      }
      case 'predicate': {
        if (rule.on !== 'epoch' || freed) break;
        if (predicates.get(rule.predicate)!.test({ subject: 'epoch', request })) found.applies(rule, rule.reason);
        break;
      }
      default:
        break;
    }
  }
  return found.strongest({ decision: 'allow', rule: freed ? free!.id : DEFAULT_RULE });
}

export function admitStepByRules(rules: readonly Rule[], predicates: ReadonlyMap<string, PolicyPredicate>, request: StepAdmissionRequest): Verdict {
  const free = rules.find((r) => r.rule === 'read-only-free');
  const freed = free !== undefined && request.step.readOnly;
  const found = new Findings();
  for (const rule of rules) {
    if (rule.rule === 'tenant-actuators') {
      const reason = tenantViolation(rule, request.tenant, request.step, undefined, false);
      if (reason !== undefined) found.applies(rule, reason);
    } else if (rule.rule === 'predicate' && rule.on === 'step' && !freed) {
      if (predicates.get(rule.predicate)!.test({ subject: 'step', request })) found.applies(rule, rule.reason);
    }
  }
  return found.strongest({ decision: 'allow', rule: freed ? free!.id : DEFAULT_RULE });
}

export function admitAuthoringByRules(rules: readonly Rule[], predicates: ReadonlyMap<string, PolicyPredicate>, request: AuthoringAdmissionRequest): Verdict {
  const found = new Findings();
  const task = clip(request.goal.task, QUOTE_CHARS);
  for (const rule of rules) {
    if (rule.rule === 'authoring') {
      if (rule.tasks !== undefined && !rule.tasks.includes(request.goal.task)) continue;
      if (rule.decision === 'allow') found.verdicts.push({ decision: 'allow', rule: rule.id });
      else found.verdicts.push({ decision: rule.decision, reason: rule.reason ?? (rule.decision === 'deny' ? `the pack lets no model author a fragment for ${task}` : `the pack asks a person before the model authors a fragment for ${task}`), rule: rule.id });
    } else if (rule.rule === 'predicate' && rule.on === 'authoring') {
      if (predicates.get(rule.predicate)!.test({ subject: 'authoring', request })) found.applies(rule, rule.reason);
    }
  }
  return found.strongest({ decision: 'allow', rule: DEFAULT_RULE });
}
