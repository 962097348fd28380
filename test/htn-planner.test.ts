/**
 * The planner on Weft's own small domain (test/fixtures/htn/travel.ts): plans with explicit
 * actuator bindings, evaluable predicates over numbers, explanations for "no method", budgets,
 * cycle detection, and a long plan that would overflow a recursive planner.
 */
import { describe, expect, test } from 'vitest';
import {
  EvaluableRegistry,
  EvaluableVersionError,
  HtnInputError,
  LibraryBuilder,
  atom,
  plan,
  planDigest,
  standardEvaluables,
} from '../htn/index.js';
import { chainState, travelLibrary, travelState } from './fixtures/htn/travel.js';

const evaluables = standardEvaluables();

describe('plan on the travel domain', () => {
  test('decomposes a trip into ground steps with actuator bindings', () => {
    const r = plan(travelLibrary(), travelState(), { task: 'trip', args: ['lisbon'] }, { evaluables });
    expect(r.kind).toBe('plan');
    if (r.kind !== 'plan') return;
    // Flights are tried in canonical order (af123 is over budget, ez789 sorts before tp456).
    expect(r.steps).toEqual([
      { operator: 'search-flights', args: ['paris', 'lisbon'], actuator: 'flights.search', actuatorArgs: { from: 'paris', to: 'lisbon' }, readOnly: true },
      {
        operator: 'book-flight',
        args: ['ez789', 'paris', 'lisbon', 95],
        actuator: 'airline.book',
        actuatorArgs: { flight: 'ez789', amount: 95 },
        compensate: { actuator: 'airline.cancel', args: { flight: 'ez789' } },
        readOnly: false,
      },
      {
        operator: 'book-hotel',
        args: ['h-inn', 'lisbon', 120],
        actuator: 'hotels.reserve',
        actuatorArgs: { hotel: 'h-inn', city: 'lisbon', nightly: 120 },
        compensate: { actuator: 'hotels.release', args: { hotel: 'h-inn' } },
        readOnly: false,
      },
    ]);
    expect(r.tree.roots).toEqual([0]);
    expect(r.tree.nodes[0]).toEqual({ task: 'trip', args: ['lisbon'], method: 'trip-fly-then-lodge', children: [1, 4] });
    expect(r.tree.nodes[1]).toMatchObject({ task: 'get-to', method: 'fly-direct', children: [2, 3] });
    expect(r.tree.nodes[2]).toEqual({ task: 'search-flights', args: ['paris', 'lisbon'], step: 0 });
  });

  test('an already satisfied subgoal uses the first method (declared order) and yields no steps', () => {
    const r = plan(travelLibrary(), travelState(), { task: 'get-to', args: ['paris'] }, { evaluables });
    expect(r.kind).toBe('plan');
    if (r.kind === 'plan') {
      expect(r.steps).toEqual([]);
      expect(r.tree.nodes).toEqual([{ task: 'get-to', args: ['paris'], method: 'already-there', children: [] }]);
    }
  });

  test('no method: the explanation names each method and the first failing precondition', () => {
    const state = travelState();
    state.facts = state.facts.filter((f) => !(f[0] === 'budget')).concat([['budget', 50]]);
    const r = plan(travelLibrary(), state, { task: 'get-to', args: ['lisbon'] }, { evaluables });
    expect(r.kind).toBe('no-method');
    if (r.kind !== 'no-method') return;
    expect(r.task).toBe('get-to');
    expect(r.args).toEqual(['lisbon']);
    expect(r.explanation.goal.methods).toEqual([
      { method: 'already-there', outcome: 'precondition', failed: '(at ?to)' },
      { method: 'fly-direct', outcome: 'precondition', failed: '(le ?p ?b)' },
    ]);
  });

  test('look-ahead: a condition a later subtask needs fails the method early, and says so', () => {
    // `lodge` has one method; its hotel price literals cannot change before it runs, so
    // `trip-fly-then-lodge` checks them up front (pull-up) instead of flying first.
    const state = travelState();
    state.facts = state.facts.filter((f) => !(f[0] === 'price' && f[1] === 'h-inn'));
    const r = plan(travelLibrary(), state, { task: 'trip', args: ['lisbon'] }, { evaluables });
    expect(r.kind).toBe('no-method');
    if (r.kind !== 'no-method') return;
    expect(r.explanation.goal.methods).toEqual([
      { method: 'trip-fly-then-lodge', outcome: 'precondition', failed: '(le ?p ?b) (needed by subtask 2 (lodge))' },
    ]);
    expect(r.stats.nodes).toBe(1);
  });

  test('no method deeper down: the goal shows "subtasks" and `deepest` points at the task that failed', () => {
    const state = travelState();
    state.facts = state.facts.filter((f) => !(f[0] === 'flight' && f[1] !== 'af123'));
    const r = plan(travelLibrary(), state, { task: 'trip', args: ['lisbon'] }, { evaluables });
    expect(r.kind).toBe('no-method');
    if (r.kind !== 'no-method') return;
    expect(r.explanation.goal.methods).toEqual([{ method: 'trip-fly-then-lodge', outcome: 'subtasks' }]);
    expect(r.explanation.deepest).toMatchObject({ task: 'get-to', args: ['lisbon'], stepsBefore: 0 });
    expect(r.explanation.deepest?.methods).toEqual([
      { method: 'already-there', outcome: 'precondition', failed: '(at ?to)' },
      { method: 'fly-direct', outcome: 'precondition', failed: '(le ?p ?b)' },
    ]);
  });

  test('the node budget is a clean, deterministic limit', () => {
    const goal = { task: 'trip', args: ['lisbon'] };
    const a = plan(travelLibrary(), travelState(), goal, { evaluables, maxNodes: 3 });
    const b = plan(travelLibrary(), travelState(), goal, { evaluables, maxNodes: 3 });
    expect(a).toEqual({ kind: 'limit', limit: 'nodes', budget: 3, task: expect.any(String), args: expect.any(Array), stats: { nodes: 3 } });
    expect(b).toEqual(a);
  });

  test('the depth budget says which limit was hit', () => {
    const r = plan(travelLibrary(), chainState(50), { task: 'visit-all', args: ['c0'] }, { evaluables, maxDepth: 10 });
    expect(r).toMatchObject({ kind: 'limit', limit: 'depth', budget: 10, task: 'mark-visited' });
  });

  test('a 20,000-step recursive plan is found without recursion (explicit stack)', () => {
    const r = plan(travelLibrary(), chainState(20_000), { task: 'visit-all', args: ['c0'] }, { evaluables, maxNodes: 1e7, maxDepth: 1e6 });
    expect(r.kind).toBe('plan');
    if (r.kind === 'plan') {
      expect(r.steps.length).toBe(20_000);
      expect(r.steps[19_999]?.args).toEqual(['c19999']);
    }
  });

  test('evaluables are pinned by version: a missing version fails closed', () => {
    const onlyV2 = new EvaluableRegistry().register({ name: 'le', version: '2', arity: 2, test: () => true });
    expect(() => plan(travelLibrary(), travelState(), { task: 'trip', args: ['lisbon'] }, { evaluables: onlyV2 })).toThrow(EvaluableVersionError);
    // The library pinning v2 runs with v2's code — here one that accepts everything (af123 first).
    const r = plan(travelLibrary('2'), travelState(), { task: 'get-to', args: ['lisbon'] }, { evaluables: onlyV2 });
    expect(r.kind === 'plan' && r.steps[1]?.args[0]).toBe('af123');
  });

  test('an unknown goal task or a wrong arity is rejected, not planned', () => {
    expect(() => plan(travelLibrary(), travelState(), { task: 'teleport', args: [] }, { evaluables })).toThrow(HtnInputError);
    expect(() => plan(travelLibrary(), travelState(), { task: 'trip', args: [] }, { evaluables })).toThrow(HtnInputError);
  });

  test('planDigest ignores stats and changes with the plan', () => {
    const r = plan(travelLibrary(), travelState(), { task: 'trip', args: ['lisbon'] }, { evaluables });
    expect(planDigest(r)).toMatch(/^[0-9a-f]{64}$/);
    expect(planDigest({ ...r, stats: { nodes: 12345 } })).toBe(planDigest(r));
    const other = plan(travelLibrary(), travelState(), { task: 'get-to', args: ['lisbon'] }, { evaluables });
    expect(planDigest(other)).not.toBe(planDigest(r));
  });
});

describe('search mechanics', () => {
  const loop = () =>
    new LibraryBuilder('loop')
      .type('item')
      .predicate('ok', { '?i': 'item' })
      .task('t')
      .operator('noop', { params: { '?i': 'item' }, precondition: atom('ok', '?i') })
      .method('left-recursive', { task: ['t'], params: { '?i': 'item' }, subtasks: [['t'], ['noop', '?i']] })
      .method('base', { task: ['t'], params: { '?i': 'item' }, subtasks: [['noop', '?i']] })
      .build();
  const state = { objects: [{ name: 'a', type: 'item' }], facts: [['ok', 'a']] as [string, ...string[]][] };

  test('left recursion is cut by cycle detection (same task, args and state)', () => {
    const r = plan(loop(), state, { task: 't', args: [] });
    expect(r.kind === 'plan' && r.steps.map((s) => s.operator)).toEqual(['noop']);
  });

  test('without cycle detection the same domain ends in a clean depth limit', () => {
    const r = plan(loop(), state, { task: 't', args: [] }, { cycleCheck: false, maxDepth: 500 });
    expect(r).toMatchObject({ kind: 'limit', limit: 'depth', budget: 500 });
  });

  test('shouldStop interrupts (CLI use only) and reports it as a limit', () => {
    const r = plan(loop(), state, { task: 't', args: [] }, { cycleCheck: false, maxDepth: 1e9, shouldStop: () => true });
    expect(r).toMatchObject({ kind: 'limit', limit: 'interrupted' });
  });

  test('look-ahead helper bindings do not multiply alternatives (solutions are deduplicated)', () => {
    // `t-m` pulls up `use`'s precondition through the single-method task `a`; its helper ?i has
    // five solutions but `t-m`'s subtasks do not depend on it, so `t-m` is one alternative.
    const lib = new LibraryBuilder('dedupe')
      .type('item')
      .predicate('p', { '?i': 'item' })
      .predicate('q')
      .task('t')
      .task('a')
      .operator('use', { params: { '?i': 'item' }, precondition: atom('p', '?i') })
      .operator('never', { precondition: atom('q') })
      .method('a-m', { task: ['a'], params: { '?i': 'item' }, subtasks: [['use', '?i']] })
      .method('t-m', { task: ['t'], subtasks: [['a'], ['never']] })
      .build();
    const items = ['i1', 'i2', 'i3', 'i4', 'i5'];
    const r = plan(lib, { objects: items.map((name) => ({ name, type: 'item' })), facts: items.map((i) => ['p', i] as [string, string]) }, { task: 't', args: [] });
    expect(r.kind).toBe('no-method');
    // t-m: 1 binding + 1 exhausted; a-m: 5 bindings + 1 exhausted, each applying `use` then failing `never`.
    expect(r.stats.nodes).toBeLessThanOrEqual(2 + 6 + 10);
  });

  test('a goal condition that fails after decomposition makes the search backtrack', () => {
    const lib = new LibraryBuilder('pick')
      .type('item')
      .predicate('picked', { '?i': 'item' })
      .task('pick-one')
      .operator('pick', { params: { '?i': 'item' }, effect: { op: 'add', pred: 'picked', args: ['?i'] } })
      .method('any', { task: ['pick-one'], params: { '?i': 'item' }, subtasks: [['pick', '?i']] })
      .build();
    const objects = ['a', 'b', 'c'].map((name) => ({ name, type: 'item' }));
    const r = plan(lib, { objects, facts: [] }, { task: 'pick-one', args: [], condition: atom('picked', 'c') });
    expect(r.kind === 'plan' && r.steps.map((s) => s.args)).toEqual([['c']]);
  });
});
