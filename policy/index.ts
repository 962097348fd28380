/**
 * Admission as data — policy packs: zod-validated JSON, versioned, pinned by digest, compiled into the
 * AdmissionPolicy the runtime runs; and the policy predicates a pack may reference by name and
 * version. The folder's public face; everything here is pure (docs/policy-packs.md).
 */
export { rulePackSchema, ruleSchema, ENVELOPE_KINDS, type Rule, type RuleKind, type RulePack } from './schema.js';
export { parseRulePack, parseRulePackText } from './parse.js';
export { packBytes, packDigest, packPolicyId, parsePackPolicyId } from './digest.js';
export { compileRulePack, isPackPolicy, referencedPredicates, type PackPolicy } from './compile.js';
export { PredicateRegistry, predicateRegistry, type PolicyPredicate, type PredicateInput } from './predicates.js';
export { DEFAULT_RULE } from './rules.js';
export { isPivot, pivotBeforeFallible } from './pivot.js';
export { describeRule } from './describe.js';
export { PredicateMissingError, RulePackDigestError, RulePackError } from './errors.js';
