/**
 * The errors of policy packs: a pack that does not validate (naming where it came from, the field
 * and zod's message), a predicate it names that is not registered, and a pack that is not the one
 * a digest pins. Each says what to do. Pure.
 */
import { WeftError } from '../journal/errors.js';

/** A pack that is not a valid policy pack: `where` (a file, a blob) and the first issues, with their paths. */
export class RulePackError extends WeftError {
  constructor(
    readonly where: string,
    readonly issues: readonly string[],
  ) {
    super('policy.invalid_pack', 'permanent', `${where} is not a valid policy pack: ${issues.join('; ')} (docs/policy-packs.md shows one; weft policy check FILE validates it)`);
  }
}

/** A predicate a pack references by name@version that the runtime's registry does not have. */
export class PredicateMissingError extends WeftError {
  constructor(
    readonly predicate: string,
    readonly available: readonly string[],
  ) {
    super(
      'policy.predicate_missing',
      'permanent',
      `the policy pack references predicate ${predicate}, which is not registered${available.length ? ` (registered: ${available.join(', ')})` : ''}; register that name and version (createRuntime({ policyPredicates }) or the domain's policyPredicates)`,
    );
  }
}

/** The bytes filed under a pinned pack digest are not that pack. */
export class RulePackDigestError extends WeftError {
  constructor(
    readonly pinned: string,
    readonly found: string,
  ) {
    super('policy.pack_mismatch', 'permanent', `the policy pack pinned as ${pinned} is not the pack offered (its digest is ${found}); resume with the pack the invocation pinned`);
  }
}
