/**
 * The seeded PRNG: same seed and scope ⇒ same sequence in every stream; streams are independent
 * (drawing from one never shifts another); different seeds or scopes diverge.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { createRandom } from '../actors/random.js';

const draw = (seed: string, scope: string, stream: string, n: number) => {
  const s = createRandom(seed, scope).stream(stream);
  return Array.from({ length: n }, () => s.next());
};

describe('seeded random streams', () => {
  test('the same seed, scope and stream give the same sequence', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), (seed, scope, stream) => {
        expect(draw(seed, scope, stream, 12)).toEqual(draw(seed, scope, stream, 12));
      }),
      { numRuns: 50 },
    );
  });

  test('drawing from one stream does not shift another', () => {
    const a = createRandom('7', 'inv.1.0');
    a.stream('noise').next();
    a.stream('noise').next();
    const jitter = Array.from({ length: 5 }, () => a.stream('jitter').next());
    expect(jitter).toEqual(draw('7', 'inv.1.0', 'jitter', 5));
  });

  test('different seeds, scopes or streams diverge', () => {
    const base = draw('1', 'x', 's', 4);
    expect(draw('2', 'x', 's', 4)).not.toEqual(base);
    expect(draw('1', 'y', 's', 4)).not.toEqual(base);
    expect(draw('1', 'x', 't', 4)).not.toEqual(base);
  });

  test('values are in [0, 1) and int(n) in [0, n), roughly uniform', () => {
    const s = createRandom('seed', 'scope').stream('u');
    const buckets = new Array(10).fill(0);
    for (let i = 0; i < 5000; i++) {
      const x = s.next();
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
      buckets[Math.floor(x * 10)]++;
    }
    for (const b of buckets) expect(b).toBeGreaterThan(350);
    const k = createRandom('seed', 'scope').stream('k');
    for (let i = 0; i < 200; i++) expect(k.int(3)).toBeLessThan(3);
    expect(() => k.int(0)).toThrow(/positive integer/);
  });
});
