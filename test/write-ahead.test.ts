/**
 * Invariant 1 (write-ahead), checked at the moment of every call out of the process: when the
 * model is asked or an actuator applies (or undoes) an effect, every record the run has chained so
 * far is durable in the store — its own request or dispatch record last. Records that announce no
 * call (completions, observations, plans, admissions) may wait to travel with the next write-ahead
 * record (runtime/recorder.ts), so nothing outside ever acts on a record a crash could lose. When a
 * run rests (awaiting approval, hibernated, ended), everything it chained is durable too.
 *
 * Observations are read-only and the one exception: they may run while the epoch's earlier
 * completions are still staged (a crash re-asks and re-observes; nothing outside has acted).
 */
import { describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import type { Actuator } from '../actors/actuator.js';
import type { Model, ModelRequest } from '../actors/model/model.js';
import { ScriptedModel } from '../actors/model/scripted.js';
import type { JournalRecord } from '../journal/records.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { MemoryStore } from '../journal/stores/memory.js';
import { spendApprovalPolicy } from '../machines/policy.js';
import { createRuntime, type InvocationHandle, type RuntimeOptions } from '../runtime/index.js';
import { newLedger, notifyActuators, notifyLibrary, type Ledger } from './support/notify-app.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(3));
const intent = 'Charge Alice and tell her';
const transcript = {
  model: 'notify',
  entries: [
    { match: { intent, epoch: 1 }, reply: { goal: { task: 'charge_and_notify', args: ['alice'] } } },
    { match: { intent, epoch: 2 }, reply: { goal: { task: 'notify', args: ['alice'] } } },
    { match: { intent, epoch: 3 }, reply: { done: true, summary: 'charged and told' } },
  ],
};
const start = { tenant: 't1', seed: 11, asOf: '2026-12-01T09:00:00Z' };

interface CallCheck {
  call: string;
  /** Records the run had chained when the call was made. */
  chained: number;
  /** Records durable in the store at that moment. */
  durable: number;
  /** The kind of the last durable record. */
  last: string | undefined;
}

/** A runtime whose model and actuators note, at each call, how much of the journal is durable. */
function rig(ledger: Ledger, extra: Partial<RuntimeOptions> = {}) {
  const store = new MemoryStore();
  const appends = { count: 0 };
  const append = store.append.bind(store);
  store.append = (...args: Parameters<MemoryStore['append']>) => (appends.count++, append(...args));
  const checks: CallCheck[] = [];
  const chained = new Map<string, number>();
  let current: string | undefined;
  const look = async (invocation: string, call: string) => {
    const records = await store.read(invocation);
    checks.push({ call, chained: chained.get(invocation) ?? 0, durable: records.length, last: records.at(-1)?.kind });
  };
  const scripted = new ScriptedModel(transcript);
  const model: Model = {
    id: scripted.id,
    params: scripted.params,
    complete: async (request: ModelRequest) => {
      await look(current!, 'model');
      return scripted.complete(request);
    },
  };
  const actuators: Actuator[] = notifyActuators(ledger).map((a) =>
    a.readOnly
      ? a
      : {
          ...a,
          run: async (args: never, ctx: never) => (await look((ctx as { invocation: string }).invocation, `run ${a.name}`), a.run(args, ctx)),
          compensate: async (args: never, result: never, ctx: never) => (await look((ctx as { invocation: string }).invocation, `undo ${a.name}`), a.compensate!(args, result, ctx)),
        },
  );
  const runtime = createRuntime({ store, libraries: [notifyLibrary], actuators, observe: 'world.observe', model, signingKey: key, sleep: async () => undefined, ...extra });
  const track = (handle: InvocationHandle) => {
    current = handle.id;
    handle.on('record', (record: JournalRecord) => chained.set(handle.id, record.seq + 1));
    return handle;
  };
  return { store, appends, runtime, checks, track, chainedOf: (id: string) => chained.get(id) ?? 0 };
}

function expectEveryCallWrittenAhead(checks: CallCheck[]): void {
  expect(checks.length).toBeGreaterThan(2);
  for (const c of checks) {
    expect(c.durable, `${c.call}: ${c.chained} records chained, ${c.durable} durable`).toBe(c.chained);
    const own = c.call === 'model' ? 'model.requested' : c.call.startsWith('undo') ? 'compensation.dispatched' : 'step.dispatched';
    expect(c.last, `${c.call}: its own record is the last durable one`).toBe(own);
  }
}

describe('write-ahead at every call out', () => {
  test('a run with a failed step: every model call, effect and compensation finds the journal durable up to its own record', async () => {
    const ledger = newLedger();
    ledger.failures['msg.send'] = { class: 'permanent', times: 1 };
    const { store, appends, runtime, checks, track } = rig(ledger);
    const handle = track(await runtime.start(intent, start));
    const result = await handle.done;
    expect(result.status).toBe('completed');
    expect(checks.map((c) => c.call)).toEqual(expect.arrayContaining(['model', 'run card.charge', 'run msg.send', 'undo card.charge']));
    expectEveryCallWrittenAhead(checks);
    const records = await store.read(handle.id);
    expect(records.at(-1)!.kind).toBe('invocation.sealed');
    expect(result.records).toBe(records.length);
    // Fewer durable writes than records (staging is in effect, so the checks above are not vacuous),
    // and no fewer than the calls that needed one.
    expect(appends.count).toBeLessThan(records.length);
    expect(appends.count).toBeGreaterThanOrEqual(checks.length);
  });

  test('a run that rests awaiting approval has everything it chained durable, and so does the run that finishes it', async () => {
    const ledger = newLedger();
    const policy = spendApprovalPolicy({ version: '1', limit: 5, amountArg: 'amount' });
    const first = rig(ledger, { policy });
    const handle = first.track(await first.runtime.start(intent, start));
    const paused = await handle.done;
    expect(paused.status).toBe('awaiting_approval');
    const durable = await first.store.read(handle.id);
    expect(durable.length).toBe(first.chainedOf(handle.id));
    expect(durable.at(-1)!.kind).toBe('approval.requested');
    expect((await first.store.getSnapshot(handle.id))!.seq).toBe(durable.length);

    const resumed = first.track(await first.runtime.approve(handle.id, { decision: 'approved', by: 'ana@example.com' }));
    expect((await resumed.done).status).toBe('completed');
    expectEveryCallWrittenAhead(first.checks);
  });
});
