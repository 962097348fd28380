/**
 * The journal view's one line per record (inspector/page/record-summary.ts): every kind that
 * journal/records.ts declares has a summariser, and for any valid body of that kind (random bodies
 * read off the one declaration, empty strings included) the line is not empty, is one line, and is
 * not the fallback for a kind the viewer does not know — so a new kind cannot be left with an empty
 * summary column. A few lines are checked for the facts a person looks for first.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { recordKinds } from '../journal/records.js';
import { isSadKind, recordSummary, summarisedKinds } from '../inspector/page/record-summary.js';
import { valid } from './journal-body-generators.js';

describe('a one-line summary for every record kind', () => {
  test('the summariser names exactly the kinds of journal/records.ts', () => {
    expect(summarisedKinds).toEqual([...recordKinds].sort());
  });

  test.each(recordKinds)('%s: a non-empty single line for any valid body', (kind) => {
    fc.assert(
      fc.property(valid[kind], (body) => {
        const line = recordSummary(kind, body);
        expect(line.trim()).not.toBe('');
        expect(line).not.toMatch(/[\n\r]/);
        expect(line).not.toMatch(/^(unknown kind|unreadable body):/);
        expect(line.length).toBeLessThan(900);
      }),
      { numRuns: 40 },
    );
  });

  test('what a person looks for first is in the line', () => {
    expect(recordSummary('step.dispatched', { step: 2, actuator: 'flights.hold', args: { flight: 'TP1353' }, key: 'k', attempt: 1 })).toBe('#2 → flights.hold("flight":"TP1353") · attempt 1');
    expect(recordSummary('admission.decided', { subject: 'step', step: 3, decision: 'require_approval', policy: 'travel-approval', rule: 'big-spend', reason: 'over 500 EUR' })).toBe(
      'step #3: require approval by travel-approval (rule big-spend) — over 500 EUR',
    );
    expect(recordSummary('step.failed', { step: 1, key: 'k', attempt: 2, class: 'transient', code: 'http.503', message: 'busy' })).toBe('#1 failed · attempt 2: transient http.503: busy');
    expect(recordSummary('approval.decided', { decision: 'approved', by: 'ana', note: 'ok' })).toBe('approved by ana — ok');
    expect(recordSummary('epoch.closed', { outcome: 'completed', steps: 1 })).toBe('epoch closed completed · 1 step');
    // A recorded newline stays on the line, written as its escape.
    expect(recordSummary('invocation.completed', { summary: 'two\nlines' })).toBe('completed — two\\nlines');
  });

  test('a body that is not what its kind declares (a journal that failed verification) still gets a line', () => {
    expect(recordSummary('step.dispatched', null)).toMatch(/^# → /);
    expect(recordSummary('step.dispatched', 'text')).not.toBe('');
    expect(recordSummary('no.such.kind', { a: 1 })).toBe('unknown kind: {"a":1}');
    expect(recordSummary(undefined, undefined)).toBe('unknown kind: no body');
  });

  test('kinds that say something went wrong are marked', () => {
    expect(['step.failed', 'model.rejected', 'model.failed', 'invocation.failed', 'compensation.halted', 'step.refused'].every(isSadKind)).toBe(true);
    expect(['step.completed', 'step.dispatched', 'invocation.completed', 'admission.decided'].some(isSadKind)).toBe(false);
  });
});
