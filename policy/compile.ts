/**
 * A policy pack compiled into the AdmissionPolicy the runtime runs (machines/policy.ts):
 * - its id is `pack:<name>@<version>#<digest>` (digest.ts), so the pin names the exact rules;
 * - its envelope rules become the policy's contract envelope (machines/envelope.ts), checked by the
 *   runtime under flag 1 exactly as a coded policy's, and `envelopeRules` says which rule set which
 *   part, so a refusal names its rule (flag 7);
 * - its other rules decide the three admissions (rules.ts), every decision naming its rule.
 *
 * Every predicate the pack references must be in the registry given (predicates.ts) — resolved
 * now, so a pack that names a missing predicate never runs. Pure.
 */
import type { ContractEnvelope } from '../machines/envelope.js';
import type { AdmissionPolicy, EnvelopeRuleIds } from '../machines/policy.js';
import { packDigest, packPolicyId } from './digest.js';
import { PredicateRegistry, type PolicyPredicate } from './predicates.js';
import { admitAuthoringByRules, admitEpochByRules, admitStepByRules } from './rules.js';
import type { Rule, RulePack } from './schema.js';

/** A policy compiled from a policy pack: the AdmissionPolicy, with the pack, its digest and the predicates it references. */
export interface PackPolicy extends AdmissionPolicy {
  readonly namesRules: true;
  readonly envelopeRules: EnvelopeRuleIds;
  readonly pack: RulePack;
  readonly digest: string;
  /** Every predicate the pack references, `name@version`, sorted. */
  readonly predicates: readonly string[];
}

const PACK_BRAND: unique symbol = Symbol.for('weft.rule-pack-policy') as never;

/** True for a policy compiled from a policy pack (by any copy of weft). */
export function isPackPolicy(policy: AdmissionPolicy | undefined): policy is PackPolicy {
  return typeof policy === 'object' && policy !== null && (policy as unknown as Record<symbol, unknown>)[PACK_BRAND] === 1;
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The predicates `pack` references, sorted (name@version). */
export function referencedPredicates(pack: RulePack): string[] {
  return [...new Set(pack.rules.flatMap((r) => (r.rule === 'predicate' ? [r.predicate] : [])))].sort(byCodeUnit);
}

/** The contract envelope the pack's envelope rules describe, and which rule set each part. */
function envelopeOf(rules: readonly Rule[]): { envelope: ContractEnvelope | undefined; ids: EnvelopeRuleIds } {
  const env: { -readonly [K in keyof ContractEnvelope]: ContractEnvelope[K] } = {};
  const ids: EnvelopeRuleIds = {};
  for (const rule of rules) {
    switch (rule.rule) {
      case 'spend-cap':
        env.spend = { arg: rule.arg, cap: rule.cap, ...(rule.actuators ? { actuators: rule.actuators } : {}) };
        ids.spend = rule.id;
        break;
      case 'actuators':
        env.actuators = rule.allow;
        ids.actuators = rule.id;
        break;
      case 'recipients':
        env.recipients = { arg: rule.arg, allowed: rule.allowed, ...(rule.actuators ? { actuators: rule.actuators } : {}) };
        ids.recipients = rule.id;
        break;
      case 'steps-per-fragment':
        env.stepsPerFragment = rule.max;
        ids.stepsPerFragment = rule.id;
        break;
      case 'dispatches-per-epoch':
        env.dispatchesPerEpoch = rule.max;
        ids.dispatchesPerEpoch = rule.id;
        break;
      case 'authored-effects':
        env.authoredEffects = rule.admit;
        ids.authoredEffects = rule.id;
        break;
      default:
        break;
    }
  }
  return { envelope: Object.keys(env).length === 0 ? undefined : env, ids };
}

/** Compile a validated pack (parse.ts) against the predicates registered; PredicateMissingError if one it names is absent. */
export function compileRulePack(pack: RulePack, registry: PredicateRegistry = new PredicateRegistry()): PackPolicy {
  const digest = packDigest(pack);
  const predicates = referencedPredicates(pack);
  const resolved = new Map<string, PolicyPredicate>(predicates.map((ref) => [ref, registry.resolve(ref)]));
  const rules = pack.rules;
  const { envelope, ids } = envelopeOf(rules);
  const policy = {
    id: packPolicyId(pack, digest),
    namesRules: true as const,
    envelopeRules: ids,
    pack,
    digest,
    predicates,
    ...(envelope === undefined ? {} : { envelope }),
    admitEpoch: (request) => admitEpochByRules(rules, resolved, request),
    admitStep: (request) => admitStepByRules(rules, resolved, request),
    admitAuthoring: (request) => admitAuthoringByRules(rules, resolved, request),
  } satisfies PackPolicy;
  Object.defineProperty(policy, PACK_BRAND, { value: 1 });
  return policy;
}
