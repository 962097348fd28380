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

/** The canonical JSON text of `value`. */
export function canonicalize(value: unknown): string {
  return write(value, '$', []);
}

const encoder = new TextEncoder();

/** The canonical JSON of `value` as UTF-8 bytes. */
export function canonicalBytes(value: unknown): Uint8Array {
  return encoder.encode(canonicalize(value));
}

function write(value: unknown, path: string, stack: object[]): string {
  switch (typeof value) {
    case 'string':
      return writeString(value, path);
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalJsonError(path, `${value} is not a JSON number`);
      return Object.is(value, -0) ? '0' : JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      return writeObject(value, path, stack);
    case 'undefined':
      throw new CanonicalJsonError(path, 'undefined is not a JSON value');
    case 'bigint':
      throw new CanonicalJsonError(path, 'BigInt is not a JSON value (encode it as a string)');
    case 'function':
      throw new CanonicalJsonError(path, 'a function is not a JSON value');
    case 'symbol':
      throw new CanonicalJsonError(path, 'a symbol is not a JSON value');
  }
  throw new CanonicalJsonError(path, `unsupported type ${typeof value}`);
}

function writeString(value: string, path: string): string {
  if (LONE_SURROGATE.test(value)) throw new CanonicalJsonError(path, 'string contains a lone UTF-16 surrogate');
  return JSON.stringify(value);
}

function writeObject(value: object, path: string, stack: object[]): string {
  if (stack.includes(value)) throw new CanonicalJsonError(path, 'cycle: the value contains itself');
  stack.push(value);
  try {
    if (Array.isArray(value)) {
      let out = '[';
      for (let i = 0; i < value.length; i++) {
        if (i > 0) out += ',';
        out += write(value[i], `${path}[${i}]`, stack);
      }
      return out + ']';
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      const name = (proto?.constructor?.name as string | undefined) ?? 'unknown';
      throw new CanonicalJsonError(path, `${name} is not a plain object (convert it to plain JSON data first)`);
    }
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    let out = '{';
    let first = true;
    for (const key of keys) {
      const member = record[key];
      if (member === undefined) continue;
      const memberPath = `${path}${/^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`}`;
      if (!first) out += ',';
      first = false;
      out += writeString(key, memberPath) + ':' + write(member, memberPath, stack);
    }
    return out + '}';
  } finally {
    stack.pop();
  }
}
