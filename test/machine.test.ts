/**
 * The invocation statechart on its own, with fake actors: the order of states for each path
 * (happy, approval, compensation and re-plan, policy failure, exhausted re-plans and epochs),
 * and the pure epoch helpers that shape what the model sees.
 */
import { createActor, fromPromise } from 'xstate';
import { describe, expect, test } from 'vitest';
import type { InvocationContext, InvocationInput } from '../machines/context.js';
import { compactOutcomes, epochOutcome, backoffMs } from '../machines/epoch.js';
import { invocationMachine } from '../machines/invocation-machine.js';
import { DEFAULT_LIMITS } from '../runtime/limits.js';

const input: InvocationInput = {
  invocation: 'inv-1',
  tenant: 't',
  intent: 'x',
  pin: { library: '0'.repeat(64), runtime: 'weft@test', flags: [], model: { id: 'm', params: {} }, seed: '1', asOf: '2026-01-01T00:00:00.000Z', policy: 'p@1' },
  limits: { ...DEFAULT_LIMITS, maxReplans: 1, maxEpochs: 5 },
  seq: 1,
  tail: 'a'.repeat(64),
};
const plan = { source: 'htn' as const, digest: 'b'.repeat(64), steps: [{ operator: 'op', args: [], actuator: 'a', actuatorArgs: {}, readOnly: false }] };
const at = { seq: 1, tail: 'a'.repeat(64) };

interface Script {
  parse: Array<'goal' | 'done' | 'handoff'>;
  admit?: Array<'allow' | 'deny' | 'require_approval'>;
  execute?: Array<null | 'permanent' | 'policy'>;
}

function run(script: Script, events: Array<{ when: string; send: any }> = []): Promise<{ states: string[]; context: InvocationContext }> {
  const states: string[] = [];
  const q = { parse: [...script.parse], admit: [...(script.admit ?? [])], execute: [...(script.execute ?? [])] };
  const machine = invocationMachine.provide({
    actors: {
      parseGoal: fromPromise(async () => {
        const kind = q.parse.shift() ?? 'done';
        return kind === 'goal' ? { ...at, kind, goal: { task: 'g', args: [] } } : kind === 'done' ? { ...at, kind, summary: 'ok' } : { ...at, kind, reason: 'r' };
      }),
      decompose: fromPromise(async () => ({ ...at, kind: 'plan' as const, plan })),
      admit: fromPromise(async () => ({ ...at, decision: q.admit.shift() ?? 'allow' })),
      recordApproval: fromPromise(async ({ input: i }: { input: { decision: string } }) => ({ ...at, approved: i.decision === 'approved', reason: 'r' })),
      execute: fromPromise(async () => {
        const f = q.execute.shift() ?? null;
        return { ...at, done: [], failure: f ? { step: 0, class: f, code: `c.${f}`, message: f } : null };
      }),
      compensate: fromPromise(async () => ({ ...at, kind: 'compensated' as const })),
      truncate: fromPromise(async () => at),
      closeEpoch: fromPromise(async ({ input: ctx }: { input: InvocationContext }) => ({ ...at, outcome: epochOutcome(ctx) })),
      finish: fromPromise(async () => ({ ...at, fingerprint: 'f'.repeat(64) })),
    } as never,
  });
  return new Promise((resolve) => {
    const actor = createActor(machine, { input });
    actor.subscribe((s) => {
      const value = String(s.value);
      if (states.at(-1) !== value) states.push(value);
      const e = events.find((x) => x.when === value);
      if (e) queueMicrotask(() => actor.send(e.send));
      if (s.status === 'done') resolve({ states, context: s.context });
    });
    actor.start();
  });
}

describe('invocation machine', () => {
  test('happy path: parse → decompose → admit → execute → boundary → parse → finishing → completed', async () => {
    const { states, context } = await run({ parse: ['goal', 'done'] });
    expect(states).toEqual(['parse', 'decompose', 'admit', 'execute', 'boundary', 'parse', 'finishing', 'completed']);
    expect(context.epoch).toBe(2);
    expect(context.outcomes.map((o) => o.outcome)).toEqual(['completed']);
  });

  test('approval: admit → awaitingApproval → approving → execute', async () => {
    const { states } = await run({ parse: ['goal', 'done'], admit: ['require_approval'] }, [{ when: 'awaitingApproval', send: { type: 'approval.decided', decision: 'approved', by: 'ana' } }]);
    expect(states.slice(0, 6)).toEqual(['parse', 'decompose', 'admit', 'awaitingApproval', 'approving', 'execute']);
  });

  test('a permanent failure compensates, truncates, closes the epoch and re-plans', async () => {
    const { states, context } = await run({ parse: ['goal', 'goal', 'done'], execute: ['permanent', null] });
    expect(states.slice(0, 8)).toEqual(['parse', 'decompose', 'admit', 'execute', 'compensate', 'truncate', 'boundary', 'parse']);
    expect(states.at(-1)).toBe('completed');
    expect(context.outcomes.map((o) => o.outcome)).toEqual(['compensated', 'completed']);
  });

  test('a policy failure fails the invocation without compensating', async () => {
    const { states } = await run({ parse: ['goal'], execute: ['policy'] });
    expect(states).toEqual(['parse', 'decompose', 'admit', 'execute', 'failing', 'failed']);
  });

  test('re-plans beyond the limit fail the invocation', async () => {
    const { states, context } = await run({ parse: ['goal', 'goal', 'goal'], admit: ['deny', 'deny'] });
    expect(states.at(-1)).toBe('failed');
    expect(context.failure?.code).toBe('invocation.replans_exhausted');
  });

  test('a model that never says done is handed off after maxEpochs', async () => {
    const { states, context } = await run({ parse: Array(10).fill('goal') });
    expect(states.at(-1)).toBe('handedOff');
    expect(context.failure?.code).toBe('invocation.epochs_exhausted');
  });

  test('a hibernation request stops at the next boundary and resumes on request', async () => {
    const { states } = await run({ parse: ['goal', 'done'] }, [
      { when: 'decompose', send: { type: 'hibernate' } },
      { when: 'hibernated', send: { type: 'resume' } },
    ]);
    expect(states).toEqual(['parse', 'decompose', 'admit', 'execute', 'boundary', 'hibernated', 'parse', 'finishing', 'completed']);
  });
});

describe('what the model sees', () => {
  const outcome = (epoch: number, n: number) => ({ epoch, goal: { task: 't', args: [] }, outcome: 'completed' as const, results: Array.from({ length: n }, (_, i) => ({ step: i, operator: 'op', result: i })) });

  test('only the last outcomeWindow epochs keep their step results', () => {
    const compacted = compactOutcomes([outcome(1, 3), outcome(2, 2), outcome(3, 1)], 2);
    expect(compacted.map((o) => [o.results.length, o.omitted])).toEqual([[0, 3], [2, undefined], [1, undefined]]);
  });

  test('an epoch outcome keeps at most resultsPerOutcome results and counts the rest', () => {
    const ctx = { epoch: 1, goal: { task: 'g', args: [] }, failure: null, limits: { ...DEFAULT_LIMITS, resultsPerOutcome: 2 }, done: [0, 1, 2, 3].map((i) => ({ step: i, operator: 'op', result: i })) };
    const o = epochOutcome(ctx as unknown as InvocationContext);
    expect(o.results.map((r) => r.step)).toEqual([0, 1]);
    expect(o.omitted).toBe(2);
  });

  test('retry backoff grows exponentially, with jitter from the given unit, capped', () => {
    expect(backoffMs(1, 0)).toBe(200);
    expect(backoffMs(2, 0)).toBe(400);
    expect(backoffMs(2, 1)).toBe(500);
    expect(backoffMs(30, 0)).toBe(30_000);
  });
});
