/**
 * Fast validators of parsed values, compiled from the body shapes of shapes.ts (read off the zod
 * schemas of records.ts) — the hot path of the writer (every body is checked
 * before it is written) and of the text reader (every record's shape and body). The zod schemas
 * stay the specification and the source of every error message: these validators only ever ACCEPT on their own. When one says no (or meets anything unusual: a class
 * instance, a symbol key, a `__proto__` key, an inherited property), the caller asks zod, which
 * gives the verdict and its message. So the one property that matters for correctness is
 *
 *     fast accepts  ⇒  zod accepts                                      (never a false accept)
 *
 * and, for speed only, that on plain data they agree (test/journal-fast-path.test.ts checks both
 * directions on random valid and mutated bodies of every kind, against zod).
 *
 * `sorted` (the reader's mode) additionally requires every object's own keys in strictly
 * increasing UTF-16 order — together with `JSON.stringify(value) === line` this proves a parsed
 * line is canonical JSON (see reader.ts). It only ever turns an accept into "ask the slow path".
 * `parsed` says the value came from JSON.parse (no symbol keys possible), which skips a check.
 *
 * Zod semantics mirrored (zod 4): strictObject reads `input[key]` for declared keys and refuses
 * any enumerable key not declared; `z.number()` refuses NaN and ±Infinity; `.int()` means a safe
 * integer; `z.record(z.string(), v)` needs a plain object and checks own enumerable keys (a symbol
 * key fails); `z.json()` is string | finite number | boolean | null | array of json | record of json
 * (so `undefined`, functions, bigints and non-plain objects fail).
 *
 * Pure: no I/O.
 */
import type { RecordKind } from './records.js';
import { bodyShapes, metaShape, type Shape } from './shapes.js';

/** A validator: true only when the value certainly passes the zod schema it mirrors. */
type V = (value: unknown, sorted: boolean, parsed: boolean) => boolean;

const HEX = /^(?:[0-9a-f]{2})*$/;

function isPlain(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** No own symbol keys (zod's records refuse them; JSON.parse never makes them). */
function noSymbols(v: object, parsed: boolean): boolean {
  return parsed || Object.getOwnPropertySymbols(v).length === 0;
}

const count: V = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** `z.json()`. */
export const json: V = (v, sorted, parsed) => {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v);
    case 'object': {
      if (v === null) return true;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) if (!json(v[i], sorted, parsed)) return false;
        return true;
      }
      return recordBody(v, json, sorted, parsed);
    }
    default:
      return false;
  }
};

/** The members of `z.record(z.string(), of)` once `v` is known to be a non-array object. */
function recordBody(v: object, of: V, sorted: boolean, parsed: boolean): boolean {
  if (!isPlain(v) || !noSymbols(v, parsed)) return false;
  const keys = Object.keys(v);
  const rec = v as Record<string, unknown>;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    // zod skips a `__proto__` member; leave that oddity to zod.
    if (key === '__proto__') return false;
    if (sorted && i > 0 && !(keys[i - 1]! < key)) return false;
    if (!of(rec[key], sorted, parsed)) return false;
  }
  return true;
}

/** `z.strictObject(...)`: only plain objects are accepted here (zod also takes class instances). */
function strictObject(fields: readonly { name: string; check: V; optional: boolean }[]): V {
  const declared = new Set(fields.map((field) => field.name));
  return (v, sorted, parsed) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v) || !isPlain(v)) return false;
    const keys = Object.keys(v);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (!declared.has(key)) return false;
      if (sorted && i > 0 && !(keys[i - 1]! < key)) return false;
    }
    const rec = v as Record<string, unknown>;
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i]!;
      const value = rec[field.name];
      if (value === undefined) {
        if (!field.optional) return false;
        // Canonical text omits undefined members; a parsed line never has one.
        if (sorted && Object.hasOwn(rec, field.name)) return false;
      } else if (!field.check(value, sorted, parsed)) {
        return false;
      }
    }
    return true;
  };
}

const compiled = new WeakMap<Shape, V>();

/** The validator of a shape (shapes.ts), compiled once. */
function compile(shape: Shape): V {
  let v = compiled.get(shape);
  if (v === undefined) {
    v = build(shape);
    compiled.set(shape, v);
  }
  return v;
}

function build(shape: Shape): V {
  switch (shape.type) {
    case 'string':
      return shape.nonEmpty ? (v) => typeof v === 'string' && v.length > 0 : (v) => typeof v === 'string';
    case 'hex': {
      const length = shape.length;
      return (v) => typeof v === 'string' && v.length === length && HEX.test(v);
    }
    case 'count':
      return count;
    case 'nonNegative':
      return (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
    case 'oneOf': {
      const set = new Set<unknown>(shape.values);
      return (v) => set.has(v);
    }
    case 'json':
      return json;
    case 'array': {
      const of = compile(shape.of);
      return (v, sorted, parsed) => {
        if (!Array.isArray(v)) return false;
        for (let i = 0; i < v.length; i++) if (!of(v[i], sorted, parsed)) return false;
        return true;
      };
    }
    case 'record': {
      const of = compile(shape.of);
      return (v, sorted, parsed) => typeof v === 'object' && v !== null && !Array.isArray(v) && recordBody(v, of, sorted, parsed);
    }
    case 'object':
      return strictObject(shape.fields.map((field) => ({ name: field.name, check: compile(field.shape), optional: field.optional })));
  }
}

const bodies = Object.fromEntries((Object.keys(bodyShapes) as RecordKind[]).map((kind) => [kind, compile(bodyShapes[kind])])) as Record<RecordKind, V>;
const digest = compile({ type: 'hex', length: 64 });

/**
 * True when `body` certainly passes `bodySchemas[kind]` (false: ask zod). `sorted`: also require
 * canonical key order and no undefined members; `parsed`: the value came from JSON.parse.
 */
export function fastBodyOk(kind: RecordKind, body: unknown, sorted = false, parsed = false): boolean {
  return bodies[kind](body, sorted, parsed);
}

const meta = compile(metaShape);

/**
 * True when `value` certainly passes `recordShapeSchema` — and, since the reader uses it on parsed
 * lines, also has its own keys in canonical order. (The body is checked separately, by kind.)
 *
 * `digests` false (the reader's fast path only) takes `prev` and `hash` on their being strings of
 * 64 characters — NOT a promise that zod accepts them: the caller must prove them digests itself
 * (the reader's hash check does: it decodes prev as lowercase hex and compares hash with a hex
 * digest) and take the slow path's verdict when it cannot.
 */
export function fastShapeOk(value: unknown, parsed = true, digests = true): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !isPlain(value)) return false;
  const r = value as Record<string, unknown>;
  const keys = Object.keys(r);
  if (keys.length === 6) {
    if (keys[0] !== 'body' || keys[1] !== 'epoch' || keys[2] !== 'hash' || keys[3] !== 'kind' || keys[4] !== 'prev' || keys[5] !== 'seq') return false;
  } else if (keys.length === 7) {
    if (keys[0] !== 'body' || keys[1] !== 'epoch' || keys[2] !== 'hash' || keys[3] !== 'kind' || keys[4] !== 'meta' || keys[5] !== 'prev' || keys[6] !== 'seq') return false;
    if (!meta(r.meta, true, parsed)) return false;
  } else {
    return false;
  }
  // body: z.unknown() — but a present `undefined` body is not canonical text.
  if (!(r.body !== undefined && count(r.seq, true, parsed) && typeof r.kind === 'string' && count(r.epoch, true, parsed))) return false;
  if (!digests) return typeof r.prev === 'string' && r.prev.length === 64 && typeof r.hash === 'string' && r.hash.length === 64;
  return digest(r.prev, true, parsed) && digest(r.hash, true, parsed);
}
