/**
 * The record bodies' shapes as data, read off the zod schemas of records.ts — the one declaration
 * of every body. A shape speaks the small vocabulary journal bodies use: strings, lowercase-hex
 * digests, counts, non-negative numbers, enums and literals, JSON values, arrays, string-keyed
 * records, and strict objects with optional members.
 *
 * Two fast validators are compiled from these shapes — validate-fast.ts (parsed values: the
 * writer's check of every body, the text reader's fast path) and scan-shapes.ts (canonical JSON
 * bytes: the byte verifier's fast path) — and so are the property tests' random bodies
 * (test/record-arbitraries.ts). zod stays the specification and the source of every error message;
 * the compiled validators only ever ACCEPT on their own, and test/journal-fast-path.test.ts and
 * test/journal-verify-bytes.test.ts prove "fast accepts ⇒ zod accepts" for both.
 *
 * `shapeOf` reads zod 4's `schema._zod.def`. A construct outside the vocabulary throws when this
 * module loads, naming the member: a body field that the fast paths could not check is a mistake
 * to fix at once (use the vocabulary, or teach it here and to both validators), not a silent
 * detour through zod on every record.
 *
 * Pure: no I/O.
 */
import type { z } from 'zod';
import { bodySchemas, metaSchema, recordKinds, type RecordKind } from './records.js';

export type Shape =
  /** `z.string()`, or `z.string().min(1)` when `nonEmpty`. */
  | { readonly type: 'string'; readonly nonEmpty: boolean }
  /** A string of exactly `length` lowercase hex characters (a digest, a signature). */
  | { readonly type: 'hex'; readonly length: number }
  /** `z.number().int().nonnegative()`: a safe non-negative integer. */
  | { readonly type: 'count' }
  /** `z.number().nonnegative()`: a finite number ≥ 0 (an amount). */
  | { readonly type: 'nonNegative' }
  /** `z.enum([...])` or `z.literal(v)`: one of these exact values. */
  | { readonly type: 'oneOf'; readonly values: readonly (string | number)[] }
  /** `z.json()`: any JSON value (finite numbers; plain objects and arrays of JSON). */
  | { readonly type: 'json' }
  /** `z.array(of)`. */
  | { readonly type: 'array'; readonly of: Shape }
  /** `z.record(z.string(), of)`. */
  | { readonly type: 'record'; readonly of: Shape }
  /** `z.strictObject({...})`: these members and no others; optional ones may be absent. */
  | { readonly type: 'object'; readonly fields: readonly Field[] };

export interface Field {
  readonly name: string;
  readonly shape: Shape;
  readonly optional: boolean;
}

type Def = z.core.$ZodTypes['_zod']['def'];
type CheckDef = z.core.$ZodChecks['_zod']['def'];

/** The two lowercase-hex patterns records.ts declares: a SHA-256 digest, and hex bytes (with a length). */
const DIGEST_PATTERN = '^[0-9a-f]{64}$';
const HEX_BYTES_PATTERN = '^(?:[0-9a-f]{2})*$';
/** What `z.json()` is made of (a lazy union). */
const JSON_MEMBERS = 'string,number,boolean,null,array,record';

const read = new WeakMap<object, Shape>();

/** The shape of a zod schema of the body vocabulary, read once per schema; throws, naming `path`, on anything else. */
export function shapeOf(schema: z.core.$ZodType, path = 'body'): Shape {
  let shape = read.get(schema);
  if (shape === undefined) {
    shape = readShape(schema._zod.def as Def, path);
    read.set(schema, shape);
  }
  return shape;
}

function readShape(def: Def, path: string): Shape {
  // A refinement on anything but a string or a number is a rule the fast paths cannot know.
  if (def.type !== 'string' && def.type !== 'number' && checksOf(def).length > 0) return unreadable(path, `a zod ${def.type} with a refinement`);
  switch (def.type) {
    case 'string':
      return stringShape(checksOf(def), path);
    case 'number':
      return numberShape(checksOf(def), path);
    case 'enum':
      return { type: 'oneOf', values: Object.values(def.entries) };
    case 'literal':
      if (def.values.every((v) => typeof v === 'string' || typeof v === 'number')) return { type: 'oneOf', values: def.values as (string | number)[] };
      break;
    case 'lazy':
      if (isJson(def)) return { type: 'json' };
      break;
    case 'array':
      return { type: 'array', of: shapeOf(def.element, `${path}[]`) };
    case 'record': {
      const key = def.keyType._zod.def as Def;
      if (key.type === 'string' && checksOf(key).length === 0) return { type: 'record', of: shapeOf(def.valueType, `${path}.*`) };
      break;
    }
    case 'object':
      if (def.catchall?._zod.def.type === 'never') return { type: 'object', fields: Object.entries(def.shape).map(([name, member]) => fieldOf(name, member, `${path}.${name}`)) };
      break;
  }
  return unreadable(path, `a zod ${def.type} of this form`);
}

function fieldOf(name: string, member: z.core.$ZodType, path: string): Field {
  const def = member._zod.def as Def;
  if (def.type === 'optional' && checksOf(def).length === 0) return { name, shape: shapeOf(def.innerType, path), optional: true };
  return { name, shape: shapeOf(member, path), optional: false };
}

function checksOf(def: Def): CheckDef[] {
  return ((def as { checks?: z.core.$ZodChecks[] }).checks ?? []).map((check) => check._zod.def);
}

function stringShape(checks: CheckDef[], path: string): Shape {
  let minLength = 0;
  let length: number | undefined;
  let pattern: string | undefined;
  for (const check of checks) {
    if (check.check === 'min_length') minLength = check.minimum;
    else if (check.check === 'length_equals') length = check.length;
    else if (check.check === 'string_format' && check.format === 'regex') pattern = (check as z.core.$ZodCheckRegexDef).pattern.source;
    else return unreadable(path, `a string check ${check.check}`);
  }
  if (pattern === undefined && length === undefined && minLength <= 1) return { type: 'string', nonEmpty: minLength === 1 };
  if (pattern === DIGEST_PATTERN && length === undefined && minLength === 0) return { type: 'hex', length: 64 };
  if (pattern === HEX_BYTES_PATTERN && length !== undefined && length % 2 === 0 && minLength === 0) return { type: 'hex', length };
  return unreadable(path, 'a string of this pattern or length');
}

function numberShape(checks: CheckDef[], path: string): Shape {
  const kinds = checks.map((check) => (check.check === 'number_format' ? check.format : check.check === 'greater_than' && check.value === 0 && check.inclusive ? 'nonnegative' : check.check)).sort();
  if (kinds.join() === 'nonnegative,safeint') return { type: 'count' };
  if (kinds.join() === 'nonnegative') return { type: 'nonNegative' };
  return unreadable(path, `a number with the checks ${kinds.join(', ') || 'none'}`);
}

function isJson(def: z.core.$ZodLazyDef): boolean {
  const inner = def.getter()._zod.def as Def;
  return inner.type === 'union' && inner.options.map((option) => option._zod.def.type).join() === JSON_MEMBERS;
}

function unreadable(path: string, what: string): never {
  throw new Error(
    `shapes.ts cannot read ${path} (${what}): declare record bodies with strings, hex digests, counts, non-negative numbers, enums, literals, z.json(), arrays, string-keyed records and strict objects — or teach shapeOf and both fast validators (validate-fast.ts, scan-shapes.ts) the new form`,
  );
}

/** Each kind's body shape. */
export const bodyShapes = Object.fromEntries(recordKinds.map((kind) => [kind, shapeOf(bodySchemas[kind], kind)])) as Record<RecordKind, Shape>;

/** The unhashed envelope `meta`. */
export const metaShape = shapeOf(metaSchema, 'meta');
