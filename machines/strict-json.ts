/**
 * A strict JSON parser for untrusted model replies — pure, dependency-free, iterative.
 *
 * It accepts exactly what RFC 8259 (and so `JSON.parse`) accepts — the same whitespace, numbers
 * (`Number` of the matched lexeme, like `JSON.parse`), escapes and values, with plain objects
 * and arrays as results — except for three things it refuses with a recorded reason:
 *
 *   1. an object that names the same member twice (names compared after unescaping, so `"a"` and
 *      `"\u0061"` are the same name)                                   → `json.duplicate_key`;
 *   2. arrays/objects nested deeper than `maxDepth` (default 32)      → `json.too_deep`;
 *   3. a string that is not well-formed UTF-16 — a lone surrogate, whether written raw in the
 *      text or as a `\uD800`-style escape                              → `json.not_well_formed`.
 *
 * Why: replies are canonicalized (RFC 8785) and digested into the journal, and canonical JSON
 * forbids duplicate member names and lone surrogates. `JSON.parse` would silently keep the last
 * duplicate (so what the model "said" depends on a tie-break nobody recorded) and hand lone
 * surrogates on to crash the canonicalizer later. Refusing them here, as data with a bounded
 * reason the model can act on, keeps the verdict a pure function of the recorded reply text.
 *
 * No input can overflow the stack (nesting is tracked on an explicit stack, and limited), and the
 * work is linear in the length of the text. A member named `__proto__` becomes an own data
 * property, as with `JSON.parse`; objects are plain (`Object.prototype`), arrays are arrays.
 * Offsets (`at`) are UTF-16 code unit indexes into the text.
 */

export type StrictJsonCode = 'json.invalid' | 'json.duplicate_key' | 'json.too_deep' | 'json.not_well_formed';

export type StrictJsonResult = { ok: true; value: unknown } | { ok: false; code: StrictJsonCode; reason: string; at: number };

export interface StrictJsonOptions {
  /** How many arrays/objects may be nested; a scalar alone is depth 0. Default 32. */
  maxDepth?: number;
}

export const DEFAULT_MAX_DEPTH = 32;

/** At most this many characters of the input are quoted in a reason. */
const QUOTE_LIMIT = 40;

type Failure = Extract<StrictJsonResult, { ok: false }>;

/** A value under construction: the array or object, and for objects the member name pending. */
type Frame = { array: unknown[] } | { object: Record<string, unknown>; key: string };

class Refusal {
  constructor(readonly failure: Failure) {}
}

const hasOwn = Object.prototype.hasOwnProperty;

/** Quote at most QUOTE_LIMIT code units of `s` as a JSON string, never splitting a surrogate pair. */
function quote(s: string): string {
  if (s.length <= QUOTE_LIMIT) return JSON.stringify(s);
  let end = QUOTE_LIMIT;
  const last = s.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${JSON.stringify(s.slice(0, end))}…`;
}

function hex4(text: string, at: number): number {
  if (at + 4 > text.length) return -1;
  let n = 0;
  for (let i = at; i < at + 4; i++) {
    const c = text.charCodeAt(i);
    let d: number;
    if (c >= 0x30 && c <= 0x39) d = c - 0x30;
    else if (c >= 0x41 && c <= 0x46) d = c - 0x37;
    else if (c >= 0x61 && c <= 0x66) d = c - 0x57;
    else return -1;
    n = n * 16 + d;
  }
  return n;
}

/** The two-character escapes: the code unit after the backslash → the code unit it stands for. */
const SIMPLE_ESCAPES: Record<number, number> = { 0x22: 0x22, 0x5c: 0x5c, 0x2f: 0x2f, 0x62: 0x08, 0x66: 0x0c, 0x6e: 0x0a, 0x72: 0x0d, 0x74: 0x09 };

/** Code units to a string, in chunks small enough to pass as arguments. */
function unitsToString(buf: Uint16Array, n: number): string {
  const CHUNK = 8192;
  if (n <= CHUNK) return String.fromCharCode.apply(null, buf.subarray(0, n) as unknown as number[]);
  const parts: string[] = [];
  for (let i = 0; i < n; i += CHUNK) parts.push(String.fromCharCode.apply(null, buf.subarray(i, Math.min(n, i + CHUNK)) as unknown as number[]));
  return parts.join('');
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/**
 * Parse `text` as one JSON value, refusing duplicate member names, nesting deeper than
 * `maxDepth` and lone surrogates. Never throws for any `text`; throws a RangeError only for a
 * `maxDepth` that is not a non-negative integer (or Infinity).
 */
export function parseStrictJson(text: string, options?: StrictJsonOptions): StrictJsonResult {
  const maxDepth = options?.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (!(maxDepth === Infinity || (Number.isInteger(maxDepth) && maxDepth >= 0))) {
    throw new RangeError(`maxDepth must be a non-negative integer, got ${String(maxDepth)}`);
  }
  if (typeof text !== 'string') {
    return { ok: false, code: 'json.invalid', reason: `the reply is not valid JSON: it is not text; reply with one JSON object only`, at: 0 };
  }
  try {
    return { ok: true, value: new Parser(text, maxDepth).parse() };
  } catch (err) {
    if (err instanceof Refusal) return err.failure;
    throw err;
  }
}

class Parser {
  private pos = 0;
  private readonly len: number;
  /** Scratch space for strings with escapes, shared by all the strings of one parse. */
  private scratch: Uint16Array | undefined;

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {
    this.len = text.length;
  }

  parse(): unknown {
    const stack: Frame[] = [];
    let value: unknown;
    for (;;) {
      // Expecting a value.
      this.skipWhitespace();
      const c = this.peek();
      if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
        if (stack.length >= this.maxDepth) {
          this.fail('json.too_deep', `the reply's JSON nests arrays/objects deeper than the limit of ${this.maxDepth} levels (at offset ${this.pos}); send a flatter value`);
        }
        this.pos++;
        this.skipWhitespace();
        if (c === 0x5b) {
          if (this.peek() === 0x5d /* ] */) {
            this.pos++;
            value = [];
          } else {
            stack.push({ array: [] });
            continue;
          }
        } else if (this.peek() === 0x7d /* } */) {
          this.pos++;
          value = {};
        } else {
          const object: Record<string, unknown> = {};
          stack.push({ object, key: this.parseMemberName(object) });
          continue;
        }
      } else {
        value = this.parseScalar(c);
      }

      // A value is complete: hand it to the enclosing frame(s).
      for (;;) {
        const top = stack[stack.length - 1];
        if (top === undefined) {
          this.skipWhitespace();
          if (this.pos < this.len) this.unexpected('after the value');
          return value;
        }
        if ('array' in top) top.array.push(value);
        else if (top.key in Object.prototype) {
          // `__proto__` (or any name Object.prototype has, which may be frozen): an own data
          // property, as JSON.parse makes it, never a call to an inherited setter.
          Object.defineProperty(top.object, top.key, { value, writable: true, enumerable: true, configurable: true });
        } else top.object[top.key] = value;
        this.skipWhitespace();
        const d = this.peek();
        if (d === 0x2c /* , */) {
          this.pos++;
          if ('object' in top) {
            this.skipWhitespace();
            top.key = this.parseMemberName(top.object);
          }
          break;
        }
        if ('array' in top ? d === 0x5d /* ] */ : d === 0x7d /* } */) {
          this.pos++;
          stack.pop();
          value = 'array' in top ? top.array : top.object;
          continue;
        }
        this.unexpected('array' in top ? 'in an array (expected "," or "]")' : 'in an object (expected "," or "}")');
      }
    }
  }

  /** Parse `"name"` `:` (whitespace allowed around the colon), refusing a name already present. */
  private parseMemberName(object: Record<string, unknown>): string {
    const at = this.pos;
    if (this.peek() !== 0x22 /* " */) this.unexpected('where a member name (a string) was expected');
    const key = this.parseString();
    if (hasOwn.call(object, key)) {
      this.fail('json.duplicate_key', `the reply's JSON has the member ${quote(key)} twice (at offset ${at}); send each member once`, at);
    }
    this.skipWhitespace();
    if (this.peek() !== 0x3a /* : */) this.unexpected('after a member name (expected ":")');
    this.pos++;
    return key;
  }

  private parseScalar(c: number): unknown {
    if (c === 0x22) return this.parseString();
    if (c === 0x2d /* - */ || isDigit(c)) return this.parseNumber();
    if (c === 0x74 /* t */ && this.text.startsWith('true', this.pos)) {
      this.pos += 4;
      return true;
    }
    if (c === 0x66 /* f */ && this.text.startsWith('false', this.pos)) {
      this.pos += 5;
      return false;
    }
    if (c === 0x6e /* n */ && this.text.startsWith('null', this.pos)) {
      this.pos += 4;
      return null;
    }
    return this.unexpected('where a value was expected');
  }

  /** `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, converted as JSON.parse does. */
  private parseNumber(): number {
    const { text } = this;
    const start = this.pos;
    let p = start;
    const negative = text.charCodeAt(p) === 0x2d;
    if (negative) p++;
    const first = text.charCodeAt(p);
    let integer = 0;
    if (first === 0x30) p++;
    else if (isDigit(first)) {
      for (let c = first; isDigit(c); c = text.charCodeAt(++p)) integer = integer * 10 + (c - 0x30);
    } else this.unexpectedAt(p, 'in a number (expected a digit)');
    const c = text.charCodeAt(p);
    if (c !== 0x2e && c !== 0x65 && c !== 0x45 && p - start - (negative ? 1 : 0) <= 15) {
      // An integer of at most 15 digits is computed exactly, so it equals Number(lexeme) (-0 included).
      this.pos = p;
      return negative ? -integer : integer;
    }
    if (c === 0x2e /* . */) {
      p++;
      if (!isDigit(text.charCodeAt(p))) this.unexpectedAt(p, 'in a number (expected a digit after ".")');
      while (isDigit(text.charCodeAt(p))) p++;
    }
    const e = text.charCodeAt(p);
    if (e === 0x65 || e === 0x45) {
      p++;
      const sign = text.charCodeAt(p);
      if (sign === 0x2b || sign === 0x2d) p++;
      if (!isDigit(text.charCodeAt(p))) this.unexpectedAt(p, 'in a number (expected a digit in the exponent)');
      while (isDigit(text.charCodeAt(p))) p++;
    }
    this.pos = p;
    return Number(text.slice(start, p));
  }

  /**
   * Parse a string starting at its opening quote; the result is well-formed UTF-16 or refused.
   * A string without escapes is one slice of the text. Once an escape appears, the code units
   * are collected in a buffer instead (reused, grown by doubling) and made into a string once:
   * linear, where appending piece by piece would build a rope of one node per escape.
   */
  private parseString(): string {
    const { text, len } = this;
    const open = this.pos;
    let p = open + 1;
    let buf: Uint16Array | undefined;
    let n = 0;
    for (;;) {
      if (p >= len) this.fail('json.invalid', `the reply is not valid JSON: the string opened at offset ${open} never ends; reply with one JSON object only`, len);
      const c = text.charCodeAt(p);
      if (c === 0x22 /* " */) {
        this.pos = p + 1;
        return buf === undefined ? text.slice(open + 1, p) : unitsToString(buf, n);
      }
      if (buf === undefined) {
        if (c === 0x5c /* \ */) {
          // The first escape: move what came before it into the buffer, and continue there.
          buf = this.units(p - open + 16);
          for (let i = open + 1; i < p; i++) buf[n++] = text.charCodeAt(i);
          continue;
        }
      } else if (n + 2 > buf.length) {
        buf = this.units(2 * buf.length, n);
      }
      if (c === 0x5c) {
        const after = this.parseEscape(p, buf!, n);
        n += after - p === 12 ? 2 : 1; // only an escaped surrogate pair writes two units
        p = after;
      } else if (c < 0x20) {
        this.fail('json.invalid', `the reply is not valid JSON: unescaped control character U+${c.toString(16).toUpperCase().padStart(4, '0')} in a string at offset ${p}; escape it (for example \\n) and reply with one JSON object only`, p);
      } else if (c >= 0xd800 && c <= 0xdfff) {
        const next = text.charCodeAt(p + 1);
        if (!(c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff)) this.loneSurrogate(c, p, 'a lone surrogate');
        if (buf !== undefined) {
          buf[n++] = c;
          buf[n++] = next;
        }
        p += 2;
      } else {
        if (buf !== undefined) buf[n++] = c;
        p++;
      }
    }
  }

  /** Decode the escape at `p` (a backslash) into `buf` at `n`; return the offset after it. */
  private parseEscape(p: number, buf: Uint16Array, n: number): number {
    const { text } = this;
    const e = text.charCodeAt(p + 1);
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) {
      buf[n] = simple;
      return p + 2;
    }
    if (e !== 0x75 /* u */) return this.badEscape(p, 2);
    const u = hex4(text, p + 2);
    if (u < 0) return this.badEscape(p, 6);
    if (u < 0xd800 || u > 0xdfff) {
      buf[n] = u;
      return p + 6;
    }
    if (u <= 0xdbff && text.charCodeAt(p + 6) === 0x5c && text.charCodeAt(p + 7) === 0x75) {
      const low = hex4(text, p + 8);
      if (low >= 0xdc00 && low <= 0xdfff) {
        buf[n] = u;
        buf[n + 1] = low;
        return p + 12;
      }
    }
    return this.loneSurrogate(u, p, `the escape ${text.slice(p, p + 6)}, a lone surrogate`);
  }

  /** A buffer of at least `size` code units, keeping the first `keep` of the current one. */
  private units(size: number, keep = 0): Uint16Array {
    const old = this.scratch;
    if (old !== undefined && old.length >= size) return old;
    const buf = new Uint16Array(Math.max(size, 2 * (old?.length ?? 0), 64));
    if (old !== undefined && keep > 0) buf.set(old.subarray(0, keep));
    return (this.scratch = buf);
  }

  private badEscape(p: number, width: number): never {
    if (p + 1 >= this.len) this.fail('json.invalid', `the reply is not valid JSON: the text ends inside an escape at offset ${p}; reply with one JSON object only`, p);
    return this.fail('json.invalid', `the reply is not valid JSON: bad escape ${quote(this.text.slice(p, p + width))} at offset ${p}; use only \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX and reply with one JSON object only`, p);
  }

  private loneSurrogate(unit: number, at: number, what: string): never {
    const hex = unit.toString(16).toUpperCase().padStart(4, '0');
    return this.fail('json.not_well_formed', `the reply's JSON has a string that is not well-formed Unicode: ${what} U+${hex} at offset ${at}; send whole characters only (a high surrogate must be followed by a low one)`, at);
  }

  private skipWhitespace(): void {
    const { text, len } = this;
    let p = this.pos;
    while (p < len) {
      const c = text.charCodeAt(p);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) p++;
      else break;
    }
    this.pos = p;
  }

  /** The code unit at the current position, or -1 at the end. */
  private peek(): number {
    return this.pos < this.len ? this.text.charCodeAt(this.pos) : -1;
  }

  private unexpected(where: string): never {
    return this.unexpectedAt(this.pos, where);
  }

  private unexpectedAt(p: number, where: string): never {
    if (p >= this.len) this.fail('json.invalid', `the reply is not valid JSON: it ends early at offset ${p} ${where}; reply with one JSON object only`, p);
    const c = this.text.charCodeAt(p);
    // A raw lone surrogate anywhere in the text is refused as ill-formed text, like one in a string.
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = this.text.charCodeAt(p + 1);
      if (!(c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff)) this.loneSurrogate(c, p, 'a lone surrogate');
    }
    const cp = this.text.codePointAt(p)!;
    let shown: string;
    if (cp < 0x20 || cp === 0x7f) shown = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
    else {
      // Quote a whole word (`True`, `undefined`, `I`) rather than its first letter; one character otherwise.
      const word = /^[A-Za-z0-9_$]+/.exec(this.text.slice(p, p + QUOTE_LIMIT));
      shown = word ? quote(word[0]) : quote(String.fromCodePoint(cp));
      if (!word && cp > 0x7e) shown += ` (U+${cp.toString(16).toUpperCase().padStart(4, '0')})`;
    }
    return this.fail('json.invalid', `the reply is not valid JSON: unexpected ${shown} at offset ${p} ${where}; reply with one JSON object only`, p);
  }

  private fail(code: StrictJsonCode, reason: string, at: number = this.pos): never {
    throw new Refusal({ ok: false, code, reason, at });
  }
}
