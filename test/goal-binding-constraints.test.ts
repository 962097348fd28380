/**
 * Bindings and run-wide counts as task constraints (issue 30), pure: the schema (strict), the
 * builder, validation and `describeConstraint`; `checkTaskConstraints` naming the step, the arg,
 * the value the goal asked for and the one the step passes (quoted and clipped, the same whichever
 * order the library's keys come in); a run-wide count adding what earlier epochs of the same task
 * left done (`earlierEffects`); and the library check that warns about a method-less task whose
 * effectful operators pass args no constraint ties to the goal (`unboundEffectWarnings`).
 */
import { describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { canonicalize } from '../journal/canonical.js';
import { LibraryBuilder, LibraryValidationError, atom, describeConstraint, libraryDigest, validateLibrary, type Library, type TaskConstraint } from '../htn/index.js';
import { unboundEffectWarnings } from '../htn/library/unbound-effects.js';
import { checkTaskConstraints, earlierEffects } from '../machines/constraints.js';
import type { EpochOutcome, EpochStep } from '../machines/context.js';
import { travelLibrary } from '../examples/travel/library.js';

/** A ride service: `ride(?who, ?from, ?to)` has no method (the gap path) unless `withMethod`. */
function rides(constraints: readonly TaskConstraint[], options: { withMethod?: boolean } = {}): LibraryBuilder {
  const b = new LibraryBuilder('rides')
    .type('person').type('place')
    .predicate('at', { '?p': 'person', '?x': 'place' })
    .task('ride', { '?p': 'person', '?from': 'place', '?to': 'place' }, { constraints })
    .operator('look', { params: { '?from': 'place', '?to': 'place' }, actuator: { actuator: 'ride.quote', args: { from: '?from', to: '?to' } }, readOnly: true })
    .operator('go', {
      params: { '?p': 'person', '?from': 'place', '?to': 'place', '?fare': 'number' },
      effect: [{ op: 'add', pred: 'at', args: ['?p', '?to'] }],
      actuator: { actuator: 'ride.book', args: { who: '?p', from: '?from', to: '?to', fare: '?fare', currency: 'EUR' } },
    })
    .operator('tip', { params: { '?p': 'person', '?n': 'number' }, actuator: { actuator: 'card.tip', args: { who: '?p', amount: '?n' } } });
  if (options.withMethod) b.method('walk', { task: ['ride', '?p', '?from', '?to'], params: { '?p': 'person', '?from': 'place', '?to': 'place' }, precondition: atom('at', '?p', '?to'), subtasks: [] });
  return b;
}

const go = (who: string, from: string, to: string, fare = 10, currency = 'EUR'): EpochStep => ({
  operator: 'go', args: [who, from, to, fare], actuator: 'ride.book', actuatorArgs: { who, from, to, fare, currency }, readOnly: false,
});
const look = (from: string, to: string): EpochStep => ({ operator: 'look', args: [from, to], actuator: 'ride.quote', actuatorArgs: { from, to }, readOnly: true });
const goal = { task: 'ride', args: ['ana', 'airport', 'hotel'] };
const bindGo: TaskConstraint = { bind: 'ride.book', args: { who: '?p', to: '?to', from: '?from', currency: 'EUR' } };

function problemsOf(build: () => unknown): string[] {
  try {
    build();
  } catch (e) {
    expect(e).toBeInstanceOf(LibraryValidationError);
    return (e as LibraryValidationError).problems;
  }
  throw new Error('expected a LibraryValidationError');
}

describe('bind and per-run count as library data', () => {
  test('the builder writes them as data, described in sorted arg order, and they are part of the digest', () => {
    const lib = rides([bindGo, { count: 'ride.book', atMost: 1, per: 'run' }]).build();
    expect(lib.tasks[0]!.constraints).toEqual([bindGo, { count: 'ride.book', atMost: 1, per: 'run' }]);
    expect(describeConstraint(bindGo)).toBe('ride.book binds currency = EUR, from = ?from, to = ?to, who = ?p');
    expect(describeConstraint({ count: 'ride.book', atMost: 1, per: 'run' })).toBe('count of ride.book ≤ 1 per run');
    expect(libraryDigest(lib)).not.toBe(libraryDigest(rides([{ count: 'ride.book', atMost: 1 }]).build()));
    expect(libraryDigest(validateLibrary(JSON.parse(canonicalize(lib as never))))).toBe(libraryDigest(lib));
  });

  test('validation: a binding names an actuator some operator dispatches, args it is passed, and params of the task', () => {
    expect(problemsOf(() => rides([{ bind: 'ride.bok', args: { to: '?to' } }]).build())).toEqual(['task ride constraint 0 (ride.bok binds to = ?to): no operator dispatches the actuator ride.bok']);
    expect(problemsOf(() => rides([{ bind: 'ride.book', args: { day: '?to', to: '?where' } }]).build())).toEqual([
      'task ride constraint 0 (ride.book binds day = ?to, to = ?where): no operator passes ride.book an arg day',
      'task ride constraint 0 (ride.book binds day = ?to, to = ?where): ?where is not a param of ride',
    ]);
    expect(problemsOf(() => rides([{ bind: 'ride.book', args: {} }]).build())[0]).toMatch(/bind needs at least one arg/);
    expect(problemsOf(() => rides([{ count: 'ride.quote', atMost: 1, per: 'run' }]).build())[0]).toMatch(/every operator that dispatches ride\.quote is readOnly/);
  });

  test('the schema is strict: an unknown field (a misspelt per) or another scope is a shape problem, not a silent per-fragment count', () => {
    const problem = (bad: object) => {
      const lib = structuredClone(rides([]).build()) as Library;
      (lib.tasks[0] as { constraints?: unknown }).constraints = [bad];
      return problemsOf(() => validateLibrary(lib));
    };
    expect(problem({ count: 'ride.book', atMost: 1, pre: 'run' })).toEqual(['tasks.0.constraints.0: Unrecognized key: "pre"']);
    expect(problem({ bind: 'ride.book', args: { to: '?to' }, also: 1 })).toEqual(['tasks.0.constraints.0: Unrecognized key: "also"']);
    expect(problem({ count: 'ride.book', atMost: 1, per: 'epoch' })[0]).toMatch(/^tasks\.0\.constraints\.0: a task constraint is .*\{ count, atMost, per\?: 'run' \}.*\{ bind: actuator, args/);
  });
});

describe('checkTaskConstraints: bindings', () => {
  const lib = rides([bindGo]).build();

  test('steps that pass the goal\'s values hold; other actuators are not bound', () => {
    expect(checkTaskConstraints(lib, goal, [look('anywhere', 'else'), go('ana', 'airport', 'hotel', 99)])).toBeUndefined();
  });

  test('the first step that breaks the binding is named, with every arg it breaks: the arg, the value asked for, the value passed', () => {
    expect(checkTaskConstraints(lib, goal, [go('ana', 'airport', 'hotel'), go('bob', 'station', 'hotel'), go('ana', 'x', 'y')])).toBe(
      `ride's constraint "ride.book binds currency = EUR, from = ?from, to = ?to, who = ?p" fails: step 1 (go) passes from "station" where the goal binds ?from to "airport"; who "bob" where the goal binds ?p to "ana"`,
    );
    expect(checkTaskConstraints(lib, goal, [go('ana', 'airport', 'hotel', 10, 'USD')])).toMatch(/step 0 \(go\) passes currency "USD" where the task fixes it to "EUR"$/);
    expect(checkTaskConstraints(lib, goal, [{ ...go('ana', 'airport', 'hotel'), actuatorArgs: { who: 'ana', from: 'airport', currency: 'EUR' } }])).toMatch(/passes to missing where the goal binds \?to to "hotel"$/);
    // A number is not its string: 12 and "12" differ.
    const days = rides([{ bind: 'ride.book', args: { fare: '?to' } }]).build();
    expect(checkTaskConstraints(days, { task: 'ride', args: ['ana', 'airport', 12] }, [go('ana', 'airport', 'hotel', 12)])).toBeUndefined();
    expect(checkTaskConstraints(days, { task: 'ride', args: ['ana', 'airport', '12'] }, [go('ana', 'airport', 'hotel', 12)])).toMatch(/passes fare 12 where the goal binds \?to to "12"$/);
  });

  test('fail closed: a goal that leaves a bound param unbound breaks the binding, whatever the steps', () => {
    expect(checkTaskConstraints(lib, { task: 'ride', args: ['ana', 'airport'] }, [])).toMatch(/fails: the goal binds \?to to nothing \(it has too few args\)$/);
  });

  test('values a model wrote are quoted and clipped', () => {
    const long = 'x'.repeat(5000);
    const reason = checkTaskConstraints(lib, goal, [go('ana', long, 'hotel')])!;
    expect(reason.length).toBeLessThan(400);
    expect(reason).toContain('passes from "xxxx');
    expect(reason).toContain('…');
  });

  test('the reason does not depend on the order of the library\'s keys (a library read back from its canonical blob has them sorted)', () => {
    const blob = validateLibrary(JSON.parse(canonicalize(lib as never)));
    expect(Object.keys((blob.tasks[0]!.constraints![0] as { args: object }).args)).toEqual(['currency', 'from', 'to', 'who']);
    const steps = [go('bob', 'station', 'motel', 10, 'USD')];
    expect(checkTaskConstraints(blob, goal, steps)).toBe(checkTaskConstraints(lib, goal, steps));
  });
});

describe('checkTaskConstraints: a count per run', () => {
  const lib = rides([{ count: 'ride.book', atMost: 1, per: 'run' }, { count: '*', atMost: 2, per: 'run' }]).build();
  const outcome = (epoch: number, task: string): EpochOutcome => ({ epoch, goal: { task, args: [] }, outcome: 'completed', results: [] });

  test('earlierEffects: what earlier epochs left done, with the task of their epoch (an epoch with no outcome counts for every task)', () => {
    const kept = [
      { epoch: 2, step: 1, actuator: 'ride.book', key: 'k1' },
      { epoch: 3, step: 0, actuator: 'card.tip', key: 'k2' },
      { epoch: 9, step: 0, actuator: 'ride.book', key: 'k3' },
    ];
    expect(earlierEffects({ kept, outcomes: [outcome(2, 'ride'), outcome(3, 'other')] })).toEqual([
      { epoch: 2, task: 'ride', actuator: 'ride.book' },
      { epoch: 3, task: 'other', actuator: 'card.tip' },
      { epoch: 9, task: '*', actuator: 'ride.book' },
    ]);
    expect(earlierEffects({ outcomes: [] })).toEqual([]);
  });

  test('an earlier booking of the same task counts; one of another task does not; the fragment alone without per', () => {
    const one = [go('ana', 'airport', 'hotel')];
    expect(checkTaskConstraints(lib, goal, one, [])).toBeUndefined();
    expect(checkTaskConstraints(lib, goal, one, [{ epoch: 3, task: 'ride', actuator: 'ride.book' }])).toBe(
      `ride's constraint "count of ride.book ≤ 1 per run" fails: 2 > 1 (1 in this fragment, 1 already done by epoch 3 of this run)`,
    );
    expect(checkTaskConstraints(lib, goal, one, [{ epoch: 3, task: 'other', actuator: 'ride.book' }])).toBeUndefined();
    expect(checkTaskConstraints(lib, goal, [], [{ epoch: 3, task: 'ride', actuator: 'ride.book' }])).toBeUndefined();
    // '*' counts every world effect of the task the run left done.
    expect(checkTaskConstraints(lib, goal, [], [{ epoch: 2, task: 'ride', actuator: 'card.tip' }, { epoch: 4, task: 'ride', actuator: 'card.tip' }, { epoch: 4, task: 'ride', actuator: 'card.tip' }])).toBe(
      `ride's constraint "count of world-effect steps ≤ 2 per run" fails: 3 > 2 (0 in this fragment, 3 already done by epochs 2, 4 of this run)`,
    );
    const perFragment = rides([{ count: 'ride.book', atMost: 1 }]).build();
    expect(checkTaskConstraints(perFragment, goal, one, [{ epoch: 3, task: 'ride', actuator: 'ride.book' }])).toBeUndefined();
  });
});

describe('unboundEffectWarnings', () => {
  test('travel binds every arg of its method-less task\'s effects (or bounds it by a sum): no warning', () => {
    expect(unboundEffectWarnings(travelLibrary)).toEqual([]);
  });

  test("travel without the bindings: book_taxi's traveller, airport, hotel and day are named; the read-only quote is not", () => {
    const unbound: Library = { ...travelLibrary, tasks: travelLibrary.tasks.map((t) => (t.name !== 'book_transfer' ? t : { ...t, constraints: t.constraints!.filter((c) => !('bind' in c)) })) };
    expect(unboundEffectWarnings(unbound)).toEqual([
      {
        task: 'book_transfer',
        operator: 'book_taxi',
        actuator: 'taxi.book',
        args: ['day', 'from', 'to', 'traveller'],
        message: expect.stringMatching(/^task book_transfer has no method, so the model authors its fragments: operator book_taxi dispatches taxi\.book with day, from, to, traveller, which no constraint of book_transfer ties to the goal/),
      },
    ]);
  });

  test('only the effectful operators the task may use: only, count ≤ 0 and a method rule them out', () => {
    expect(unboundEffectWarnings(rides([]).build()).map((w) => [w.operator, w.args])).toEqual([
      ['go', ['currency', 'fare', 'from', 'to', 'who']],
      ['tip', ['amount', 'who']],
    ]);
    expect(unboundEffectWarnings(rides([bindGo, { sum: 'ride.book', arg: 'fare', atMost: 50 }, { only: ['ride.quote', 'ride.book'] }]).build())).toEqual([]);
    expect(unboundEffectWarnings(rides([bindGo, { count: 'card.tip', atMost: 0 }]).build()).map((w) => [w.operator, w.args])).toEqual([['go', ['fare']]]);
    expect(unboundEffectWarnings(rides([], { withMethod: true }).build())).toEqual([]);
  });
});
