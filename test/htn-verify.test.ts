// The independent plan verifier on hand-written fixtures (test/fixtures/hddl/courier-*): the
// reference plan is valid, and each kind of corruption is rejected with a message that says what
// is wrong and where. Also a 100k-action synthetic plan (deep recursion, free variables) for speed.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { parseDomain, parseProblem } from '../htn/hddl/index.js';
import { parseIpcPlan, type IpcPlan } from '../htn/ipc-plan.js';
import { verifyPlan } from '../htn/verify/index.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/hddl/${name}`, import.meta.url), 'utf8');
const domain = parseDomain(fixture('courier-domain.hddl'), 'courier-domain.hddl');
const problemText = fixture('courier-problem.hddl');
const problem = parseProblem(problemText, 'courier-problem.hddl');
const planText = fixture('courier-1.plan');

/** Applies a line-level edit to the reference plan text and verifies the result. */
function verifyEdited(edit: (lines: string[]) => string[], prob = problem) {
  return verifyPlan(domain, prob, parseIpcPlan(edit(planText.split('\n')).join('\n')));
}
const replaceLine = (from: string, to: string | null) => (lines: string[]) => {
  const i = lines.indexOf(from);
  if (i < 0) throw new Error(`fixture has no line "${from}"`);
  return to === null ? lines.filter((_, j) => j !== i) : lines.map((l, j) => (j === i ? to : l));
};

describe('verifyPlan on the courier fixture', () => {
  test('the reference plan is valid', () => {
    expect(verifyPlan(domain, problem, parseIpcPlan(planText))).toEqual({ ok: true, actions: 8, methods: 8 });
  });

  test('a plan built in memory (no line numbers) verifies the same', () => {
    const p = parseIpcPlan(planText);
    const bare: IpcPlan = {
      actions: p.actions.map(({ id, name, args }) => ({ id, name, args })),
      root: p.root,
      decompositions: p.decompositions.map(({ id, task, args, method, children }) => ({ id, task, args, method, children })),
    };
    expect(verifyPlan(domain, problem, bare).ok).toBe(true);
  });

  const rejected: [string, (lines: string[]) => string[], RegExp, number | undefined][] = [
    [
      'swapped pair of actions',
      (l) => {
        const i = l.indexOf('1 load t1 a p1');
        return l.map((x, j) => (j === i ? l[i + 1]! : j === i + 1 ? l[i]! : x));
      },
      /action order does not match the decomposition tree: position 1 lists action 2 \(drive t1 a b\), but the tree's left-to-right order puts action 1 \(load t1 a p1\) there/,
      4,
    ],
    [
      'wrong argument',
      replaceLine('1 load t1 a p1', '1 load t1 a p2'),
      /task 10 \(deliver p1 b\) -> m-deliver: child 2 \(action 1 \(load t1 a p2\)\) does not match subtask load of method m-deliver: \?x is already bound to p1, found p2/,
      12,
    ],
    ['missing method line', replaceLine('14 goto t1 b -> m-goto-drive 2', null), /lists id 14, which is neither an action nor a decomposed task/, 12],
    ['wrong method name', replaceLine('13 goto t1 a -> m-goto-drive 0', '13 goto t1 a -> m-drive 0'), /task 13 \(goto t1 a\) -> m-drive: no method named "m-drive"/, 13],
    [
      'method of another task',
      replaceLine('13 goto t1 a -> m-goto-drive 0', '13 goto t1 a -> m-wash 0'),
      /method m-wash decomposes task "wash-all", not "goto"/,
      13,
    ],
    [
      'wrong child list (count)',
      replaceLine('13 goto t1 a -> m-goto-drive 0', '13 goto t1 a -> m-goto-here 0'),
      /method m-goto-here has 0 subtask\(s\), but the line lists 1 child id\(s\)/,
      13,
    ],
    [
      'wrong child list (order)',
      replaceLine('10 deliver p1 b -> m-deliver 13 1 14 3', '10 deliver p1 b -> m-deliver 13 14 1 3'),
      /action order does not match the decomposition tree: position 1 lists action 1 \(load t1 a p1\), but the tree's left-to-right order puts action 2 \(drive t1 a b\) there/,
      4,
    ],
    [
      'child listed twice',
      replaceLine('10 deliver p1 b -> m-deliver 13 1 14 3', '10 deliver p1 b -> m-deliver 13 1 14 1'),
      /task 10 \(deliver p1 b\) -> m-deliver lists id 1 twice/,
      12,
    ],
    [
      'dropped action (still referenced)',
      replaceLine('3 unload t1 b p1', null),
      /lists id 3, which is neither an action nor a decomposed task/,
      11,
    ],
    [
      'dropped action and its reference',
      (l) => replaceLine('10 deliver p1 b -> m-deliver 13 1 14 3', '10 deliver p1 b -> m-deliver 13 1 14')(replaceLine('3 unload t1 b p1', null)(l)),
      /method m-deliver has 4 subtask\(s\), but the line lists 3 child id\(s\)/,
      11,
    ],
    ['orphan action', replaceLine('7 wash t1', '7 wash t1\n8 wash t2'), /action 8 \(wash t2\) is not reached from the root tasks/, 11],
    ['wrong root order', replaceLine('root 10 11 12', 'root 11 10 12'), /root task 1 \(task 11 \(deliver p2 depot\) -> m-deliver\) does not match :htn task \(deliver p1 b\): expected the constant p1, found p2/, 11],
    ['missing root task', replaceLine('root 10 11 12', 'root 10 11'), /root line lists 2 task\(s\), but the problem's :htn has 3/, 11],
    ['unknown action', replaceLine('7 wash t1', '7 scrub t1'), /action 7 \(scrub t1\): no action named "scrub"/, 10],
    ['wrong arity', replaceLine('7 wash t1', '7 wash t1 t2'), /"wash" takes 1 argument\(s\), found 2/, 10],
    ['wrong type', replaceLine('7 wash t1', '7 wash p1'), /action 7 \(wash p1\): argument 1 "p1" is not of type vehicle/, 10],
    ['unknown object', replaceLine('7 wash t1', '7 wash t9'), /argument 1 "t9" is not a declared object/, 10],
    [
      'method precondition false',
      (l) => replaceLine('13 goto t1 a -> m-goto-drive 0', '13 goto t1 a -> m-goto-here')(replaceLine('0 drive t1 depot a', null)(l)),
      /task 13 \(goto t1 a\) -> m-goto-here: method precondition \(at t1 a\) false \(before action position 0\)/,
      12,
    ],
  ];
  test.each(rejected)('rejects: %s', (_name, edit, re, line) => {
    const r = verifyEdited(edit);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatch(re);
    expect(r.line).toBe(line);
  });

  test('rejects an action whose precondition is false, naming the literal', () => {
    // The method's precondition does not mention (not (in p1 t1)); the load action's does.
    const loaded = parseProblem(problemText.replace('(at t2 a)', '(at t2 a) (in p1 t1)'), 'p');
    const r = verifyPlan(domain, loaded, parseIpcPlan(planText));
    expect(r).toEqual({ ok: false, error: 'action 1 (load t1 a p1): precondition (not (in p1 t1)) false', id: 1, line: 4 });
    // A missing road is caught by the method that chose to drive, before the drive itself.
    const noRoad = parseProblem(problemText.replace('(road depot a) ', ''), 'p');
    const r2 = verifyPlan(domain, noRoad, parseIpcPlan(planText));
    expect(r2).toMatchObject({ ok: false, error: 'task 13 (goto t1 a) -> m-goto-drive: method precondition (road depot a) false (before action position 0)' });
  });

  test('rejects a method constraint that fails', () => {
    // Driving from b to b: the road exists (added to init) but :constraints (not (= ?from ?to)) fails first.
    const loop = parseProblem(problemText.replace('(road b a)', '(road b a) (road b b)'), 'p');
    const r = verifyEdited(
      (l) => replaceLine('15 goto t1 b -> m-goto-here', '15 goto t1 b -> m-goto-drive 18')(replaceLine('4 load t1 b p2', '18 drive t1 b b\n4 load t1 b p2')(l)),
      loop,
    );
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/task 15 \(goto t1 b\) -> m-goto-drive: method constraint \(not \(= b b\)\) false/);
  });

  test('free method parameters are searched (exists), and rejected when no value fits', () => {
    // m-wash's ?p is bound only by its precondition (at ?v ?p). With p2 never delivered the
    // forall in the same precondition fails for every ?p.
    const r = verifyEdited((l) =>
      replaceLine('11 deliver p2 depot -> m-deliver 15 4 16 6', '11 deliver p1 b -> m-deliver 15 4 16 6')(l),
    );
    expect(r.ok).toBe(false);
    const undelivered = parseProblem(problemText.replace('(parcel-at p2 b)', '(parcel-at p2 b) (parcel-at p3 b)').replace('p1 p2 - parcel', 'p1 p2 p3 - parcel'), 'p');
    const r2 = verifyPlan(domain, undelivered, parseIpcPlan(planText));
    expect(r2.ok).toBe(false);
    if (!r2.ok) expect(r2.error).toMatch(/task 12 \(wash-all\) -> m-wash: no value of \(\?p - place\) makes the method precondition .*\(forall \(\?x - parcel\) \(delivered \?x\)\).* true \(before action position 7\)/);
  });

  test('the goal must hold at the end', () => {
    const p = parseProblem(problemText.replace('(clean t1)', '(clean t1) (clean t2)'), 'p');
    expect(verifyPlan(domain, p, parseIpcPlan(planText))).toEqual({ ok: false, error: 'goal (clean t2) false in the final state' });
  });

  test('method parameters are type-checked (a parameter narrower than the task\'s)', () => {
    const d = parseDomain(
      `(define (domain t) (:types A - B)
        (:task task1 :parameters (?x - B))
        (:method m :parameters (?x - A) :task (task1 ?x) :ordered-subtasks (noop ?x))
        (:action noop :parameters (?x - B)))`,
      't.hddl',
    );
    const p = parseProblem('(define (problem q) (:domain t) (:objects a - A b - B) (:htn :ordered-subtasks (task1 b)) (:init))', 'q.hddl');
    expect(verifyPlan(d, p, parseIpcPlan('==>\n0 noop b\nroot 1\n1 task1 b -> m 0\n'))).toEqual({
      ok: false,
      error: 'task 1 (task1 b) -> m: method m binds ?x to "b", which is not of type A',
      id: 1,
      line: 4,
    });
    expect(verifyPlan(d, p, parseIpcPlan('==>\n0 noop a\nroot 1\n1 task1 a -> m 0\n')).ok).toBe(false); // root must be (task1 b)
  });

  test('an artificial __top root is accepted', () => {
    const r = verifyEdited((l) => replaceLine('<==', '99 __top -> __top_method 10 11 12\n<==')(replaceLine('root 10 11 12', 'root 99')(l)));
    expect(r).toEqual({ ok: true, actions: 8, methods: 8 });
  });
});

describe('a 100k-action plan', () => {
  // count-down n_N -> tick n_N n_{N-1}, count-down n_{N-1} -> ... -> m-done: a 100k-deep tree,
  // 100k method free-variable searches (?t bound by (holding ?t)) and 100k state updates.
  const N = 100_000;
  const dom = parseDomain(
    `(define (domain count) (:requirements :typing :hierarchy)
      (:types num token)
      (:predicates (next ?a ?b - num) (cur ?n - num) (holding ?t - token) (zero ?n - num))
      (:task count-down :parameters (?n - num))
      (:method m-done :parameters (?n - num) :task (count-down ?n) :precondition (zero ?n) :ordered-subtasks (and))
      (:method m-step :parameters (?n ?m - num ?t - token) :task (count-down ?n)
        :precondition (and (next ?m ?n) (holding ?t))
        :ordered-subtasks (and (tick ?n ?m) (count-down ?m)))
      (:action tick :parameters (?n ?m - num) :precondition (and (cur ?n) (next ?m ?n))
        :effect (and (not (cur ?n)) (cur ?m))))`,
    'count.hddl',
  );
  const nums = Array.from({ length: N + 1 }, (_, i) => `n${i}`);
  const prob = parseProblem(
    `(define (problem c) (:domain count) (:objects ${nums.join(' ')} - num k - token)
      (:htn :ordered-subtasks (count-down n${N}))
      (:init (zero n0) (holding k) (cur n${N}) ${nums.slice(1).map((n, i) => `(next n${i} ${n})`).join(' ')}))`,
    'count-p.hddl',
  );
  const lines = ['==>'];
  for (let j = 0; j < N; j++) lines.push(`${j} tick n${N - j} n${N - j - 1}`);
  lines.push(`root ${N}`);
  for (let j = 0; j < N; j++) lines.push(`${N + j} count-down n${N - j} -> m-step ${j} ${N + j + 1}`);
  lines.push(`${2 * N} count-down n0 -> m-done`, '<==');
  const text = lines.join('\n');

  // A verifier quadratic in the plan's length would not finish within the test's time-out; how fast
  // it is belongs to `npm run bench` (a timed assertion fails on a busy machine, not on a slow verifier).
  test('verifies a plan of 200,001 tasks within the test time-out', () => {
    const r = verifyPlan(dom, prob, parseIpcPlan(text));
    expect(r).toEqual({ ok: true, actions: N, methods: N + 1 });
  });

  test('a late corruption is found', () => {
    const bad = text.replace(`${N - 1} tick n1 n0`, `${N - 1} tick n2 n0`);
    const r = verifyPlan(dom, prob, parseIpcPlan(bad));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/task 199999 \(count-down n1\) -> m-step: child 1 \(action 99999 \(tick n2 n0\)\) does not match subtask tick of method m-step: \?n is already bound to n1, found n2/);
  });
});
