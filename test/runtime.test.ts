/**
 * The runtime end to end on the memory store with the in-process dispatcher: an invocation runs
 * epochs from scripted replies, seals, and replays to the same fingerprint; a rejected reply is
 * recorded and re-prompted; a failed step compensates, truncates and re-plans.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { LibraryBuilder, atom } from '../htn/library/builder.js';
import '../journal/sha256-node.js';
import { ScriptedModel } from '../actors/model/scripted.js';
import { MemoryStore } from '../stores/memory.js';
import { signingKeyFromSecret, publicKeyOf } from '../journal/seal.js';
import { createRuntime } from '../runtime/index.js';
import { newLedger, notifyActuators, notifyLibrary } from './support/notify-app.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(3));
const intent = 'Tell Alice the report is ready';

function setup(entries: unknown[], ledger = newLedger()) {
  const store = new MemoryStore();
  const model = new ScriptedModel({ model: 'notify', entries });
  const runtime = createRuntime({ store, libraries: [notifyLibrary], actuators: notifyActuators(ledger), observe: 'world.observe', model, signingKey: key, sleep: async () => undefined });
  return { store, model, runtime, ledger };
}

const happy = [
  { match: { intent, epoch: 1 }, reply: { goal: { task: 'notify', args: ['alice'] } } },
  { match: { intent, epoch: 2 }, reply: { done: true, summary: 'Alice was told' } },
];

describe('runtime', () => {
  test('runs epochs to completion, seals, verifies, and replays to the same fingerprint', async () => {
    const { runtime, store, ledger } = setup(happy);
    const handle = await runtime.start(intent, { tenant: 't1', seed: 1, asOf: '2026-12-01T09:00:00Z' });
    const result = await handle.done;
    expect(result.status).toBe('completed');
    expect(result.summary).toBe('Alice was told');
    expect(Object.keys(ledger.applied)).toEqual([`${handle.id}.1.0`]);
    const records = await store.read(handle.id);
    expect(records.map((r) => r.kind)).toEqual([
      'invocation.pinned',
      'model.requested', 'model.completed', 'state.observed', 'epoch.derived', 'admission.decided', 'epoch.certified',
      // The step's own admission at dispatch (flag 9), then its dispatch.
      'admission.decided', 'step.dispatched', 'step.completed', 'epoch.closed',
      'model.requested', 'model.completed', 'invocation.completed', 'invocation.sealed',
    ]);
    expect(records.filter((r) => r.kind === 'admission.decided').map((r) => (r.body as { subject: string }).subject)).toEqual(['epoch', 'step']);
    const report = await runtime.verify(handle.id, publicKeyOf(key));
    expect(report.ok).toBe(true);
    expect(report.fingerprint).toBe(result.fingerprint);
    const replay = await runtime.replay(handle.id);
    expect(replay).toMatchObject({ status: 'completed', sealed: true, fingerprint: result.fingerprint, records: records.length });
  });

  test('a malformed reply is recorded as rejected and re-prompted with the reason', async () => {
    const { runtime, store, model } = setup([
      { match: { intent, epoch: 1 }, reply: { text: 'alice, I guess' } },
      { match: { intent, epoch: 1, feedback: 'not valid JSON' }, reply: { goal: { task: 'notify', args: ['alice'] } } },
      { match: { intent, epoch: 2 }, reply: { done: true, summary: 'done' } },
    ]);
    const handle = await runtime.start(intent, { tenant: 't1', seed: 1, asOf: '2026-12-01T09:00:00Z' });
    expect((await handle.done).status).toBe('completed');
    const rejected = (await store.read(handle.id)).filter((r) => r.kind === 'model.rejected');
    expect(rejected).toHaveLength(1);
    expect((rejected[0]!.body as { reason: string }).reason).toMatch(/not valid JSON/);
    expect(model.requests[1]!.feedback).toMatch(/not valid JSON/);
    expect((await runtime.replay(handle.id)).status).toBe('completed');
  });

  test('an unknown task is rejected, never planned, and hands off after the re-prompts run out', async () => {
    const teleport = { goal: { task: 'teleport', args: ['alice'] } };
    const { runtime, store, ledger } = setup([
      { match: { intent, epoch: 1 }, reply: teleport },
      { match: { intent, epoch: 1, feedback: 'unknown task' }, reply: teleport },
    ]);
    const handle = await runtime.start(intent, { tenant: 't1', seed: 1, asOf: '2026-12-01T09:00:00Z' });
    const result = await handle.done;
    expect(result.status).toBe('handed_off');
    expect(result.reason).toMatch(/unknown task "teleport"/);
    const kinds = (await store.read(handle.id)).map((r) => r.kind);
    expect(kinds.filter((k) => k === 'model.rejected')).toHaveLength(3);
    expect(kinds).not.toContain('step.dispatched');
    expect(ledger.attempts).toEqual({});
  });

  test('a permanent step failure compensates in reverse, truncates and re-plans', async () => {
    const ledger = newLedger();
    ledger.failures['msg.send'] = { class: 'permanent', times: 1 };
    const { runtime, store } = setup(
      [
        { match: { intent, epoch: 1 }, reply: { goal: { task: 'charge_and_notify', args: ['alice'] } } },
        { match: { intent, epoch: 2 }, reply: { done: true, summary: 'gave up on the message' } },
      ],
      ledger,
    );
    const handle = await runtime.start(intent, { tenant: 't1', seed: 1, asOf: '2026-12-01T09:00:00Z' });
    expect((await handle.done).status).toBe('completed');
    const kinds = (await store.read(handle.id)).map((r) => r.kind);
    expect(kinds).toContain('compensation.dispatched');
    expect(kinds).toContain('frontier.truncated');
    expect(ledger.undone).toEqual([`${handle.id}.1.0.undo`]);
    expect((await runtime.replay(handle.id)).status).toBe('completed');
  });

  test('a transient failure is retried with the same idempotency key and a new attempt number', async () => {
    const ledger = newLedger();
    ledger.failures['msg.send'] = { class: 'transient', times: 1 };
    const { runtime, store } = setup(happy, ledger);
    const handle = await runtime.start(intent, { tenant: 't1', seed: 1, asOf: '2026-12-01T09:00:00Z' });
    expect((await handle.done).status).toBe('completed');
    const dispatched = (await store.read(handle.id)).filter((r) => r.kind === 'step.dispatched').map((r) => r.body as { key: string; attempt: number });
    expect(dispatched).toEqual([
      expect.objectContaining({ key: `${handle.id}.1.0`, attempt: 1 }),
      expect.objectContaining({ key: `${handle.id}.1.0`, attempt: 2 }),
    ]);
    expect(ledger.attempts[`${handle.id}.1.0`]).toBe(2);
  });

  test('the gap path: no method covers the goal, the model authors a fragment, the engine certifies it, a person approves its effects', async () => {
    const { runtime, store, model, ledger } = setup([
      { match: { intent, epoch: 1, purpose: 'parse' }, reply: { goal: { task: 'notify', args: ['bob'] } } },
      { match: { intent, epoch: 1, purpose: 'author' }, reply: { steps: [{ operator: 'send', args: ['bob'] }] } },
      { match: { intent, epoch: 1, purpose: 'author', feedback: 'does not apply' }, reply: { steps: [{ operator: 'charge', args: ['bob'] }] } },
      { match: { intent, epoch: 2 }, reply: { done: true, summary: 'charged bob instead' } },
    ]);
    const handle = await runtime.start(intent, { tenant: 't1', seed: 1, asOf: '2026-12-01T09:00:00Z' });
    // An authored world effect is never admitted by the fragment's certification alone.
    expect((await handle.done).status).toBe('awaiting_approval');
    expect(Object.values(ledger.applied)).toEqual([]);
    expect((await (await runtime.approve(handle.id, { decision: 'approved', by: 'ops' })).done).status).toBe('completed');
    const records = await store.read(handle.id);
    const admissions = records.filter((r) => r.kind === 'admission.decided').map((r) => r.body);
    expect(admissions).toEqual([
      { subject: 'authoring', decision: 'allow', policy: 'allow-all@1' },
      expect.objectContaining({ subject: 'epoch', decision: 'require_approval', reason: expect.stringMatching(/model authored this fragment/) }),
      { subject: 'step', step: 0, decision: 'allow', policy: 'allow-all@1' },
    ]);
    const authorRequests = records.filter((r) => r.kind === 'model.requested' && (r.body as { purpose: string }).purpose === 'author');
    expect(authorRequests).toHaveLength(2);
    expect(JSON.stringify(authorRequests[0]!.body)).toMatch(/no method covers notify\(bob\)/);
    const rejected = records.find((r) => r.kind === 'model.rejected')!;
    expect((rejected.body as { reason: string }).reason).toMatch(/the fragment does not apply in the observed state.*reachable/);
    const derived = records.find((r) => r.kind === 'epoch.derived')!;
    expect(derived.body).toMatchObject({ source: 'authored', goal: { task: 'notify', args: ['bob'] }, steps: 1 });
    expect(Object.values(ledger.applied)).toEqual([{ charged: 'bob', amount: 10 }]);
    expect(model.requests.map((r) => r.purpose)).toEqual(['parse', 'author', 'author', 'parse']);
    expect((await runtime.replay(handle.id)).status).toBe('completed');
  });

  test('starting the same intent, tenant, seed and asOf again attaches to the invocation instead of re-running it', async () => {
    const { runtime, ledger } = setup(happy);
    const opts = { tenant: 't1', seed: 1, asOf: '2026-12-01T09:00:00Z' };
    const first = await (await runtime.start(intent, opts)).done;
    const again = await runtime.start(intent, opts);
    expect(again.id).toBe(first.id);
    expect((await again.done).status).toBe('completed');
    expect(Object.keys(ledger.attempts)).toHaveLength(1);
    await expect(runtime.start('Tell Bob', { ...opts, id: first.id })).rejects.toThrow(/already exists with a different intent or pin/);
  });
});


describe('fail closed (invariant 5)', () => {
  /** The notify library with one more operator whose binding is wrong in the way `kind` says. */
  async function deniedRun(kind: 'unknown-actuator' | 'bad-args') {
    const library = new LibraryBuilder('notify-broken')
      .type('person')
      .predicate('reachable', { '?p': 'person' })
      .task('notify', { '?p': 'person' })
      .operator('send', {
        params: { '?p': 'person' },
        precondition: atom('reachable', '?p'),
        actuator: kind === 'unknown-actuator' ? { actuator: 'pager.send', args: { to: '?p' } } : { actuator: 'msg.send', args: { to: '?p', urgent: 'yes-please' } },
      })
      .method('notify-direct', { task: ['notify', '?p'], params: { '?p': 'person' }, subtasks: [['send', '?p']] })
      .build();
    const ledger = newLedger();
    const actuators = notifyActuators(ledger).map((a) =>
      a.name === 'msg.send' ? { ...a, argsSchema: z.strictObject({ to: z.string() }) } : a,
    );
    const store = new MemoryStore();
    const model = new ScriptedModel({
      model: 'notify',
      entries: [
        { match: { intent, epoch: 1 }, reply: { goal: { task: 'notify', args: ['alice'] } } },
        { match: { intent, epoch: 2 }, reply: { done: true, summary: 'could not notify' } },
      ],
    });
    const runtime = createRuntime({ store, libraries: [library], actuators, observe: 'world.observe', model, signingKey: key, sleep: async () => undefined });
    const handle = await runtime.start(intent, { tenant: 't1', seed: 1, asOf: '2026-12-01T09:00:00Z' });
    const result = await handle.done;
    return { result, records: await store.read(handle.id), ledger, runtime, id: handle.id };
  }

  test.each([
    ['unknown-actuator', /names the unknown actuator pager\.send/],
    ['bad-args', /args for msg\.send fail its schema/],
  ] as const)('%s: the epoch is denied with the reason, recorded, and nothing is dispatched', async (kind, reason) => {
    const { result, records, ledger, runtime, id } = await deniedRun(kind);
    expect(result.status).toBe('completed');
    const admission = records.find((r) => r.kind === 'admission.decided')!;
    expect(admission.body).toMatchObject({ subject: 'epoch', decision: 'deny' });
    expect((admission.body as { reason: string }).reason).toMatch(reason);
    expect(records.map((r) => r.kind)).not.toContain('step.dispatched');
    expect(records.find((r) => r.kind === 'epoch.closed')!.body).toMatchObject({ outcome: 'denied' });
    expect(ledger.attempts).toEqual({});
    expect((await runtime.replay(id)).status).toBe('completed');
  });
});
