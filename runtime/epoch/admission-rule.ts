/**
 * Which rule decided an admission, as `admission.decided` records it (behaviour flag 7): only under
 * a policy that names its rules (a rule pack, policy/) — the rule its decision names, or
 * `weft:default` when it named none. Under any other policy, or a pin without flag 7, nothing is
 * recorded, so those journals read exactly as before. Pure.
 */
import type { InvocationContext } from '../../machines/context.js';
import { FLAG_ADMISSION_RULE, hasFlag } from '../../machines/flags.js';
import type { Admission } from '../../machines/policy.js';
import type { EpochServices } from './services.js';

export function recordedRule(s: Pick<EpochServices, 'policy'>, ctx: Pick<InvocationContext, 'pin'>, admission: Admission): string | undefined {
  if (!hasFlag(ctx.pin, FLAG_ADMISSION_RULE) || s.policy.namesRules !== true) return undefined;
  return admission.rule ?? 'weft:default';
}
