/**
 * Which rule decided an admission, as `admission.decided` records it (behaviour flag 7): only under
 * a policy that names its rules (a policy pack, policy/) — the rule its decision names, or
 * `weft:default` when it named none. Under any other policy, or a pin without flag 7, nothing is
 * recorded, so those journals read exactly as before.
 *
 * Under flag 11 an allow of an epoch or a step whose plan came from the model (authored, or through
 * a mined method) that no rule of the pack decided names the rule that let its fragment through —
 * the pack's `authored-effects` rule, else `weft:authored-effects` (machines/authored-allowance.ts);
 * `weft:default` stays for library plans, and for the authoring call (which has no plan yet). Pure.
 */
import { fromModel, modelPlanRule } from '../../machines/authored-allowance.js';
import type { InvocationContext } from '../../machines/context.js';
import { FLAG_ADMISSION_RULE, FLAG_RUN_ALLOWANCE, hasFlag } from '../../machines/flags.js';
import type { Admission } from '../../machines/policy.js';
import { DEFAULT_RULE } from '../../policy/rules.js';
import type { EpochServices } from './services.js';

export function recordedRule(s: Pick<EpochServices, 'policy'>, ctx: Pick<InvocationContext, 'pin' | 'plan'>, admission: Admission): string | undefined {
  if (!hasFlag(ctx.pin, FLAG_ADMISSION_RULE) || s.policy.namesRules !== true) return undefined;
  const rule = admission.rule ?? DEFAULT_RULE;
  const modelPlan = admission.decision === 'allow' && rule === DEFAULT_RULE && ctx.plan != null && fromModel(ctx.plan);
  return modelPlan && hasFlag(ctx.pin, FLAG_RUN_ALLOWANCE) ? modelPlanRule(s.policy.envelopeRules) : rule;
}
