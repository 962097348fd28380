// The canonical JSON table (journal/canonical.ts, RFC 8785): inputs → exact output text, and every
// rejected input → a CanonicalJsonError naming the JSON path. Keys sort by UTF-16 code units, which
// is NOT code point order: an emoji (surrogate pair, D83D…) sorts before a BMP character above
// U+E000.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { CanonicalJsonError, canonicalBytes, canonicalize } from '../journal/canonical.js';

const table: [string, unknown, string][] = [
  ['null', null, 'null'],
  ['true', true, 'true'],
  ['false', false, 'false'],
  ['empty object', {}, '{}'],
  ['empty array', [], '[]'],
  ['keys sorted at every depth', { b: 1, a: { d: [{ z: 1, y: 2 }], c: 3 } }, '{"a":{"c":3,"d":[{"y":2,"z":1}]},"b":1}'],
  ['upper case before lower case', { b: 1, B: 2, a: 3, A: 4 }, '{"A":4,"B":2,"a":3,"b":1}'],
  ['prefix before longer key', { aa: 1, a: 2, '': 3 }, '{"":3,"a":2,"aa":1}'],
  ['digits as keys sort as strings', { '10': 1, '9': 2, '1': 3 }, '{"1":3,"10":1,"9":2}'],
  ['non-ASCII keys by UTF-16 code unit', { 日本: 1, é: 2, z: 3 }, '{"z":3,"é":2,"日本":1}'],
  // U+1F600 is D83D DE00 in UTF-16: before U+E000 and U+FF21 by code unit, after them by code point.
  ['emoji (surrogate pair) key before BMP keys above U+E000', { '\uFF21': 1, '\uE000': 2, '😀': 3, 日: 4 }, '{"日":4,"😀":3,"\uE000":2,"Ａ":1}'],
  [
    'RFC 8785 §3.2.3 sorting example',
    { '\u20ac': 'Euro Sign', '\r': 'Carriage Return', '\ufb33': 'Hebrew Letter Dalet With Dagesh', '1': 'One', '\ud83d\ude00': 'Emoji: Grinning Face', '\u0080': 'Control', '\u00f6': 'Latin Small Letter O With Diaeresis' },
    '{"\\r":"Carriage Return","1":"One","\u0080":"Control","ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","😀":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
  ],
  ['array order kept', [3, 1, 2], '[3,1,2]'],
  ['nested arrays', [[], [[1, [2]]], [{}], [[[]]]], '[[],[[1,[2]]],[{}],[[[]]]]'],
  ['undefined members omitted', { a: undefined, b: 1, c: { d: undefined } }, '{"b":1,"c":{}}'],
  ['null members kept', { a: null }, '{"a":null}'],
  ['-0 is 0', { z: -0, a: [-0] }, '{"a":[0],"z":0}'],
  ['integers', [0, 1, -1, 9007199254740991, -9007199254740991], '[0,1,-1,9007199254740991,-9007199254740991]'],
  ['1e21 switches to exponent form', [1e21, 1e20, 123456789012345680000], '[1e+21,100000000000000000000,123456789012345680000]'],
  ['1e-7 switches to exponent form', [1e-7, 1e-6, 0.000001234], '[1e-7,0.000001,0.000001234]'],
  ['shortest round-trip doubles', [4.5, 0.1, 2e-3, 333333333.33333329, 1e30, 1e-27], '[4.5,0.1,0.002,333333333.3333333,1e+30,1e-27]'],
  ['extremes', [Number.MAX_VALUE, Number.MIN_VALUE, -Number.MAX_VALUE], '[1.7976931348623157e+308,5e-324,-1.7976931348623157e+308]'],
  ['string escapes', ['"', '\\', '/', '\b\f\n\r\t', '\u0000\u001f', '\u007f', '\u2028\u2029'], '["\\"","\\\\","/","\\b\\f\\n\\r\\t","\\u0000\\u001f","\u007f","\u2028\u2029"]'],
  ['non-ASCII strings raw, not escaped', ['é', '日本', '😀'], '["é","日本","😀"]'],
  ['escaped keys', { 'a"b': 1, 'a\nb': 2 }, '{"a\\nb":2,"a\\"b":1}'],
  ['null-prototype objects are plain', Object.assign(Object.create(null) as object, { b: 2, a: 1 }), '{"a":1,"b":2}'],
];

describe('canonicalize: table', () => {
  test.each(table)('%s', (_name, input, expected) => {
    expect(canonicalize(input)).toBe(expected);
    expect(new TextDecoder().decode(canonicalBytes(input))).toBe(expected);
  });

  test('bytes are UTF-8', () => {
    expect([...canonicalBytes({ é: '😀' })]).toEqual([0x7b, 0x22, 0xc3, 0xa9, 0x22, 0x3a, 0x22, 0xf0, 0x9f, 0x98, 0x80, 0x22, 0x7d]);
  });

  test('the same value in another insertion order gives the same text', () => {
    expect(canonicalize({ x: 1, y: { b: 2, a: 1 } })).toBe(canonicalize({ y: { a: 1, b: 2 }, x: 1 }));
  });
});

const cyclic: Record<string, unknown> = { a: 1 };
cyclic.self = { back: cyclic };
const cyclicArray: unknown[] = [1];
cyclicArray.push([cyclicArray]);
class Point {
  constructor(readonly x: number) {}
}

const rejected: [string, unknown, string, RegExp][] = [
  ['NaN', { a: [1, NaN] }, '$.a[1]', /NaN is not a JSON number/],
  ['Infinity', { a: { b: Infinity } }, '$.a.b', /Infinity is not a JSON number/],
  ['-Infinity', [-Infinity], '$[0]', /-Infinity/],
  ['BigInt', { n: 10n }, '$.n', /BigInt/],
  ['function', { f: () => 1 }, '$.f', /function/],
  ['symbol value', { s: Symbol('x') }, '$.s', /symbol/],
  ['undefined at top level', undefined, '$', /undefined/],
  ['undefined array element', [1, undefined], '$[1]', /undefined/],
  ['hole in a sparse array', [, 1], '$[0]', /undefined/], // eslint-disable-line no-sparse-arrays
  ['cycle through an object', cyclic, '$.self.back', /cycle/],
  ['cycle through an array', cyclicArray, '$[1][0]', /cycle/],
  ['lone high surrogate in a value', { s: 'a\ud800b' }, '$.s', /lone UTF-16 surrogate/],
  ['lone low surrogate at the end', ['x\udc00'], '$[0]', /lone UTF-16 surrogate/],
  ['reversed surrogate pair', ['\ude00\ud83d'], '$[0]', /lone UTF-16 surrogate/],
  ['lone surrogate in a key', { '\ud800': 1 }, '$["\\ud800"]', /lone UTF-16 surrogate/],
  ['Map', { m: new Map([['a', 1]]) }, '$.m', /Map is not a plain object/],
  ['Set', { s: new Set([1]) }, '$.s', /Set is not a plain object/],
  ['Date', { at: new Date(0) }, '$.at', /Date is not a plain object/],
  ['class instance', { p: new Point(1) }, '$.p', /Point is not a plain object/],
  ['typed array', { b: new Uint8Array(2) }, '$.b', /Uint8Array is not a plain object/],
  ['path of a non-identifier key', { 'a b': { 'c-d': NaN } }, '$["a b"]["c-d"]', /NaN/],
];

describe('canonicalize: rejections name the path', () => {
  test.each(rejected)('%s', (_name, input, path, reason) => {
    let error: unknown;
    try {
      canonicalize(input);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(CanonicalJsonError);
    expect((error as CanonicalJsonError).path).toBe(path);
    expect((error as CanonicalJsonError).message).toMatch(reason);
    expect((error as CanonicalJsonError).message).toContain(path);
  });

  test('a value shared twice (not a cycle) is fine', () => {
    const shared = { a: 1 };
    expect(canonicalize({ x: shared, y: [shared, shared] })).toBe('{"x":{"a":1},"y":[{"a":1},{"a":1}]}');
  });
});

/** An independent, deliberately naive canonicalizer to compare against (sorts every object). */
function reference(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).filter((k) => record[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${reference(record[k])}`).join(',')}}`;
  }
  if (typeof value === 'number') return Object.is(value, -0) ? '0' : JSON.stringify(value);
  return JSON.stringify(value);
}

describe('canonicalize: property', () => {
  // Covers both paths: sorted subtrees (native fast path) and unsorted ones, integer-like keys
  // (which JavaScript lists first), -0, undefined members, unicode keys and values.
  const key = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 4 }), fc.nat({ max: 20 }).map(String), fc.constantFrom('a', 'b', 'B', 'é', '😀', '\uE000', '__proto__'));
  const leaf = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(-0), fc.boolean(), fc.constant(null), fc.string({ unit: 'grapheme', maxLength: 6 }));
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, fc.array(tie('value'), { maxLength: 4 }), tie('object')),
    object: fc.dictionary(key, fc.option(tie('value'), { nil: undefined, freq: 6 }), { maxKeys: 5 }),
  }));
  test('equals a naive sorting canonicalizer, and parsing it back gives the same text', () => {
    fc.assert(
      fc.property(value, (v) => {
        const text = canonicalize(v);
        expect(text).toBe(reference(v));
        expect(canonicalize(JSON.parse(text))).toBe(text);
      }),
      { numRuns: 1000 },
    );
  });
});
