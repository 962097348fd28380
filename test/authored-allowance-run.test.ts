/**
 * Issue 30, defects 2 and 3 (behaviour flag 11): the authored allowance holds per run, a run that
 * hands off lists the model-authored effects that stay applied, and the rule that let an authored
 * fragment through is named on every admission of it.
 *
 * A hostile model names `book_transfer` again in each of eleven epochs (a new day each time, so the
 * provider books each ride) and authors a 35 EUR taxi each time, on a travel library where booking
 * again is lawful (test/support/per-fragment-taxi-travel.ts: the taxi counted per fragment), so the
 * allowance alone limits the run; travel's pack admits model-authored
 * taxi bookings up to 80 EUR without a person — per run (`per: 'run'`). The first two fragments (35,
 * then 70 this run) are admitted by `model-taxi-allowance`, named on the epoch and on each step at
 * dispatch (the read-only quote too); the third (105 > 80) waits for a person, and so does every one
 * after it; approved, each is booked. After the eleventh the run ends handed off ("not done after 12
 * epochs": the twelfth would be one too many) listing the eleven bookings that stay applied. Each test
 * asserts the journal's records and the world's bookings; replay reproduces the fingerprint.
 * A journal pinned without flag 11 keeps the old rule: each fragment is held to the allowance alone,
 * and `weft:default` is recorded as before.
 * On stock travel the two limits compose: the first ride is admitted by the allowance, and the
 * second booking of the task is refused by the library's run-wide count (`weft:task-constraints`,
 * flag 10's slice) before the pack is asked; nothing more is booked.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import '../journal/sha256-node.js';
import type { Model, ModelRequest } from '../actors/model/model.js';
import type { JournalRecord } from '../journal/records.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { MemoryStore } from '../stores/memory.js';
import { parseRulePackText } from '../policy/index.js';
import { FLAG_RUN_ALLOWANCE, IMPLEMENTED_FLAGS } from '../machines/flags.js';
import { createRuntime as todaysRuntime, Runtime } from '../runtime/index.js';
import { explainAdmissions } from '../runtime/admissions.js';
import { TRAVEL_STATE_FILE, travelDomain } from '../examples/travel/domain.js';
import { TRAVEL_POLICY_PACK, travelPackPolicy, travelPackPolicyV4 } from '../examples/travel/policy-pack.js';
import { initialTravelState, readTravelState, seedTravelState } from '../examples/travel/index.js';
import { TRAVEL_TRANSFER_INTENTS } from '../examples/travel/transfer-script.js';
import { libraryDigest } from '../htn/library/digest.js';
import { TRAVEL_LIBRARY_BEFORE_BINDINGS_DIGEST } from '../examples/travel/library-before-bindings.js';
import { travelLibrary } from '../examples/travel/library.js';
import { assertBuilt, weft } from './support/cli.js';
import { travelLibraryTaxiPerFragment } from './support/per-fragment-taxi-travel.js';

const root = mkdtempSync(join(tmpdir(), 'weft-allowance-run-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const AS_OF = '2026-06-01T09:00:00Z';
const INTENT = 'Book me a taxi from Lisbon airport to my hotel, again and again';
type Body = Record<string, any>;

/** Names book_transfer for a new day in each epoch and authors a 35 EUR ride for it. */
const hostile: Model = {
  id: 'test:hostile-taxi',
  params: {},
  async complete(request: ModelRequest) {
    if (request.purpose === 'author') {
      const [t, from, to, day] = request.goal!.args;
      return { text: JSON.stringify({ steps: [{ operator: 'quote_taxi', args: [t, from, to, day] }, { operator: 'book_taxi', args: [t, from, to, day, 35] }] }) };
    }
    return { text: JSON.stringify({ goal: { task: 'book_transfer', args: ['me', 'lisbon-airport', 'h-alfama', request.epoch, 120] } }) };
  },
};

let n = 0;
/**
 * A travel runtime in a workspace of its own, the hostile model playing. Its library is travel's
 * with the taxi counted per fragment (test/support/per-fragment-taxi-travel.ts), where booking
 * again is lawful, so the allowance alone limits the run; `stock` runs travel's own library, whose
 * run-wide count refuses a second booking of the task first.
 */
function travel(createRuntime: typeof todaysRuntime = todaysRuntime, { stock = false } = {}) {
  const dir = join(root, `ws${n++}`);
  const store = new FileStore(dir);
  const stateDir = join(dir, 'state');
  const libraries = stock ? {} : { libraries: [travelLibraryTaxiPerFragment] };
  const runtime = createRuntime({ store, domain: travelDomain, ...libraries, stateDir, model: hostile, signingKey: signingKeyFromSecret(new Uint8Array(32).fill(7)), sleep: async () => undefined });
  return { dir, store, stateDir, runtime };
}

async function start(t: ReturnType<typeof travel>, seed: string) {
  const options = { tenant: 'taxi', seed, asOf: AS_OF };
  const id = Runtime.defaultId(INTENT, options);
  seedTravelState(join(t.stateDir, id, TRAVEL_STATE_FILE), initialTravelState());
  const handle = await t.runtime.start(INTENT, { ...options, id });
  return { id, result: await handle.done };
}

const ofKind = (records: JournalRecord[], kind: string) => records.filter((r) => r.kind === kind);
const epochAdmissions = (records: JournalRecord[]): Body[] => ofKind(records, 'admission.decided').filter((r) => (r.body as Body).subject === 'epoch').map((r) => ({ epoch: r.epoch, ...(r.body as Body) }));
const stepAdmissions = (records: JournalRecord[], epoch: number) => ofKind(records, 'admission.decided').filter((r) => r.epoch === epoch && (r.body as Body).subject === 'step').map((r) => r.body as Body);
const liveRides = (stateDir: string, id: string) => (readTravelState(join(stateDir, id, TRAVEL_STATE_FILE)).transfers ?? []).filter((t) => t.status === 'booked');

describe('behaviour flag 11', () => {
  test('new invocations pin it; travel pins its pack with the allowance per run', () => {
    expect(FLAG_RUN_ALLOWANCE).toBe(11);
    expect(IMPLEMENTED_FLAGS).toContain(11);
    expect(TRAVEL_POLICY_PACK.rules.find((r) => r.id === 'model-taxi-allowance')).toEqual({ id: 'model-taxi-allowance', rule: 'authored-effects', admit: { actuators: ['taxi.book'], spendAtMost: 80, per: 'run' } });
    expect(travelPackPolicy.envelope?.authoredEffects).toEqual({ actuators: ['taxi.book'], spendAtMost: 80, per: 'run' });
  });
});

describe('eleven epochs of 35 EUR each', () => {
  const t = travel();
  let id = '';
  let records: JournalRecord[] = [];
  let final: Awaited<ReturnType<typeof start>>['result'];

  beforeAll(async () => {
    const started = await start(t, 'eleven');
    id = started.id;
    // Epochs 1 and 2 ran without a person; the third asks for one.
    expect(started.result.status).toBe('awaiting_approval');
    records = await t.store.read(id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.library).toBe(libraryDigest(travelLibraryTaxiPerFragment));
    expect(records.at(-1)!.kind).toBe('approval.requested');
    expect(records.at(-1)!.epoch).toBe(3);
    expect(liveRides(t.stateDir, id).map((r) => [r.day, r.amount])).toEqual([[1, 35], [2, 35]]);
    let result = started.result;
    for (let epoch = 3; epoch <= 11; epoch++) {
      expect(result.status, `epoch ${epoch}`).toBe('awaiting_approval');
      const waiting = await t.store.read(id);
      expect(waiting.at(-1)).toMatchObject({ kind: 'approval.requested', epoch });
      // Nothing of this epoch's fragment was booked before the person said so.
      expect(liveRides(t.stateDir, id)).toHaveLength(epoch - 1);
      result = await (await t.runtime.approve(id, { decision: 'approved', by: 'ana' })).done;
    }
    final = result;
    records = await t.store.read(id);
  });

  test('the first two fragments are admitted by the allowance, named, with what they spend of it this run; the third and every later one wait for a person', () => {
    const epochs = epochAdmissions(records);
    expect(epochs.map((a) => [a.epoch, a.decision, a.rule])).toEqual([
      [1, 'allow', 'model-taxi-allowance'],
      [2, 'allow', 'model-taxi-allowance'],
      ...[3, 4, 5, 6, 7, 8, 9, 10, 11].map((e) => [e, 'require_approval', 'model-taxi-allowance']),
    ]);
    expect(epochs[0]!.reason).toBe('the model authored 1 world effect (taxi.book) spending 35: 35 of the 80 amount the pack admits from the model without a person this run');
    expect(epochs[1]!.reason).toBe('the model authored 1 world effect (taxi.book) spending 35: 70 of the 80 amount the pack admits from the model without a person this run (35 by 1 authored effect admitted before)');
    expect(epochs[2]!.reason).toBe('the model authored this fragment (no method covers book_transfer) and it has 1 world effect(s) spending 35, with 70 spent by 2 authored effect(s) admitted before in this run (105 in all), above the 80 the policy admits from the model without a person this run: a person approves them');
    expect(epochs[3]!.reason).toMatch(/spending 35, with 105 spent by 3 authored effect\(s\) admitted before in this run \(140 in all\), above the 80/);
    // Each approval request and decision, epochs 3 to 11.
    expect(ofKind(records, 'approval.requested').map((r) => r.epoch)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(ofKind(records, 'approval.decided').map((r) => [r.epoch, (r.body as Body).decision, (r.body as Body).by])).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11].map((e) => [e, 'approved', 'ana']));
  });

  test('each step of an authored fragment is admitted at dispatch by the rule that let the fragment through — the read-only quote too', () => {
    for (const epoch of [1, 2, 3, 11]) {
      expect(stepAdmissions(records, epoch), `epoch ${epoch}`).toEqual([
        { subject: 'step', step: 0, decision: 'allow', policy: travelPackPolicy.id, rule: 'model-taxi-allowance' },
        { subject: 'step', step: 1, decision: 'allow', policy: travelPackPolicy.id, rule: 'model-taxi-allowance' },
      ]);
    }
    // The authoring calls themselves are decided by no rule of the pack.
    expect(ofKind(records, 'admission.decided').filter((r) => (r.body as Body).subject === 'authoring').map((r) => (r.body as Body).rule)).toEqual(Array(11).fill('weft:default'));
  });

  test('the world holds eleven live bookings of 35 (385 in all), each dispatched once, after its admission', () => {
    const rides = liveRides(t.stateDir, id);
    expect(rides.map((r) => r.day)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(rides.reduce((sum, r) => sum + r.amount, 0)).toBe(385);
    const booked = ofKind(records, 'step.dispatched').filter((r) => (r.body as Body).actuator === 'taxi.book');
    expect(booked.map((r) => [r.epoch, (r.body as Body).args.day, (r.body as Body).attempt])).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map((e) => [e, e, 1]));
    for (const r of booked.filter((x) => x.epoch >= 3)) {
      const before = records.slice(0, records.indexOf(r)).filter((x) => x.epoch === r.epoch).map((x) => x.kind);
      expect(before).toContain('approval.decided');
    }
  });

  test('the run ends handed off after 12 epochs, listing the eleven model-authored bookings that stay applied (actuator, key, amount)', async () => {
    expect(final.status).toBe('handed_off');
    const handedOff = ofKind(records, 'invocation.handed_off')[0]!.body as Body;
    const keys = ofKind(records, 'step.completed').filter((r) => r.epoch <= 11 && (r.body as Body).step === 1).map((r) => (r.body as Body).key as string);
    expect(keys).toHaveLength(11);
    expect(handedOff.reason).toBe(
      `the intent was not done after 12 epochs; 11 world effect(s) the model authored stay applied (385 in all): ${keys.map((key, i) => `epoch ${i + 1} step 1  taxi.book  key ${key}  amount 35`).join('; ')}`,
    );
    expect(final.reason).toBe(handedOff.reason);
    expect(await t.runtime.replay(id)).toMatchObject({ status: 'handed_off', fingerprint: final.fingerprint, records: records.length });
  });

  test('weft policy explain says which rule admitted each authored epoch and step, and why; weft:default only for the library plan', async () => {
    const explained = explainAdmissions(records, TRAVEL_POLICY_PACK);
    const at = (epoch: number, subject: string, step: number | null = null) => explained.admissions.find((a) => a.epoch === epoch && a.subject === subject && a.step === step)!;
    expect(at(1, 'epoch').admitted).toBe('admitted by model-taxi-allowance: the model authored 1 world effect (taxi.book) spending 35: 35 of the 80 amount the pack admits from the model without a person this run');
    expect(at(1, 'step', 0).admitted).toBe(`admitted by model-taxi-allowance with its fragment (the epoch's admission at seq ${at(1, 'epoch').seq})`);
    expect(at(3, 'step', 1).admitted).toBe(`admitted by model-taxi-allowance with its fragment, which ana approved (the epoch's admission at seq ${at(3, 'epoch').seq} asked for a person)`);
    expect(at(1, 'authoring').admitted).toBe('admitted by default: no rule of the pack decided the model authoring a fragment');

    assertBuilt();
    const out = await weft(['policy', 'explain', id, '--dir', t.dir, '--tenant', 'taxi']);
    expect(out.code, out.stderr).toBe(0);
    const lines = out.stdout.split('\n');
    const epoch1 = lines.indexOf('epoch 1  epoch     allow');
    expect(epoch1).toBeGreaterThan(0);
    expect(lines.slice(epoch1, epoch1 + 4)).toEqual([
      'epoch 1  epoch     allow',
      '  reason    the model authored 1 world effect (taxi.book) spending 35: 35 of the 80 amount the pack admits from the model without a person this run',
      "  rule      model-taxi-allowance (authored-effects): world effects the model authored are admitted when they dispatch taxi.book and spend at most 80 this run (the sum over the run's authored effects); else a person approves",
      '  admitted  admitted by model-taxi-allowance: the model authored 1 world effect (taxi.book) spending 35: 35 of the 80 amount the pack admits from the model without a person this run',
    ]);
    expect(out.stdout).not.toContain('no rule of the pack objected');
    const json = await weft(['policy', 'explain', id, '--dir', t.dir, '--tenant', 'taxi', '--json']);
    const parsed = JSON.parse(json.stdout.trim().split('\n').at(-1)!) as { admissions: Array<{ epoch: number; subject: string; admitted: string | null }> };
    expect(parsed.admissions.find((a) => a.epoch === 2 && a.subject === 'epoch')!.admitted).toMatch(/^admitted by model-taxi-allowance: .*70 of the 80 amount/);
  });
});

describe("a fork counts its lineage's authored effects", () => {
  test('forked after two admitted rides, the fork records them (with amounts) and its first ride waits for a person; approved, the run hands off listing all eleven', async () => {
    const t = travel();
    const { id: parent, result } = await start(t, 'lineage');
    expect(result.status).toBe('awaiting_approval');
    const handle = await t.runtime.fork(parent, { atEpoch: 2 });
    let done = await handle.done;
    const fork = handle.id;
    const head = await t.store.read(fork, 0, 2);
    const parentKeys = (await t.store.read(parent)).filter((r) => r.kind === 'step.completed' && (r.body as Body).step === 1).map((r) => (r.body as Body).key as string);
    expect(parentKeys).toHaveLength(2);
    expect((head[0] as JournalRecord<'invocation.pinned'>).body.pin.library).toBe(libraryDigest(travelLibraryTaxiPerFragment));
    expect((head[1]!.body as Body).state.authored).toEqual(parentKeys.map((key, i) => ({ epoch: i + 1, step: 1, actuator: 'taxi.book', key, amount: 35 })));
    expect(done.status).toBe('awaiting_approval');
    let records = await t.store.read(fork);
    expect(epochAdmissions(records)[0]).toMatchObject({ epoch: 3, decision: 'require_approval', rule: 'model-taxi-allowance', reason: expect.stringContaining('spending 35, with 70 spent by 2 authored effect(s) admitted before in this run (105 in all), above the 80') });
    // The parent ended superseded with nothing of epoch 3 booked; the fork acts in the parent's world.
    expect((await t.store.read(parent)).at(-2)!.kind).toBe('invocation.superseded');
    expect(liveRides(t.stateDir, parent).map((r) => r.day)).toEqual([1, 2]);
    while (done.status === 'awaiting_approval') done = await (await t.runtime.approve(fork, { decision: 'approved', by: 'ana' })).done;
    expect(done.status).toBe('handed_off');
    records = await t.store.read(fork);
    const forkKeys = records.filter((r) => r.kind === 'step.completed' && (r.body as Body).step === 1).map((r) => (r.body as Body).key as string);
    expect(forkKeys).toHaveLength(9);
    const reason = (ofKind(records, 'invocation.handed_off')[0]!.body as Body).reason as string;
    expect(reason).toBe(`the intent was not done after 12 epochs; 11 world effect(s) the model authored stay applied (385 in all): ${[...parentKeys, ...forkKeys].map((key, i) => `epoch ${i + 1} step 1  taxi.book  key ${key}  amount 35`).join('; ')}`);
    expect(liveRides(t.stateDir, parent)).toHaveLength(11);
    expect(await t.runtime.replay(fork)).toMatchObject({ status: 'handed_off', fingerprint: done.fingerprint });
  });
});

describe('weft run travel <a taxi intent>: the library plans and the authored ride', () => {
  test('the library-planned epochs keep weft:default (said to be a library plan no rule decided); the authored ride and its steps name model-taxi-allowance', async () => {
    assertBuilt();
    const dir = join(root, 'cli-lisbon');
    const run = await weft(['run', 'travel', TRAVEL_TRANSFER_INTENTS.lisbon, '--seed', '11', '--as-of', AS_OF, '--dir', dir, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const line = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { id: string; status: string; journal: string };
    expect(line.status).toBe('completed');
    const records = readFileSync(line.journal, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as JournalRecord);
    expect(epochAdmissions(records).map((a) => [a.epoch, a.decision, a.rule])).toEqual([[1, 'allow', 'weft:default'], [2, 'allow', 'weft:default'], [3, 'allow', 'model-taxi-allowance']]);
    expect(stepAdmissions(records, 3).map((b) => [b.step, b.rule])).toEqual([[0, 'model-taxi-allowance'], [1, 'model-taxi-allowance']]);
    expect(stepAdmissions(records, 2).every((b) => b.rule === 'weft:default')).toBe(true);
    // What acceptance's "keep" run reads: the last three allows name a rule of the pack.
    expect(ofKind(records, 'admission.decided').slice(-3).map((r) => (r.body as Body).rule)).toEqual(['model-taxi-allowance', 'model-taxi-allowance', 'model-taxi-allowance']);
    expect(readTravelState(join(dir, 'state', 'travel', line.id, 'providers.json')).transfers).toEqual([expect.objectContaining({ from: 'lisbon-airport', to: 'h-alfama', day: 12, amount: 35, status: 'booked' })]);

    const out = await weft(['policy', 'explain', line.id, '--dir', dir]);
    expect(out.code, out.stderr).toBe(0);
    const lines = out.stdout.split('\n');
    const epoch1 = lines.indexOf('epoch 1  epoch     allow');
    expect(lines.slice(epoch1, epoch1 + 3)).toEqual([
      'epoch 1  epoch     allow',
      '  rule      weft:default: no rule of the pack decided: admitted by default',
      '  admitted  admitted by default: a plan of the pinned library that no rule of the pack decided',
    ]);
    const epoch3 = lines.indexOf('epoch 3  epoch     allow');
    expect(lines[epoch3 + 3]).toBe('  admitted  admitted by model-taxi-allowance: the model authored 1 world effect (taxi.book) spending 35: 35 of the 80 amount the pack admits from the model without a person this run');
    const step1 = lines.indexOf('epoch 3  step 1    allow');
    expect(lines[step1 + 1]).toMatch(/^ {2}rule {6}model-taxi-allowance \(authored-effects\): /);
    expect(lines[step1 + 2]).toMatch(/^ {2}admitted  admitted by model-taxi-allowance with its fragment \(the epoch's admission at seq \d+\)$/);
  });
});

describe('the pack syntax and the packs pinned before it', () => {
  test("`per` is 'fragment' or 'run' (the schema stays strict); a journal pinned to travel@4 replays in a store that has no pack (nor library) filed, the domain keeping both", async () => {
    const allowance = (admit: unknown) => JSON.stringify({ pack: 1, name: 'x', version: '1', rules: [{ id: 'a', rule: 'authored-effects', admit }] });
    expect(parseRulePackText(allowance({ actuators: ['taxi.book'], spendAtMost: 80, per: 'run' }), 'run.json').rules[0]).toMatchObject({ admit: { per: 'run' } });
    expect(() => parseRulePackText(allowance({ actuators: ['taxi.book'], spendAtMost: 80, per: 'week' }), 'week.json')).toThrow(/^week\.json is not a valid policy pack: .*rules\[0\]\.admit/);
    expect(() => parseRulePackText(allowance({ actuators: ['taxi.book'], spendAtMost: 80, scope: 'run' }), 'scope.json')).toThrow(/not a valid policy pack/);
    const dir = join(import.meta.dirname, 'fixtures', 'runtime', 'travel-v5', 'invocations');
    const [invocation] = readdirSync(dir);
    const records = readFileSync(join(dir, invocation!, 'journal.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as JournalRecord);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.policy).toBe(travelPackPolicyV4.id);
    // …and the travel library before book_transfer's bindings, which the domain keeps too (library-before-bindings.ts).
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.library).toBe(TRAVEL_LIBRARY_BEFORE_BINDINGS_DIGEST);
    const sealed = records.at(-1) as JournalRecord<'invocation.sealed'>;
    const empty = todaysRuntime({ store: new MemoryStore(), domain: travelDomain, stateDir: join(root, 'empty'), signingKey: signingKeyFromSecret(new Uint8Array(32).fill(7)) });
    expect(await empty.replay({ records })).toMatchObject({ status: 'completed', fingerprint: sealed.body.fingerprint });
  });
});

describe('a journal pinned without flag 11', () => {
  test('keeps the per-fragment allowance and weft:default: every 35 EUR fragment is admitted alone, and replays on today\'s runtime', async () => {
    vi.resetModules();
    vi.doMock('../machines/flags.js', async (original) => ({ ...(await original<typeof import('../machines/flags.js')>()), IMPLEMENTED_FLAGS: [1, 2, 4, 5, 7, 8, 9] }));
    const older = (await import('../runtime/index.js')).createRuntime;
    vi.doUnmock('../machines/flags.js');
    vi.resetModules();
    const old = travel(older);
    const { id, result } = await start(old, 'older');
    const records = await old.store.read(id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin).toMatchObject({ flags: [1, 2, 4, 5, 7, 8, 9], library: libraryDigest(travelLibraryTaxiPerFragment) });
    expect(epochAdmissions(records).map((a) => [a.epoch, a.decision, a.rule, a.reason])).toEqual([
      ...[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map((e) => [e, 'allow', 'weft:default', undefined]),
    ]);
    expect(stepAdmissions(records, 3).map((b) => b.rule)).toEqual(['weft:default', 'weft:default']);
    expect(ofKind(records, 'approval.requested')).toEqual([]);
    expect(liveRides(old.stateDir, id)).toHaveLength(11);
    expect(result.status).toBe('handed_off');
    expect((ofKind(records, 'invocation.handed_off')[0]!.body as Body).reason).toBe('the intent was not done after 12 epochs');
    const today = travel();
    // Today's travel domain, its library read from the blob the run filed in the store.
    const replayed = await todaysRuntime({ store: old.store, domain: travelDomain, stateDir: today.stateDir, model: hostile, signingKey: signingKeyFromSecret(new Uint8Array(32).fill(7)) }).replay(id);
    expect(replayed).toMatchObject({ status: 'handed_off', fingerprint: result.fingerprint });
  });
});

describe('on stock travel, the allowance and the run-wide count of book_transfer compose', () => {
  test("the second booking of a task asked once is refused by weft:task-constraints naming the count, before the pack is asked; nothing more is booked, the world holds one ride", async () => {
    const t = travel(todaysRuntime, { stock: true });
    const { id, result } = await start(t, 'stock');
    const records = await t.store.read(id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.library).toBe(libraryDigest(travelLibrary));
    // Epoch 1: the first ride, admitted by the allowance (35 of 80 this run) and booked.
    const count = `book_transfer's constraint "count of taxi.book ≤ 1 per run" fails: 2 > 1 (1 in this fragment, 1 already done by epoch 1 of this run)`;
    expect(epochAdmissions(records).map((a) => [a.epoch, a.decision, a.rule, a.reason])).toEqual([
      [1, 'allow', 'model-taxi-allowance', 'the model authored 1 world effect (taxi.book) spending 35: 35 of the 80 amount the pack admits from the model without a person this run'],
      // Each later fragment keeps to its goal and is certified, but books the task a second time: refused by the library's count, not by the allowance.
      ...[2, 3, 4].map((e) => [e, 'deny', 'weft:task-constraints', count]),
    ]);
    expect(ofKind(records, 'epoch.derived').map((r) => [r.epoch, (r.body as Body).source, (r.body as Body).goal.args[3]])).toEqual([1, 2, 3, 4].map((e) => [e, 'authored', e]));
    expect(ofKind(records, 'epoch.closed').map((r) => [r.epoch, (r.body as Body).outcome])).toEqual([[1, 'completed'], [2, 'denied'], [3, 'denied'], [4, 'denied']]);
    // No person is asked, no step of a refused fragment is admitted or dispatched.
    expect(ofKind(records, 'approval.requested')).toEqual([]);
    expect(ofKind(records, 'admission.decided').filter((r) => (r.body as Body).subject === 'step').map((r) => r.epoch)).toEqual([1, 1]);
    expect(ofKind(records, 'step.dispatched').map((r) => [r.epoch, (r.body as Body).actuator, (r.body as Body).args.day])).toEqual([[1, 'taxi.quote', 1], [1, 'taxi.book', 1]]);
    // The refusal is fed back: the model reads it with the next goal it is asked for.
    expect((ofKind(records, 'model.requested').find((r) => r.epoch === 3 && (r.body as Body).purpose === 'parse')!.body as Body).request.outcomes).toContainEqual(expect.objectContaining({ epoch: 2, outcome: 'denied', reason: count }));
    // The run gives up re-planning; the world holds the one ride.
    expect(result.status).toBe('failed');
    expect(ofKind(records, 'invocation.failed')[0]!.body).toEqual({ class: 'permanent', code: 'invocation.replans_exhausted', reason: `gave up after 2 re-plans; last failure: ${count}` });
    expect(liveRides(t.stateDir, id).map((r) => [r.from, r.to, r.day, r.amount])).toEqual([['lisbon-airport', 'h-alfama', 1, 35]]);
    expect(readTravelState(join(t.stateDir, id, TRAVEL_STATE_FILE)).transfers).toHaveLength(1);
    expect(await t.runtime.replay(id)).toMatchObject({ status: 'failed', fingerprint: result.fingerprint });
  });
});
