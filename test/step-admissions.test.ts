/**
 * Behaviour flag 9 (issue 23: one policy decides "each step at dispatch", recorded): every step's
 * admission at dispatch is an `admission.decided` {subject: 'step'}, allow included, written right
 * before the step's first attempt — its `step.dispatched` attempt 1, or its `step.shadowed` on a
 * shadow run — and not again for a retry. A sleep step is not admitted (no world effect, no policy
 * asked): it records none. Under the travel@5 pack each allow names its rule (flag 7).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { ScriptedModel } from '../actors/model/scripted.js';
import { remindLaterLibrary } from './support/remind-library.js';
import type { JournalRecord } from '../journal/records.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { MemoryStore } from '../stores/memory.js';
import { FLAG_STEP_ADMISSIONS, IMPLEMENTED_FLAGS } from '../machines/flags.js';
import { createRuntime } from '../runtime/index.js';
import { initialTravelState, seedTravelState, travelPackPolicy } from '../examples/travel/index.js';
import { TRAVEL_STATE_FILE, travelDomain } from '../examples/travel/domain.js';
import { newLedger, notifyActuators } from './support/notify-app.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(29));
const root = mkdtempSync(join(tmpdir(), 'weft-step-admissions-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Body = Record<string, unknown>;
const body = (r: JournalRecord) => r.body as Body;
const isStepAdmission = (r: JournalRecord) => r.kind === 'admission.decided' && body(r).subject === 'step';
const at = (r: JournalRecord) => `${r.epoch}#${body(r).step}`;

/** Each step admission with the record right after it, as `epoch#step:decision:rule -> kind#attempt`. */
function admittedThen(records: readonly JournalRecord[]): string[] {
  return records.flatMap((r, i) => {
    if (!isStepAdmission(r)) return [];
    const next = records[i + 1]!;
    const b = body(r);
    const same = next.epoch === r.epoch && body(next).step === b.step ? '' : ' (another step!)';
    return [`${at(r)}:${b.decision}:${b.rule ?? '-'} -> ${next.kind}${body(next).attempt === undefined ? '' : `#${body(next).attempt}`}${same}`];
  });
}

function travelRuntime(store: MemoryStore, stateDir: string) {
  return createRuntime({ store, domain: travelDomain, stateDir, signingKey: key, sleep: async () => undefined });
}

describe('behaviour flag 9: every step admission at dispatch is recorded', () => {
  test('a new invocation pins flag 9', () => {
    expect(FLAG_STEP_ADMISSIONS).toBe(9);
    expect(IMPLEMENTED_FLAGS).toContain(9);
  });

  test('a travel run: one allow per step, right before its first attempt, naming the travel@5 rule; a retry is not admitted again; replay matches', async () => {
    const store = new MemoryStore();
    const stateDir = join(root, 'travel');
    const id = 'flaky-hold';
    const world = initialTravelState();
    world.faults.flaky['airline.hold'] = 1; // attempt 1 fails transiently, attempt 2 holds
    seedTravelState(join(stateDir, id, TRAVEL_STATE_FILE), world);
    const runtime = travelRuntime(store, stateDir);
    const result = await (await runtime.start(travelDomain.intent!, { id, seed: 1, asOf: travelDomain.asOf! })).done;
    expect(result.status).toBe('completed');
    const records = await store.read(id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin).toMatchObject({ policy: travelPackPolicy.id });

    const dispatched = records.filter((r) => r.kind === 'step.dispatched');
    expect(dispatched.filter((r) => body(r).attempt === 2).map(at)).toEqual(['2#0']);
    const firstAttempts = dispatched.filter((r) => body(r).attempt === 1).map(at);
    expect(firstAttempts).toEqual(['1#0', '1#1', '2#0', '2#1', '2#2', '2#3', '2#4', '3#0', '3#1']);
    expect(admittedThen(records)).toEqual(firstAttempts.map((s) => `${s}:allow:weft:default -> step.dispatched#1`));
    for (const r of records.filter(isStepAdmission)) expect(body(r)).toEqual({ subject: 'step', step: body(r).step, decision: 'allow', policy: travelPackPolicy.id, rule: 'weft:default' });
    // The retry of 2#0 follows its failed first attempt, with no admission between.
    const retry = records.findIndex((r) => r.kind === 'step.dispatched' && body(r).attempt === 2);
    expect(records[retry - 1]!.kind).toBe('step.failed');

    expect(await runtime.replay(id)).toMatchObject({ status: 'completed', fingerprint: result.fingerprint });
  });

  test('a shadow run: the searches and each shadowed world effect are admitted once, right before their record', async () => {
    const store = new MemoryStore();
    const runtime = travelRuntime(store, join(root, 'shadow'));
    const result = await (await runtime.start(travelDomain.intent!, { id: 'shadow', seed: 5, shadow: true })).done;
    expect(result.status).toBe('completed');
    const records = await store.read('shadow');
    expect(admittedThen(records)).toEqual([
      '1#0:allow:weft:default -> step.dispatched#1',
      '1#1:allow:weft:default -> step.dispatched#1',
      ...[0, 1, 2, 3, 4].map((i) => `2#${i}:allow:weft:default -> step.shadowed`),
    ]);
    expect(records.filter((r) => r.kind === 'step.shadowed')).toHaveLength(5);
    expect(await runtime.replay('shadow')).toMatchObject({ fingerprint: result.fingerprint });
  });

  test('a sleep step is not admitted (no world effect, no policy asked): only the step after it records an admission', async () => {
    const intent = 'Remind Alice tomorrow morning';
    const wake = '2026-12-02T08:00:00.000Z';
    const library = remindLaterLibrary('remind-9');
    const model = new ScriptedModel({
      model: 'remind-9',
      entries: [
        { match: { intent, epoch: 1 }, reply: { goal: { task: 'remind_later', args: ['alice', Date.parse(wake)] } } },
        { match: { intent, epoch: 2 }, reply: { done: true, summary: 'reminded' } },
      ],
    });
    const clock = { now: Date.parse('2026-12-02T08:00:01Z') }; // already due: the timer fires at once
    const store = new MemoryStore();
    const runtime = createRuntime({ store, libraries: [library], actuators: notifyActuators(newLedger()), observe: 'world.observe', model, signingKey: key, now: () => new Date(clock.now), sleep: async () => undefined });
    const result = await (await runtime.start(intent, { tenant: 't', seed: 1, asOf: '2026-12-01T20:00:00Z' })).done;
    expect(result.status).toBe('completed');
    const records = await store.read(result.id);
    expect(records.filter((r) => r.kind === 'timer.set').map(at)).toEqual(['1#0']);
    expect(admittedThen(records)).toEqual(['1#1:allow:- -> step.dispatched#1']);
    expect(await runtime.replay(result.id)).toMatchObject({ fingerprint: result.fingerprint });
  });
});
