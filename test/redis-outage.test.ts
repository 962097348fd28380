/**
 * Redis going away under a run (issue 19, point 1), against a real private redis-server behind a
 * proxy that cuts the connection at a chosen append (support/redis-cut-proxy.ts):
 *
 * - The store: an append whose reply was lost fails, within the give-up budget, with
 *   AppendOutcomeUnknownError naming the server ("the last append's outcome is unknown") — whether
 *   or not it landed, which the client cannot tell; an append after the client gave up, and any
 *   other operation, fail with StoreUnreachableError — never ioredis' own text, never a hang (also
 *   when the way to the server accepts connections and drops them, which ioredis alone leaves
 *   unsettled for ever).
 * - The runtime: a run whose append's outcome is unknown is reported suspended on that (runtime),
 *   with no fingerprint and no resting state it did not write; listed as `interrupted` once Redis
 *   is back; and resumed, it reconciles from the journal — landed or not — to the fingerprint of an
 *   uninterrupted run, every effect applied once.
 *
 * Needs `redis-server` on PATH: under CI (CI=true) its absence fails the file; elsewhere the file is
 * skipped with a loud notice.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ScriptedModel } from '../actors/model/scripted.js';
import { AppendOutcomeUnknownError, StoreUnreachableError } from '../journal/errors.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { MemoryStore } from '../stores/memory.js';
import { RedisStore } from '../stores/redis.js';
import type { JournalStore } from '../journal/store.js';
import { createRuntime, listInvocations } from '../runtime/index.js';
import { chain } from './store-fixtures.js';
import { newLedger, notifyActuators, notifyLibrary, type Ledger } from './support/notify-app.js';
import { startCutProxy, type CutProxy } from './support/redis-cut-proxy.js';
import { NO_REDIS_MESSAGE, requireRedis, startRedis, type RedisServer } from './support/redis-server.js';

const available = requireRedis();
if (!available && process.env.CI === 'true') {
  test('redis-server is installed (required under CI)', () => {
    throw new Error(NO_REDIS_MESSAGE);
  });
}

/** The give-up budget of every store under test: short, so an outage ends quickly. */
const BUDGET_MS = 500;
/** How long past the budget an outage may take to be reported: room for a loaded machine. */
const MARGIN_MS = 10_000;

let server: RedisServer;
let prefixes = 0;
const freshPrefix = () => `outage${++prefixes}`;
const direct = (prefix: string) => new RedisStore({ redis: server.url, prefix });

beforeAll(async () => {
  if (available) server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

/** A proxy in front of the server for one test, closed after it. */
async function withProxy<T>(fn: (proxy: CutProxy) => Promise<T>): Promise<T> {
  const proxy = await startCutProxy(server.port);
  try {
    return await fn(proxy);
  } finally {
    await proxy.close();
  }
}

/** How long `promise` took to settle, and how. */
async function timed<T>(promise: Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const started = Date.now();
  try {
    const value = await promise;
    return { ms: Date.now() - started, value };
  } catch (error) {
    return { ms: Date.now() - started, error };
  }
}

describe.skipIf(!available)('the Redis store when its server goes away', () => {
  for (const deliver of [true, false]) {
    test(`an append whose reply is lost (${deliver ? 'it landed' : 'it never reached the server'}): "the last append's outcome is unknown", naming the server, within the budget`, async () => {
      await withProxy(async (proxy) => {
        const prefix = freshPrefix();
        const store = new RedisStore({ redis: proxy.url, prefix, giveUpAfterMs: BUDGET_MS });
        try {
          const lease = await store.acquire('cut', { writer: 'w', ttlMs: 60_000 });
          const records = chain('cut', 4);
          await store.append(lease, 0, records.slice(0, 2));
          const cut = proxy.cutAt('"key":"k2"', { deliver });
          const outcome = await timed(store.append(lease, 2, records.slice(2)));
          await cut;
          expect(outcome.error).toBeInstanceOf(AppendOutcomeUnknownError);
          const err = outcome.error as AppendOutcomeUnknownError;
          expect(err.code).toBe('journal.outcome_unknown');
          expect(err.message).toContain("the last append's outcome is unknown");
          expect(err.message).toContain(`Redis at redis://127.0.0.1:${proxy.port}/0`);
          expect(err.message).toContain('seq 2–3');
          expect(err.message).not.toMatch(/Connection is closed|max retries/);
          expect(outcome.ms).toBeLessThan(BUDGET_MS + MARGIN_MS);
          // What the server holds is what it ran: the client could not tell.
          const held = direct(prefix);
          expect((await held.read('cut')).map((r) => r.hash)).toEqual(records.slice(0, deliver ? 4 : 2).map((r) => r.hash));
          await held.close();
        } finally {
          await store.close();
        }
      });
    });
  }

  test('an append after the client gave up was never sent: StoreUnreachableError, "nothing was written"; a read says the server is unreachable too', async () => {
    await withProxy(async (proxy) => {
      const store = new RedisStore({ redis: proxy.url, prefix: freshPrefix(), giveUpAfterMs: BUDGET_MS });
      try {
        const lease = await store.acquire('gone', { writer: 'w', ttlMs: 60_000 });
        const records = chain('gone', 3);
        await store.append(lease, 0, records.slice(0, 1));
        const cut = proxy.cutAt('"key":"k1"', { deliver: false });
        await expect(store.append(lease, 1, records.slice(1, 2))).rejects.toBeInstanceOf(AppendOutcomeUnknownError);
        await cut;
        const later = await timed(store.append(lease, 1, records.slice(1)));
        expect(later.error).toBeInstanceOf(StoreUnreachableError);
        expect((later.error as Error).message).toMatch(new RegExp(`^Redis at redis://127\\.0\\.0\\.1:${proxy.port}/0 is unreachable \\(no connection for ${BUDGET_MS} ms\\): the append to gone was not sent, nothing was written`));
        const read = await timed(store.read('gone'));
        expect(read.error).toBeInstanceOf(StoreUnreachableError);
        expect((read.error as Error).message).not.toMatch(/Connection is closed/);
      } finally {
        await store.close();
      }
    });
  });

  test('a way to the server that accepts connections and drops them (a balancer whose backend is gone): the append still ends within the budget, outcome unknown', async () => {
    await withProxy(async (proxy) => {
      const store = new RedisStore({ redis: proxy.url, prefix: freshPrefix(), giveUpAfterMs: BUDGET_MS });
      try {
        const lease = await store.acquire('balancer', { writer: 'w', ttlMs: 60_000 });
        const records = chain('balancer', 3);
        await store.append(lease, 0, records.slice(0, 1));
        const cut = proxy.cutAt('"key":"k1"', { deliver: true, down: 'accept-and-close' });
        // Without the store's own watch, ioredis leaves this append pending for ever: a reconnect
        // that reached a socket before failing drops the commands it was to resend.
        const never = new Promise((resolve) => setTimeout(() => resolve('still pending'), BUDGET_MS + MARGIN_MS));
        const outcome = await Promise.race([store.append(lease, 1, records.slice(1)).then(() => 'appended', (err: unknown) => err), never]);
        await cut;
        expect(outcome).toBeInstanceOf(AppendOutcomeUnknownError);
      } finally {
        await store.close();
      }
    });
  });

  test('a store whose Redis is down at the start: reachable() says so, naming the server, within the budget', async () => {
    await withProxy(async (proxy) => {
      const store = new RedisStore({ redis: proxy.url, prefix: freshPrefix(), giveUpAfterMs: BUDGET_MS });
      try {
        // Reachable first: on a loaded machine the first PING may itself take longer than the 500 ms budget, which is not what this test is about.
        for (let attempt = 1; ; attempt++) {
          try {
            await store.reachable();
            break;
          } catch (err) {
            if (attempt >= 20) throw err;
          }
        }
        const cut = proxy.cutAt('ping', { deliver: false });
        const during = await timed(store.reachable());
        await cut;
        expect(during.error).toBeInstanceOf(StoreUnreachableError);
        expect((during.error as Error).message).toMatch(new RegExp(`^Redis at redis://127\\.0\\.0\\.1:${proxy.port}/0 is unreachable \\(.+\\): start it or check the URL, then run the command again$`));
        expect(during.ms).toBeLessThan(BUDGET_MS + MARGIN_MS);
      } finally {
        await store.close();
      }
    });
  });
});

// ── the runtime ─────────────────────────────────────────────────────────────────────────────

const key = signingKeyFromSecret(new Uint8Array(32).fill(5));
const intent = 'Charge Alice and tell her';
const transcript = {
  model: 'notify',
  entries: [
    { match: { intent, epoch: 1 }, reply: { goal: { task: 'charge_and_notify', args: ['alice'] } } },
    { match: { intent, epoch: 2 }, reply: { done: true, summary: 'charged and told' } },
  ],
};
const start = { tenant: 't1', seed: 3, asOf: '2026-12-01T09:00:00Z' };
const runtimeOn = (store: JournalStore, ledger: Ledger) =>
  createRuntime({
    store,
    libraries: [notifyLibrary],
    actuators: notifyActuators(ledger),
    observe: 'world.observe',
    model: new ScriptedModel(transcript),
    signingKey: key,
    sleep: async () => undefined,
    // Short, so the lease of the run cut off (this process is alive: it is not seen dead) expires soon.
    leaseTtlMs: 1_000,
  });

/** The uninterrupted run (memory store): its fingerprint and the effects it applied. */
let reference: { fingerprint: string; applied: string[] };
beforeAll(async () => {
  if (!available) return;
  const ledger = newLedger();
  const result = await (await runtimeOn(new MemoryStore(), ledger).start(intent, start)).done;
  if (result.status !== 'completed' || !result.fingerprint) throw new Error(`the reference run: ${JSON.stringify(result)}`);
  reference = { fingerprint: result.fingerprint, applied: Object.keys(ledger.applied).sort() };
});

describe.skipIf(!available)('a run whose Redis goes away with an append in flight', () => {

  // The first world effect's write-ahead record (the effect not yet applied), and the append that
  // carries its completion (the effect applied): each landed, and each never reaching Redis.
  const cases = [
    { marker: '"kind":"step.dispatched"', what: 'the first dispatch (written ahead, the effect not yet applied)' },
    { marker: '"kind":"step.completed"', what: 'the first completion (the effect applied)' },
  ];
  for (const { marker, what } of cases) {
    for (const deliver of [true, false]) {
      test(`cut at ${what}, ${deliver ? 'landed' : 'not landed'}: suspended on the unknown outcome, listed interrupted once Redis is back, resumed to the uninterrupted fingerprint with every effect once`, async () => {
        await withProxy(async (proxy) => {
          const prefix = freshPrefix();
          const ledger = newLedger();
          const store = new RedisStore({ redis: proxy.url, prefix, giveUpAfterMs: BUDGET_MS });
          const runtime = runtimeOn(store, ledger);
          let id = '';
          try {
            const cut = proxy.cutAt(marker, { deliver });
            const handle = await runtime.start(intent, start);
            id = handle.id;
            const { value: result, ms } = await timed(handle.done);
            await cut;
            expect(ms).toBeLessThan(BUDGET_MS + MARGIN_MS);
            expect(result!.status).toBe('suspended');
            expect(result!.suspension).toMatchObject({ class: 'runtime', code: 'journal.outcome_unknown', fix: `weft resume ${id}   # once the store is reachable again` });
            expect(result!.reason).toContain("the last append's outcome is unknown");
            expect(result!.reason).toContain(`Redis at redis://127.0.0.1:${proxy.port}/0`);
            expect(result!.fingerprint).toBeUndefined();
            expect(result!.records).toBeUndefined();
          } finally {
            await runtime.close();
            await store.close();
          }
          // Redis is back. The journal holds the cut append or not, as the server ran it.
          await proxy.restore();
          const back = direct(prefix);
          try {
            const kinds = (await back.read(id)).map((r) => r.kind);
            const kind = JSON.parse(`{${marker}}`).kind as string;
            expect((kinds as string[]).includes(kind), `the journal ${deliver ? 'has' : 'does not have'} the cut append`).toBe(deliver);
            // The run's lease (this live process's) lapses; then nothing holds it and it did not rest.
            let row;
            for (let waited = 0; waited < 20_000; waited += 100) {
              row = (await listInvocations(back)).find((r) => r.id === id);
              if (row?.status !== 'running') break;
              await new Promise((r) => setTimeout(r, 100));
            }
            expect(row).toMatchObject({ id, status: 'interrupted' });
            expect(row!.reason).toMatch(/lost its store/);
            const attemptsBefore = { ...ledger.attempts };
            const resumed = await (await runtimeOn(back, ledger).resume(id)).done;
            expect(resumed).toMatchObject({ status: 'completed', fingerprint: reference.fingerprint });
            expect(Object.keys(ledger.applied).sort()).toEqual(reference.applied);
            // A completion that landed is read back (no second dispatch); one that did not is
            // dispatched again under the same key (the actuator applies it once).
            const keys = Object.keys(ledger.attempts);
            const again = keys.filter((k) => (ledger.attempts[k] ?? 0) > (attemptsBefore[k] ?? 0) && (attemptsBefore[k] ?? 0) > 0);
            expect(again.length).toBe(marker.includes('completed') && !deliver ? 1 : 0);
          } finally {
            await back.close();
          }
        });
      });
    }
  }
});

describe.skipIf(!available)('a run woken from a rest whose Redis then goes away', () => {
  test('is listed interrupted, not in the rest it left (its snapshot is behind the journal); resumed, it completes', async () => {
    const prefix = freshPrefix();
    const ledger = newLedger();
    const first = direct(prefix);
    const runtime = runtimeOn(first, ledger);
    const handle = await runtime.start(intent, start);
    handle.hibernate();
    expect((await handle.done).status).toBe('hibernated');
    await runtime.close();
    await first.close();
    await withProxy(async (proxy) => {
      const store = new RedisStore({ redis: proxy.url, prefix, giveUpAfterMs: BUDGET_MS });
      const woken = runtimeOn(store, ledger);
      try {
        // Hibernated at the first boundary: the woken run's first write is the next model request.
        const cut = proxy.cutAt('"kind":"model.requested"', { deliver: true });
        const resumed = await woken.resume(handle.id);
        resumed.send({ type: 'resume' });
        const result = await resumed.done;
        await cut;
        expect(result).toMatchObject({ status: 'suspended', suspension: { code: 'journal.outcome_unknown' } });
      } finally {
        await woken.close();
        await store.close();
      }
    });
    const back = direct(prefix);
    try {
      let row;
      for (let waited = 0; waited < 20_000; waited += 100) {
        row = (await listInvocations(back)).find((r) => r.id === handle.id);
        if (row?.status !== 'running') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(row).toMatchObject({ id: handle.id, status: 'interrupted' });
      // It starts from its snapshot, in the rest it left, and is woken as weft resume wakes it.
      const again = await runtimeOn(back, ledger).resume(handle.id);
      if (again.state?.value === 'hibernated') again.send({ type: 'resume' });
      const done = await again.done;
      expect(done).toMatchObject({ status: 'completed', fingerprint: reference.fingerprint });
    } finally {
      await back.close();
    }
  });
});
