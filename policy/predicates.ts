/**
 * Policy predicates: TypeScript conditions a policy pack references by name and version
 * (`{ "rule": "predicate", "predicate": "night-taxi@1", "on": "step", ... }`) when JSON cannot say
 * it. The runtime is given a registry (`createRuntime({ policyPredicates })`, or a domain's); a pack
 * naming a predicate the registry lacks does not compile, and an invocation pinned to it is not
 * resumed (pin-check).
 *
 * Why the version: it is written in the pack, so in its digest, so in the pin. Changing what a
 * predicate decides means registering a new version and a new pack that names it; an invocation
 * pinned to the old pack asks for the old version — never silently follows new code.
 *
 * A predicate must be a pure, total function of the request: no clock, no randomness, no I/O.
 */
import type { AuthoringAdmissionRequest, EpochAdmissionRequest, StepAdmissionRequest } from '../machines/policy.js';
import { PredicateMissingError } from './errors.js';

/** What a predicate is asked about: the admission request, by subject. */
export type PredicateInput =
  | { subject: 'epoch'; request: EpochAdmissionRequest }
  | { subject: 'step'; request: StepAdmissionRequest }
  | { subject: 'authoring'; request: AuthoringAdmissionRequest };

export interface PolicyPredicate {
  readonly name: string;
  readonly version: string;
  /** True when the rule that references it applies (its decision is then taken). */
  readonly test: (input: PredicateInput) => boolean;
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Policy predicates by `name@version`; several versions of one name may coexist. */
export class PredicateRegistry {
  private readonly entries = new Map<string, PolicyPredicate>();

  constructor(predicates: readonly PolicyPredicate[] = []) {
    for (const p of predicates) this.register(p);
  }

  register(predicate: PolicyPredicate): this {
    const key = `${predicate.name}@${predicate.version}`;
    const existing = this.entries.get(key);
    if (existing !== undefined && existing !== predicate) throw new Error(`policy predicate ${key} is already registered with different code; bump its version`);
    this.entries.set(key, predicate);
    return this;
  }

  has(ref: string): boolean {
    return this.entries.has(ref);
  }

  /** The predicate registered as `ref` (name@version); PredicateMissingError otherwise. */
  resolve(ref: string): PolicyPredicate {
    const found = this.entries.get(ref);
    if (!found) throw new PredicateMissingError(ref, this.refs());
    return found;
  }

  /** Every registered `name@version`, sorted. */
  refs(): string[] {
    return [...this.entries.keys()].sort(byCodeUnit);
  }
}

/** A registry from what a runtime or domain was given (a registry, a list, or nothing). */
export function predicateRegistry(given: PredicateRegistry | readonly PolicyPredicate[] | undefined): PredicateRegistry {
  // A registry from another copy of weft (a domain's own node_modules) is one too: not `instanceof`.
  if (given !== undefined && !Array.isArray(given)) return given as PredicateRegistry;
  return new PredicateRegistry((given as readonly PolicyPredicate[] | undefined) ?? []);
}
