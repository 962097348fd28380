/**
 * The HTN engine's public face: method libraries (schema, builder, digest, registry, evaluable
 * predicates), the deterministic planner, the HDDL front end and the IPC plan format, and the
 * independent plan verifier.
 *
 * Everything under htn/ is pure: no clock, no randomness, no environment, no file system.
 */
export * from './library/schema.js';
export { validateLibrary, LibraryValidationError } from './library/validate.js';
export * from './library/builder.js';
export { libraryDigest } from './library/digest.js';
export { unboundEffectWarnings, type UnboundEffectWarning } from './library/unbound-effects.js';
export { LibraryRegistry, UnknownLibraryError, type LibraryVersion } from './library/registry.js';
export {
  EvaluableRegistry,
  EvaluableVersionError,
  comparisonPredicates,
  standardEvaluables,
  type EvaluablePredicate,
  type Value,
} from './library/evaluables.js';
export { plan, type PlanRequestOptions } from './planner/plan.js';
export * from './planner/result.js';
export { HtnInputError } from './planner/symbols.js';
export { compileModel } from './planner/model.js';
export { search } from './planner/search.js';
export { toIpcPlan } from './planner/ipc-output.js';
export { compileHddl, HddlCompileError, TOP_TASK, TOP_METHOD, type CompiledHddl } from './hddl/compile.js';
export * as hddl from './hddl/index.js';
export * from './ipc-plan.js';
export { verifyPlan, type VerifyResult } from './verify/index.js';
