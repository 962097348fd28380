// The verifier against the IPC 2020 feature tests in ../shared/ipc2020-to/_feature-tests: the four
// reference plans are valid, a few hand-written plans for the other feature domains are valid,
// and mutated plans are rejected with a message naming the problem.
// Skipped (with a notice) when the benchmark folder is absent.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { parseDomain, parseProblem } from '../htn/hddl/index.js';
import { parseIpcPlan } from '../htn/ipc-plan.js';
import { verifyPlan, type VerifyResult } from '../htn/verify/index.js';

const DIR = fileURLToPath(new URL('../../shared/ipc2020-to/_feature-tests/', import.meta.url));
const present = existsSync(DIR);
if (!present) console.warn(`[htn-verify-ipc2020] skipped: feature tests folder ${DIR} is absent`);

const read = (f: string): string => readFileSync(join(DIR, f), 'utf8');

function verify(name: string, planText: string, editProblem: (t: string) => string = (t) => t): VerifyResult {
  const domain = parseDomain(read(`${name}-domain.hddl`), `${name}-domain.hddl`);
  const problem = parseProblem(editProblem(read(`${name}.hddl`)), `${name}.hddl`);
  return verifyPlan(domain, problem, parseIpcPlan(planText));
}

// The reference plans: name of the feature test → plan file (sortof's plan is stored as .hddl).
const references: [string, string][] = [
  ['empty-methods-empty-plan', 'plans/empty-methods-empty-plan.plan'],
  ['forall', 'plans/forall.plan'],
  ['only-primitive', 'plans/only-primitive.plan'],
  ['sortof', 'plans/sortof.hddl'],
];

describe.skipIf(!present)('IPC 2020 feature tests', () => {
  test.each(references)('reference plan for %s is valid', (name, plan) => {
    expect(verify(name, read(plan))).toMatchObject({ ok: true });
  });

  const handWritten: [string, string][] = [
    ['arguments', '==>\n1 noop b b\nroot 0\n0 task1 -> donothing 1\n<=='],
    ['constants', '==>\n1 noop a\nroot 0\n0 task1 -> donothing 1\n<=='],
    ['forall2', '==>\n1 noop f\nroot 0\n0 task1 -> donothing 1\n<=='],
    ['abort-iteration', '==>\n1 noop a\nroot 0\n0 task1 -> dosomething 1\n<=='],
    ['abort-iteration', '==>\n2 noop a\n3 noop a\nroot 0\n0 task1 -> iterate 1 3\n1 task1 -> dosomething 2\n<=='],
    [
      'synonymes',
      '==>\n0 noop1\n1 noop2\n2 noop1\n3 noop2\n4 noop1\n5 noop2\n6 noop1\n7 noop2\nroot 10 11 12 13\n' +
        '10 task1 -> sequence1 0 1\n11 task2 -> sequence2 2 3\n12 task3 -> sequence3 4 5\n13 task4 -> sequence4 6 7\n<==',
    ],
  ];
  test.each(handWritten)('hand-written plan for %s is valid', (name, plan) => {
    expect(verify(name, plan)).toMatchObject({ ok: true });
  });

  const rejected: [string, string, string, RegExp, ((t: string) => string)?][] = [
    ['forall with a fact missing', 'forall', present ? read('plans/forall.plan') : '', /^action 1 \(noop\): precondition \(forall \(\?a - A\) \(foo \?a\)\) false$/, (t) => t.replace('(foo d)', '')],
    ['sortof with the wrong sort', 'sortof', '==>\n1 noop b\nroot 0\n0 task1 -> donothing 1\n<==', /method constraint \(sortof b - A\) false/],
    ['arguments with a false precondition', 'arguments', '==>\n1 noop a b\nroot 0\n0 task1 -> donothing 1\n<==', /^action 1 \(noop a b\): precondition \(foo a b\) false$/],
    ['wrong argument count', 'only-primitive', '==>\n0 noop x\nroot 0\n<==', /"noop" takes 0 argument\(s\), found 1/],
    ['wrong root id', 'only-primitive', '==>\n0 noop\nroot 1\n<==', /root line lists id 1, which is neither an action nor a decomposed task/],
    ['empty root line', 'empty-methods-empty-plan', '==>\nroot\n0 task1 -> donothing\n<==', /root line lists 0 task\(s\), but the problem's :htn has 1/],
    ['wrong method name', 'empty-methods-empty-plan', '==>\nroot 0\n0 task1 -> dosomething\n<==', /task 0 \(task1\) -> dosomething: no method named "dosomething"/],
    ['missing child', 'forall', '==>\n1 noop\nroot 0\n0 task1 -> donothing\n<==', /action 1 \(noop\) is not reached from the root tasks/],
    ['action as root', 'forall', '==>\n1 noop\nroot 1\n<==', /root task 1 is action 1 \(noop\), but the problem's :htn task 1 is \(task1\)/],
    ['dropped action', 'forall', '==>\nroot 0\n0 task1 -> donothing 1\n<==', /task 0 \(task1\) -> donothing lists id 1, which is neither an action nor a decomposed task/],
    ['missing method line', 'forall', '==>\n1 noop\nroot 0\n<==', /the root line lists id 0, which is neither an action nor a decomposed task \(missing line\?\)/],
    [
      'swapped actions',
      'synonymes',
      '==>\n1 noop2\n0 noop1\n2 noop1\n3 noop2\n4 noop1\n5 noop2\n6 noop1\n7 noop2\nroot 10 11 12 13\n' +
        '10 task1 -> sequence1 0 1\n11 task2 -> sequence2 2 3\n12 task3 -> sequence3 4 5\n13 task4 -> sequence4 6 7\n<==',
      /action order does not match the decomposition tree: position 0 lists action 1 \(noop2\)/,
    ],
    [
      'children in the wrong order',
      'synonymes',
      '==>\n0 noop1\n1 noop2\n2 noop1\n3 noop2\n4 noop1\n5 noop2\n6 noop1\n7 noop2\nroot 10 11 12 13\n' +
        '10 task1 -> sequence1 0 1\n11 task2 -> sequence2 2 3\n12 task3 -> sequence3 4 5\n13 task4 -> sequence4 7 6\n<==',
      /action order does not match the decomposition tree: position 6/,
    ],
    [
      'wrong root order',
      'synonymes',
      '==>\n0 noop1\n1 noop2\n2 noop1\n3 noop2\n4 noop1\n5 noop2\n6 noop1\n7 noop2\nroot 11 10 12 13\n' +
        '10 task1 -> sequence1 0 1\n11 task2 -> sequence2 2 3\n12 task3 -> sequence3 4 5\n13 task4 -> sequence4 6 7\n<==',
      /root task 1 is task 11 \(task2\) -> sequence2, but the problem's :htn task 1 is \(task1\)/,
    ],
  ];
  test.each(rejected)('rejects: %s', (_label, name, plan, re, editProblem) => {
    const r = verify(name, plan, editProblem);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(re);
  });
});
