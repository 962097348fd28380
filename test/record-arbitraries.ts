// Random valid record bodies for the property tests, derived from the body shapes (journal/shapes.ts),
// which are read off the zod schemas of journal/records.ts: one declaration of each body, so a
// field added there is generated here at once. Every kind, every optional member (sometimes
// present, sometimes absent). The leaves (strings, JSON values) are the caller's, so each test picks
// its alphabet: journal-body-generators.ts (the fast validators) and journal-verify-generators.ts
// (the readers and verifiers).
import fc from 'fast-check';
import { bytesToHex } from '../journal/digest.js';
import type { RecordKind } from '../journal/records.js';
import { bodyShapes, type Shape } from '../journal/shapes.js';

/** The caller's leaves: any string, a non-empty string, any JSON value. */
export interface Leaves {
  str: fc.Arbitrary<string>;
  name: fc.Arbitrary<string>;
  json: fc.Arbitrary<unknown>;
}

export const count = fc.oneof(fc.nat({ max: 20 }), fc.maxSafeNat());
export const hexOf = (length: number) => fc.uint8Array({ minLength: length / 2, maxLength: length / 2 }).map(bytesToHex);
export const digest = hexOf(64);
/** A finite non-negative number (never -0, which canonical JSON writes as 0). */
const nonNegative = fc.oneof(fc.nat({ max: 1000 }), fc.double({ min: 0, max: 1e9, noNaN: true }).filter((n) => !Object.is(n, -0)));

/** A random value of `shape`: arrays and records of at most 3 members. */
export function arbitraryOf(shape: Shape, leaves: Leaves): fc.Arbitrary<unknown> {
  switch (shape.type) {
    case 'string':
      return shape.nonEmpty ? leaves.name : leaves.str;
    case 'hex':
      return hexOf(shape.length);
    case 'count':
      return count;
    case 'nonNegative':
      return nonNegative;
    case 'oneOf':
      return fc.constantFrom(...shape.values);
    case 'json':
      return leaves.json;
    case 'array':
      return fc.array(arbitraryOf(shape.of, leaves), { maxLength: 3 });
    case 'record':
      return fc.dictionary(leaves.str, arbitraryOf(shape.of, leaves), { maxKeys: 3 });
    case 'object': {
      const members = Object.fromEntries(shape.fields.map((field) => [field.name, arbitraryOf(field.shape, leaves)]));
      return fc.record(members, { requiredKeys: shape.fields.filter((field) => !field.optional).map((field) => field.name) });
    }
  }
}

/** One arbitrary of valid bodies per kind. */
export function bodyArbitraries(leaves: Leaves): { [K in RecordKind]: fc.Arbitrary<unknown> } {
  return Object.fromEntries(Object.entries(bodyShapes).map(([kind, shape]) => [kind, arbitraryOf(shape, leaves)])) as { [K in RecordKind]: fc.Arbitrary<unknown> };
}
