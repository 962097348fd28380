/**
 * The client on Redis: `client.start` pins into a Redis store (listed `pending` from the status
 * index's open set, what serve polls), a runtime's serve on the same Redis runs it, and the client's
 * handle reads the end — the fingerprint a direct `runtime.start` gives. Then a client's approval,
 * recorded by serve. Against the suite's private redis-server, never the system one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import type { Model, ModelRequest } from '../actors/model/model.js';
import { travelDomain } from '../examples/travel/domain.js';
import { TRAVEL_GOALS, TRAVEL_INTENT } from '../examples/travel/transcript.js';
import { publicKeyOf, signingKeyFromSecret } from '../journal/seal.js';
import { MemoryStore } from '../stores/memory.js';
import { RedisStore } from '../stores/redis.js';
import { spendApprovalPolicy } from '../machines/policy.js';
import { createClient } from '../client/index.js';
import { createRuntime } from '../runtime/index.js';
import { NO_REDIS_MESSAGE, requireRedis, startRedis, type RedisServer } from './support/redis-server.js';

const available = requireRedis();
if (!available && process.env.CI === 'true') {
  test('redis-server is installed (required under CI)', () => {
    throw new Error(NO_REDIS_MESSAGE);
  });
}
const key = signingKeyFromSecret(new Uint8Array(32).fill(43));
const root = mkdtempSync(path.join(tmpdir(), 'weft-client-redis-'));
let server: RedisServer | undefined;
beforeAll(async () => {
  if (available) server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

const model: Model = {
  id: 'scripted:client-redis',
  params: {},
  async complete(request: ModelRequest) {
    const goal = request.epoch === 1 ? TRAVEL_GOALS.findOptions : request.epoch === 2 ? TRAVEL_GOALS.bookTrip : undefined;
    return { text: JSON.stringify(goal ? { goal: { task: goal.task, args: [...goal.args] } } : { done: true, summary: 'booked' }) };
  },
};
const approvals = spendApprovalPolicy({ version: 'client-redis', limit: 100, amountArg: 'amount' });
const dir = (name: string) => mkdtempSync(path.join(root, `${name}-`));
const start = (seed: string) => ({ tenant: 't1', seed, asOf: travelDomain.asOf! });

/** A client and a serving runtime over one Redis prefix (two connections, as two processes would have), under `policy`. */
function pair(prefix: string, policy?: typeof approvals) {
  const clientStore = new RedisStore({ redis: server!.url, prefix });
  const weft = createClient({ store: clientStore, domain: travelDomain, stateDir: dir('declared'), model, signingKey: publicKeyOf(key), ...(policy ? { policy } : {}) });
  const runtime = createRuntime({ store: new RedisStore({ redis: server!.url, prefix }), domain: travelDomain, stateDir: dir('world'), model, signingKey: key, sleep: async () => undefined, dispatch: 'in-process', ...(policy ? { policy } : {}) });
  const stop = new AbortController();
  let serving: Promise<void> | undefined;
  return {
    weft,
    runtime,
    serve: () => (serving = runtime.serve({ signal: stop.signal, pollMs: 30 })),
    close: async () => {
      stop.abort();
      await serving;
      await runtime.close();
      await runtime.store.close().catch(() => undefined);
      await clientStore.close();
    },
  };
}

describe.skipIf(!available)('the client on Redis', () => {
  test('client.start pins into Redis (pending, in the open set serve polls); serve runs it to the fingerprint runtime.start gives', async () => {
    const direct = createRuntime({ store: new MemoryStore(), domain: travelDomain, stateDir: dir('direct'), model, signingKey: key, sleep: async () => undefined });
    const expected = await (await direct.start(TRAVEL_INTENT, start('redis'))).done;
    await direct.close();
    const { weft, runtime, serve, close } = pair('client-start');
    try {
      const handle = await weft.start(TRAVEL_INTENT, start('redis'));
      expect(handle.id).toBe(expected.id);
      expect((await weft.list()).find((row) => row.id === handle.id)?.status).toBe('pending');
      expect((await runtime.listOpen({ repair: true })).map((row) => [row.id, row.status])).toEqual([[handle.id, 'pending']]);
      void serve();
      expect(await handle.result({ pollMs: 20 })).toMatchObject({ status: 'completed', fingerprint: expected.fingerprint });
    } finally {
      await close();
    }
  });

  test('a client approval on Redis is recorded by serve, which goes on', async () => {
    const { weft, serve, close } = pair('client-approve', approvals);
    try {
      void serve();
      const asked = await weft.start(TRAVEL_INTENT, start('redis-approval'));
      for (let i = 0; i < 400 && (await weft.describe(asked.id)).status !== 'awaiting_approval'; i++) await new Promise((r) => setTimeout(r, 25));
      expect((await weft.describe(asked.id)).status).toBe('awaiting_approval');
      await asked.approve({ decision: 'approved', by: 'alice' });
      expect((await asked.result({ pollMs: 25 })).status).toBe('completed');
      const decided = (await weft.store.read(asked.id)).find((r) => r.kind === 'approval.decided');
      expect(decided?.body).toMatchObject({ decision: 'approved', by: 'alice' });
    } finally {
      await close();
    }
  });
});
