/**
 * Determinism as a tested property (DESIGN invariant 3): the same library + state + goal gives
 * byte-identical output (plan and tree, canonical JSON) every time, in any process, and the plan
 * depends only on the state as a SET — permuting (or duplicating) facts and objects changes
 * nothing. Committed golden plans guard against silent changes of the engine's choices.
 *
 * To refresh the golden files after a deliberate change: WEFT_UPDATE_GOLDEN=1 npx vitest run
 * test/htn-determinism.test.ts — and say why in the commit.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalize } from '../journal/canonical.js';
import { compileHddl, formatIpcPlan, hddl, plan, planDigest, standardEvaluables, toIpcPlan, type Goal, type Library, type WorldState } from '../htn/index.js';
import { verifyPlan } from '../htn/verify/index.js';
import { travelLibrary, travelState } from './fixtures/htn/travel.js';

const fixtures = join(import.meta.dirname, 'fixtures', 'htn');
const update = process.env['WEFT_UPDATE_GOLDEN'] === '1';

function golden(file: string, actual: string): void {
  const path = join(fixtures, file);
  if (update || !existsSync(path)) writeFileSync(path, actual);
  expect(actual).toBe(readFileSync(path, 'utf8'));
}

function loadDelivery(): { domain: hddl.HddlDomain; problem: hddl.HddlProblem; library: Library; state: WorldState; goal: Goal } {
  const domainFile = join(fixtures, 'delivery', 'domain.hddl');
  const problemFile = join(fixtures, 'delivery', 'problem.hddl');
  const domain = hddl.parseDomain(readFileSync(domainFile, 'utf8'), domainFile);
  const problem = hddl.parseProblem(readFileSync(problemFile, 'utf8'), problemFile);
  return { domain, problem, ...compileHddl(domain, problem) };
}

const evaluables = standardEvaluables();
const travelGoal: Goal = { task: 'trip', args: ['lisbon'] };

describe('golden plans', () => {
  test('travel: the canonical result is the committed one', () => {
    const r = plan(travelLibrary(), travelState(), travelGoal, { evaluables });
    golden('travel-trip.result.json', canonicalize({ ...r, stats: undefined }) + '\n');
    golden('travel-trip.digest', planDigest(r) + '\n');
  });

  test('delivery (HDDL): the IPC plan is the committed one and the verifier accepts it', () => {
    const d = loadDelivery();
    const r = plan(d.library, d.state, d.goal);
    expect(r.kind).toBe('plan');
    if (r.kind !== 'plan') return;
    const ipc = toIpcPlan(r);
    expect(verifyPlan(d.domain, d.problem, ipc)).toMatchObject({ ok: true });
    golden('delivery/plan.ipc', formatIpcPlan(ipc));
  });
});

describe('same input, same bytes', () => {
  test('repeated runs in one process are byte-identical', () => {
    const first = canonicalize(plan(travelLibrary(), travelState(), travelGoal, { evaluables }));
    for (let i = 0; i < 5; i++) expect(canonicalize(plan(travelLibrary(), travelState(), travelGoal, { evaluables }))).toBe(first);
  });

  const dist = join(import.meta.dirname, '..', 'dist', 'htn', 'index.js');
  test.skipIf(!existsSync(dist))('another process (compiled engine) produces the same bytes', () => {
    const d = loadDelivery();
    const input = JSON.stringify({ library: d.library, state: d.state, goal: d.goal });
    const script = `
      import { readFileSync } from 'node:fs';
      const { plan } = await import(${JSON.stringify(new URL(`file://${dist}`).href)});
      const { canonicalize } = await import(${JSON.stringify(new URL(`file://${join(import.meta.dirname, '..', 'dist', 'journal', 'canonical.js')}`).href)});
      const { library, state, goal } = JSON.parse(readFileSync(0, 'utf8'));
      process.stdout.write(canonicalize(plan(library, state, goal)));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { input, encoding: 'utf8' });
    expect(out).toBe(canonicalize(plan(d.library, d.state, d.goal)));
  });
});

describe('the plan depends on the state as a set (fast-check)', () => {
  const permuted = <T>(items: readonly T[]) => fc.shuffledSubarray([...items], { minLength: items.length, maxLength: items.length });

  test('travel: permuting and duplicating facts and objects never changes the output', () => {
    const base = travelState();
    const expected = canonicalize(plan(travelLibrary(), base, travelGoal, { evaluables }));
    fc.assert(
      fc.property(permuted(base.facts), permuted(base.objects), fc.nat(base.facts.length - 1), (facts, objects, dup) => {
        const state: WorldState = { objects, facts: [...facts, facts[dup]!] };
        expect(canonicalize(plan(travelLibrary(), state, travelGoal, { evaluables }))).toBe(expected);
      }),
      { numRuns: 60 },
    );
  });

  test('delivery (HDDL): permuting init facts and objects never changes the output', () => {
    const d = loadDelivery();
    const expected = canonicalize(plan(d.library, d.state, d.goal));
    fc.assert(
      fc.property(permuted(d.state.facts), permuted(d.state.objects), (facts, objects) => {
        expect(canonicalize(plan(d.library, { objects, facts }, d.goal))).toBe(expected);
      }),
      { numRuns: 60 },
    );
  });

  test('a no-method result and its explanation are equally order-independent', () => {
    const base = travelState();
    base.facts = base.facts.filter((f) => f[0] !== 'budget').concat([['budget', 10]]);
    const expected = canonicalize(plan(travelLibrary(), base, travelGoal, { evaluables }));
    expect(JSON.parse(expected).kind).toBe('no-method');
    fc.assert(
      fc.property(permuted(base.facts), (facts) => {
        expect(canonicalize(plan(travelLibrary(), { ...base, facts }, travelGoal, { evaluables }))).toBe(expected);
      }),
      { numRuns: 30 },
    );
  });
});
