/**
 * Task constraints (htn/library/schema.ts, machines/constraints.ts): the library declares them as
 * data, validation rejects ill-formed ones with clear problems, absent constraints leave a library's
 * data and digest unchanged, and `checkTaskConstraints` checks each kind over a fragment's steps —
 * binding the budget from the goal. On the travel library, book_trip refuses the authored fragment
 * that overspent (hold, hold, charge 2400, confirm, confirm under a 900 budget) and accepts the
 * planner's own plan.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import type { Actuator, ActuatorContext } from '../actors/actuator.js';
import { createRandom } from '../actors/random.js';
import { LibraryBuilder, LibraryValidationError, atom, libraryDigest, validateLibrary, type Library, type TaskConstraint, type WorldState } from '../htn/index.js';
import { plan } from '../htn/planner/plan.js';
import { checkTaskConstraints } from '../machines/constraints.js';
import type { EpochStep } from '../machines/context.js';
import { TRAVEL_GOALS, createTravelApp, travelEvaluables, travelLibrary } from '../examples/travel/index.js';
import { TRAVEL_AS_OF } from '../examples/travel/domain.js';

/** A small shop: buy items with a card, email a receipt; `order(?who, ?budget)` is constrained. */
function shop(constraints?: readonly TaskConstraint[], budgetType = 'number'): LibraryBuilder {
  return new LibraryBuilder('shop')
    .type('person')
    .predicate('paid', { '?p': 'person' })
    .task('order', { '?p': 'person', '?budget': budgetType }, constraints ? { constraints } : undefined)
    .operator('pay', {
      params: { '?p': 'person', '?amount': 'number' },
      effect: [{ op: 'add', pred: 'paid', args: ['?p'] }],
      actuator: { actuator: 'card.charge', args: { who: '?p', amount: '?amount' } },
    })
    .operator('browse', { params: { '?p': 'person' }, actuator: { actuator: 'shop.search', args: { who: '?p' } }, readOnly: true })
    .operator('mail', { params: { '?p': 'person' }, actuator: { actuator: 'mail.send', args: { to: '?p' } } })
    .method('pay-once', { task: ['order', '?p', '?budget'], params: { '?p': 'person', '?budget': budgetType }, precondition: atom('paid', '?p'), subtasks: [] });
}

function problemsOf(build: () => unknown): string[] {
  try {
    build();
  } catch (e) {
    expect(e).toBeInstanceOf(LibraryValidationError);
    return (e as LibraryValidationError).problems;
  }
  throw new Error('expected a LibraryValidationError');
}

const charge = (amount: string | number): EpochStep => ({ operator: 'pay', args: ['ana', amount], actuator: 'card.charge', actuatorArgs: { who: 'ana', amount }, readOnly: false });
const browse: EpochStep = { operator: 'browse', args: ['ana'], actuator: 'shop.search', actuatorArgs: { who: 'ana' }, readOnly: true };
const mail: EpochStep = { operator: 'mail', args: ['ana'], actuator: 'mail.send', actuatorArgs: { to: 'ana' }, readOnly: false };
const order = (budget: string | number) => ({ task: 'order', args: ['ana', budget] });

describe('constraints as library data', () => {
  test('absent constraints leave the data and the digest unchanged; declared ones are part of the digest', () => {
    const plain = shop().build();
    expect(plain.tasks[0]).toEqual({ name: 'order', params: [{ name: '?p', type: 'person' }, { name: '?budget', type: 'number' }] });
    expect('constraints' in plain.tasks[0]!).toBe(false);
    expect(validateLibrary(JSON.parse(JSON.stringify(plain)))).toEqual(plain);
    const constrained = shop([{ sum: 'card.charge', arg: 'amount', atMost: '?budget' }]).build();
    expect(constrained.tasks[0]!.constraints).toEqual([{ sum: 'card.charge', arg: 'amount', atMost: '?budget' }]);
    expect(libraryDigest(constrained)).not.toBe(libraryDigest(plain));
    // The builder and hand-written JSON agree.
    const json = structuredClone(plain) as Library;
    json.tasks[0]!.constraints = [{ sum: 'card.charge', arg: 'amount', atMost: '?budget' }];
    expect(libraryDigest(validateLibrary(json))).toBe(libraryDigest(constrained));
  });

  test('the builder accepts readonly constraint lists', () => {
    const only = ['shop.search'] as const;
    const lib = shop([{ only: [...only] }]).build();
    expect(lib.tasks[0]!.constraints).toEqual([{ only: ['shop.search'] }]);
  });

  test('validation: a bound must be a number-typed param of the task', () => {
    expect(problemsOf(() => shop([{ sum: 'card.charge', arg: 'amount', atMost: '?cap' }]).build())).toEqual([
      'task order constraint 0 (sum of card.charge amount ≤ ?cap): ?cap is not a param of order',
    ]);
    expect(problemsOf(() => shop([{ sum: 'card.charge', arg: 'amount', atMost: '?budget' }], 'person').build())).toEqual([
      'task order constraint 0 (sum of card.charge amount ≤ ?budget): ?budget has type person; a bound must be of type number',
    ]);
    expect(problemsOf(() => shop([{ sum: 'card.charge', arg: 'amount', atMost: 'budget' }]).build())[0]).toMatch(/atMost must be a number or a param of order/);
  });

  test('validation: counts are non-negative integers; actuators and args must be dispatched by an operator', () => {
    expect(problemsOf(() => shop([{ count: 'card.charge', atMost: -1 }, { count: '*', atMost: 1.5 }]).build())).toEqual([
      'task order constraint 0 (count of card.charge ≤ -1): atMost must be a non-negative integer, got -1',
      'task order constraint 1 (count of world-effect steps ≤ 1.5): atMost must be a non-negative integer, got 1.5',
    ]);
    expect(problemsOf(() => shop([{ count: 'card.chrage', atMost: 1 }, { sum: 'card.charge', arg: 'amt', atMost: 10 }, { only: ['shop.search', 'fax.send'] }]).build())).toEqual([
      'task order constraint 0 (count of card.chrage ≤ 1): no operator dispatches the actuator card.chrage',
      'task order constraint 1 (sum of card.charge amt ≤ 10): no operator passes card.charge an arg amt',
      'task order constraint 2 (only shop.search, fax.send): no operator dispatches the actuator fax.send',
    ]);
    expect(problemsOf(() => shop([{ only: [] }]).build())[0]).toMatch(/only needs at least one actuator/);
  });

  test('validation: a malformed constraint is a shape problem with its path', () => {
    const lib = structuredClone(shop().build()) as Library;
    (lib.tasks[0] as { constraints?: unknown }).constraints = [{ most: 3 }];
    const problems = problemsOf(() => validateLibrary(lib));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^tasks\.0\.constraints\.0: a task constraint is \{ sum, arg, atMost \}/);
  });
});

describe('checkTaskConstraints', () => {
  test('sum ≤ a param: binds the budget from the goal', () => {
    const lib = shop([{ sum: 'card.charge', arg: 'amount', atMost: '?budget' }]).build();
    expect(checkTaskConstraints(lib, order(900), [charge(300), browse, charge(600)])).toBeUndefined();
    expect(checkTaskConstraints(lib, order(900), [charge(300), charge(601)])).toBe('order\'s constraint "sum of card.charge amount ≤ ?budget" fails: 901 > 900');
    expect(checkTaskConstraints(lib, order(1000), [charge(300), charge(601)])).toBeUndefined();
    // A non-number arg violates; so does a budget the goal does not bind to a number.
    expect(checkTaskConstraints(lib, order(900), [charge('lots')])).toBe('order\'s constraint "sum of card.charge amount ≤ ?budget" fails: step 0 (pay) has amount "lots", not a number');
    expect(checkTaskConstraints(lib, order('nine hundred'), [charge(1)])).toBe('order\'s constraint "sum of card.charge amount ≤ ?budget" fails: the goal binds ?budget to "nine hundred", not a number');
    expect(checkTaskConstraints(lib, { task: 'order', args: ['ana'] }, [])).toMatch(/binds \?budget to missing, not a number/);
  });

  test('sum ≤ a number', () => {
    const lib = shop([{ sum: 'card.charge', arg: 'amount', atMost: 50 }]).build();
    expect(checkTaskConstraints(lib, order(900), [charge(50)])).toBeUndefined();
    expect(checkTaskConstraints(lib, order(900), [charge(51)])).toBe('order\'s constraint "sum of card.charge amount ≤ 50" fails: 51 > 50');
  });

  test("count of an actuator, and of every world effect ('*')", () => {
    const lib = shop([{ count: 'card.charge', atMost: 1 }, { count: '*', atMost: 2 }]).build();
    expect(checkTaskConstraints(lib, order(900), [browse, browse, browse, charge(1), mail])).toBeUndefined();
    expect(checkTaskConstraints(lib, order(900), [charge(1), charge(1)])).toBe('order\'s constraint "count of card.charge ≤ 1" fails: 2 > 1');
    expect(checkTaskConstraints(lib, order(900), [charge(1), mail, mail])).toBe('order\'s constraint "count of world-effect steps ≤ 2" fails: 3 > 2');
  });

  test('only these actuators', () => {
    const lib = shop([{ only: ['shop.search', 'mail.send'] }]).build();
    expect(checkTaskConstraints(lib, order(900), [browse, mail])).toBeUndefined();
    expect(checkTaskConstraints(lib, order(900), [browse, charge(1)])).toBe('order\'s constraint "only shop.search, mail.send" fails: step 1 (pay) dispatches card.charge');
    expect(checkTaskConstraints(lib, order(900), [{ operator: 'noop', args: [], readOnly: true }])).toMatch(/step 0 \(noop\) dispatches no actuator/);
  });

  test('the first violation in declared order; none for unconstrained tasks and for operators', () => {
    const lib = shop([{ count: 'mail.send', atMost: 0 }, { sum: 'card.charge', arg: 'amount', atMost: '?budget' }]).build();
    expect(checkTaskConstraints(lib, order(1), [charge(5), mail])).toMatch(/"count of mail\.send ≤ 0" fails: 1 > 0/);
    expect(checkTaskConstraints(lib, { task: 'pay', args: ['ana', 5000] }, [charge(5000)])).toBeUndefined();
    expect(checkTaskConstraints(shop().build(), order(1), [charge(5000)])).toBeUndefined();
    expect(checkTaskConstraints(lib, { task: 'nope', args: [] }, [charge(5000)])).toBeUndefined();
  });

  test('reasons are bounded', () => {
    const long = 'x'.repeat(500);
    const lib = shop([{ sum: 'card.charge', arg: 'amount', atMost: '?budget' }]).build();
    const reason = checkTaskConstraints(lib, order(9), [{ ...charge(long), operator: long }])!;
    expect(reason.length).toBeLessThan(260);
    expect(reason).toContain('…');
  });
});

describe('the travel library', () => {
  const ctx = (key: string): ActuatorContext => ({ key, attempt: 1, invocation: 'inv', tenant: 't1', epoch: 1, step: Number(key.split('.').pop()), asOf: TRAVEL_AS_OF, random: createRandom('seed-1', key) });

  /** Runs find_options by the planner against a temp state file, then plans book_trip(900). */
  async function plannedBooking(budget: number) {
    const app = createTravelApp({ stateFile: join(mkdtempSync(join(tmpdir(), 'weft-constraints-')), 'providers.json') });
    const actuators = new Map<string, Actuator>(app.actuators.map((a) => [a.name, a]));
    const call = async (name: string, args: unknown, key: string) => actuators.get(name)!.run(actuators.get(name)!.argsSchema.parse(args), ctx(key));
    const decompose = async (goal: { task: string; args: Array<string | number> }) =>
      plan(travelLibrary, (await call(app.observe, { goal }, 'inv.0.0')) as WorldState, goal, { evaluables: travelEvaluables() });
    const find = { task: TRAVEL_GOALS.findOptions.task, args: [...TRAVEL_GOALS.findOptions.args] };
    const searched = await decompose(find);
    if (searched.kind !== 'plan') throw new Error(searched.kind);
    expect(checkTaskConstraints(travelLibrary, find, searched.steps as EpochStep[])).toBeUndefined();
    for (const [i, step] of searched.steps.entries()) await call(step.actuator!, step.actuatorArgs, `inv.1.${i}`);
    const goal = { task: 'book_trip', args: ['me', 'lisbon', 12, budget] };
    const booked = await decompose(goal);
    if (booked.kind !== 'plan') throw new Error(booked.kind);
    return { goal, steps: JSON.parse(JSON.stringify(booked.steps)) as EpochStep[] };
  }

  test('declares its constraints and still validates', () => {
    expect(validateLibrary(travelLibrary)).toEqual(travelLibrary);
    const constraints = Object.fromEntries(travelLibrary.tasks.map((t) => [t.name, t.constraints]));
    expect(constraints.book_trip).toContainEqual({ sum: 'card.charge', arg: 'amount', atMost: '?budget' });
    expect(constraints.find_options).toEqual([{ only: ['flights.search', 'hotels.search'] }, { count: '*', atMost: 0 }]);
    expect(constraints.share_itinerary).toEqual([{ count: 'message.send', atMost: 1 }, { count: 'reminder.set', atMost: 1 }]);
  });

  test("book_trip accepts the planner's own plan (780 under 900) and refuses the overspending authored fragment", async () => {
    const { goal, steps } = await plannedBooking(900);
    expect(steps.map((s) => s.actuator)).toEqual(['airline.hold', 'hotel.hold', 'card.charge', 'airline.confirm', 'hotel.confirm']);
    expect(steps[2]!.actuatorArgs!.amount).toBe(780);
    expect(checkTaskConstraints(travelLibrary, goal, steps)).toBeUndefined();

    // What a model authored once: two holds, a charge far over budget, two confirms.
    const authored = steps.map((s) => (s.actuator === 'card.charge' ? { ...s, args: [...s.args.slice(0, 4), 2400], actuatorArgs: { ...s.actuatorArgs, amount: 2400 } } : s));
    expect(checkTaskConstraints(travelLibrary, goal, authored)).toBe('book_trip\'s constraint "sum of card.charge amount ≤ ?budget" fails: 2400 > 900');
    // The same fragment is fine under a budget that covers it — the bound comes from the goal.
    expect(checkTaskConstraints(travelLibrary, { ...goal, args: ['me', 'lisbon', 12, 2400] }, authored)).toBeUndefined();
    // Holding twice, or charging twice under budget, is refused by the counts.
    expect(checkTaskConstraints(travelLibrary, goal, [steps[0]!, steps[0]!, ...steps.slice(1)])).toBe('book_trip\'s constraint "count of airline.hold ≤ 1" fails: 2 > 1');
    const half = { ...steps[2]!, actuatorArgs: { ...steps[2]!.actuatorArgs, amount: 390 } };
    expect(checkTaskConstraints(travelLibrary, goal, [steps[0]!, steps[1]!, half, half, steps[3]!, steps[4]!])).toBe('book_trip\'s constraint "count of card.charge ≤ 1" fails: 2 > 1');
  });

  test('find_options only searches; share_itinerary sends one message', () => {
    const search: EpochStep = { operator: 'search_hotels', args: ['lisbon', 12], actuator: 'hotels.search', actuatorArgs: { city: 'lisbon', day: 12 }, readOnly: true };
    const find = { task: 'find_options', args: ['me', 'lisbon', 12] };
    expect(checkTaskConstraints(travelLibrary, find, Array(3).fill(search))).toBeUndefined();
    const hold: EpochStep = { operator: 'hold_flight', args: ['me', 'f1'], actuator: 'airline.hold', actuatorArgs: { traveller: 'me', flight: 'f1' }, readOnly: false };
    expect(checkTaskConstraints(travelLibrary, find, [search, hold])).toBe('find_options\'s constraint "only flights.search, hotels.search" fails: step 1 (hold_flight) dispatches airline.hold');
    const send: EpochStep = { operator: 'send_itinerary', args: ['me', 'email', 'f', 'h'], actuator: 'message.send', actuatorArgs: { traveller: 'me', channel: 'email', flight: 'f', hotel: 'h' }, readOnly: false };
    expect(checkTaskConstraints(travelLibrary, { task: 'share_itinerary', args: ['me', 'lisbon'] }, [send])).toBeUndefined();
    expect(checkTaskConstraints(travelLibrary, { task: 'share_itinerary', args: ['me', 'lisbon'] }, [send, send])).toMatch(/"count of message\.send ≤ 1" fails: 2 > 1/);
  });
});

describe('a negative amount', () => {
  test('cannot lower a sum constraint: a fragment with a negative charge is refused', async () => {
    const { checkTaskConstraints } = await import('../machines/constraints.js');
    const { travelLibrary } = await import('../examples/travel/library.js');
    const charge = (amount: number) => ({ operator: 'charge_card', args: [], actuator: 'card.charge', actuatorArgs: { amount }, readOnly: false });
    const goal = { task: 'book_trip', args: ['me', 'lisbon', 12, 900] };
    expect(checkTaskConstraints(travelLibrary, goal, [charge(800)])).toBeUndefined();
    expect(checkTaskConstraints(travelLibrary, goal, [charge(-5000)])).toMatch(/negative amount/);
  });
});
