/**
 * Deadlines and step time-outs (issue 23, "Cancel and deadlines"): both pinned, both journal inputs.
 *
 * - A run hibernated past its pinned deadline is ended by `serve`: `deadline.passed` (when serve's
 *   runtime saw it), then `invocation.failed` (policy, `invocation.deadline_passed`), sealed; the
 *   effects of its closed epoch stay.
 * - A deadline that passes between two steps: recorded before the next step, the epoch's completed
 *   effect compensated, the run failed.
 * - A step slower than the pinned step time-out is a transient `step.timed_out` failure, retried
 *   under the same key; a run without a time-out pins none.
 *
 * Each journal replays to the same fingerprint (replay reads the records, never a clock) and verifies.
 */
import { describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import type { Actuator } from '../actors/actuator.js';
import { ScriptedModel } from '../actors/model/scripted.js';
import type { JournalRecord } from '../journal/records.js';
import { publicKeyOf, signingKeyFromSecret } from '../journal/seal.js';
import { MemoryStore } from '../stores/memory.js';
import { createRuntime } from '../runtime/index.js';
import { servable, type ServeEvent } from '../runtime/serve.js';
import { newLedger, notifyActuators, notifyLibrary } from './support/notify-app.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(31));
const intent = 'Charge Alice and tell her';
const T0 = Date.parse('2026-12-01T09:00:00Z');
const DEADLINE = '2026-12-01T10:00:00.000Z';
type Body = Record<string, any>;
const label = (r: JournalRecord) => `${(r.body as Body).step === undefined ? r.kind : `${r.kind}#${(r.body as Body).step}`}@${r.epoch}`;

function setup(clock: { now: number }, wrap: (actuators: Actuator[]) => Actuator[] = (a) => a) {
  const store = new MemoryStore();
  const ledger = newLedger();
  const model = new ScriptedModel({
    model: 'deadline',
    entries: [
      { match: { intent, epoch: 1 }, reply: { goal: { task: 'charge_and_notify', args: ['alice'] } } },
      { match: { intent, epoch: 2 }, reply: { done: true, summary: 'charged and told' } },
    ],
  });
  const runtime = createRuntime({ store, libraries: [notifyLibrary], actuators: wrap(notifyActuators(ledger)), observe: 'world.observe', model, signingKey: key, now: () => new Date(clock.now), sleep: async () => undefined });
  return { store, ledger, runtime };
}

async function expectReplaysAndVerifies(runtime: ReturnType<typeof createRuntime>, id: string, status: string, fingerprint: string | undefined) {
  expect(fingerprint).toBeDefined();
  expect(await runtime.replay(id)).toMatchObject({ status, sealed: true, fingerprint });
  expect((await runtime.verify(id, publicKeyOf(key))).ok).toBe(true);
}

describe('deadlines', () => {
  test('a run hibernated past its deadline is ended by serve: deadline.passed, then failed (policy), sealed', async () => {
    const clock = { now: T0 };
    const { store, ledger, runtime } = setup(clock);
    const handle = await runtime.start(intent, { tenant: 't', seed: 1, asOf: '2026-12-01T09:00:00Z', deadline: DEADLINE });
    handle.hibernate();
    expect((await handle.done).status).toBe('hibernated');
    const pinned = (await store.read(handle.id, 0, 1))[0] as JournalRecord<'invocation.pinned'>;
    expect(pinned.body.pin.deadline).toBe(DEADLINE);
    const before = await store.read(handle.id);
    expect(Object.values(ledger.applied)).toEqual([{ charged: 'alice', amount: 10 }, { sent: 'alice' }]);

    // Before the deadline, serve leaves it asleep; past it, serve ends it.
    const [row] = await runtime.listOpen();
    expect(row).toMatchObject({ id: handle.id, status: 'hibernated', deadline: DEADLINE });
    expect(servable(row!, clock.now)).toBeUndefined();
    clock.now = Date.parse('2026-12-01T11:30:00Z');
    expect(servable(row!, clock.now)).toBe('deadline');
    const events: ServeEvent[] = [];
    const stop = new AbortController();
    const serving = runtime.serve({ signal: stop.signal, pollMs: 10, now: () => clock.now, onEvent: (e) => events.push(e) });
    try {
      const end = Date.now() + 60_000;
      while ((await store.tail(handle.id))?.kind !== 'invocation.sealed') {
        if (Date.now() > end) throw new Error('serve did not end the invocation');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      stop.abort();
      await serving;
    }
    expect(events).toContainEqual(expect.objectContaining({ kind: 'resuming', id: handle.id, why: 'deadline' }));
    const records = await store.read(handle.id);
    expect(records.slice(before.length).map(label)).toEqual(['deadline.passed@2', 'invocation.failed@2', 'invocation.sealed@2']);
    expect(records[before.length]!.body).toEqual({ deadline: DEADLINE, at: '2026-12-01T11:30:00.000Z' });
    expect(records.find((r) => r.kind === 'invocation.failed')!.body).toMatchObject({ code: 'invocation.deadline_passed', class: 'policy' });
    // The closed epoch's effects stay; nothing ran after the deadline.
    expect(ledger.undone).toEqual([]);
    expect(Object.values(ledger.applied)).toEqual([{ charged: 'alice', amount: 10 }, { sent: 'alice' }]);
    expect((await runtime.list())[0]!.status).toBe('failed');
    await expectReplaysAndVerifies(runtime, handle.id, 'failed', records.at(-1)!.prev);
  });

  test('a deadline passing between two steps: recorded before the next, the epoch compensated, the run failed', async () => {
    const clock = { now: T0 };
    // The charge takes two hours on the runtime's clock.
    const { store, ledger, runtime } = setup(clock, (actuators) =>
      actuators.map((a) => (a.name !== 'card.charge' ? a : { ...a, run: async (args, ctx) => ((clock.now += 2 * 3_600_000), a.run.call(a, args, ctx)) })),
    );
    const result = await (await runtime.start(intent, { tenant: 't', seed: 1, asOf: '2026-12-01T09:00:00Z', deadline: DEADLINE })).done;
    expect(result.status).toBe('failed');
    expect(result.reason).toMatch(/deadline 2026-12-01T10:00:00.000Z passed/);
    const records = await store.read(result.id);
    const from = records.findIndex((r) => r.kind === 'step.completed');
    expect(records.slice(from).map(label)).toEqual([
      'step.completed#0@1',
      'deadline.passed@1',
      'compensation.dispatched#0@1',
      'compensation.completed#0@1',
      'invocation.failed@1',
      'invocation.sealed@1',
    ]);
    expect(records.find((r) => r.kind === 'invocation.failed')!.body).toMatchObject({ code: 'invocation.deadline_passed', class: 'policy' });
    // The charge was undone and the message never sent.
    const chargeKey = Object.keys(ledger.applied)[0]!;
    expect(ledger.undone).toEqual([`${chargeKey}.undo`]);
    expect(Object.values(ledger.applied)).toEqual([{ charged: 'alice', amount: 10 }]);
    await expectReplaysAndVerifies(runtime, result.id, 'failed', result.fingerprint);
  });
});

describe('step time-outs', () => {
  test('an attempt slower than the pinned time-out is a transient step.timed_out, retried under the same key', async () => {
    const clock = { now: T0 };
    let calls = 0;
    // The first charge never answers; the second does at once.
    const { store, ledger, runtime } = setup(clock, (actuators) =>
      actuators.map((a) => (a.name !== 'card.charge' ? a : { ...a, run: (args, ctx) => (++calls === 1 ? new Promise<never>(() => undefined) : a.run.call(a, args, ctx)) })),
    );
    const result = await (await runtime.start(intent, { tenant: 't', seed: 1, asOf: '2026-12-01T09:00:00Z', stepTimeoutMs: 200 })).done;
    expect(result.status).toBe('completed');
    const records = await store.read(result.id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.limits).toMatchObject({ stepTimeoutMs: 200 });
    const charge = records.filter((r) => r.epoch === 1 && (r.body as Body).step === 0 && r.kind.startsWith('step.'));
    expect(charge.map((r) => `${r.kind}:${(r.body as Body).attempt}`)).toEqual(['step.dispatched:1', 'step.failed:1', 'step.dispatched:2', 'step.completed:2']);
    expect(charge[1]!.body).toMatchObject({ class: 'transient', code: 'step.timed_out' });
    expect(new Set(charge.map((r) => (r.body as Body).key)).size).toBe(1);
    expect(Object.values(ledger.applied)).toEqual([{ charged: 'alice', amount: 10 }, { sent: 'alice' }]);
    await expectReplaysAndVerifies(runtime, result.id, 'completed', result.fingerprint);

    // A run without a time-out pins none (and so pins what it pinned before).
    const other = setup(clock);
    const plain = await (await other.runtime.start(intent, { tenant: 't', seed: 2, asOf: '2026-12-01T09:00:00Z' })).done;
    expect(plain.status).toBe('completed');
    const pin = ((await other.store.read(plain.id, 0, 1))[0] as JournalRecord<'invocation.pinned'>).body.pin;
    expect(pin.limits).not.toHaveProperty('stepTimeoutMs');
    expect(pin).not.toHaveProperty('deadline');
  });
});
