/**
 * Shadow runs (issue 23, "Shadow runs"; docs/operate-shadow.md): `start(intent, { shadow: true })`
 * decomposes, admits and records each epoch, and nothing reaches the world — each world-effect step
 * is a `step.shadowed` record, never a `step.dispatched`; read-only steps and observations run as
 * usual. The pin says it is a shadow (`pin.shadow.results`), and so do `ls` and `show`.
 *
 * - travel (its actuators give no shadow results): the run ends after the first epoch whose world
 *   effects were shadowed, completed with a summary that says so; the travel world holds nothing
 *   but what the read-only searches recorded; the journal replays to the same fingerprint on a
 *   runtime with no actuators and verifies offline.
 * - a refunds domain whose world-effect actuators have `shadow(args, ctx)`: the run goes on past its
 *   first epoch, each step's shadow result recorded, `run` never called — and it replays without
 *   calling `shadow` either.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import '../journal/sha256-node.js';
import { ActuatorError, type Actuator } from '../actors/actuator.js';
import { ScriptedModel } from '../actors/model/scripted.js';
import * as htn from '../htn/library/builder.js';
import { refundsLibrary } from './support/refunds-library.mjs';
import type { JournalRecord } from '../journal/records.js';
import { publicKeyOf, signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { MemoryStore } from '../stores/memory.js';
import { checkBody } from '../journal/record-check.js';
import { InProcessDispatcher } from '../queue/in-process.js';
import { createRuntime, defineDomain, describeInvocation, listInvocations, Runtime, RuntimeUsageError } from '../runtime/index.js';
import { shadowPin, worldEffectActuators } from '../runtime/shadow-pin.js';
import { gapSourcesOf } from '../mining/sources.js';
import { REDACTED, redactRecords } from '../journal/redaction.js';
import { recordEvent } from '../inspector/stately/record-events.js';
import { travelDomain, travelLibrary, travelPackPolicy, travelPolicy, travelPolicyV2, TRAVEL_OBSERVE } from '../examples/travel/index.js';
import { initialTravelState, readTravelState, seedTravelState } from '../examples/travel/state.js';
import { travelEvaluables } from '../examples/travel/library.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(23));
const READ_ONLY_TRAVEL = new Set(['flights.search', 'hotels.search']);

const kinds = (records: readonly JournalRecord[]) => records.map((r) => r.kind);
const bodies = <K extends JournalRecord['kind']>(records: readonly JournalRecord[], kind: K) => records.filter((r) => r.kind === kind).map((r) => (r as JournalRecord<K>).body);

describe('a shadow run of travel (no shadow results)', () => {
  test('dispatches no world effect, leaves the world as it was, records what it would have done, ends after its first shadowed epoch, replays and verifies', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-shadow-'));
    const stateDir = join(dir, 'state');
    const store = new FileStore(join(dir, 'store'));
    const id = 'shadow-travel';
    // The world before: the travel world this invocation would book in, seeded now.
    const worldFile = join(stateDir, id, 'providers.json');
    seedTravelState(worldFile);
    const before = readTravelState(worldFile);
    expect(before).toEqual(initialTravelState());

    const runtime = createRuntime({ store, domain: travelDomain, stateDir, signingKey: key, sleep: async () => undefined });
    const handle = await runtime.start(travelDomain.intent!, { id, seed: 5, shadow: true });
    const result = await handle.done;
    expect(result.status).toBe('completed');
    expect(result.summary).toMatch(/^shadow run, nothing reached the world: ended after epoch 2, whose world effects were shadowed with no shadow result/);

    const records = await store.read(id);
    const pinned = records[0] as JournalRecord<'invocation.pinned'>;
    expect(pinned.body.pin.shadow).toEqual({ results: 'none' });
    // Only the read-only searches were dispatched; every world effect was shadowed instead, with the args and key it would have carried.
    expect(bodies(records, 'step.dispatched').map((b) => b.actuator)).toEqual(['flights.search', 'hotels.search']);
    const shadowed = bodies(records, 'step.shadowed');
    expect(shadowed.map((b) => b.actuator)).toEqual(['airline.hold', 'hotel.hold', 'card.charge', 'airline.confirm', 'hotel.confirm']);
    for (const [i, b] of shadowed.entries()) expect(b).toMatchObject({ step: i, key: `${id}.2.${i}`, source: 'none', result: null });
    expect(shadowed[2]!.args).toMatchObject({ amount: 780, card: 'card-visa-4242' });
    expect(records.every((r) => r.epoch <= 3)).toBe(true);
    // Admission ran as in a real run (the epoch was certified), and no compensation was needed: nothing happened.
    expect(bodies(records, 'epoch.certified')).toHaveLength(2);
    expect(kinds(records).filter((k) => k.startsWith('compensation.'))).toEqual([]);
    expect(kinds(records).slice(-3)).toEqual(['epoch.closed', 'invocation.completed', 'invocation.sealed']);

    // The world after: only what the read-only searches record (offers, their ledger entries) differs.
    const after = readTravelState(worldFile);
    const { offers: _o1, ledger: ledgerAfter, ...restAfter } = after;
    const { offers: _o0, ledger: _l0, ...restBefore } = before;
    expect(restAfter).toEqual(restBefore);
    expect(after.holds).toEqual([]);
    expect(after.charges).toEqual([]);
    expect(after.bookings).toEqual([]);
    expect(Object.values(ledgerAfter).every((e) => READ_ONLY_TRAVEL.has(e.actuator))).toBe(true);

    // Replays to the same fingerprint on a runtime that has no actuators at all (and an empty store: the pinned travel@5 pack is its own), and verifies offline.
    const bare = createRuntime({ store: new MemoryStore(), libraries: [travelLibrary], evaluables: travelEvaluables(), observe: TRAVEL_OBSERVE, policy: travelPackPolicy, policies: [travelPolicy, travelPolicyV2] });
    expect(await bare.replay({ journalPath: result.journal! })).toMatchObject({ status: 'completed', fingerprint: result.fingerprint });
    const verdict = await runtime.verify({ journalPath: result.journal! }, publicKeyOf(key));
    expect(verdict.ok).toBe(true);

    // ls and show make it recognisable.
    const row = (await listInvocations(store)).find((r) => r.id === id);
    expect(row).toMatchObject({ status: 'completed', shadow: 'none' });
    const described = await describeInvocation(store, id);
    expect(described.pin?.shadow).toEqual({ results: 'none' });
    expect(described.epochs.at(-1)!.steps.map((s) => s.outcome)).toEqual(['shadowed', 'shadowed', 'shadowed', 'shadowed', 'shadowed']);
    await runtime.close();
  });

  test('hibernated at each boundary and resumed, a shadow run ends where an uninterrupted one does, with the same fingerprint', async () => {
    const run = async (rest: boolean) => {
      const dir = mkdtempSync(join(tmpdir(), 'weft-shadow-rest-'));
      const store = new MemoryStore();
      const runtime = createRuntime({ store, domain: travelDomain, stateDir: dir, signingKey: key, sleep: async () => undefined });
      let handle = await runtime.start(travelDomain.intent!, { id: 'shadow-rest', shadow: true });
      if (rest) {
        // Rest after epoch 1 (the searches), then after epoch 2 (the shadowed bookings): the second
        // snapshot carries the note that the run ends there, and the resume honours it.
        for (let i = 0; i < 2; i++) {
          handle.hibernate();
          expect((await handle.done).status).toBe('hibernated');
          handle = await runtime.resume('shadow-rest');
        }
      }
      const result = await handle.done;
      return { result, records: await store.read('shadow-rest') };
    };
    const straight = await run(false);
    const rested = await run(true);
    expect(rested.result.status).toBe('completed');
    expect(rested.result.summary).toMatch(/ended after epoch 2/);
    expect(rested.result.fingerprint).toBe(straight.result.fingerprint);
    expect(bodies(rested.records, 'model.requested')).toHaveLength(bodies(straight.records, 'model.requested').length);
  });

  test('a real run of the same intent is listed without a shadow mark, and gets another default id', async () => {
    const opts = { tenant: 'default', seed: 5, asOf: travelDomain.asOf! };
    expect(Runtime.defaultId(travelDomain.intent!, { ...opts, shadow: true })).not.toBe(Runtime.defaultId(travelDomain.intent!, opts));
    const dir = mkdtempSync(join(tmpdir(), 'weft-shadow-real-'));
    const store = new MemoryStore();
    const runtime = createRuntime({ store, domain: travelDomain, stateDir: dir, signingKey: key, sleep: async () => undefined });
    const handle = await runtime.start(travelDomain.intent!, opts);
    expect((await handle.done).status).toBe('completed');
    const records = await store.read(handle.id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin).not.toHaveProperty('shadow');
    expect(kinds(records)).not.toContain('step.shadowed');
    expect((await listInvocations(store))[0]).not.toHaveProperty('shadow');
  });

  test('start refuses a shadow option that is not a boolean, before anything is written', async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ store, domain: travelDomain, stateDir: mkdtempSync(join(tmpdir(), 'weft-shadow-bad-')), signingKey: key });
    await expect(runtime.start('x', { shadow: 'yes' as never })).rejects.toThrow(RuntimeUsageError);
    await expect(runtime.start('x', { shadow: 'yes' as never })).rejects.toThrow(/shadow must be true or false/);
    expect(await store.list()).toEqual([]);
  });
});

// ---- a domain whose world effects have shadow results ------------------------------------------

const intent = 'Refund ana 600, then bob 100';
const asOf = '2026-06-01T09:00:00Z';

const library = refundsLibrary(htn, 'shadow-refunds');

const transcript = {
  model: 'shadow-refunds',
  entries: [
    { match: { intent, epoch: 1 }, reply: { goal: { task: 'refund_and_tell', args: ['ana', 600] } } },
    { match: { intent, epoch: 2 }, reply: { goal: { task: 'refund_and_tell', args: ['bob', 100] } } },
    { match: { intent, epoch: 3 }, reply: { done: true, summary: 'refunded ana and bob, and told them' } },
  ],
};

interface World {
  /** Effects `run` applied (must stay empty in a shadow run). */
  applied: string[];
  /** Shadow calls, by key. */
  shadowed: string[];
}

function refundActuators(world: World, options: { shadowFor?: ReadonlySet<string>; failShadow?: string } = {}): Actuator[] {
  const shadowFor = options.shadowFor ?? new Set(['refund.issue', 'email.send']);
  const effect = (name: string): Actuator => ({
    name,
    kind: name === 'email.send' ? 'message' : 'tool',
    readOnly: false,
    argsSchema: z.object({ amount: z.number() }).passthrough(),
    resultSchema: z.object({ id: z.string(), amount: z.number() }),
    async run(args, ctx) {
      world.applied.push(`${name} ${ctx.key}`);
      return { id: `${name}:${ctx.key}`, amount: args.amount };
    },
    ...(shadowFor.has(name)
      ? {
          async shadow(args: { amount: number }, ctx: { key: string }) {
            world.shadowed.push(`${name} ${ctx.key}`);
            if (options.failShadow === name) throw new ActuatorError('refunds.closed', 'permanent', 'the refund desk is closed');
            return { id: `would-be:${name}`, amount: args.amount };
          },
        }
      : {}),
  });
  return [
    {
      name: 'refunds.observe',
      kind: 'state',
      readOnly: true,
      argsSchema: z.object({ goal: z.unknown() }),
      resultSchema: z.unknown(),
      async run() {
        return { objects: [{ name: 'ana', type: 'customer' }, { name: 'bob', type: 'customer' }], facts: [['known', 'ana'], ['known', 'bob']] };
      },
    },
    effect('refund.issue'),
    effect('email.send'),
  ];
}

function refundsRuntime(store: MemoryStore, world: World, options?: Parameters<typeof refundActuators>[1]) {
  const domain = defineDomain({ name: 'shadow-refunds', libraries: [library], actuators: refundActuators(world, options), observe: 'refunds.observe', model: new ScriptedModel(transcript), asOf });
  return createRuntime({ store, domain, signingKey: key, sleep: async () => undefined });
}

describe('a shadow run whose actuators give shadow results', () => {
  test('goes on past its first epoch, records each shadow result, calls no run, and replays without calling shadow', async () => {
    const store = new MemoryStore();
    const world: World = { applied: [], shadowed: [] };
    const runtime = refundsRuntime(store, world);
    const handle = await runtime.start(intent, { shadow: true });
    const result = await handle.done;
    expect(result).toMatchObject({ status: 'completed', summary: 'refunded ana and bob, and told them' });
    expect(world.applied).toEqual([]);
    expect(world.shadowed).toEqual([`refund.issue ${handle.id}.1.0.shadow`, `email.send ${handle.id}.1.1.shadow`, `refund.issue ${handle.id}.2.0.shadow`, `email.send ${handle.id}.2.1.shadow`]);

    const records = await store.read(handle.id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.shadow).toEqual({ results: 'actuators' });
    expect(kinds(records)).not.toContain('step.dispatched');
    expect(bodies(records, 'step.shadowed')).toEqual([
      { step: 0, actuator: 'refund.issue', args: { amount: 600, customer: 'ana' }, key: `${handle.id}.1.0`, source: 'actuator', result: { id: 'would-be:refund.issue', amount: 600 } },
      { step: 1, actuator: 'email.send', args: { amount: 600, to: 'ana' }, key: `${handle.id}.1.1`, source: 'actuator', result: { id: 'would-be:email.send', amount: 600 } },
      { step: 0, actuator: 'refund.issue', args: { amount: 100, customer: 'bob' }, key: `${handle.id}.2.0`, source: 'actuator', result: { id: 'would-be:refund.issue', amount: 100 } },
      { step: 1, actuator: 'email.send', args: { amount: 100, to: 'bob' }, key: `${handle.id}.2.1`, source: 'actuator', result: { id: 'would-be:email.send', amount: 100 } },
    ]);
    expect(bodies(records, 'epoch.closed')).toEqual([{ outcome: 'completed', steps: 2 }, { outcome: 'completed', steps: 2 }]);

    // Replay reads the shadow results back: a runtime with no actuators at all reaches the same fingerprint.
    const bare = createRuntime({ store: new MemoryStore(), libraries: [library], observe: 'refunds.observe' });
    expect(await bare.replay({ records })).toMatchObject({ status: 'completed', fingerprint: result.fingerprint });
    expect(world.shadowed).toHaveLength(4);
    expect((await runtime.verify(handle.id, publicKeyOf(key))).ok).toBe(true);
    expect((await listInvocations(store))[0]).toMatchObject({ status: 'completed', shadow: 'actuators' });
  });

  test('a real start under a shadow run\'s id is refused: the pins differ', async () => {
    const store = new MemoryStore();
    const world: World = { applied: [], shadowed: [] };
    const runtime = refundsRuntime(store, world);
    await (await runtime.start(intent, { id: 'shadow-first', shadow: true })).done;
    await expect(runtime.start(intent, { id: 'shadow-first' })).rejects.toThrow(/already exists with a different intent or pin/);
    expect(world.applied).toEqual([]);
  });

  test('one world-effect actuator without a shadow pins results "none": nothing is asked of any, and the run ends after epoch 1', async () => {
    const store = new MemoryStore();
    const world: World = { applied: [], shadowed: [] };
    const runtime = refundsRuntime(store, world, { shadowFor: new Set(['refund.issue']) });
    const handle = await runtime.start(intent, { shadow: true });
    const result = await handle.done;
    expect(result.status).toBe('completed');
    expect(result.summary).toMatch(/ended after epoch 1/);
    expect(world).toEqual({ applied: [], shadowed: [] });
    const records = await store.read(handle.id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.shadow).toEqual({ results: 'none' });
    expect(bodies(records, 'step.shadowed').map((b) => [b.actuator, b.source])).toEqual([['refund.issue', 'none'], ['email.send', 'none']]);
    expect(bodies(records, 'model.requested').map((b) => (b.request as { epoch: number }).epoch)).toEqual([1]);
  });

  test('a shadow call that fails fails its epoch like a step failure: recorded, nothing compensated (nothing happened), re-planned', async () => {
    const store = new MemoryStore();
    const world: World = { applied: [], shadowed: [] };
    const runtime = refundsRuntime(store, world, { failShadow: 'email.send' });
    const handle = await runtime.start(intent, { shadow: true, id: 'shadow-fails' });
    await handle.done;
    const records = await store.read('shadow-fails');
    const first = records.filter((r) => r.epoch === 1);
    expect(bodies(first, 'step.shadowed').map((b) => [b.actuator, b.source, b.failure?.code ?? null])).toEqual([['refund.issue', 'actuator', null], ['email.send', 'actuator', 'refunds.closed']]);
    expect(kinds(first).filter((k) => k.startsWith('compensation.'))).toEqual([]);
    expect(bodies(first, 'epoch.closed')).toEqual([{ outcome: 'compensated', steps: 1 }]);
    expect(world.applied).toEqual([]);
    const bare = createRuntime({ store: new MemoryStore(), libraries: [library], observe: 'refunds.observe' });
    expect((await bare.replay({ records })).fingerprint).toBe((records.at(-1) as JournalRecord<'invocation.sealed'>).body.fingerprint);
  });
});

describe('what a shadow run pins and records', () => {
  test('the pin decides from the library\'s world-effect actuators (read-only ones and the sleep step need no shadow)', () => {
    expect(worldEffectActuators(travelLibrary)).not.toContain('flights.search');
    expect(worldEffectActuators(travelLibrary)).toContain('card.charge');
    const world: World = { applied: [], shadowed: [] };
    expect(shadowPin(library, new InProcessDispatcher(refundActuators(world)))).toEqual({ results: 'actuators' });
    expect(shadowPin(library, new InProcessDispatcher(refundActuators(world, { shadowFor: new Set(['email.send']) })))).toEqual({ results: 'none' });
    expect(shadowPin(library, undefined)).toEqual({ results: 'none' });
  });

  test('step.shadowed bodies are strict: a failure, a source of none, or a stray field is checked', () => {
    const base = { step: 0, actuator: 'a', args: {}, key: 'k', source: 'none', result: null };
    expect(checkBody('step.shadowed', base)).toEqual({ ok: true });
    expect(checkBody('step.shadowed', { ...base, source: 'actuator', failure: { class: 'permanent', code: 'x', message: 'm' } })).toEqual({ ok: true });
    expect(checkBody('step.shadowed', { ...base, source: 'elsewhere' }).ok).toBe(false);
    expect(checkBody('step.shadowed', { ...base, attempt: 1 }).ok).toBe(false);
  });

  test('weft mine learns nothing from a shadow run: a gap-path epoch that shadowed its world effects is "shadowed", not completed', () => {
    const rec = (seq: number, kind: string, epoch: number, body: unknown) => ({ seq, kind, epoch, body, prev: '0'.repeat(64), hash: '0'.repeat(64) }) as unknown as JournalRecord;
    const records = [
      rec(0, 'invocation.pinned', 0, { schema: 1, invocation: 'inv-gap', tenant: 't', intent: 'i', pin: {} }),
      rec(1, 'state.observed', 1, { actuator: 'o', key: 'k', state: { objects: [{ name: 'ana', type: 'customer' }], facts: [['known', 'ana']] } }),
      rec(2, 'model.completed', 1, { purpose: 'author', attempt: 1, reply: { steps: [{ operator: 'refund', args: ['ana', 5] }] } }),
      rec(3, 'epoch.derived', 1, { source: 'authored', goal: { task: 'refund_and_tell', args: ['ana', 5] }, library: 'a'.repeat(64), plan: 'b'.repeat(64), steps: 1 }),
      rec(4, 'step.shadowed', 1, { step: 0, actuator: 'refund.issue', args: {}, key: 'inv-gap.1.0', source: 'none', result: null }),
      rec(5, 'epoch.closed', 1, { outcome: 'completed', steps: 1 }),
    ];
    expect(gapSourcesOf(records).map((g) => g.outcome)).toEqual(['shadowed']);
    expect(gapSourcesOf(records.filter((r) => r.kind !== 'step.shadowed')).map((g) => g.outcome)).toEqual(['completed']);
  });

  test('a domain\'s redaction marks cover step.shadowed: its args and its shadow result, by its actuator', () => {
    const record = { seq: 4, kind: 'step.shadowed', epoch: 2, body: { step: 2, actuator: 'card.charge', args: { amount: 780, card: 'card-visa-4242' }, key: 'k.2.2', source: 'actuator', result: { card: 'card-visa-4242', charged: 780 } }, prev: '0'.repeat(64), hash: '0'.repeat(64) } as unknown as JournalRecord;
    const { records } = redactRecords([record], { args: { 'card.charge': ['card'] }, results: { 'card.charge': ['card'] } });
    expect(records[0]!.body).toMatchObject({ args: { amount: 780, card: REDACTED }, result: { card: REDACTED, charged: 780 } });
    expect(JSON.stringify(records)).not.toContain('card-visa-4242');
  });

  test('the Stately relay gives a shadowed step an event of its own, without its args', () => {
    const body = { step: 0, actuator: 'airline.hold', args: { flight: 'f-1' }, key: 'k.2.0', source: 'none', result: null };
    expect(recordEvent({ seq: 9, kind: 'step.shadowed', epoch: 2, body } as never)).toEqual({ type: 'weft.step.shadowed', seq: 9, epoch: 2, step: 0, actuator: 'airline.hold', source: 'none' });
  });
});
