/**
 * Hibernation images: a snapshot taken mid-epoch (a step in flight) survives JSON.stringify /
 * JSON.parse and resumes to the same journal as an uninterrupted run; an approval hibernates the
 * run, and a new runtime over the same file store records the decision and finishes; a
 * hibernation requested mid-run stops at the next boundary and resumes from there.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import type { Actuator } from '../actors/actuator.js';
import { ScriptedModel } from '../actors/model/scripted.js';
import { canonicalize } from '../journal/canonical.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { MemoryStore } from '../stores/memory.js';
import type { JournalStore } from '../journal/store.js';
import { spendApprovalPolicy } from '../machines/policy.js';
import { createRuntime, type RuntimeOptions } from '../runtime/index.js';
import { newLedger, notifyActuators, notifyLibrary, type Ledger } from './support/notify-app.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(5));
const intent = 'Charge Alice and tell her';
const transcript = {
  model: 'notify',
  entries: [
    { match: { intent, epoch: 1 }, reply: { goal: { task: 'charge_and_notify', args: ['alice'] } } },
    { match: { intent, epoch: 2 }, reply: { done: true, summary: 'charged and told' } },
  ],
};
const start = { tenant: 't1', seed: 7, asOf: '2026-12-01T09:00:00Z' };
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function fileStore(): FileStore {
  const dir = mkdtempSync(join(tmpdir(), 'weft-rehydrate-'));
  dirs.push(dir);
  return new FileStore(dir);
}

function runtime(store: JournalStore, ledger: Ledger, extra: Partial<RuntimeOptions> = {}, actuators?: Actuator[]) {
  return createRuntime({
    store,
    libraries: [notifyLibrary],
    actuators: actuators ?? notifyActuators(ledger),
    observe: 'world.observe',
    model: new ScriptedModel(transcript),
    signingKey: key,
    sleep: async () => undefined,
    ...extra,
  });
}

const hashes = async (store: JournalStore, id: string) => (await store.read(id)).map((r) => r.hash);

describe('rehydration', () => {
  test('a mid-epoch snapshot round-trips through JSON and resumes to the uninterrupted journal', async () => {
    const reference = new MemoryStore();
    const refHandle = await runtime(reference, newLedger()).start(intent, start);
    const refResult = await refHandle.done;

    // Block the second step (msg.send) so the machine is caught in `execute` with step 0 done.
    const store = new MemoryStore();
    const ledger = newLedger();
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const atSend = new Promise<void>((resolve) => (reached = resolve));
    const actuators = notifyActuators(ledger).map((a) =>
      a.name === 'msg.send' ? { ...a, run: async (args: any, ctx: any) => (reached(), await blocked, a.run(args, ctx)) } : a,
    );
    const first = await runtime(store, ledger, {}, actuators).start(intent, start);
    await atSend;
    expect(first.state?.value).toBe('execute');
    const kept = (await first.durableSnapshot())!;
    expect(kept.seq).toBe(first.state!.context.seq);
    expect(await store.length(first.id)).toBeGreaterThanOrEqual(kept.seq); // the records it stands on are durable
    const image = JSON.parse(JSON.stringify(kept.data));
    const at = { seq: kept.seq, tail: kept.tail };
    await first.abandon(); // the process "dies" with step 1 dispatched and not completed
    release();

    const resumed = await runtime(store, ledger).resume(first.id, { snapshot: image, at });
    const result = await resumed.done;
    expect(result.status).toBe('completed');
    expect(result.fingerprint).toBe(refResult.fingerprint);
    expect(await hashes(store, first.id)).toEqual(await hashes(reference, refHandle.id));
    // The charge was applied once although the machine re-entered the epoch.
    expect(Object.keys(ledger.applied).sort()).toEqual([`${first.id}.1.0`, `${first.id}.1.1`]);
  });

  test('an epoch that needs approval hibernates; a new runtime records the decision and finishes', async () => {
    const store = fileStore();
    const policy = spendApprovalPolicy({ version: '1', limit: 5, amountArg: 'amount' });
    const ledger = newLedger();
    const first = await runtime(store, ledger, { policy }).start(intent, start);
    const paused = await first.done;
    expect(paused.status).toBe('awaiting_approval');
    expect(ledger.attempts).toEqual({});

    const second = runtime(new FileStore(store.dir), ledger, { policy });
    expect((await second.list())[0]).toMatchObject({ id: first.id, status: 'awaiting_approval' });
    const handle = await second.approve(first.id, { decision: 'approved', by: 'ana@example.com' });
    const result = await handle.done;
    expect(result.status).toBe('completed');
    const kinds = (await store.read(first.id)).map((r) => r.kind);
    expect(kinds.slice(kinds.indexOf('approval.requested'), kinds.indexOf('approval.requested') + 3)).toEqual(['approval.requested', 'approval.decided', 'epoch.certified']);
    expect((await second.replay(first.id)).fingerprint).toBe(result.fingerprint);
  });

  test('a hibernation requested mid-run stops at the next boundary and resumes from its snapshot', async () => {
    const store = fileStore();
    const ledger = newLedger();
    const first = await runtime(store, ledger).start(intent, start);
    first.hibernate();
    const paused = await first.done;
    expect(paused.status).toBe('hibernated');
    const snapshot = await store.getSnapshot(first.id);
    expect((snapshot?.data as { value: string }).value).toBe('hibernated');
    expect(canonicalize(JSON.parse(JSON.stringify(snapshot!.data)))).toBe(canonicalize(snapshot!.data));

    const resumed = await runtime(new FileStore(store.dir), ledger).resume(first.id);
    resumed.send({ type: 'resume' });
    const result = await resumed.done;
    expect(result.status).toBe('completed');
    const reference = await (await runtime(new MemoryStore(), newLedger()).start(intent, start)).done;
    expect(result.fingerprint).toBe(reference.fingerprint);
  });

  test('a second runtime cannot write an invocation another one is running: clear error, nothing written', async () => {
    const store = fileStore();
    const ledger = newLedger();
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const atSend = new Promise<void>((resolve) => (reached = resolve));
    const actuators = notifyActuators(ledger).map((a) => (a.name === 'msg.send' ? { ...a, run: async (args: any, ctx: any) => (reached(), await blocked, a.run(args, ctx)) } : a));
    const first = await runtime(store, ledger, {}, actuators).start(intent, start);
    await atSend;
    const before = await store.length(first.id);
    const second = runtime(new FileStore(store.dir), ledger);
    await expect(second.resume(first.id)).rejects.toThrow(/is being written by .*only one writer per invocation/);
    expect(await store.length(first.id)).toBe(before);
    release();
    expect((await first.done).status).toBe('completed');
  });

  test('the inspect option receives the live machine events (what the Stately inspector shows)', async () => {
    const events: string[] = [];
    const handle = await runtime(new MemoryStore(), newLedger(), { inspect: (e) => void events.push(e.type) }).start(intent, start);
    await handle.done;
    expect(events).toContain('@xstate.actor');
    expect(events).toContain('@xstate.snapshot');
    expect(events.filter((t) => t === '@xstate.event').length).toBeGreaterThan(5);
  });
});

