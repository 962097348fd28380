// One declaration of each record body (the zod schemas of journal/records.ts) yields the fast
// validators' shapes (journal/shapes.ts) and the property tests' random bodies
// (test/record-arbitraries.ts): a field declared there is checked on the fast path and generated
// at once, and a form the fast paths cannot check is refused when the module loads, by name.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { checkBody } from '../journal/record-check.js';
import { bodySchemas, recordKinds } from '../journal/records.js';
import { bodyShapes, shapeOf, type Shape } from '../journal/shapes.js';
import { fastBodyOk } from '../journal/validate-fast.js';
import { bodyArbitraries } from './record-arbitraries.js';

const leaves = { str: fc.string({ maxLength: 4 }), name: fc.string({ minLength: 1, maxLength: 4 }), json: fc.jsonValue({ maxDepth: 1 }) };
const arbitraries = bodyArbitraries(leaves);

/** The path of every optional member inside `shape` (`[]` stands for any element of an array or record). */
function optionalPaths(shape: Shape, path = ''): string[] {
  if (shape.type === 'array' || shape.type === 'record') return optionalPaths(shape.of, `${path}[]`);
  if (shape.type !== 'object') return [];
  return shape.fields.flatMap((field) => [...(field.optional ? [`${path}.${field.name}`] : []), ...optionalPaths(field.shape, `${path}.${field.name}`)]);
}

/** Records, in `seen`, each optional path of `shape` as present or absent in `value`. */
function observe(shape: Shape, value: unknown, seen: Map<string, Set<'present' | 'absent'>>, path = ''): void {
  if (shape.type === 'array') return (value as unknown[]).forEach((v) => observe(shape.of, v, seen, `${path}[]`));
  if (shape.type === 'record') return Object.values(value as object).forEach((v) => observe(shape.of, v, seen, `${path}[]`));
  if (shape.type !== 'object') return;
  const object = value as Record<string, unknown>;
  for (const field of shape.fields) {
    const at = `${path}.${field.name}`;
    const present = Object.hasOwn(object, field.name);
    if (field.optional) seen.set(at, (seen.get(at) ?? new Set()).add(present ? 'present' : 'absent'));
    if (present) observe(field.shape, object[field.name], seen, at);
  }
}

describe('the record declaration yields the generators', () => {
  test.each(recordKinds)('%s: random bodies pass zod and the fast validator, with every optional member both present and absent', (kind) => {
    const seen = new Map<string, Set<'present' | 'absent'>>();
    for (const body of fc.sample(arbitraries[kind], { numRuns: 300, seed: 32 })) {
      expect(bodySchemas[kind].safeParse(body).success).toBe(true);
      expect(fastBodyOk(kind, body)).toBe(true);
      observe(bodyShapes[kind], body, seen);
    }
    for (const path of optionalPaths(bodyShapes[kind])) expect([path, [...(seen.get(path) ?? [])].sort()]).toEqual([path, ['absent', 'present']]);
  });
});

describe('the record declaration yields the fast validator', () => {
  const forked = {
    parent: 'p',
    parentSeq: 3,
    parentHash: 'a'.repeat(64),
    atEpoch: 1,
    repinned: ['seed'],
    state: { epoch: 2, outcomes: [], spent: 0, replans: 0, effects: [], obligations: [], authored: [{ epoch: 1, step: 0, actuator: 'pay', key: 'k', amount: 12.5 }] },
  };

  test('every declared member is checked on the fast path, an amount (a non-negative number) and a pin that names its spenders too', () => {
    expect(fastBodyOk('invocation.forked', forked)).toBe(true);
    const pin = { library: 'b'.repeat(64), runtime: 'weft', flags: [2], model: { id: 'm', params: {} }, seed: 's', asOf: '2026-01-01', policy: 'p', spenders: [{ actuator: 'pay', arg: 'amount' }] };
    expect(fastBodyOk('invocation.pinned', { schema: 1, invocation: 'i', tenant: 't', intent: 'go', pin })).toBe(true);
  });

  test('what zod refuses the fast path does not accept, and the message is zod’s', () => {
    const negative = { ...forked, state: { ...forked.state, authored: [{ ...forked.state.authored[0]!, amount: -1 }] } };
    expect(fastBodyOk('invocation.forked', negative)).toBe(false);
    expect(checkBody('invocation.forked', negative)).toEqual({ ok: false, reason: 'invocation.forked body.state.authored.0.amount: Too small: expected number to be >=0' });
    expect(checkBody('invocation.sealed', { algorithm: 'ed25519', fingerprint: 'a'.repeat(64), keyId: 'a'.repeat(64), signature: 'ab' })).toEqual({
      ok: false,
      reason: 'invocation.sealed body.signature: Too small: expected string to have exactly 128 characters',
    });
  });

  test('a body form the fast paths cannot check is refused by name, not sent through zod on every record', () => {
    expect(() => shapeOf(z.strictObject({ to: z.string().email() }), 'mail.sent')).toThrow(/cannot read mail\.sent\.to .*teach shapeOf and both fast validators/);
    expect(() => shapeOf(z.object({ at: z.string() }), 'loose')).toThrow(/cannot read loose \(a zod object of this form\)/);
    expect(() => shapeOf(z.strictObject({ n: z.number().int() }), 'n')).toThrow(/cannot read n\.n \(a number with the checks safeint\)/);
    expect(() => shapeOf(z.strictObject({ ids: z.array(z.string()).min(1) }), 'batch')).toThrow(/cannot read batch\.ids \(a zod array with a refinement\)/);
    expect(() => shapeOf(z.strictObject({ a: z.string() }).refine((b) => b.a !== 'x'), 'refined')).toThrow(/cannot read refined \(a zod object with a refinement\)/);
  });
});

test('records.ts, the declaration, imports nothing derived from it (no circle through the fast paths)', () => {
  const source = readFileSync(join(import.meta.dirname, '..', 'journal', 'records.ts'), 'utf8');
  const imports = [...source.matchAll(/^import [^;]*? from '([^']+)';/gm)].map((m) => m[1]);
  expect(imports).toEqual(['zod']);
});
