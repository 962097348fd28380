/**
 * Logic variables for least-commitment binding: a method variable that only its subtasks use is
 * passed down unbound (as `-(k + 1)` in a task's args) and bound by the first descendant that
 * binds it. This class holds each variable's value (-1 while unbound) and type, and trails every
 * binding, allocation and type narrowing so the search undoes them exactly on backtracking.
 *
 * Invariants: variables are allocated, bound and narrowed in LIFO order relative to choice
 * points (`mark` / `undoTo`); a binding is staged, checked against the variable's type and
 * against other staged bindings of the same variable, and only then committed; the synthetic
 * intersection types `meet` adds to the model's type table are cached, so the table grows the
 * same way in every run.
 */
import type { TypeTable } from './symbols.js';

export interface VarMark {
  readonly vars: number;
  readonly bindings: number;
  readonly narrowings: number;
}

export class LogicVariables {
  readonly value: number[] = [];
  readonly type: number[] = [];
  private readonly trail: number[] = [];
  /** (variable, previous type) pairs. */
  private readonly typeTrail: number[] = [];
  private readonly meetCache = new Map<number, number>();
  private readonly pendK: number[] = [];
  private readonly pendV: number[] = [];
  /** Set by `resolve`: bit i = arg i is still an unbound variable. */
  mask = 0;

  constructor(private readonly types: TypeTable) {}

  mark(): VarMark {
    return { vars: this.value.length, bindings: this.trail.length, narrowings: this.typeTrail.length };
  }

  undoTo(m: VarMark): void {
    for (let i = this.trail.length - 1; i >= m.bindings; i--) this.value[this.trail[i]!] = -1;
    this.trail.length = m.bindings;
    for (let i = this.typeTrail.length - 2; i >= m.narrowings; i -= 2) this.type[this.typeTrail[i]!] = this.typeTrail[i + 1]!;
    this.typeTrail.length = m.narrowings;
    this.value.length = m.vars;
    this.type.length = m.vars;
  }

  fresh(type: number): number {
    this.value.push(-1);
    this.type.push(type);
    return this.value.length - 1;
  }

  /** A symbol id, or the (negative) variable when it is still unbound. */
  deref(a: number): number {
    if (a >= 0) return a;
    const v = this.value[-a - 1]!;
    return v >= 0 ? v : a;
  }

  /** `raw` with bound variables replaced by their values (a copy only if needed); sets `mask`. */
  resolve(raw: Int32Array): Int32Array {
    this.mask = 0;
    let out = raw;
    for (let i = 0; i < raw.length; i++) {
      const a = raw[i]!;
      if (a >= 0) continue;
      if (out === raw) out = Int32Array.from(raw);
      const v = this.value[-a - 1]!;
      if (v >= 0) out[i] = v;
      else this.mask |= 1 << i;
    }
    return out;
  }

  /** Starts a group of bindings. */
  begin(): void {
    this.pendK.length = 0;
    this.pendV.length = 0;
  }

  /** Stages `k := v`; false if v is not of k's type or k is already staged to another value. */
  stage(k: number, v: number): boolean {
    if (this.types.members[this.type[k]!]![v] !== 1) return false;
    for (let j = 0; j < this.pendK.length; j++) if (this.pendK[j] === k) return this.pendV[j] === v;
    this.pendK.push(k);
    this.pendV.push(v);
    return true;
  }

  commit(): void {
    for (let j = 0; j < this.pendK.length; j++) {
      this.value[this.pendK[j]!] = this.pendV[j]!;
      this.trail.push(this.pendK[j]!);
    }
    this.begin();
  }

  /** Restricts k's type to its meet with `type` (trailed); false when that meet is empty. */
  narrow(k: number, type: number): boolean {
    const t = this.meet(this.type[k]!, type);
    if (t < 0) return false;
    if (t !== this.type[k]) {
      this.typeTrail.push(k, this.type[k]!);
      this.type[k] = t;
    }
    return true;
  }

  /**
   * The type whose members are in both a and b: one of them when it is a subtype of the other,
   * else a synthetic intersection type added to the type table; -1 when no object has both.
   */
  meet(a: number, b: number): number {
    if (a === b) return a;
    const key = a * 65536 + b;
    const cached = this.meetCache.get(key);
    if (cached !== undefined) return cached;
    const types = this.types;
    const within = (x: number, y: number): boolean => types.objects[x]!.every((o) => types.members[y]![o] === 1);
    let result: number;
    if (within(a, b)) result = a;
    else if (within(b, a)) result = b;
    else {
      const objects = types.objects[a]!.filter((o) => types.members[b]![o] === 1);
      if (objects.length === 0) result = -1;
      else {
        const bits = new Uint8Array(types.members[a]!.length);
        for (const o of objects) bits[o] = 1;
        result = types.names.length;
        types.names.push(`${types.names[a]}&${types.names[b]}`);
        types.members.push(bits);
        types.objects.push(objects);
      }
    }
    this.meetCache.set(key, result);
    return result;
  }
}
