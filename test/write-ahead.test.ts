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
import { FencedError } from '../journal/errors.js';
import type { JournalRecord } from '../journal/records.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { MemoryStore } from '../stores/memory.js';
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
function rig(ledger: Ledger, extra: Partial<RuntimeOptions> & { store?: MemoryStore } = {}) {
  const store = extra.store ?? new MemoryStore();
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

/** A MemoryStore that refuses, once, the append carrying a record of `kind` (by default: "the store is down"). */
function refusingOnce(kind: string, refusal: (lease: { invocation: string; token: number }) => Error = () => new Error('the store is down')): MemoryStore {
  const store = new MemoryStore();
  const append = store.append.bind(store);
  let refuse = 1;
  store.append = async (...args: Parameters<MemoryStore['append']>) => {
    if (args[2].some((r) => r.kind === kind) && refuse-- > 0) throw refusal(args[0]);
    return append(...args);
  };
  return store;
}

describe('when the store fails around a rest', () => {
  const tellIntent = 'Tell Alice the report is ready';
  const tellStart = { tenant: 't1', seed: 1, asOf: '2026-12-01T09:00:00Z' };
  const tell = (store: MemoryStore, ledger: Ledger, extra: Partial<RuntimeOptions> = {}, entries?: object[]) =>
    createRuntime({
      store,
      libraries: [notifyLibrary],
      actuators: notifyActuators(ledger),
      observe: 'world.observe',
      model: new ScriptedModel({
        model: 'notify',
        entries: entries ?? [
          { match: { intent: tellIntent, epoch: 1 }, reply: { goal: { task: 'notify', args: ['alice'] } } },
          { match: { intent: tellIntent, epoch: 2 }, reply: { done: true, summary: 'Alice was told' } },
        ],
      }),
      signingKey: key,
      sleep: async () => undefined,
      ...extra,
    });

  test('the seal cannot be written: the run is suspended, never reported completed with a fingerprint; resumed, it seals to the reference', async () => {
    const reference = await (await tell(new MemoryStore(), newLedger()).start(tellIntent, tellStart)).done;
    const store = refusingOnce('invocation.sealed');
    const ledger = newLedger();
    const handle = await tell(store, ledger).start(tellIntent, tellStart);
    const result = await handle.done;
    expect(result.status).toBe('suspended');
    expect(result.suspension).toMatchObject({ class: 'runtime' });
    expect(result.fingerprint).toBeUndefined();
    expect(result.reason).toMatch(/the store is down/);
    expect((await store.read(handle.id)).some((r) => r.kind === 'invocation.sealed')).toBe(false);
    expect((await tell(store, ledger).list())[0]).toMatchObject({ id: handle.id, status: 'suspended' });

    const resumed = await (await tell(store, ledger).resume(handle.id)).done;
    expect(resumed.status).toBe('completed');
    expect(resumed.fingerprint).toBe(reference.fingerprint);
  });

  test('the records a rest stands on cannot be written: the run is suspended (journal.unsaved), not reported resting; resumed, it rests for real', async () => {
    const store = refusingOnce('approval.requested');
    const ledger = newLedger();
    const policy = spendApprovalPolicy({ version: '1', limit: 5, amountArg: 'amount' });
    const first = rig(ledger, { policy, store });
    const handle = first.track(await first.runtime.start(intent, start));
    const result = await handle.done;
    expect(result.status).toBe('suspended');
    expect(result.suspension).toMatchObject({ class: 'runtime', code: 'journal.unsaved' });
    expect(result.reason).toMatch(/the journal could not be saved \(the store is down\)/);
    expect((await store.read(handle.id)).some((r) => r.kind === 'approval.requested')).toBe(false);
    expect((await first.runtime.list())[0]).toMatchObject({ id: handle.id, status: 'suspended' });

    const resumed = await (await first.runtime.resume(handle.id)).done;
    expect(resumed.status).toBe('awaiting_approval');
    expect((await store.read(handle.id)).at(-1)!.kind).toBe('approval.requested');
  });

  test('a writer whose lease was taken over at the rest says so (journal.fenced) and leaves the status note to the new holder', async () => {
    const store = refusingOnce('approval.requested', (lease) => new FencedError(lease.invocation, lease.token, lease.token + 1));
    const policy = spendApprovalPolicy({ version: '1', limit: 5, amountArg: 'amount' });
    const first = rig(newLedger(), { policy, store });
    const handle = first.track(await first.runtime.start(intent, start));
    const result = await handle.done;
    expect(result.status).toBe('suspended');
    expect(result.suspension).toMatchObject({ class: 'runtime', code: 'journal.fenced' });
    expect(result.reason).toMatch(/another runtime took this invocation over/);
    expect(await store.getStatus(handle.id)).toBeUndefined();
  });

  test('a snapshot that cannot be saved at a boundary does not keep a later rest from making everything durable', async () => {
    class SnapshotOnceRefused extends MemoryStore {
      refuse = 1;
      override async putSnapshot(...args: Parameters<MemoryStore['putSnapshot']>) {
        if (this.refuse-- > 0) throw new Error('snapshot hiccup');
        return super.putSnapshot(...args);
      }
    }
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    try {
      const store = new SnapshotOnceRefused();
      // Epoch 2 has no method (bob is not reachable): the model authors a fragment, whose world effect needs approval.
      const entries = [
        { match: { intent: tellIntent, epoch: 1, purpose: 'parse' }, reply: { goal: { task: 'notify', args: ['alice'] } } },
        { match: { intent: tellIntent, epoch: 2, purpose: 'parse' }, reply: { goal: { task: 'notify', args: ['bob'] } } },
        { match: { intent: tellIntent, epoch: 2, purpose: 'author' }, reply: { steps: [{ operator: 'send', args: ['bob'] }] } },
        { match: { intent: tellIntent, epoch: 2, purpose: 'author', feedback: 'does not apply' }, reply: { steps: [{ operator: 'charge', args: ['bob'] }] } },
      ];
      const chained = new Map<string, number>();
      const handle = await tell(store, newLedger(), {}, entries).start(tellIntent, tellStart);
      handle.on('record', (record: JournalRecord) => chained.set(handle.id, record.seq + 1));
      const result = await handle.done;
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(result.status).toBe('awaiting_approval');
      const durable = await store.read(handle.id);
      expect(durable.length).toBe(chained.get(handle.id));
      expect(durable.at(-1)!.kind).toBe('approval.requested');
      expect((await store.getSnapshot(handle.id))!.seq).toBe(durable.length);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  test('approve on a run that has ended is refused, even when its last snapshot was taken awaiting approval', async () => {
    const store = new MemoryStore();
    const entries = [
      { match: { intent: tellIntent, epoch: 1, purpose: 'parse' }, reply: { goal: { task: 'notify', args: ['bob'] } } },
      { match: { intent: tellIntent, epoch: 1, purpose: 'author' }, reply: { steps: [{ operator: 'send', args: ['bob'] }] } },
      { match: { intent: tellIntent, epoch: 1, purpose: 'author', feedback: 'does not apply' }, reply: { steps: [{ operator: 'charge', args: ['bob'] }] } },
    ];
    const runtime = tell(store, newLedger(), { limits: { maxEpochs: 1 } }, entries);
    const handle = await runtime.start(tellIntent, tellStart);
    expect((await handle.done).status).toBe('awaiting_approval');
    const ended = await (await runtime.approve(handle.id, { decision: 'approved', by: 'ops' })).done;
    expect(['completed', 'failed', 'handed_off']).toContain(ended.status);
    expect(((await store.getSnapshot(handle.id))!.data as { value: string }).value).toBe('awaitingApproval');
    await expect(runtime.approve(handle.id, { decision: 'rejected', by: 'eve' }, { run: false })).rejects.toThrow(/not awaiting approval: it has ended/);
    expect(await store.peekInbox(handle.id)).toBeUndefined();
  });
});
