/**
 * The strict JSON parser for model replies: it agrees with JSON.parse on everything JSON.parse
 * accepts, except the three things canonical JSON cannot carry (duplicate member names, nesting
 * past the limit, lone surrogates), which it refuses as data with a bounded reason — never a throw,
 * never a stack overflow.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { parseStrictJson, type StrictJsonResult } from '../machines/strict-json.js';

type Refused = Extract<StrictJsonResult, { ok: false }>;

function refused(result: StrictJsonResult): Refused {
  if (result.ok) throw new Error(`expected a refusal, got ${JSON.stringify(result.value)}`);
  return result;
}

function jsonParse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function isWellFormed(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
      else return false;
    } else if (c >= 0xdc00 && c <= 0xdfff) return false;
  }
  return true;
}

/** A JSON string literal for `s` that keeps every surrogate raw (JSON.stringify escapes lone ones). */
function rawLiteral(s: string): string {
  let out = '"';
  for (const unit of s.split('')) {
    const c = unit.charCodeAt(0);
    if (unit === '"' || unit === '\\') out += `\\${unit}`;
    else if (c < 0x20) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += unit;
  }
  return `${out}"`;
}

/** Any UTF-16 code unit, with surrogates over-represented. */
const codeUnit = fc.oneof(fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.integer({ min: 0x20, max: 0x7e })).map((n) => String.fromCharCode(n));
const utf16String = fc.string({ unit: codeUnit, maxLength: 12 });

/** Fragments that make near-JSON text: most random mixes are invalid, in many different ways. */
const fragment = fc.constantFrom(
  '{', '}', '[', ']', '"', ':', ',', ' ', '\n', '\t', '\r', '\u00a0', '\ufeff',
  '0', '1', '9', '-', '+', '.', 'e', 'E', '01', '1.5', '-0', '1e400', 'true', 'false', 'null', 'tru', 'nul',
  '\\', '\\"', '\\n', '\\u', '\\u0061', '\\uD800', '\\udc00', '\\x', 'a', 'x', '"a"', '"a":1', '"\\u0061"', '"__proto__"',
  '\ud800', '\udc00', '\ud83d\ude00', '\u0000', '\u001f', '\u2028', 'NaN', 'Infinity', 'undefined', "'",
);
const nearJson = fc.array(fragment, { maxLength: 24 }).map((parts) => parts.join(''));

/** Valid JSON text with one edit (insert, delete or replace a character): mostly invalid near misses. */
const mutatedJson = fc
  .tuple(fc.jsonValue({ maxDepth: 4 }), fc.nat(), fc.constantFrom('insert', 'delete', 'replace'), fragment)
  .map(([v, at, how, piece]) => {
    const text = JSON.stringify(v);
    const i = at % (text.length + 1);
    if (how === 'insert') return text.slice(0, i) + piece + text.slice(i);
    if (how === 'delete') return text.slice(0, i) + text.slice(i + 1);
    return text.slice(0, i) + piece + text.slice(i + 1);
  });

const anyText = fc.oneof(nearJson, mutatedJson, fc.string(), fc.string({ unit: codeUnit }));

describe('agreement with JSON.parse', () => {
  test('property: any JSON value, stringified (compact or indented), parses to what JSON.parse gives', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 12 }), fc.constantFrom(undefined, 2, '\t'), (v, indent) => {
        const text = JSON.stringify(v, null, indent);
        const result = parseStrictJson(text);
        expect(result.ok).toBe(true);
        // toStrictEqual tells -0 from 0, arrays from objects, and own properties from inherited ones.
        expect((result as { value: unknown }).value).toStrictEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  test('property: any JSON value with unicode strings round-trips', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6, stringUnit: 'binary' }), (v) => {
        const text = JSON.stringify(v);
        expect(parseStrictJson(text)).toStrictEqual({ ok: true, value: JSON.parse(text) });
      }),
      { numRuns: 300 },
    );
  });

  test('property: whatever JSON.parse refuses is refused, never thrown', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        fc.pre(!jsonParse(s).ok);
        const result = parseStrictJson(s);
        expect(result.ok).toBe(false);
      }),
      { numRuns: 3000 },
    );
  });

  test('property: whatever JSON.parse accepts is accepted with the same value, or refused by one of the three rules only', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        const expected = jsonParse(s);
        const result = parseStrictJson(s);
        if (!expected.ok) return;
        if (result.ok) expect(result.value).toStrictEqual(expected.value);
        else expect(['json.duplicate_key', 'json.too_deep', 'json.not_well_formed']).toContain(result.code);
      }),
      { numRuns: 3000 },
    );
  });

  test('property: a refusal has a bounded reason that says what to send, and an offset inside the text', () => {
    fc.assert(
      fc.property(fc.oneof(anyText, fc.string({ minLength: 200, maxLength: 400 })), (s) => {
        const result = parseStrictJson(s);
        if (result.ok) return;
        expect(result.reason.length).toBeLessThanOrEqual(320);
        expect(result.reason).toMatch(/; (reply|send|escape|use) /);
        expect(result.at).toBeGreaterThanOrEqual(0);
        expect(result.at).toBeLessThanOrEqual(s.length);
        expect(isWellFormed(result.reason)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  test.each([
    [' \t\r\n{"a" : [ 1 , 2 ] }\n '],
    ['-0'], ['0'], ['1e400'], ['-1e400'], ['1E+2'], ['1e-2'], ['0.5e-3'], ['123456789012345678901234567890'], ['5e-324'], ['2e-400'],
    ['999999999999999'], ['-999999999999999'], ['9007199254740993'], ['-9007199254740993'], ['18446744073709551617'], ['0.1'], ['1.7976931348623157e308'],
    ['"\\/\\b\\f\\n\\r\\t\\"\\\\"'], ['"\\u00e9\\u00E9\\uFFFF\\u0000"'], ['"\u2028\u2029\u007f"'], ['"\ud83d\ude00"'], ['"\\ud83d\\ude00"'], ['"\\uD83D\\uDE00"'],
    ['true'], ['false'], ['null'], ['[]'], ['{}'], ['[[],{},[{}]]'], ['{"":""}'], ['{"a":1,"A":2,"b":{"a":3}}'], ['[{"a":1},{"a":1}]'],
    ['{"1":1,"0":0,"b":2,"a":3}'], ['{"constructor":1,"toString":2,"hasOwnProperty":3}'],
  ])('accepts %j like JSON.parse', (text) => {
    const result = parseStrictJson(text);
    expect(result).toStrictEqual({ ok: true, value: JSON.parse(text) });
    if (result.ok && typeof result.value === 'number') expect(Object.is(result.value, JSON.parse(text))).toBe(true);
    if (result.ok && result.value !== null && typeof result.value === 'object') {
      expect(Object.keys(result.value)).toEqual(Object.keys(JSON.parse(text) as object));
    }
  });

  test.each([
    [''], [' '], ['01'], ['-01'], ['1.'], ['.5'], ['+1'], ['-'], ['1e'], ['1e+'], ['0x1'], ['NaN'], ['Infinity'], ['-Infinity'], ["'a'"],
    ['[1,]'], ['[,1]'], ['{"a":1,}'], ['{,}'], ['{"a"}'], ['{"a" 1}'], ['{a:1}'], ['{1:1}'], ['[1 2]'], ['1 2'], ['tru'], ['nul'], ['True'], ['undefined'],
    ['"\t"'], ['"\n"'], ['"\u0000"'], ['"abc'], ['"\\'], ['"\\x"'], ['"\\u12G4"'], ['"\\u12"'], ['"\\U0041"'], ['\ufeff1'], ['\u00a01'], ['1\u00a0'], ['[1]]'], ['{}}'],
    ['['], ['{'], ['{"a":'], ['{"a":1'], ['[1,'],
  ])('refuses %j as json.invalid, like JSON.parse', (text) => {
    expect(() => JSON.parse(text)).toThrow();
    const result = refused(parseStrictJson(text));
    expect(result.code).toBe('json.invalid');
    expect(result.reason).toMatch(/^the reply is not valid JSON: .*; .*reply with one JSON object only$/);
  });

  test('the reason names the unexpected token and its offset', () => {
    expect(refused(parseStrictJson('{"goal": 1, x}'))).toEqual({
      ok: false,
      code: 'json.invalid',
      at: 12,
      reason: 'the reply is not valid JSON: unexpected "x" at offset 12 where a member name (a string) was expected; reply with one JSON object only',
    });
    expect(refused(parseStrictJson('I will notify Alice now.')).reason).toMatch(/^the reply is not valid JSON: unexpected "I" at offset 0 /);
    expect(refused(parseStrictJson('{"ok": True}')).reason).toMatch(/unexpected "True" at offset 7/);
    expect(refused(parseStrictJson('{"ok": 1')).reason).toMatch(/ends early at offset 8/);
    expect(refused(parseStrictJson(`[${'x'.repeat(10_000)}]`)).reason.length).toBeLessThan(200);
  });

  test('property: numbers (any double, or any digit string) convert exactly as JSON.parse converts them', () => {
    const digits = fc.string({ unit: fc.constantFrom('0', '1', '2', '5', '9'), minLength: 1, maxLength: 25 });
    const lexeme = fc
      .tuple(fc.boolean(), digits, fc.option(digits), fc.option(fc.tuple(fc.constantFrom('e', 'E+', 'e-'), fc.string({ unit: fc.constantFrom('0', '1', '3', '9'), minLength: 1, maxLength: 4 }))))
      .map(([neg, int, frac, exp]) => `${neg ? '-' : ''}${int.replace(/^0+(?=\d)/, '')}${frac === null ? '' : `.${frac}`}${exp === null ? '' : exp.join('')}`);
    fc.assert(
      fc.property(fc.oneof(fc.double().filter(Number.isFinite).map((d) => JSON.stringify(d)), fc.integer().map(String), lexeme), (text) => {
        const result = parseStrictJson(text);
        expect(result.ok).toBe(true);
        expect(Object.is((result as { value: number }).value, JSON.parse(text))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  test('-0 parses to -0, as with JSON.parse', () => {
    const result = parseStrictJson('[-0, 0, -0.0, -0e5]');
    expect(result.ok).toBe(true);
    const values = (result as { value: number[] }).value;
    expect(values.map((v) => Object.is(v, -0))).toEqual([true, false, true, true]);
  });
});

describe('duplicate member names are refused', () => {
  test.each([
    ['plain', '{"goal":1,"goal":2}', 'goal', 10],
    ['with whitespace', '{ "goal" : 1 ,\n "goal" : 1 }', 'goal', 16],
    ['nested', '{"x":[{"a":1,"b":{"c":1,"c":true}}]}', 'c', 24],
    ['escaped-equal names', '{"a":1,"\\u0061":2}', 'a', 7],
    ['escaped-equal names, the other way', '{"\\u0061":1,"a":2}', 'a', 12],
    ['escaped-equal via \\/', '{"a/b":1,"a\\/b":2}', 'a/b', 9],
    ['__proto__', '{"__proto__":1,"__proto__":{}}', '__proto__', 15],
    ['the empty name', '{"":1,"":2}', '', 6],
    ['a surrogate pair, raw and escaped', '{"\ud83d\ude00":1,"\\ud83d\\ude00":2}', '\ud83d\ude00', 8],
  ])('%s', (_what, text, name, at) => {
    expect(jsonParse(text).ok).toBe(true);
    expect(refused(parseStrictJson(text))).toEqual({
      ok: false,
      code: 'json.duplicate_key',
      at,
      reason: `the reply's JSON has the member ${JSON.stringify(name)} twice (at offset ${at}); send each member once`,
    });
  });

  test('the same name in different objects, or differing in case, is fine', () => {
    expect(parseStrictJson('[{"a":1},{"a":2},{"b":{"a":3}}]').ok).toBe(true);
    expect(parseStrictJson('{"a":1,"A":2,"a ":3,"\\u0041a":4}').ok).toBe(true);
  });

  test('a long duplicate name is quoted to at most 40 characters', () => {
    const name = 'n'.repeat(5000);
    const result = refused(parseStrictJson(`{"${name}":1,"${name}":2}`));
    expect(result.code).toBe('json.duplicate_key');
    expect(result.reason).toContain(`"${'n'.repeat(40)}"…`);
    expect(result.reason.length).toBeLessThan(160);
  });

  test('property: adding a member with a name already present (however escaped) is refused', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1 }), fc.nat(), fc.jsonValue({ maxDepth: 2 }), fc.boolean(), (dict, pick, extra, escapeAll) => {
        const keys = Object.keys(dict);
        const dup = keys[pick % keys.length]!;
        const literal = escapeAll ? `"${dup.split('').map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"` : JSON.stringify(dup);
        const text = `${JSON.stringify(dict).slice(0, -1)},${literal}:${JSON.stringify(extra)}}`;
        const result = refused(parseStrictJson(text));
        expect(result.code).toBe('json.duplicate_key');
        expect(result.at).toBe(JSON.stringify(dict).length);
      }),
      { numRuns: 300 },
    );
  });
});

describe('nesting is limited', () => {
  const arrays = (n: number): string => '['.repeat(n) + ']'.repeat(n);
  const objects = (n: number): string => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

  test('depth 32 is accepted and 33 refused, by default', () => {
    expect(parseStrictJson(arrays(32)).ok).toBe(true);
    expect(parseStrictJson(objects(32)).ok).toBe(true);
    for (const text of [arrays(33), objects(33), `[${'{"a":['.repeat(16)}${']}'.repeat(16)}]`]) {
      const result = refused(parseStrictJson(text));
      expect(result.code).toBe('json.too_deep');
      expect(result.reason).toMatch(/deeper than the limit of 32 levels .*; send a flatter value$/);
    }
    expect(refused(parseStrictJson(arrays(33))).at).toBe(32);
  });

  test('maxDepth is an option', () => {
    expect(parseStrictJson('1', { maxDepth: 0 }).ok).toBe(true);
    expect(refused(parseStrictJson('[]', { maxDepth: 0 })).code).toBe('json.too_deep');
    expect(parseStrictJson(arrays(3), { maxDepth: 3 }).ok).toBe(true);
    expect(refused(parseStrictJson(arrays(4), { maxDepth: 3 })).reason).toMatch(/limit of 3 levels/);
    expect(parseStrictJson(arrays(100_000), { maxDepth: Infinity }).ok).toBe(true);
    expect(() => parseStrictJson('1', { maxDepth: -1 })).toThrow(RangeError);
  });

  test('a 1 MB run of "[" is refused as too deep, without throwing', () => {
    const text = '['.repeat(1 << 20);
    let result: StrictJsonResult | undefined;
    expect(() => (result = parseStrictJson(text))).not.toThrow();
    expect(refused(result!)).toMatchObject({ code: 'json.too_deep', at: 32 });
  });

  test('with no depth limit, huge nesting neither overflows the stack nor throws', () => {
    expect(refused(parseStrictJson('['.repeat(1 << 20), { maxDepth: Infinity })).code).toBe('json.invalid');
    expect(refused(parseStrictJson('{"a":'.repeat(1 << 18), { maxDepth: Infinity })).code).toBe('json.invalid');
    const result = parseStrictJson(objects(200_000), { maxDepth: Infinity });
    expect(result.ok).toBe(true);
  });
});

describe('lone surrogates are refused', () => {
  test.each([
    ['an escaped high surrogate', '"\\ud800"', 1],
    ['an escaped low surrogate', '"\\uDC00"', 1],
    ['an escaped high surrogate then a non-surrogate escape', '"x\\uD83D\\u0041"', 2],
    ['two escaped high surrogates', '"\\uD83D\\uD83D"', 1],
    ['an escaped low then high', '"\\uDE00\\uD83D"', 1],
    ['an escaped lone surrogate in a member name', '{"\\ud800":1}', 2],
    ['a raw high surrogate', '"\ud800"', 1],
    ['a raw low surrogate', '"ab\udc00"', 3],
    ['a raw high surrogate at the end of a string', '["\ud83d"]', 2],
    ['a raw high surrogate then an escaped low one', '"\ud83d\\ude00"', 1],
    ['an escaped high surrogate then a raw low one', '"\\ud83d\ude00"', 1],
    ['a raw lone surrogate outside any string', '[1]\ud800', 3],
  ])('%s', (_what, text, at) => {
    const result = refused(parseStrictJson(text));
    expect(result.code).toBe('json.not_well_formed');
    expect(result.at).toBe(at);
    expect(result.reason).toMatch(/not well-formed Unicode: .*lone surrogate U\+D[89A-F][0-9A-F]{2} at offset \d+; send whole characters only/);
    expect(isWellFormed(result.reason)).toBe(true);
  });

  test('valid surrogate pairs, raw or escaped, are accepted', () => {
    expect(parseStrictJson('"\ud83d\ude00"')).toEqual({ ok: true, value: '😀' });
    expect(parseStrictJson('"\\ud83d\\ude00"')).toEqual({ ok: true, value: '😀' });
    expect(parseStrictJson('{"\\uD834\\uDD1E":"\uDBFF\uDFFF"}')).toEqual({ ok: true, value: { '𝄞': '\u{10FFFF}' } });
  });

  test('property: a string literal parses exactly when it is well-formed, escaped or raw', () => {
    fc.assert(
      fc.property(utf16String, (s) => {
        for (const text of [JSON.stringify(s), rawLiteral(s)]) {
          const result = parseStrictJson(text);
          if (isWellFormed(s)) expect(result).toEqual({ ok: true, value: s });
          else expect(refused(result).code).toBe('json.not_well_formed');
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('objects are plain and safe', () => {
  test('a member named __proto__ becomes an own data property, as with JSON.parse', () => {
    const result = parseStrictJson('{"__proto__":1}');
    expect(result.ok).toBe(true);
    const value = (result as { value: object }).value;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(value, '__proto__')).toEqual({ value: 1, writable: true, enumerable: true, configurable: true });
    expect(value).toStrictEqual(JSON.parse('{"__proto__":1}'));
  });

  test('a __proto__ member holding an object pollutes nothing', () => {
    const result = parseStrictJson('{"__proto__":{"polluted":true},"a":{"__proto__":[]}}');
    expect(result.ok).toBe(true);
    const value = (result as { value: Record<string, unknown> }).value;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect((value as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Array.isArray(value.a)).toBe(false);
    expect(Object.keys(value)).toEqual(['__proto__', 'a']);
    expect(value).toStrictEqual(JSON.parse('{"__proto__":{"polluted":true},"a":{"__proto__":[]}}'));
  });
});

// A parser quadratic in the input would not finish 8 MB within the test's time-out; how fast it is
// belongs to `npm run bench` (a timed assertion fails on a busy machine, not on a slow parser).
describe('large input', () => {
  test('an 8 MB string parses', () => {
    const s = 'The model said: "go" \\ and then\n'.repeat((8 << 20) / 32);
    const text = JSON.stringify(s);
    expect(text.length).toBeGreaterThan(8 << 20);
    const result = parseStrictJson(text);
    expect(result.ok).toBe(true);
    expect((result as { value: string }).value === s).toBe(true);
  });

  test('an 8 MB document of objects, arrays, numbers and strings parses', () => {
    const item = { id: 123456, name: 'caf\u00e9 \ud83d\ude00 "quoted"', ok: true, none: null, xs: [1.5, -2e-3, 0], nested: { k: 'v' } };
    const n = Math.ceil((8 << 20) / JSON.stringify(item).length);
    const text = JSON.stringify(Array.from({ length: n }, (_, i) => ({ ...item, id: 1_000_000 + i })));
    expect(text.length).toBeGreaterThan(8 << 20);
    const result = parseStrictJson(text);
    expect(result.ok).toBe(true);
    expect(JSON.stringify((result as { value: unknown }).value)).toBe(text);
  });
});
