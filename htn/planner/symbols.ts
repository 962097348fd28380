/**
 * Interning: every symbol (object name or number) of a planning problem becomes a small integer,
 * every type a membership bitmap plus a sorted member list, every predicate an index.
 *
 * Invariant (determinism): ids are assigned in canonical order — strings sorted by UTF-16 code
 * units, then numbers ascending — from the SET of symbols, so the same problem written with its
 * objects or facts in another order interns identically, and every enumeration the planner does
 * (type members, initial fact order) is the same.
 */
import { NUMBER_TYPE, ROOT_TYPE, type Library, type WorldState } from '../library/schema.js';
import type { Value } from '../library/evaluables.js';

export class HtnInputError extends Error {
  override readonly name = 'HtnInputError';
}

export class SymbolTable {
  readonly values: Value[] = [];
  private readonly strings = new Map<string, number>();
  private readonly numbers = new Map<number, number>();

  constructor(strings: Iterable<string>, numbers: Iterable<number>) {
    for (const s of [...new Set(strings)].sort()) {
      this.strings.set(s, this.values.length);
      this.values.push(s);
    }
    for (const n of [...new Set(numbers)].sort((a, b) => a - b)) {
      this.numbers.set(n, this.values.length);
      this.values.push(n);
    }
  }

  get size(): number {
    return this.values.length;
  }

  /** The id of a symbol, or -1 when it does not occur in the problem. */
  id(value: Value): number {
    const found = typeof value === 'number' ? this.numbers.get(value === 0 ? 0 : value) : this.strings.get(value);
    return found ?? -1;
  }

  value(id: number): Value {
    return this.values[id]!;
  }
}

export interface TypeTable {
  readonly index: Map<string, number>;
  readonly names: string[];
  /** members[t][symbol] === 1 when the symbol is of type t (or a subtype). */
  readonly members: Uint8Array[];
  /** Members of each type, ascending by id (canonical order). */
  readonly objects: Int32Array[];
}

/** Builds type membership from the library's type hierarchy, its constants and the state's objects. */
export function buildTypes(library: Library, state: WorldState, symbols: SymbolTable): TypeTable {
  const names = [ROOT_TYPE, NUMBER_TYPE, ...library.types.map((t) => t.name).filter((n) => n !== ROOT_TYPE && n !== NUMBER_TYPE)];
  const unique = [...new Set(names)];
  const index = new Map(unique.map((n, i) => [n, i] as const));
  const parents: number[][] = unique.map(() => []);
  for (const t of library.types) {
    const self = index.get(t.name)!;
    const parent = index.get(t.parent ?? ROOT_TYPE)!;
    if (parent !== self && !parents[self]!.includes(parent)) parents[self]!.push(parent);
  }
  const members = unique.map(() => new Uint8Array(symbols.size));
  const mark = (sym: number, type: number): void => {
    // Walk the ancestors with an explicit stack; the hierarchy may declare a type twice.
    const stack = [type];
    while (stack.length > 0) {
      const t = stack.pop()!;
      if (members[t]![sym] === 1 && t !== type) continue;
      members[t]![sym] = 1;
      for (const p of parents[t]!) if (members[p]![sym] !== 1) stack.push(p);
    }
  };
  const declare = (name: string, type: string, where: string): void => {
    const t = index.get(type);
    if (t === undefined) throw new HtnInputError(`${where} ${name} has unknown type ${type}`);
    mark(symbols.id(name), t);
  };
  for (const c of library.constants) declare(c.name, c.type, 'constant');
  for (const o of state.objects) declare(o.name, o.type, 'object');
  const rootType = index.get(ROOT_TYPE)!;
  const numberType = index.get(NUMBER_TYPE)!;
  for (let s = 0; s < symbols.size; s++) {
    if (typeof symbols.value(s) === 'number') members[numberType]![s] = 1;
    else members[rootType]![s] = 1;
  }
  const objects = members.map((bits) => {
    const list: number[] = [];
    for (let s = 0; s < bits.length; s++) if (bits[s] === 1) list.push(s);
    return Int32Array.from(list);
  });
  return { index, names: unique, members, objects };
}
