/**
 * `runtime.serve()`: a long-running runtime that keeps invocations moving — it takes over one whose
 * runtime died (its lease expired), retries a transiently suspended one with backoff (never one
 * suspended for credentials), and records a decision left in an invocation's inbox by
 * `approve(…, { run: false })` from any process. Several serve loops share a store.
 */
import { describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import type { Model, ModelRequest } from '../actors/model/model.js';
import { ModelRequestError, ModelUnavailableError } from '../actors/model/model.js';
import { ScriptedModel } from '../actors/model/scripted.js';
import { MemoryStore } from '../stores/memory.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { spendApprovalPolicy } from '../machines/policy.js';
import { createRuntime, type ServeEvent } from '../runtime/index.js';
import { serve } from '../runtime/serve.js';
import { newLedger, notifyActuators, notifyLibrary } from './support/notify-app.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(21));
const intent = 'Charge Alice and tell her';
const entries = [
  { match: { intent, epoch: 1 }, reply: { goal: { task: 'charge_and_notify', args: ['alice'] } } },
  { match: { intent, epoch: 2 }, reply: { done: true, summary: 'done' } },
];

/** A model that fails the first `failures` calls with `error`, then answers from the transcript. */
function flaky(failures: number, error: () => Error): Model {
  const scripted = new ScriptedModel({ model: 'notify', entries });
  let calls = 0;
  return {
    id: scripted.id,
    params: scripted.params,
    async complete(request: ModelRequest) {
      if (calls++ < failures) throw error();
      return scripted.complete(request);
    },
  };
}

function runtimeOver(store: MemoryStore, model: Model, extra: Record<string, unknown> = {}) {
  return createRuntime({ store, libraries: [notifyLibrary], actuators: notifyActuators(newLedger()), observe: 'world.observe', model, signingKey: key, sleep: async () => undefined, ...extra });
}

async function serveUntil(runtime: ReturnType<typeof runtimeOver>, done: (events: ServeEvent[]) => boolean, options: Record<string, unknown> = {}): Promise<ServeEvent[]> {
  const events: ServeEvent[] = [];
  const stop = new AbortController();
  const serving = runtime.serve({ pollMs: 5, backoffMs: 5, signal: stop.signal, onEvent: (e) => events.push(e), ...options });
  for (let i = 0; i < 400 && !done(events); i++) await new Promise((r) => setTimeout(r, 5));
  stop.abort();
  await serving;
  return events;
}

describe('serve', () => {
  test('retries a transient suspension with backoff until it completes; leaves a credentials one alone', async () => {
    const store = new MemoryStore();
    const down = runtimeOver(store, flaky(3, () => new ModelUnavailableError('m', 'HTTP 503')), { limits: { modelAttempts: 1 } });
    const first = await (await down.start(intent, { tenant: 't', seed: 1, asOf: '2026-12-01T09:00:00Z' })).done;
    expect(first).toMatchObject({ status: 'suspended', suspension: { class: 'transient' } });
    const events = await serveUntil(down, (e) => e.some((x) => x.kind === 'stopped' && x.status === 'completed'));
    const stops = events.filter((e) => e.kind === 'stopped').map((e) => (e as { status: string }).status);
    expect(stops).toEqual(['suspended', 'suspended', 'completed']);

    const denied = runtimeOver(store, flaky(99, () => new ModelRequestError('m', 401, 'bad key')));
    const locked = await (await denied.start(intent, { tenant: 't', seed: 2, asOf: '2026-12-01T09:00:00Z' })).done;
    expect(locked).toMatchObject({ status: 'suspended', suspension: { class: 'credentials' } });
    const none = await serveUntil(denied, () => false, { pollMs: 5 });
    expect(none.filter((e) => e.kind === 'resuming')).toEqual([]);
  });

  test('takes over an invocation whose runtime died (its lease expired) and finishes it', async () => {
    let now = 1_000_000;
    const store = new MemoryStore({ now: () => now });
    const runtime = runtimeOver(store, new ScriptedModel({ model: 'notify', entries }), { leaseTtlMs: 1_000 });
    const handle = await runtime.start(intent, { tenant: 't', seed: 3, asOf: '2026-12-01T09:00:00Z' });
    await new Promise<void>((resolve) => handle.on('record', (r: { kind: string }) => r.kind === 'step.completed' && resolve()));
    await handle.abandon();
    // The process that held it "dies" holding its lease (a ghost on another host), which stays until it expires.
    await store.acquire(handle.id, { writer: 'elsewhere:1', ttlMs: 1_000 });
    expect((await runtime.list())[0]!.status).toBe('running');
    expect((await serveUntil(runtime, () => false)).filter((e) => e.kind === 'resuming')).toEqual([]);
    now += 5_000;
    expect((await runtime.list())[0]!.status).toBe('interrupted');
    const events = await serveUntil(runtime, (e) => e.some((x) => x.kind === 'stopped'));
    expect(events.map((e) => e.kind)).toEqual(['resuming', 'stopped']);
    expect(events[1]).toMatchObject({ status: 'completed' });
    expect((await runtime.replay(handle.id)).status).toBe('completed');
  });

  test('a decision left in the inbox from another process is recorded by serve, which goes on', async () => {
    const store = new MemoryStore();
    const policy = spendApprovalPolicy({ version: 't', limit: 1, amountArg: 'amount' });
    const runtime = runtimeOver(store, new ScriptedModel({ model: 'notify', entries }), { policy });
    const first = await (await runtime.start(intent, { tenant: 't', seed: 4, asOf: '2026-12-01T09:00:00Z' })).done;
    expect(first.status).toBe('awaiting_approval');
    const approver = runtimeOver(store, new ScriptedModel({ model: 'notify', entries }), { policy });
    expect((await (await approver.approve(first.id, { decision: 'approved', by: 'ana' }, { run: false })).done).status).toBe('awaiting_approval');
    expect((await runtime.list())[0]).toMatchObject({ status: 'awaiting_approval', decided: true });
    const events = await serveUntil(runtime, (e) => e.some((x) => x.kind === 'stopped'));
    expect(events.map((e) => `${e.kind}:${'why' in e ? e.why : (e as { status?: string }).status}`)).toEqual(['resuming:approval', 'stopped:completed']);
    const records = await store.read(first.id);
    expect(records.find((r) => r.kind === 'approval.decided')?.body).toEqual({ decision: 'approved', by: 'ana' });
    expect(await store.peekInbox(first.id)).toBeUndefined();
  });

  test('two serve loops over one store: each interrupted invocation is finished exactly once', async () => {
    let now = 2_000_000;
    const store = new MemoryStore({ now: () => now });
    const ids: string[] = [];
    for (let seed = 10; seed < 14; seed++) {
      const runtime = runtimeOver(store, new ScriptedModel({ model: 'notify', entries }), { leaseTtlMs: 1_000 });
      const handle = await runtime.start(intent, { tenant: 't', seed, asOf: '2026-12-01T09:00:00Z' });
      await new Promise<void>((resolve) => handle.on('record', (r: { kind: string }) => r.kind === 'step.dispatched' && resolve()));
      await handle.abandon();
      await store.acquire(handle.id, { writer: 'elsewhere:1', ttlMs: 1_000 });
      ids.push(handle.id);
    }
    now += 5_000;
    const a = runtimeOver(store, new ScriptedModel({ model: 'notify', entries }), { leaseTtlMs: 1_000 });
    const b = runtimeOver(store, new ScriptedModel({ model: 'notify', entries }), { leaseTtlMs: 1_000 });
    const allDone = async () => (await a.list()).every((row) => row.status === 'completed');
    const stop = new AbortController();
    const events: ServeEvent[] = [];
    const serving = [a, b].map((r) => r.serve({ pollMs: 3, signal: stop.signal, onEvent: (e) => events.push(e) }));
    for (let i = 0; i < 400 && !(await allDone()); i++) await new Promise((r) => setTimeout(r, 10));
    stop.abort();
    await Promise.all(serving);
    expect(await allDone()).toBe(true);
    const finished = events.flatMap((e) => (e.kind === 'stopped' && e.status === 'completed' ? [e.id] : [])).sort();
    expect(finished).toEqual([...ids].sort()); // each once, by one loop or the other
    for (const id of ids) {
      const kinds = (await store.read(id)).map((r) => r.kind);
      expect(kinds.filter((k) => k === 'invocation.sealed')).toHaveLength(1);
    }
  });

  test('serves only its domain: metadata naming another domain is left alone, silently; a journal without metadata is matched by its pinned library', async () => {
    // A store that keeps no metadata for one id: a journal written before stores kept it.
    class LegacyFor extends MemoryStore {
      legacy = new Set<string>();
      override async putMetadata(id: string, meta: Parameters<MemoryStore['putMetadata']>[1]): Promise<void> {
        if (!this.legacy.has(id)) await super.putMetadata(id, meta);
      }
    }
    const store = new LegacyFor();
    store.legacy.add('legacy');
    const down = runtimeOver(store, flaky(3, () => new ModelUnavailableError('m', 'HTTP 503')), { limits: { modelAttempts: 1 } });
    const start = (id: string) => down.start(intent, { tenant: 't', seed: id, asOf: '2026-12-01T09:00:00Z', id }).then((h) => h.done);
    for (const id of ['mine', 'theirs', 'legacy']) expect(await start(id)).toMatchObject({ status: 'suspended', suspension: { class: 'transient' } });
    // What the runtime wrote at start: the library it pinned (this runtime has no domain, so no name) and its sealing key's id.
    expect(await store.getMetadata('mine')).toEqual({ library: ((await store.read('mine', 0, 1))[0]!.body as { pin: { library: string } }).pin.library, sealKey: down.options.signingKey!.keyId });
    const library = (await store.getMetadata('mine'))!.library;
    await store.putMetadata('mine', { domain: 'notify', library });
    await store.putMetadata('theirs', { domain: 'refunds', library });
    expect(await store.getMetadata('legacy')).toBeUndefined();

    const events = await serveUntil(
      down,
      (e) => ['mine', 'legacy'].every((id) => e.some((x) => x.kind === 'stopped' && x.id === id && x.status === 'completed')),
      { domain: { name: 'notify', libraries: [notifyLibrary] } },
    );
    expect(events.filter((e) => 'id' in e && e.id === 'theirs')).toEqual([]); // not one line about it
    expect(new Set(events.flatMap((e) => (e.kind === 'resuming' ? [e.id] : [])))).toEqual(new Set(['mine', 'legacy']));
    expect((await down.list()).find((r) => r.id === 'theirs')).toMatchObject({ status: 'suspended' });
  });

  test("a serve scoped to one tenant leaves another tenant's wake-up alone, silently, and resumes its own", async () => {
    const store = new MemoryStore();
    const all = runtimeOver(store, flaky(2, () => new ModelUnavailableError('m', 'HTTP 503')), { limits: { modelAttempts: 1 } });
    for (const tenant of ['a', 'b']) {
      expect(await (await all.start(intent, { tenant, seed: 1, asOf: '2026-12-01T09:00:00Z', id: `inv-${tenant}` })).done).toMatchObject({ status: 'suspended' });
    }
    const scoped = runtimeOver(store, flaky(0, () => new Error('unused')), { tenant: 'a' });
    const events: ServeEvent[] = [];
    const stop = new AbortController();
    // A dispatcher's wake-ups name ids only (BullMQ's delayed jobs): here, one of each tenant's; the listing finds nothing.
    const serving = serve(
      { store, options: scoped.options, resume: (id) => scoped.resume(id), listOpen: async () => [], onWake: (wake) => (wake('inv-b'), wake('inv-a'), Promise.resolve({ close: async () => undefined })) },
      { pollMs: 5, signal: stop.signal, onEvent: (e) => events.push(e) },
    );
    for (let i = 0; i < 400 && !events.some((e) => e.kind === 'stopped' && e.id === 'inv-a'); i++) await new Promise((r) => setTimeout(r, 5));
    stop.abort();
    await serving;
    expect(events.filter((e) => e.id === 'inv-b')).toEqual([]);
    expect(events.filter((e) => e.kind === 'error')).toEqual([]);
    expect(events.find((e) => e.kind === 'stopped' && e.id === 'inv-a')).toMatchObject({ status: 'completed' });
    expect((await all.list()).find((r) => r.id === 'inv-b')).toMatchObject({ status: 'suspended' });
  });

  test('a store that cannot say which domain an invocation is of: no error line about it', async () => {
    class Unsure extends MemoryStore {
      unsure = new Set<string>();
      override async getMetadata(id: string) {
        if (this.unsure.has(id)) throw new Error('connect ECONNREFUSED 127.0.0.1:1');
        return super.getMetadata(id);
      }
    }
    const store = new Unsure();
    const down = runtimeOver(store, flaky(2, () => new ModelUnavailableError('m', 'HTTP 503')), { limits: { modelAttempts: 1 } });
    const start = (id: string) => down.start(intent, { tenant: 't', seed: id, asOf: '2026-12-01T09:00:00Z', id }).then((h) => h.done);
    for (const id of ['mine', 'theirs']) expect(await start(id)).toMatchObject({ status: 'suspended' });
    const library = (await store.getMetadata('mine'))!.library;
    await store.putMetadata('mine', { domain: 'notify', library });
    await store.putMetadata('theirs', { domain: 'refunds', library });
    store.unsure.add('theirs');
    const events = await serveUntil(down, (e) => e.some((x) => x.kind === 'stopped' && x.id === 'mine'), { domain: { name: 'notify', libraries: [notifyLibrary] } });
    expect(events.filter((e) => e.id === 'theirs')).toEqual([]);
    expect(events.filter((e) => e.kind === 'error')).toEqual([]);
  });

  test('a store outage is two events — when it starts and when it ends — however many polls fail in between', async () => {
    class Flaky extends MemoryStore {
      down = false;
      failedLists = 0;
      override async list(): Promise<string[]> {
        if (this.down) {
          this.failedLists++;
          throw new Error('connect ECONNREFUSED 127.0.0.1:1');
        }
        return super.list();
      }
    }
    const store = new Flaky();
    const runtime = runtimeOver(store, new ScriptedModel({ model: 'notify', entries }));
    store.down = true;
    const events: ServeEvent[] = [];
    const stop = new AbortController();
    const serving = runtime.serve({ pollMs: 2, signal: stop.signal, onEvent: (e) => events.push(e) });
    while (store.failedLists < 20) await new Promise((r) => setTimeout(r, 5));
    store.down = false;
    while (!events.some((e) => e.kind === 'outage' && e.state === 'ended')) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20));
    stop.abort();
    await serving;
    expect(events.map((e) => `${e.kind}:${e.kind === 'outage' ? e.state : ''}`)).toEqual(['outage:started', 'outage:ended']);
    expect(events[0]).toMatchObject({ message: expect.stringContaining('ECONNREFUSED') });
    expect((events[1] as { ms: number }).ms).toBeGreaterThanOrEqual(0);
  });

  test('a wake-up consumer that cannot connect because Redis went away is part of the outage, and is asked for again once a listing succeeds', async () => {
    class Flaky extends MemoryStore {
      down = true;
      override async list(): Promise<string[]> {
        if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:1');
        return super.list();
      }
    }
    const store = new Flaky();
    const runtime = runtimeOver(store, new ScriptedModel({ model: 'notify', entries }));
    let asked = 0;
    let closed = 0;
    const lost = Object.assign(new Error('Reached the max retries per request limit (which is 20).'), { name: 'MaxRetriesPerRequestError' });
    const wakeable = {
      store,
      options: runtime.options,
      resume: (id: string) => runtime.resume(id),
      listOpen: (o?: { repair?: boolean }) => runtime.listOpen(o),
      onWake: () => (++asked === 1 ? Promise.reject(lost) : Promise.resolve({ close: async () => void closed++ })),
    };
    const events: ServeEvent[] = [];
    const stop = new AbortController();
    const serving = serve(wakeable, { pollMs: 2, signal: stop.signal, onEvent: (e) => events.push(e) });
    while (!events.some((e) => e.kind === 'outage')) await new Promise((r) => setTimeout(r, 5));
    expect(asked).toBe(1);
    store.down = false;
    while (asked < 2) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20));
    stop.abort();
    await serving;
    expect(events.map((e) => `${e.kind}:${e.kind === 'outage' ? e.state : ''}`)).toEqual(['outage:started', 'outage:ended']);
    expect(asked).toBe(2); // once after the outage, not once per poll
    expect(closed).toBe(1); // the second consumer, closed when serve stopped
  });

  test('a store whose connection closes starts the outage at once, before any listing fails', async () => {
    class Closing extends MemoryStore {
      listener: (() => void) | undefined;
      down = false;
      onConnectionClosed(listener: () => void) {
        this.listener = listener;
        return () => (this.listener = undefined);
      }
      override async list(): Promise<string[]> {
        if (this.down) return new Promise<string[]>(() => undefined); // a command waiting on reconnects
        return super.list();
      }
    }
    const store = new Closing();
    const runtime = runtimeOver(store, new ScriptedModel({ model: 'notify', entries }));
    const events: ServeEvent[] = [];
    const stop = new AbortController();
    const serving = runtime.serve({ pollMs: 2, signal: stop.signal, onEvent: (e) => events.push(e) });
    while (!store.listener) await new Promise((r) => setTimeout(r, 5));
    store.down = true;
    store.listener();
    expect(events).toMatchObject([{ kind: 'outage', state: 'started', message: 'the connection to memory closed' }]);
    store.down = false;
    stop.abort();
    await serving;
    expect(store.listener).toBeUndefined(); // serve stopped listening when it stopped
  });

  test('runtimeFor picks, per resumed invocation, the runtime that runs it, and the event says where its effects run', async () => {
    const store = new MemoryStore();
    const down = runtimeOver(store, flaky(1, () => new ModelUnavailableError('m', 'HTTP 503')), { limits: { modelAttempts: 1 } });
    const first = await (await down.start(intent, { tenant: 't', seed: 9, asOf: '2026-12-01T09:00:00Z' })).done;
    expect(first.status).toBe('suspended');
    const other = runtimeOver(store, new ScriptedModel({ model: 'notify', entries }));
    const asked: string[] = [];
    const events = await serveUntil(down, (e) => e.some((x) => x.kind === 'stopped'), {
      runtimeFor: async (id: string) => {
        asked.push(id);
        return { runtime: other, dispatch: 'elsewhere' };
      },
    });
    expect(asked).toEqual([first.id]);
    expect(events).toMatchObject([{ kind: 'resuming', id: first.id, dispatch: 'elsewhere' }, { kind: 'stopped', status: 'completed' }]);
  });

  test('a listing that never answers (a command lost with its connection) counts as an outage, and serve goes on polling', async () => {
    class Hanging extends MemoryStore {
      hang = true;
      lists = 0;
      override async list(): Promise<string[]> {
        this.lists++;
        if (this.hang) return new Promise<string[]>(() => undefined); // never settles
        return super.list();
      }
    }
    const store = new Hanging();
    const runtime = runtimeOver(store, new ScriptedModel({ model: 'notify', entries }));
    const events: ServeEvent[] = [];
    const stop = new AbortController();
    const serving = runtime.serve({ pollMs: 2, listTimeoutMs: 30, signal: stop.signal, onEvent: (e) => events.push(e) });
    while (store.lists < 3) await new Promise((r) => setTimeout(r, 5));
    store.hang = false;
    while (!events.some((e) => e.kind === 'outage' && e.state === 'ended')) await new Promise((r) => setTimeout(r, 5));
    stop.abort();
    await serving;
    expect(events.map((e) => `${e.kind}:${e.kind === 'outage' ? e.state : ''}`)).toEqual(['outage:started', 'outage:ended']);
    expect(events[0]).toMatchObject({ message: expect.stringContaining('did not answer a listing within 30 ms') });
  });
});
