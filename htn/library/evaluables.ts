/**
 * Evaluable predicates: predicates computed by TypeScript code rather than looked up in the state
 * (e.g. `(le ?price ?budget)` over numbers). A library references them by name and version; the
 * code is registered here under the same name and version.
 *
 * Why the version: the version is part of the library data and so of its digest. Changing the
 * code means bumping the version, which gives a new library digest; an old invocation replays on
 * the old digest and asks for the old version — if it is no longer registered, planning fails
 * closed with `EvaluableVersionError` instead of silently following new code.
 *
 * An evaluable must be a pure, total function of its args (strings and numbers): no clock, no
 * randomness, no I/O; it is called only with all args bound.
 */
export type Value = string | number;

export interface EvaluablePredicate {
  readonly name: string;
  readonly version: string;
  readonly arity: number;
  readonly test: (args: readonly Value[]) => boolean;
}

export class EvaluableVersionError extends Error {
  override readonly name = 'EvaluableVersionError';
  constructor(
    readonly predicate: string,
    readonly version: string,
    readonly available: string[],
  ) {
    super(
      `evaluable predicate ${predicate}@${version} is pinned by the library but not registered` +
        (available.length ? ` (registered versions: ${available.join(', ')})` : '') +
        '; register that version, or plan with a library version that pins an available one',
    );
  }
}

/** Holds evaluable implementations by name and version; several versions may coexist. */
export class EvaluableRegistry {
  private readonly entries = new Map<string, EvaluablePredicate>();

  register(predicate: EvaluablePredicate): this {
    const key = `${predicate.name}@${predicate.version}`;
    if (this.entries.has(key) && this.entries.get(key) !== predicate) {
      throw new Error(`evaluable ${key} is already registered with different code; bump its version`);
    }
    this.entries.set(key, predicate);
    return this;
  }

  /** The implementation of `name@version`; throws `EvaluableVersionError` when absent. */
  resolve(name: string, version: string): EvaluablePredicate {
    const found = this.entries.get(`${name}@${version}`);
    if (!found) {
      const available = [...this.entries.values()].filter((e) => e.name === name).map((e) => e.version).sort();
      throw new EvaluableVersionError(name, version, available);
    }
    return found;
  }
}

function numbers(args: readonly Value[]): [number, number] | undefined {
  const [a, b] = args;
  return typeof a === 'number' && typeof b === 'number' ? [a, b] : undefined;
}

/** Numeric comparisons (false when either arg is not a number). Version "1". */
export const comparisonPredicates: readonly EvaluablePredicate[] = [
  { name: 'lt', version: '1', arity: 2, test: (a) => { const n = numbers(a); return n !== undefined && n[0] < n[1]; } },
  { name: 'le', version: '1', arity: 2, test: (a) => { const n = numbers(a); return n !== undefined && n[0] <= n[1]; } },
  { name: 'gt', version: '1', arity: 2, test: (a) => { const n = numbers(a); return n !== undefined && n[0] > n[1]; } },
  { name: 'ge', version: '1', arity: 2, test: (a) => { const n = numbers(a); return n !== undefined && n[0] >= n[1]; } },
];

/** A registry holding the built-in numeric comparisons. */
export function standardEvaluables(): EvaluableRegistry {
  const r = new EvaluableRegistry();
  for (const p of comparisonPredicates) r.register(p);
  return r;
}
