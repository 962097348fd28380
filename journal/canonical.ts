/**
 * Canonical JSON (RFC 8785, the JSON Canonicalization Scheme) — the one place Weft turns a value
 * into the bytes it hashes. Every digest in Weft (record hashes, library digests, plan digests,
 * invocation ids) goes through `canonicalize`, so two equal values always hash the same.
 *
 * Rules: object keys sorted at every depth by UTF-16 code units (JavaScript's default string
 * order); array order kept; `undefined` object members omitted; `-0` written as `0`; numbers in
 * ECMAScript shortest round-trip form; strings escaped as JSON.stringify does. Rejected, with an
 * error naming the JSON path: NaN and ±Infinity, BigInt, functions, symbols, `undefined` where a
 * value is required (top level, array element), lone UTF-16 surrogates, cycles, and objects that
 * are not plain (Map, Set, Date, class instances) — their iteration order or encoding is not data.
 *
 * Pure: no I/O, no clock, no randomness.
 */

export class CanonicalJsonError extends Error {
  override readonly name = 'CanonicalJsonError';
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`cannot canonicalize ${path}: ${reason}`);
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when `s` has no lone surrogate: the native `isWellFormed` (ES2024) when present, else a regex. */
const wellFormed: (s: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function'
    ? (s) => (s as unknown as { isWellFormed(): boolean }).isWellFormed()
    : (s) => !LONE_SURROGATE.test(s);

/**
 * The path of the value being written, kept as segments (array indexes and object keys) and turned
 * into text (`$.a[1]["b c"]`) only when an error names it — building it eagerly for every member
 * was the canonicalizer's main cost.
 */
type Path = (string | number)[];

function pathText(path: Path): string {
  let out = '$';
  for (const segment of path) {
    out += typeof segment === 'number' ? `[${segment}]` : /^[A-Za-z_$][\w$]*$/.test(segment) ? `.${segment}` : `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** The canonical JSON text of `value`. */
export function canonicalize(value: unknown): string {
  return write(value, [], []);
}

/**
 * The canonical JSON text of `value` written as the member `key` of an enclosing plain object —
 * the same text `canonicalize` writes for that member, and errors name the same path (`$.key…`).
 * Lets a caller that composes an object's canonical text from its members (chain.ts, encode.ts)
 * canonicalize each member once. Not for `undefined` (the enclosing object would omit the member).
 */
export function canonicalizeMember(key: string, value: unknown): string {
  return write(value, [key], []);
}

/**
 * Fast path. True when `value` is plain JSON data that `JSON.stringify` already writes canonically:
 * every object's own keys in sorted order (so integer-like keys, which JavaScript lists first, fail
 * unless already sorted), no -0, no non-finite number, no lone surrogate, no undefined member, only
 * plain objects and arrays. Parsed journal lines (written canonically) always pass; anything that
 * fails takes the general path, which sorts, normalises or names the error. `stack` guards cycles.
 */
function stringifiesCanonically(value: unknown, stack: object[]): boolean {
  switch (typeof value) {
    case 'string':
      return wellFormed(value);
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'boolean':
      return true;
    case 'object': {
      if (value === null) return true;
      if (stack.includes(value)) return false;
      stack.push(value);
      try {
        if (Array.isArray(value)) {
          for (let i = 0; i < value.length; i++) if (!stringifiesCanonically(value[i], stack)) return false;
          return true;
        }
        const proto = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null) return false;
        const record = value as Record<string, unknown>;
        let previous: string | undefined;
        for (const key of Object.keys(record)) {
          if (previous !== undefined && !(previous < key)) return false;
          if (!wellFormed(key)) return false;
          const member = record[key];
          if (member === undefined || !stringifiesCanonically(member, stack)) return false;
          previous = key;
        }
        return true;
      } finally {
        stack.pop();
      }
    }
    default:
      return false;
  }
}

const NOT_COPYABLE = Symbol('not copyable');
const INTEGER_LIKE = /^(?:0|[1-9][0-9]*)$/;

/**
 * A copy of `value` with every object's keys inserted in sorted order, `undefined` members
 * dropped and -0 written as 0 — which JSON.stringify then writes canonically — or NOT_COPYABLE
 * when that cannot work: an integer-like key (JavaScript lists those first, whatever the insertion
 * order), or anything the general path must reject with a named error.
 */
function sortedCopy(value: unknown, stack: object[]): unknown {
  switch (typeof value) {
    case 'string':
      return wellFormed(value) ? value : NOT_COPYABLE;
    case 'number':
      return Number.isFinite(value) ? (Object.is(value, -0) ? 0 : value) : NOT_COPYABLE;
    case 'boolean':
      return value;
    case 'object': {
      if (value === null) return null;
      if (stack.includes(value)) return NOT_COPYABLE;
      stack.push(value);
      try {
        if (Array.isArray(value)) {
          const out: unknown[] = new Array(value.length);
          for (let i = 0; i < value.length; i++) {
            const item = value[i];
            if (item === undefined) return NOT_COPYABLE;
            const copy = sortedCopy(item, stack);
            if (copy === NOT_COPYABLE) return NOT_COPYABLE;
            out[i] = copy;
          }
          return out;
        }
        const proto = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null) return NOT_COPYABLE;
        const record = value as Record<string, unknown>;
        const out: Record<string, unknown> = {};
        for (const key of Object.keys(record).sort()) {
          if (INTEGER_LIKE.test(key) || key === '__proto__' || !wellFormed(key)) return NOT_COPYABLE;
          const member = record[key];
          if (member === undefined) continue;
          const copy = sortedCopy(member, stack);
          if (copy === NOT_COPYABLE) return NOT_COPYABLE;
          out[key] = copy;
        }
        return out;
      } finally {
        stack.pop();
      }
    }
    default:
      return NOT_COPYABLE;
  }
}

const encoder = new TextEncoder();

/** The canonical JSON of `value` as UTF-8 bytes. */
export function canonicalBytes(value: unknown): Uint8Array {
  return encoder.encode(canonicalize(value));
}

function write(value: unknown, path: Path, stack: object[]): string {
  switch (typeof value) {
    case 'string':
      return writeString(value, path);
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalJsonError(pathText(path), `${value} is not a JSON number`);
      return Object.is(value, -0) ? '0' : JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      // Whole subtrees that are already canonical go through the native serializer in one call;
      // so do subtrees that only need their keys sorted (via a sorted copy). The general path
      // handles the rest — integer-like keys, which JavaScript would reorder — and names errors.
      if (stringifiesCanonically(value, stack)) return JSON.stringify(value);
      {
        const copy = sortedCopy(value, stack);
        if (copy !== NOT_COPYABLE) return JSON.stringify(copy);
      }
      return writeObject(value, path, stack);
    case 'undefined':
      throw new CanonicalJsonError(pathText(path), 'undefined is not a JSON value');
    case 'bigint':
      throw new CanonicalJsonError(pathText(path), 'BigInt is not a JSON value (encode it as a string)');
    case 'function':
      throw new CanonicalJsonError(pathText(path), 'a function is not a JSON value');
    case 'symbol':
      throw new CanonicalJsonError(pathText(path), 'a symbol is not a JSON value');
  }
  throw new CanonicalJsonError(pathText(path), `unsupported type ${typeof value}`);
}

function writeString(value: string, path: Path): string {
  if (!wellFormed(value)) throw new CanonicalJsonError(pathText(path), 'string contains a lone UTF-16 surrogate');
  return JSON.stringify(value);
}

function writeObject(value: object, path: Path, stack: object[]): string {
  if (stack.includes(value)) throw new CanonicalJsonError(pathText(path), 'cycle: the value contains itself');
  stack.push(value);
  try {
    if (Array.isArray(value)) {
      let out = '[';
      for (let i = 0; i < value.length; i++) {
        if (i > 0) out += ',';
        path.push(i);
        out += write(value[i], path, stack);
        path.pop();
      }
      return out + ']';
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      const name = (proto?.constructor?.name as string | undefined) ?? 'unknown';
      throw new CanonicalJsonError(pathText(path), `${name} is not a plain object (convert it to plain JSON data first)`);
    }
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    let out = '{';
    let first = true;
    for (const key of keys) {
      const member = record[key];
      if (member === undefined) continue;
      path.push(key);
      if (!first) out += ',';
      first = false;
      out += writeString(key, path) + ':' + write(member, path, stack);
      path.pop();
    }
    return out + '}';
  } finally {
    stack.pop();
  }
}
