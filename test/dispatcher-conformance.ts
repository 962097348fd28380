/**
 * The dispatcher contract (queue/dispatcher.ts) as a suite every dispatcher must pass —
 * `dispatcherConformance(harness)`, run by dispatcher.in-process.test.ts and
 * dispatcher.bullmq.test.ts. Whatever runs the actuators (this process, a BullMQ worker), a
 * dispatch answers with the result or the SAME classified failure, the job reaches the actuator
 * unchanged (idempotency key, attempt, invocation, tenant, epoch, step, asOf, the PRNG rebuilt from
 * seed and key), unknown actuators and bad args are refused as policy failures, the certification
 * questions (knows / canCompensate / checkArgs) are answered from the actuators' names and
 * schemas, compensation runs the actuator's `compensate`, and close() releases everything so the
 * process can exit.
 *
 * The actuators live in support/conformance-actuators.mjs, shared with worker processes.
 */
import { beforeEach, afterEach, describe, expect, test } from 'vitest';
import { ActuatorError } from '../actors/actuator.js';
import { createRandom } from '../actors/random.js';
import * as htn from '../htn/index.js';
import { isWeftError } from '../journal/errors.js';
import type { Dispatcher, Job, JobOutcome } from '../queue/dispatcher.js';
import { defineDomain, type Domain } from '../runtime/domain.js';
import { z } from 'zod';
import type { CliResult } from './support/cli.js';
import { CONF, DRAW_STREAM, conformanceActuators, conformanceLibrary, type ConformanceCall } from './support/conformance-actuators.mjs';

export { CONF, type ConformanceCall };

/** A dispatcher under test and a view of what its actuators were handed. */
export interface DispatcherRig {
  dispatcher: Dispatcher;
  /** Every actuator call so far, in order, wherever the actuators ran. */
  calls(): ConformanceCall[];
  /** Close the dispatcher and whatever runs its jobs. */
  close(): Promise<void>;
}

export interface DispatcherHarness {
  name: string;
  /** A fresh dispatcher over the conformance actuators, isolated from every other test's. */
  open(): Promise<DispatcherRig>;
  /**
   * Run support/dispatcher-close-check.mjs against this kind of dispatcher (arranging whatever
   * runs its jobs): a process that dispatches one job, closes the dispatcher and must then exit
   * by itself.
   */
  closeCheck(): Promise<CliResult & { timedOut: boolean; elapsedMs: number }>;
  /** Who runs its jobs, as each outcome that ran an actuator names it (`JobOutcome.worker`; a string or a matcher). */
  worker: unknown;
}

/** The conformance actuators built on the TypeScript sources, reporting each call to `record`. */
export function testActuators(record: (call: ConformanceCall) => void = () => undefined) {
  return conformanceActuators({ z, ActuatorError, record });
}

/** The conformance actuators as a domain (for startWorker, which needs the domain's libraries). */
export function conformanceDomain(record: (call: ConformanceCall) => void = () => undefined): Domain {
  return defineDomain({
    name: 'conformance',
    libraries: [conformanceLibrary(htn)],
    actuators: () => testActuators(record),
    observe: CONF.observe,
  });
}

let jobs = 0;
/** A job of a fresh invocation (so its key and job id are new), attempt 1, op `run`. */
export function newJob(actuator: string, args: unknown, over: Partial<Job> = {}): Job {
  const invocation = `conf-${process.pid}-${Date.now().toString(36)}-${++jobs}`;
  return {
    op: 'run',
    actuator,
    args,
    key: `${invocation}.3.2`,
    attempt: 1,
    invocation,
    tenant: 'acme',
    epoch: 3,
    step: 2,
    asOf: '2026-06-01T09:00:00.000Z',
    seed: '7',
    ...over,
  };
}

/** What the actuator must have been handed for `job`. */
export function expectedCall(job: Job, extra: Partial<ConformanceCall> = {}): ConformanceCall {
  return {
    actuator: job.actuator,
    op: job.op,
    args: job.args,
    key: job.key,
    attempt: job.attempt,
    invocation: job.invocation,
    tenant: job.tenant,
    epoch: job.epoch,
    step: job.step,
    asOf: job.asOf,
    draw: createRandom(job.seed, job.key).stream(DRAW_STREAM).next(),
    ...extra,
  };
}

const refused = (cls: string, code: string, message: RegExp | string = /./): JobOutcome =>
  ({ ok: false, failure: { class: cls, code, message: typeof message === 'string' ? expect.stringContaining(message) : expect.stringMatching(message) } }) as JobOutcome;

export function dispatcherConformance(harness: DispatcherHarness): void {
  describe(`dispatcher conformance: ${harness.name}`, () => {
    let rig: DispatcherRig;
    beforeEach(async () => {
      rig = await harness.open();
    });
    afterEach(async () => {
      await rig?.close();
    });
    /** An outcome of a job an actuator ran: it names the worker that ran it. */
    const ran = (outcome: JobOutcome): JobOutcome => ({ ...outcome, worker: harness.worker }) as JobOutcome;
    const failure = (cls: string, code: string, message: RegExp | string = /./): JobOutcome => ran(refused(cls, code, message));
    const callsOf = (job: Job) => rig.calls().filter((c) => c.key === job.key).map(({ pid: _pid, ...c }) => c);

    test('a dispatch that succeeds answers with the result, and the actuator saw the job unchanged (PRNG rebuilt from seed and key)', async () => {
      const job = newJob(CONF.echo, { text: 'hello', n: 3 });
      const outcome = await rig.dispatcher.dispatch(job);
      expect(outcome).toEqual(ran({ ok: true, result: { echoed: 'hello', n: 3, key: job.key, attempt: 1 } }));
      expect(callsOf(job)).toEqual([expectedCall(job)]);
    });

    test.each([
      ['transient', CONF.flaky, 'conf.flaky', 'attempt 1 of'],
      ['permanent', CONF.permanent, 'conf.broken', 'rejects this for good'],
      ['policy', CONF.policy, 'conf.forbidden', 'forbids this'],
    ])('an actuator that fails %s gives the same classified outcome', async (cls, actuator, code, message) => {
      const job = newJob(actuator, {});
      expect(await rig.dispatcher.dispatch(job)).toEqual(failure(cls, code, message));
      expect(callsOf(job)).toEqual([expectedCall(job)]);
    });

    test('anything else an actuator throws is transient (actuator.threw); a result that fails its schema is permanent (actuator.bad_result)', async () => {
      const threw = newJob(CONF.throws, {});
      expect(await rig.dispatcher.dispatch(threw)).toEqual(failure('transient', 'actuator.threw', 'the provider hung up'));
      const bad = newJob(CONF.badResult, {});
      expect(await rig.dispatcher.dispatch(bad)).toEqual(failure('permanent', 'actuator.bad_result', CONF.badResult));
      expect(callsOf(threw)).toHaveLength(1);
      expect(callsOf(bad)).toHaveLength(1);
    });

    test('the idempotency key and the attempt reach the actuator unchanged across attempts (1 fails transient, 2 succeeds, same key)', async () => {
      const first = newJob(CONF.flaky, {});
      const second: Job = { ...first, attempt: 2 };
      expect(await rig.dispatcher.dispatch(first)).toEqual(failure('transient', 'conf.flaky'));
      expect(await rig.dispatcher.dispatch(second)).toEqual(ran({ ok: true, result: { key: first.key, attempt: 2 } }));
      const calls = callsOf(first);
      expect(calls).toEqual([expectedCall(first), expectedCall(second)]);
      expect(calls.map((c) => c.key)).toEqual([first.key, first.key]);
      expect(calls[0]!.draw, 'the PRNG depends on seed and key, never on the attempt').toBe(calls[1]!.draw);
    });

    test('a read-only job (an observation) dispatched again with the same key and attempt runs again: a resumed runtime looks at the world afresh', async () => {
      const job = newJob(CONF.echo, { text: 'look', n: 1 }, { readOnly: true });
      const first = await rig.dispatcher.dispatch(job);
      const second = await rig.dispatcher.dispatch({ ...job });
      expect(first).toEqual(ran({ ok: true, result: { echoed: 'look', n: 1, key: job.key, attempt: 1 } }));
      expect(second).toEqual(first);
      expect(callsOf(job)).toEqual([expectedCall(job), expectedCall(job)]);
    });

    test('an unknown actuator is a policy failure (actuator.unknown), and nothing runs', async () => {
      const job = newJob('conf.nope', {});
      expect(await rig.dispatcher.dispatch(job)).toEqual(refused('policy', 'actuator.unknown', 'conf.nope'));
      expect(callsOf(job)).toEqual([]);
    });

    test('args that fail the schema are a policy failure (actuator.bad_args), and the actuator never runs', async () => {
      const job = newJob(CONF.echo, { text: 'hello', n: -1 });
      expect(await rig.dispatcher.dispatch(job)).toEqual(failure('policy', 'actuator.bad_args', CONF.echo));
      const missing = newJob(CONF.echo, { n: 1 });
      expect(await rig.dispatcher.dispatch(missing)).toEqual(failure('policy', 'actuator.bad_args', CONF.echo));
      expect(callsOf(job)).toEqual([]);
      expect(callsOf(missing)).toEqual([]);
    });

    test('knows / canCompensate / checkArgs answer from the actuators’ names and schemas', () => {
      const d = rig.dispatcher;
      expect(typeof d.name).toBe('string');
      for (const name of Object.values(CONF)) expect(d.knows(name), name).toBe(true);
      expect(d.knows('conf.nope')).toBe(false);
      expect(d.canCompensate(CONF.echo)).toBe(true);
      expect(d.canCompensate(CONF.flaky)).toBe(false);
      expect(d.canCompensate('conf.nope')).toBe(false);
      expect(d.checkArgs(CONF.echo, { text: 'a', n: 0 })).toBeUndefined();
      expect(d.checkArgs(CONF.echo, { text: 'a', n: -1 })).toMatch(/^args for conf\.echo fail its schema at n: /);
      expect(d.checkArgs(CONF.echo, { n: 1 })).toMatch(/^args for conf\.echo fail its schema at text: /);
      expect(d.checkArgs('conf.nope', {})).toBe('unknown actuator "conf.nope"');
      // Certification never runs anything.
      expect(rig.calls()).toEqual([]);
    });

    test('a compensate job runs the actuator’s compensate with the completed result; one without a compensate is permanent (actuator.no_compensation)', async () => {
      const run = newJob(CONF.echo, { text: 'booked', n: 1 });
      const done = await rig.dispatcher.dispatch(run);
      expect(done.ok).toBe(true);
      const result = (done as { result: unknown }).result;
      const undo: Job = { ...run, op: 'compensate', key: `${run.key}.undo`, result };
      expect(await rig.dispatcher.dispatch(undo)).toEqual(ran({ ok: true, result: { undone: 'booked' } }));
      expect(callsOf(undo)).toEqual([expectedCall(undo, { result })]);
      const cannot = newJob(CONF.flaky, {}, { op: 'compensate', result: { key: 'x', attempt: 2 } });
      expect(await rig.dispatcher.dispatch(cannot)).toEqual(failure('permanent', 'actuator.no_compensation', CONF.flaky));
      expect(callsOf(cannot)).toEqual([]);
    });

    test('a shadow job runs the actuator’s shadow (never run), its result checked like run’s; one without a shadow is permanent (actuator.no_shadow) and nothing runs', async () => {
      const d = rig.dispatcher;
      expect(d.canShadow?.(CONF.echo)).toBe(true);
      expect(d.canShadow?.(CONF.flaky)).toBe(false);
      expect(d.canShadow?.('conf.nope')).toBe(false);
      const shadow = newJob(CONF.echo, { text: 'booked', n: 2 }, { op: 'shadow' });
      expect(await d.dispatch(shadow)).toEqual(ran({ ok: true, result: { echoed: 'would echo booked', n: 2, key: shadow.key, attempt: 1 } }));
      expect(callsOf(shadow)).toEqual([expectedCall(shadow)]);
      const bad = newJob(CONF.echo, { text: 'booked', n: -1 }, { op: 'shadow' });
      expect(await d.dispatch(bad)).toEqual(failure('policy', 'actuator.bad_args', CONF.echo));
      const cannot = newJob(CONF.flaky, {}, { op: 'shadow' });
      expect(await d.dispatch(cannot)).toEqual(failure('permanent', 'actuator.no_shadow', CONF.flaky));
      expect(callsOf(cannot)).toEqual([]);
      expect(callsOf(bad)).toEqual([]);
    });

    test('close() can be called twice; a process that dispatched and closed exits by itself (nothing is left open)', async () => {
      await rig.dispatcher.close();
      await rig.dispatcher.close();
      const r = await harness.closeCheck();
      expect(r.timedOut, `the process did not exit by itself after close() (${r.elapsedMs} ms); stderr:\n${r.stderr}`).toBe(false);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('closed');
      expect(JSON.parse(r.stdout.trim())).toEqual({ ok: true, result: { echoed: 'bye', n: 1, key: expect.stringMatching(/^close-check-\d+\.1\.0$/), attempt: 1 }, worker: expect.any(String) });
    });
  });
}

/** For tests that expect a dispatch to throw rather than answer. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    const value = await promise;
    throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
  } catch (err) {
    if (!isWeftError(err) && err instanceof Error && err.message.startsWith('expected a rejection')) throw err;
    return err;
  }
}
