/**
 * The body shapes of shapes.ts compiled into checks over canonical JSON bytes — the byte
 * verifier's schema check. A span check takes a span [start, end) that canonical-scan.ts has
 * already proved to be one canonical JSON value and says whether that value certainly passes the
 * shape's zod schema (false: a doubt, and the text reader decides). A body is checked from the tape
 * its scan left (canonical-scan.ts `tape`), so its members are not scanned twice: the kind, which
 * decides the shape, comes after the body on the line.
 *
 * Zod semantics mirrored as validate-fast.ts mirrors them (strict objects refuse undeclared keys,
 * a count is a safe non-negative integer, hex strings are lowercase); the span is canonical, so
 * keys are sorted, unique, plain ASCII and never `__proto__`, and every number is finite.
 *
 * Pure: no I/O.
 */
import { sameBytes, scanCount, scanString, scanValue, tape } from './canonical-scan.js';
import { LOWER_HEX } from './digest.js';
import { canonicalize } from './canonical.js';
import type { RecordKind } from './records.js';
import { bodyShapes, metaShape, type Shape } from './shapes.js';

/** True when the canonical JSON value at [start, end) certainly passes the shape's schema. */
export type SpanCheck = (b: Uint8Array, start: number, end: number) => boolean;

/** True when the members on the tape (a body's, `members` of them) certainly pass the object shape. */
export type TapeCheck = (b: Uint8Array, members: number) => boolean;

const QUOTE = 0x22;
const encoder = new TextEncoder();

interface CompiledField {
  name: Uint8Array;
  check: SpanCheck;
  optional: boolean;
}

function isLowerHex(b: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (LOWER_HEX[b[i]!]! < 0) return false;
  return true;
}

/** A count: the whole canonical span is a safe non-negative integer (scanCount's reading of it). */
const countSpan: SpanCheck = (b, start, end) => scanCount(b, start) === end;

/**
 * The fields of a strict object, sorted as canonical keys are (all-ASCII names: byte order is
 * UTF-16 order), and a merge over an object's sorted members: each key must be the next declared
 * name, skipping only optional ones; every required name must be met.
 */
function fieldsOf(shape: Extract<Shape, { type: 'object' }>): CompiledField[] {
  return [...shape.fields]
    .sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))
    .map((field) => ({ name: encoder.encode(field.name), check: compile(field.shape), optional: field.optional }));
}

/** The index of the field after `f` that matches key [k0, k1), skipping optional fields; -1 when none may. */
function matchField(fields: CompiledField[], f: number, b: Uint8Array, k0: number, k1: number): number {
  for (; f < fields.length; f++) {
    if (sameBytes(b, k0, k1, fields[f]!.name)) return f;
    if (!fields[f]!.optional) return -1;
  }
  return -1;
}

function restOptional(fields: CompiledField[], f: number): boolean {
  for (; f < fields.length; f++) if (!fields[f]!.optional) return false;
  return true;
}

/** A check of an object's members as they come: (key span, value span) → still fine. */
function objectSpan(fields: CompiledField[]): SpanCheck {
  return (b, start, end) => {
    if (b[start] !== 0x7b) return false;
    let p = start + 1;
    let f = 0;
    if (b[p] === 0x7d) return restOptional(fields, 0) && p + 1 === end;
    for (;;) {
      const k0 = p + 1;
      p = scanString(b, p);
      const v0 = p + 1;
      p = scanValue(b, v0);
      f = matchField(fields, f, b, k0, v0 - 2);
      if (f < 0 || !fields[f]!.check(b, v0, p)) return false;
      f++;
      if (b[p] !== 0x2c) return b[p] === 0x7d && p + 1 === end && restOptional(fields, f);
      p++;
    }
  };
}

/**
 * An array (`keyed` false: `[`…`]`) or a string-keyed record (`keyed`: `{`…`}`, each value after its
 * key) whose every element passes `of`.
 */
function elementsSpan(keyed: boolean, of: SpanCheck): SpanCheck {
  const open = keyed ? 0x7b : 0x5b;
  const close = keyed ? 0x7d : 0x5d;
  return (b, start, end) => {
    if (b[start] !== open) return false;
    let p = start + 1;
    if (b[p] === close) return p + 1 === end;
    for (;;) {
      const v0 = keyed ? scanString(b, p) + 1 : p;
      p = scanValue(b, v0);
      if (!of(b, v0, p)) return false;
      if (b[p] !== 0x2c) return b[p] === close && p + 1 === end;
      p++;
    }
  };
}

const compiled = new WeakMap<Shape, SpanCheck>();

/** The span check of a shape, compiled once. */
export function compile(shape: Shape): SpanCheck {
  let check = compiled.get(shape);
  if (check === undefined) {
    check = build(shape);
    compiled.set(shape, check);
  }
  return check;
}

function build(shape: Shape): SpanCheck {
  switch (shape.type) {
    case 'string':
      return shape.nonEmpty ? (b, start, end) => b[start] === QUOTE && end - start > 2 : (b, start) => b[start] === QUOTE;
    case 'hex': {
      const length = shape.length + 2;
      return (b, start, end) => end - start === length && b[start] === QUOTE && isLowerHex(b, start + 1, end - 1);
    }
    case 'count':
      return countSpan;
    case 'nonNegative':
      // A canonical number is finite; it is non-negative when its text starts with a digit, not '-'.
      return (b, start) => b[start]! >= 0x30 && b[start]! <= 0x39;
    case 'oneOf': {
      const texts = shape.values.map((value) => encoder.encode(canonicalize(value)));
      return (b, start, end) => {
        for (const text of texts) if (sameBytes(b, start, end, text)) return true;
        return false;
      };
    }
    case 'json':
      return () => true;
    case 'array':
      return elementsSpan(false, compile(shape.of));
    case 'record':
      return elementsSpan(true, compile(shape.of));
    case 'object':
      return objectSpan(fieldsOf(shape));
  }
}

/** The tape check of an object shape: the members a recording scan left on canonical-scan.ts's tape. */
function tapeCheck(shape: Shape): TapeCheck {
  if (shape.type !== 'object') return () => false;
  const fields = fieldsOf(shape);
  return (b, members) => {
    let f = 0;
    for (let m = 0; m < members; m++) {
      const t = 4 * m;
      f = matchField(fields, f, b, tape[t]!, tape[t + 1]!);
      if (f < 0 || !fields[f]!.check(b, tape[t + 2]!, tape[t + 3]!)) return false;
      f++;
    }
    return restOptional(fields, f);
  };
}

/** Each kind's body check, from the tape of the body's scan. */
export const bodyTapeChecks: Record<RecordKind, TapeCheck> = Object.fromEntries(
  (Object.keys(bodyShapes) as RecordKind[]).map((kind) => [kind, tapeCheck(bodyShapes[kind])]),
) as Record<RecordKind, TapeCheck>;

/** The envelope's check (`meta`), over its canonical span. */
export const metaSpanCheck: SpanCheck = compile(metaShape);
