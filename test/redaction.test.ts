/**
 * Redaction's pure parts (journal/redaction.ts, inspector/plan-trees.ts redactPlanView), for the
 * leaks a review found:
 *
 * - marks keyed by OPERATOR: a journal's dispatch names only the actuator, so the marks an
 *   invocation keeps are written for its library (`marksForLibrary`): under the actuator too, and
 *   on the compensation's args that take the same param;
 * - a removed number, boolean or short string is taken out wherever a whole JSON leaf equals it
 *   (never from inside text, never from the seqs and indices a page lays records out by);
 * - a plan tree's args are an operator's params BY POSITION: the marked ones are found through
 *   the operator's actuator template, dispatched or not, and their values taken out of the goal.
 */
import { describe, expect, test } from 'vitest';
import type { JournalRecord } from '../journal/records.js';
import { marksForLibrary, positionalMarks, REDACTED, redactRecords, redactValue, type OperatorShape, type RedactionMarks } from '../journal/redaction.js';
import { redactPlanView, type PlansView } from '../inspector/plan-trees.js';

const rec = (seq: number, kind: string, body: Record<string, unknown>, epoch = 1) => ({ seq, kind, epoch, body, prev: '0', hash: '0' }) as unknown as JournalRecord;
const bodies = (records: readonly JournalRecord[]) => records.map((r) => r.body as Record<string, any>);

/** An operator that charges a card, refunded by its compensation (the args of both are built from its params). */
const chargeCard: OperatorShape = {
  name: 'charge_card',
  params: [{ name: '?t' }, { name: '?k' }, { name: '?amount' }],
  actuator: { actuator: 'card.charge', args: { traveller: '?t', card: '?k', amount: '?amount' } },
  compensate: { actuator: 'card.refund', args: { traveller: '?t', sum: '?amount' } },
};
/** The review's scenario: `pay(me, 5000, "123")`, one step dispatching actuator `pay`. */
const payOp: OperatorShape = { name: 'pay_op', params: [{ name: '?who' }, { name: '?amount' }, { name: '?cvv' }], actuator: { actuator: 'pay', args: { who: '?who', amount: '?amount', cvv: '?cvv' } } };

describe('marks keyed by operator', () => {
  test("are written under the operator's actuator (and its compensation's same-param args), so a journal's dispatch is redacted", () => {
    const declared: RedactionMarks = { args: { charge_card: ['amount'] } };
    const kept = marksForLibrary(declared, { operators: [chargeCard, payOp] });
    expect(kept.args).toEqual({ 'card.charge': ['amount'], 'card.refund': ['sum'], charge_card: ['amount'] });
    const journal = [
      rec(4, 'step.dispatched', { step: 2, actuator: 'card.charge', args: { traveller: 'me', card: 'card-1', amount: 740 }, key: 'k1', attempt: 1 }),
      rec(5, 'compensation.dispatched', { step: 2, actuator: 'card.refund', args: { traveller: 'me', sum: 740 }, key: 'k2', attempt: 1 }),
    ];
    // As declared, the operator's key finds nothing in a journal (the leak); as kept, both are redacted.
    expect(bodies(redactRecords(journal, declared).records)[0]!.args.amount).toBe(740);
    const [charge, refund] = bodies(redactRecords(journal, kept).records);
    expect(charge!.args).toEqual({ traveller: 'me', card: 'card-1', amount: REDACTED });
    expect(refund!.args).toEqual({ traveller: 'me', sum: REDACTED });
  });

  test('marks that name no operator of the library are kept as they are', () => {
    const marks: RedactionMarks = { args: { 'card.charge': ['card'] }, observations: ['facts.*.2'] };
    expect(marksForLibrary(marks, { operators: [payOp] })).toEqual(marks);
  });
});

describe('a removed number, boolean or short string', () => {
  const marks: RedactionMarks = { args: { pay: ['amount', 'cvv'] } };

  test('is taken out wherever a whole JSON leaf equals it — facts, a goal, a request — but not from inside text, nor from seqs and indices', () => {
    const { records } = redactRecords(
      [
        rec(3, 'state.observed', { actuator: 'obs', key: 'o', state: { facts: [['price', 'x', 5], ['cvv-of', 'me', '123'], ['price', 'y', 70]] } }),
        rec(4, 'model.requested', { purpose: 'author', attempt: 1, request: { goal: { task: 'pay', args: ['me', '5', '123'] }, note: 'order 5-A, ref 1234' } }),
        rec(5, 'step.dispatched', { step: 5, actuator: 'pay', args: { who: 'me', amount: 5, cvv: '123', urgent: true }, key: 'k5', attempt: 5 }),
        rec(6, 'step.dispatched', { step: 6, actuator: 'ship', args: { to: 'me', insured: 5 }, key: 'k6', attempt: 1 }),
      ],
      marks,
    );
    const [observed, requested, paid, shipped] = bodies(records);
    expect(observed!.state.facts).toEqual([['price', 'x', REDACTED], ['cvv-of', 'me', REDACTED], ['price', 'y', 70]]);
    expect(requested!.request.goal.args).toEqual(['me', REDACTED, REDACTED]); // "5" as text too
    expect(requested!.request.note).toBe('order 5-A, ref 1234'); // never a part of a string
    expect(paid!.args).toEqual({ who: 'me', amount: REDACTED, cvv: REDACTED, urgent: true });
    expect(shipped!.args.insured).toBe(REDACTED); // the same value, unmarked, elsewhere
    // What a page lays records out by is left alone, though it equals the secret 5.
    expect(records.map((r) => [r.seq, r.epoch])).toEqual([[3, 1], [4, 1], [5, 1], [6, 1]]);
    expect([paid!.step, paid!.attempt]).toEqual([5, 5]);
  });

  test("inside a domain's data, a member named like a structural one is no exemption", () => {
    const out = redactValue({ seq: 7, steps: [{ actuator: 'pay', args: { who: 'me', amount: 7, cvv: 'abc' } }], result: { status: 'abc', seq: 7 }, facts: [['count', 7]] }, marks);
    expect(out.seq).toBe(7);
    expect(out.result).toEqual({ status: REDACTED, seq: REDACTED });
    expect(out.facts).toEqual([['count', REDACTED]]);
  });

  test('a removed boolean too, in derived JSON', () => {
    const out = redactValue({ steps: [{ actuator: 'pay', args: { who: 'me', amount: 9, cvv: true } }], echo: { paidBy: [true, 9, 'me'] } }, marks);
    expect(out.steps[0]!.args).toEqual({ who: 'me', amount: REDACTED, cvv: REDACTED });
    expect(out.echo.paidBy).toEqual([REDACTED, REDACTED, 'me']);
  });
});

describe('a plan tree', () => {
  /** What plan-trees.ts re-derives for `pay(me, 5000, "123")`: the goal, a method, and its one step (not yet dispatched). */
  const view = (): PlansView => ({
    version: 1,
    library: { digest: 'd', name: 'shop' },
    problem: null,
    epochs: [
      {
        epoch: 1,
        goal: { task: 'pay', args: ['me', 5000, '123'] },
        source: 'htn',
        seq: 4,
        derived: { seq: 4, plan: 'p' },
        verdict: { kind: 'matches', digest: 'p' },
        tree: { task: 'pay', args: ['me', 5000, '123'], method: 'pay-now', children: [{ task: 'pay_op', args: ['me', 5000, '123'], step: 0, actuator: 'pay', readOnly: false, children: [] }] },
        noMethod: null,
        authored: null,
        rejected: [],
      },
    ],
  });

  test("has each marked arg found by position (the operator param its actuator template takes it from), in every node and the goal", () => {
    const marks: RedactionMarks = { args: { pay: ['amount', 'cvv'] } };
    expect(positionalMarks(marks, { operators: [payOp] })).toEqual(new Map([['pay_op', [1, 2]]]));
    // Marks by name do not find positional args (the leak): `pay(me, 5000, "123")` went out as it is.
    expect(JSON.stringify(redactValue(view(), marks))).toContain('5000');
    const out = redactPlanView(view(), { operators: [payOp] }, marks);
    const epoch = out.epochs[0]!;
    expect(epoch.tree!.children[0]!.args).toEqual(['me', REDACTED, REDACTED]);
    expect(epoch.tree!.args).toEqual(['me', REDACTED, REDACTED]);
    expect(epoch.goal!.args).toEqual(['me', REDACTED, REDACTED]);
    expect(JSON.stringify(out)).not.toMatch(/5000|"123"/);
    expect([epoch.epoch, epoch.seq, epoch.tree!.children[0]!.step]).toEqual([1, 4, 0]);
  });

  test('by the operator key too, and a compensation-only mark finds its param', () => {
    const byOperator = redactPlanView(view(), { operators: [payOp] }, { args: { pay_op: ['cvv'] } });
    expect(byOperator.epochs[0]!.tree!.children[0]!.args).toEqual(['me', 5000, REDACTED]);
    expect(positionalMarks({ args: { 'card.refund': ['sum'] } }, { operators: [chargeCard] })).toEqual(new Map([['charge_card', [2]]]));
  });
});
