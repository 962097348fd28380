/**
 * The client (client/, `weft/client`): it validates, writes a pin or an inbox message, and returns a
 * handle; an executor (a runtime's `resume`, `serve`) runs what it wrote. Over real stores (file,
 * memory), with the travel domain and a scripted model:
 *
 * - `client.start` pins and runs nothing: the invocation is listed `pending`, and a runtime's
 *   resume runs it to the very journal and fingerprint `runtime.start` gives the same start;
 * - `serve` takes a pending invocation up, and `handle.result()` resolves once it has ended;
 * - `client.approve` writes the decision an executor records; `client.cancel` the request an
 *   executor acts on (and, the invocation ended already, writes nothing);
 * - `describe` and `list` read what `weft show` and `weft ls` show;
 * - bad input: an unknown id (or another tenant's) is `invocation.not_found`, with the one wording;
 *   a bad id, a malformed decision or start option is refused before anything is written.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import type { Model, ModelRequest } from '../actors/model/model.js';
import { travelDomain } from '../examples/travel/domain.js';
import { TRAVEL_GOALS, TRAVEL_INTENT } from '../examples/travel/transcript.js';
import type { JournalRecord } from '../journal/records.js';
import { publicKeyOf, signingKeyFromSecret } from '../journal/seal.js';
import type { JournalStore } from '../journal/store.js';
import { FileStore } from '../stores/file.js';
import { MemoryStore } from '../stores/memory.js';
import { spendApprovalPolicy } from '../machines/policy.js';
import { createClient, InvocationNotFoundError } from '../client/index.js';
import { createRuntime } from '../runtime/index.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(41));
const root = mkdtempSync(path.join(tmpdir(), 'weft-client-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Epoch 1 searches, epoch 2 books, then done. */
const model: Model = {
  id: 'scripted:client',
  params: {},
  async complete(request: ModelRequest) {
    const goal = request.epoch === 1 ? TRAVEL_GOALS.findOptions : request.epoch === 2 ? TRAVEL_GOALS.bookTrip : undefined;
    return { text: JSON.stringify(goal ? { goal: { task: goal.task, args: [...goal.args] } } : { done: true, summary: 'booked' }) };
  },
};
const approvals = spendApprovalPolicy({ version: 'client', limit: 100, amountArg: 'amount' });
const start = (seed: string) => ({ tenant: 't1', seed, asOf: travelDomain.asOf! });
const dir = (name: string) => mkdtempSync(path.join(root, `${name}-`));

/** The executor: the travel domain's actuators run here, sealing with the secret key. */
function executor(store: JournalStore, options: { policy?: typeof approvals } = {}) {
  return createRuntime({ store, domain: travelDomain, stateDir: dir('world'), model, signingKey: key, sleep: async () => undefined, ...options });
}

/** The client: the same pin's inputs, the public half of the key, nothing that runs. */
function client(store: JournalStore, options: { policy?: typeof approvals; tenant?: string } = {}) {
  return createClient({ store, domain: travelDomain, stateDir: dir('declared'), model, signingKey: publicKeyOf(key), ...options });
}

/** A journal's hashed parts (the envelope — wall time, writer — is observability only). */
const hashed = (records: readonly JournalRecord[]) => records.map(({ seq, kind, epoch, body, prev, hash }) => ({ seq, kind, epoch, body, prev, hash }));

describe('client.start, then an executor', () => {
  test('start pins and runs nothing (pending); a runtime resume runs it to the journal and fingerprint runtime.start gives', async () => {
    const direct = executor(new FileStore(dir('direct')));
    const ran = await (await direct.start(TRAVEL_INTENT, start('same'))).done;
    expect(ran.status).toBe('completed');

    const store = new FileStore(dir('client'));
    const weft = client(store);
    const handle = await weft.start(TRAVEL_INTENT, start('same'));
    expect(handle.id).toBe(ran.id);
    expect((await store.read(handle.id)).map((r) => r.kind)).toEqual(['invocation.pinned']);
    expect(await store.holder(handle.id)).toBeUndefined(); // the lease it took to write the pin is released
    expect((await weft.list()).map((row) => [row.id, row.status])).toEqual([[handle.id, 'pending']]);
    expect(await weft.describe(handle.id)).toMatchObject({ status: 'pending' });

    // Asked again, the same start writes nothing; another intent under that id is refused, naming it.
    expect((await weft.start(TRAVEL_INTENT, start('same'))).id).toBe(handle.id);
    expect(await store.length(handle.id)).toBe(1);
    await expect(weft.start('Somewhere else', { ...start('same'), id: handle.id })).rejects.toMatchObject({ code: 'runtime.id_conflict', message: expect.stringContaining('intent') });

    const later = executor(store);
    const resumed = await (await later.resume(handle.id)).done;
    expect(resumed).toMatchObject({ status: 'completed', fingerprint: ran.fingerprint });
    expect(hashed(await store.read(handle.id))).toEqual(hashed(await direct.store.read(ran.id)));
    expect(await handle.result()).toMatchObject({ id: handle.id, status: 'completed', fingerprint: ran.fingerprint });
    await direct.close();
    await later.close();
  });

  test('serve takes a pending invocation up, and handle.result resolves once it has ended', async () => {
    const store = new MemoryStore();
    const weft = client(store);
    const handle = await weft.start(TRAVEL_INTENT, start('served'));
    const runtime = executor(store);
    const stop = new AbortController();
    const events: string[] = [];
    const serving = runtime.serve({ signal: stop.signal, pollMs: 20, onEvent: (e) => e.kind === 'resuming' && events.push(`${e.id}:${e.why}`) });
    try {
      const result = await handle.result({ pollMs: 20 });
      expect(result).toMatchObject({ status: 'completed', fingerprint: expect.any(String) });
      expect(events).toEqual([`${handle.id}:pending`]);
    } finally {
      stop.abort();
      await serving;
      await runtime.close();
    }
  });
});

describe('approve and cancel through the client, recorded by the executor', () => {
  test('a decision written by the client is recorded by the next resume, and the run goes on', async () => {
    const store = new FileStore(dir('approve'));
    const runtime = executor(store, { policy: approvals });
    const first = await (await runtime.start(TRAVEL_INTENT, start('approve'))).done;
    expect(first.status).toBe('awaiting_approval');
    const weft = client(store, { policy: approvals });
    const handle = await weft.approve(first.id, { decision: 'approved', by: 'alice', note: 'fine' });
    expect(await store.peekInbox(first.id)).toMatchObject({ type: 'approval', decision: 'approved', by: 'alice' });
    expect((await weft.list({ status: 'awaiting_approval' })).find((row) => row.id === first.id)).toMatchObject({ decided: true });

    const done = await (await executor(store, { policy: approvals }).resume(first.id)).done;
    expect(done.status).toBe('completed');
    const decided = (await store.read(first.id)).find((r) => r.kind === 'approval.decided');
    expect(decided?.body).toMatchObject({ decision: 'approved', by: 'alice', note: 'fine' });
    expect(await handle.result()).toMatchObject({ status: 'completed', fingerprint: done.fingerprint });
    // Ended, it awaits no approval: refused, nothing written.
    await expect(weft.approve(first.id, { decision: 'approved', by: 'alice' })).rejects.toMatchObject({ code: 'runtime.not_awaiting_approval' });
    await runtime.close();
  });

  test('a cancel written by the client stops a resting invocation when the executor takes it up; one that has ended is not written', async () => {
    const store = new FileStore(dir('cancel'));
    const runtime = executor(store);
    const live = await runtime.start(TRAVEL_INTENT, start('cancel'));
    live.on('record', (record: JournalRecord) => {
      if (record.kind === 'step.dispatched' && record.epoch === 2) live.hibernate();
    });
    expect((await live.done).status).toBe('hibernated');

    const weft = client(store);
    const receipt = await weft.cancel(live.id, { reason: 'plans changed', by: 'ops' });
    expect(receipt.requested).toBe(true);
    expect(await store.peekInbox(live.id)).toMatchObject({ type: 'cancel', by: 'ops', reason: 'plans changed' });
    expect((await weft.list()).find((row) => row.id === live.id)).toMatchObject({ status: 'hibernated', cancelRequested: true });

    const ended = await (await executor(store).resume(live.id)).done;
    expect(ended.status).toBe('cancelled');
    expect((await store.read(live.id)).slice(-3).map((r) => r.kind)).toEqual(['cancel.requested', 'invocation.cancelled', 'invocation.sealed']);
    expect(await receipt.handle.result()).toMatchObject({ status: 'cancelled', cancelled: { by: 'ops', reason: 'plans changed' } });

    const again = await receipt.handle.cancel({ reason: 'twice' });
    expect(again.requested).toBe(false);
    expect(await store.peekInbox(live.id)).toBeUndefined();
    await runtime.close();
  });
});

describe('bad input: clear errors, nothing written', () => {
  test('an unknown invocation, or another tenant\'s, is invocation.not_found in the one wording; a bad id is refused as such', async () => {
    const store = new MemoryStore();
    const weft = client(store);
    const handle = await weft.start(TRAVEL_INTENT, start('tenants'));
    for (const call of [() => weft.describe('nobody'), () => weft.handle('nobody').result(), () => weft.approve('nobody', { decision: 'approved', by: 'a' }), () => weft.cancel('nobody')]) {
      const err = await call().then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(InvocationNotFoundError);
      expect(err).toMatchObject({ code: 'invocation.not_found', message: `no invocation nobody in ${store.name}; weft ls lists them` });
    }
    const other = client(store, { tenant: 't2' });
    await expect(other.describe(handle.id)).rejects.toMatchObject({ code: 'invocation.not_found', message: `no invocation ${handle.id} of tenant "t2" in ${store.name}; weft ls lists them` });
    await expect(other.cancel(handle.id)).rejects.toMatchObject({ code: 'invocation.not_found' });
    await expect(weft.handle(handle.id, { tenant: 't2' }).result()).rejects.toMatchObject({ code: 'invocation.not_found' });
    expect(await other.list()).toEqual([]);
    expect(await store.peekInbox(handle.id)).toBeUndefined();
    expect(() => weft.handle('../etc')).toThrow(expect.objectContaining({ code: 'runtime.bad_invocation_id' }));
    await expect(weft.describe('a b')).rejects.toMatchObject({ code: 'runtime.bad_invocation_id' });
  });

  test('malformed start options and decisions are refused before anything is written; a client without a key cannot start', async () => {
    const store = new MemoryStore();
    const weft = client(store);
    await expect(weft.start(TRAVEL_INTENT, { ...start('x'), seed: 1.5 })).rejects.toMatchObject({ code: 'runtime.bad_seed' });
    await expect(weft.start(TRAVEL_INTENT, { ...start('x'), asOf: 'soon' })).rejects.toMatchObject({ code: 'runtime.bad_as_of' });
    await expect(weft.start(42 as never)).rejects.toMatchObject({ code: 'runtime.bad_intent' });
    await expect(createClient({ store, domain: travelDomain, stateDir: dir('nokey'), model }).start(TRAVEL_INTENT, start('x'))).rejects.toMatchObject({ code: 'runtime.no_signing_key' });
    expect(await store.list()).toEqual([]);

    const runtime = executor(store, { policy: approvals });
    const resting = await (await runtime.start(TRAVEL_INTENT, start('decide'))).done;
    expect(resting.status).toBe('awaiting_approval');
    await expect(weft.approve(resting.id, { decision: 'yes', by: 'a' } as never)).rejects.toMatchObject({ code: 'runtime.bad_decision' });
    await expect(weft.approve(resting.id, { decision: 'approved', by: '' })).rejects.toMatchObject({ code: 'runtime.bad_decision' });
    expect(await store.peekInbox(resting.id)).toBeUndefined();

    // result() waits while it rests; a signal stops the wait.
    const stop = new AbortController();
    const waiting = weft.handle(resting.id).result({ signal: stop.signal, pollMs: 10 });
    stop.abort(new Error('stopped waiting'));
    await expect(waiting).rejects.toThrow('stopped waiting');
    await runtime.close();
  });
});
