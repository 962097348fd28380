/**
 * The verifier's static world: the type hierarchy and the typed objects (domain constants plus
 * problem objects), with the objects of each type listed for quantifiers and free-variable search.
 *
 * Invariants: `object` (the implicit root type) contains every object; a type contains the
 * objects declared with it or with any of its (transitive) subtypes; lists are in declaration
 * order, so iteration is deterministic. Cycles in the type graph are tolerated (each type is
 * visited once). Built once per verification; never mutated afterwards.
 */
import { ROOT_TYPE, type HddlDomain, type HddlProblem } from '../hddl/index.js';

export class World {
  /** type → all its supertypes, itself included. */
  private readonly ancestors = new Map<string, Set<string>>();
  /** object → the set of types it belongs to (declared type and all supertypes, plus `object`). */
  private readonly objectTypes = new Map<string, Set<string>>();
  /** type → objects of that type, in declaration order. */
  private readonly byType = new Map<string, string[]>();
  /** Every object, in declaration order. */
  readonly objects: string[] = [];

  constructor(domain: HddlDomain, problem: HddlProblem) {
    const parents = new Map<string, string[]>();
    for (const t of domain.types) {
      if (!parents.has(t.name)) parents.set(t.name, []);
      if (t.supertype !== undefined) parents.get(t.name)!.push(t.supertype);
    }
    const ancestorsOf = (t: string): Set<string> => {
      const known = this.ancestors.get(t);
      if (known) return known;
      const seen = new Set<string>([t, ROOT_TYPE]);
      const stack = [t];
      while (stack.length > 0) {
        for (const p of parents.get(stack.pop()!) ?? []) {
          if (!seen.has(p)) {
            seen.add(p);
            stack.push(p);
          }
        }
      }
      this.ancestors.set(t, seen);
      return seen;
    };
    for (const o of [...domain.constants, ...problem.objects]) {
      let types = this.objectTypes.get(o.name);
      if (!types) {
        types = new Set();
        this.objectTypes.set(o.name, types);
        this.objects.push(o.name);
      }
      for (const t of ancestorsOf(o.type)) {
        if (types.has(t)) continue;
        types.add(t);
        let list = this.byType.get(t);
        if (!list) this.byType.set(t, (list = []));
        list.push(o.name);
      }
    }
  }

  isObject(name: string): boolean {
    return this.objectTypes.has(name);
  }

  /** Whether the object `name` is of type `type` (or a subtype). Unknown objects belong to no type. */
  isOfType(name: string, type: string): boolean {
    return this.objectTypes.get(name)?.has(type) ?? false;
  }

  /** The objects of `type`, in declaration order (empty for an unknown or empty type). */
  objectsOf(type: string): readonly string[] {
    return this.byType.get(type) ?? [];
  }
}
