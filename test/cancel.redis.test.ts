/**
 * Cancel on Redis (issue 23: "everything works in both modes"): a hibernated travel run on a Redis
 * store is cancelled by a second runtime with its own connection; the cancel message round-trips
 * through the store's inbox (validated like an approval), the status index lists the invocation
 * `cancelled` and drops it from the open set `serve` polls, and the journal replays to the same
 * fingerprint and verifies. Runs against the suite's private redis-server, never the system one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import type { Model, ModelRequest } from '../actors/model/model.js';
import { travelDomain } from '../examples/travel/domain.js';
import { readTravelState } from '../examples/travel/state.js';
import { TRAVEL_GOALS, TRAVEL_INTENT } from '../examples/travel/transcript.js';
import type { JournalRecord } from '../journal/records.js';
import { publicKeyOf, signingKeyFromSecret } from '../journal/seal.js';
import { RedisStore } from '../stores/redis.js';
import { createRuntime } from '../runtime/index.js';
import { NO_REDIS_MESSAGE, requireRedis, startRedis, type RedisServer } from './support/redis-server.js';

const available = requireRedis();
if (!available && process.env.CI === 'true') {
  test('redis-server is installed (required under CI)', () => {
    throw new Error(NO_REDIS_MESSAGE);
  });
}
const key = signingKeyFromSecret(new Uint8Array(32).fill(29));
const root = mkdtempSync(path.join(tmpdir(), 'weft-cancel-redis-'));
let server: RedisServer | undefined;

beforeAll(async () => {
  if (available) server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

const model: Model = {
  id: 'scripted:cancel-redis',
  params: {},
  async complete(request: ModelRequest) {
    const goal = request.epoch === 1 ? TRAVEL_GOALS.findOptions : request.epoch === 2 ? TRAVEL_GOALS.bookTrip : undefined;
    return { text: JSON.stringify(goal ? { goal: { task: goal.task, args: [...goal.args] } } : { done: true, summary: 'booked' }) };
  },
};

function runtimeOn(prefix: string, stateDir = mkdtempSync(path.join(root, 'state-'))) {
  const store = new RedisStore({ redis: server!.url, prefix });
  return createRuntime({ store, domain: travelDomain, stateDir, actuators: travelDomain.actuators({ stateDir }), model, signingKey: key, sleep: async () => undefined });
}

describe.skipIf(!available)('cancel on Redis', () => {
  test('a hibernated run cancelled by a second runtime: the index lists it cancelled and serve no longer polls it', async () => {
    const prefix = 'cancel-hibernated';
    // One world for both runtimes, as in a deployment: the second acts where the first booked.
    const world = mkdtempSync(path.join(root, 'world-'));
    const first = runtimeOn(prefix, world);
    const second = runtimeOn(prefix, world);
    try {
      const handle = await first.start(TRAVEL_INTENT, { tenant: 't1', seed: 'redis', asOf: travelDomain.asOf! });
      handle.on('record', (record: JournalRecord) => {
        if (record.kind === 'step.dispatched' && record.epoch === 2) handle.hibernate();
      });
      expect((await handle.done).status).toBe('hibernated');
      expect((await second.listOpen()).map((row) => row.id)).toContain(handle.id);

      const result = await (await second.cancel(handle.id, { reason: 'plans changed', by: 'ops' })).done;
      expect(result.status).toBe('cancelled');
      const kept = result.cancelled!.kept;
      expect(kept.map((k) => k.actuator)).toEqual(['airline.hold', 'hotel.hold', 'card.charge', 'airline.confirm', 'hotel.confirm']);
      // The closed epoch's effects stay done: booked, charged once, each applied once under its key.
      const state = readTravelState(path.join(world, handle.id, 'providers.json'));
      expect(state.holds.map((h) => `${h.kind}:${h.status}`).sort()).toEqual(['flight:converted', 'hotel:converted']);
      expect(state.charges).toHaveLength(1);
      for (const effect of kept) expect(state.ledger[effect.key], effect.key).toMatchObject({ actuator: effect.actuator, applied: 1 });
      const records = await second.store.read(handle.id);
      expect(records.slice(-3).map((r) => r.kind)).toEqual(['cancel.requested', 'invocation.cancelled', 'invocation.sealed']);
      expect(records.at(-2)!.body).toEqual({ by: 'ops', reason: 'plans changed', kept });
      expect(records.some((r) => r.kind === 'compensation.dispatched')).toBe(false);
      expect(await second.store.peekInbox(handle.id)).toBeUndefined();

      // The index says cancelled; the open set (what serve polls) no longer holds it.
      expect((await (second.store as RedisStore).indexed()).find((entry) => entry.id === handle.id)?.status).toBe('cancelled');
      expect((await second.listOpen()).map((row) => row.id)).not.toContain(handle.id);
      expect((await second.list()).find((row) => row.id === handle.id)?.status).toBe('cancelled');

      expect(await second.replay(handle.id)).toMatchObject({ status: 'cancelled', sealed: true, fingerprint: result.fingerprint });
      expect((await second.verify(handle.id, publicKeyOf(key))).ok).toBe(true);
    } finally {
      await first.close();
      await second.close();
      await first.store.close().catch(() => undefined);
      await second.store.close().catch(() => undefined);
    }
  });

  test('the store keeps a cancel message as it is and refuses a malformed one', async () => {
    const store = new RedisStore({ redis: server!.url, prefix: 'cancel-inbox' });
    try {
      const message = { type: 'cancel' as const, by: 'ops', reason: '', at: 1 };
      await store.putInbox('inv-x', message);
      expect(await store.peekInbox('inv-x')).toEqual(message);
      await expect(store.putInbox('inv-x', { type: 'cancel', by: '', reason: 'x', at: 1 } as never)).rejects.toBeInstanceOf(TypeError);
    } finally {
      await store.close();
    }
  });
});
