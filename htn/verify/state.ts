/**
 * The verifier's fact state: a mutable set of ground atoms, indexed by predicate so that a
 * free-variable search can enumerate the facts of one predicate without scanning the state.
 *
 * One state object lives for a whole verification and is updated in place (no copy per action);
 * a fact is keyed by `pred arg1 arg2 ...` (HDDL names contain no whitespace).
 */

export function factKey(predicate: string, args: readonly string[]): string {
  return args.length === 0 ? predicate : predicate + ' ' + args.join(' ');
}

export class FactState {
  private readonly facts = new Set<string>();
  private readonly byPredicate = new Map<string, Map<string, readonly string[]>>();

  has(key: string): boolean {
    return this.facts.has(key);
  }

  add(predicate: string, args: readonly string[]): void {
    const key = factKey(predicate, args);
    if (this.facts.has(key)) return;
    this.facts.add(key);
    let m = this.byPredicate.get(predicate);
    if (!m) this.byPredicate.set(predicate, (m = new Map()));
    m.set(key, args);
  }

  delete(predicate: string, args: readonly string[]): void {
    const key = factKey(predicate, args);
    if (!this.facts.delete(key)) return;
    this.byPredicate.get(predicate)?.delete(key);
  }

  /** The argument lists of the current facts of `predicate` (live view: do not mutate while iterating). */
  factsOf(predicate: string): Iterable<readonly string[]> {
    return this.byPredicate.get(predicate)?.values() ?? [];
  }

  get size(): number {
    return this.facts.size;
  }
}
