/**
 * Generalisation (mining/generalise.ts) on travel's taxi fragment: which constants become the
 * task's parameters and which become variables a precondition binds — and the epochs that cannot
 * say, which are reported instead of mined into a method that is wrong elsewhere.
 */
import { describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import type { Goal, WorldState } from '../htn/library/schema.js';
import { travelLibrary } from '../examples/travel/library.js';
import { generalise } from '../mining/generalise.js';

const state = (fare: number): WorldState => ({
  objects: [],
  facts: [
    ['taxi-fare', 'lisbon-airport', 'h-alfama', fare],
    ['airport-of', 'lisbon', 'lisbon-airport'],
  ],
});
const goal = (day: number, budget: number): Goal => ({ task: 'book_transfer', args: ['me', 'lisbon-airport', 'h-alfama', day, budget] });
const fragment = (day: number, fare: number): Goal[] => [
  { task: 'quote_taxi', args: ['me', 'lisbon-airport', 'h-alfama', day] },
  { task: 'book_taxi', args: ['me', 'lisbon-airport', 'h-alfama', day, fare] },
];

describe('generalise', () => {
  test('a fare that is not a goal arg becomes a variable the observed fact binds', () => {
    const g = generalise(goal(12, 120), fragment(12, 35), state(35), travelLibrary);
    expect(g.kind).toBe('method');
    if (g.kind !== 'method') return;
    expect(g.method.subtasks[1]).toEqual({ task: 'book_taxi', args: ['?t', '?from', '?to', '?day', '?v1'] });
    expect(g.method.origin).toBe('mined');
  });

  test('a fare equal, by chance, to the budget left is not taken for the budget: the epoch is reported, not mined', () => {
    const g = generalise(goal(12, 35), fragment(12, 35), state(35), travelLibrary);
    expect(g).toEqual({
      kind: 'not-general',
      reason: expect.stringMatching(/the number 35 is the goal's \?budget and also what the observed fact \(taxi-fare lisbon-airport h-alfama 35\) gives, so one epoch cannot tell/),
    });
  });

  test('a constant that is two goal args at once cannot say which of them a step uses', () => {
    const g = generalise(goal(12, 12), fragment(12, 35), state(35), travelLibrary);
    expect(g).toEqual({ kind: 'not-general', reason: expect.stringMatching(/the constant 12 is the goal's \?day and \?budget at once/) });
  });
});
