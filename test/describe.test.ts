/**
 * The description of one invocation (runtime/describe.ts, read by runtime/describe-load.ts) over
 * real journals of the travel domain, each made by the runtime on a file store: a completed run; one
 * awaiting approval (the policy's reason and the steps asked for — in the description, in the
 * listing, and in the run's own result); one with a compensated epoch (a transient retry, a
 * permanent failure, the undo of what was done) that then fails; one suspended by a refused model key; one
 * hibernated; and, outside travel, one resting on a durable sleep. Also: a bad or unknown id is a typed error, a tampered record is where the
 * description stops trusting the journal, and the description survives JSON unchanged.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IMPLEMENTED_FLAGS } from '../machines/flags.js';
import { afterAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { ModelRequestError, type Model } from '../actors/model/model.js';
import { ScriptedModel } from '../actors/model/scripted.js';
import { remindLaterLibrary } from './support/remind-library.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { spendApprovalPolicy } from '../machines/policy.js';
import { createRuntime, describeInvocation, type InvocationDescription, type RuntimeOptions } from '../runtime/index.js';
import { initialTravelState, seedTravelState, TRAVEL_SUMMARY, travelPackPolicy, travelTranscript } from '../examples/travel/index.js';
import { TRAVEL_STATE_FILE, travelDomain } from '../examples/travel/domain.js';
import { newLedger, notifyActuators } from './support/notify-app.js';

const root = mkdtempSync(join(tmpdir(), 'weft-describe-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

/** A travel runtime over a fresh workspace; `stateDir` holds each invocation's world. */
function travel(options: Partial<RuntimeOptions> = {}) {
  const dir = join(root, `ws${n++}`);
  const store = new FileStore(join(dir, 'store'));
  const stateDir = join(dir, 'state');
  const runtime = createRuntime({ store, domain: travelDomain, stateDir, signingKey: signingKeyFromSecret(new Uint8Array(32).fill(3)), sleep: async () => undefined, ...options });
  return { store, stateDir, runtime };
}

const start = { tenant: 't1', seed: 1, asOf: travelDomain.asOf! };
const strict = spendApprovalPolicy({ version: 'strict', limit: 100, amountArg: 'amount' });

describe('describing an invocation of the travel domain', () => {
  test('a completed run: status, pin, three epochs with their steps, outcomes and attempts, the seal, and what acts on it', async () => {
    const { store, runtime } = travel();
    const result = await (await runtime.start(travelDomain.intent!, start)).done;
    const d = await describeInvocation(store, result.id);
    expect(d).toMatchObject({ version: 1, id: result.id, tenant: 't1', intent: travelDomain.intent, status: 'completed', reason: null, waiting: null, journal: { verified: true, problem: null } });
    expect(d.pin).toMatchObject({ seed: '1', asOf: travelDomain.asOf, policy: travelPackPolicy.id, flags: [...IMPLEMENTED_FLAGS], model: { id: 'scripted:travel-demo' }, spenders: [{ actuator: 'card.charge', arg: 'amount' }, { actuator: 'taxi.book', arg: 'amount' }] });
    expect(d.records).toBe(await store.length(result.id));
    expect(d.ending).toEqual({ status: 'completed', summary: TRAVEL_SUMMARY, code: null, class: null, reason: null });
    expect(d.seal?.fingerprint).toBe(result.fingerprint);
    expect(d.epochs.map((e) => [e.epoch, e.goal?.task, e.source, e.outcome, e.steps.length])).toEqual([
      [1, 'find_options', 'htn', 'completed', 2],
      [2, 'book_trip', 'htn', 'completed', 5],
      [3, 'share_itinerary', 'htn', 'completed', 2],
    ]);
    const book = d.epochs[1]!;
    expect(book.goal).toEqual({ task: 'book_trip', args: ['me', 'lisbon', 12, 900] });
    expect(book.steps.map((s) => [s.step, s.actuator, s.outcome, s.attempts])).toEqual([
      [0, 'airline.hold', 'ok', 1],
      [1, 'hotel.hold', 'ok', 1],
      [2, 'card.charge', 'ok', 1],
      [3, 'airline.confirm', 'ok', 1],
      [4, 'hotel.confirm', 'ok', 1],
    ]);
    expect(book.steps[2]).toMatchObject({ args: { amount: 780, card: 'card-visa-4242' }, result: { amount: 780, currency: 'EUR' }, failure: null, compensation: null });
    expect(d.commands.map((c) => c.command)).toEqual([`weft replay ${result.id}`, `weft export ${result.id}`]);
    expect(JSON.parse(JSON.stringify(d))).toEqual(d);
  });

  test('awaiting approval: the policy\'s reason and the steps asked for — in the description, the listing and the run\'s result', async () => {
    const { store, runtime } = travel({ policy: strict });
    const result = await (await runtime.start(travelDomain.intent!, start)).done;
    const reason = 'the epoch spends 780, above the 100 limit';
    expect(result).toMatchObject({ status: 'awaiting_approval', reason });
    const asked = [
      { step: 0, operator: 'hold_flight', actuator: 'airline.hold', args: { flight: 'f-tp1353', traveller: 'me' }, readOnly: false },
      { step: 1, operator: 'hold_hotel', actuator: 'hotel.hold', args: { hotel: 'h-alfama', traveller: 'me' }, readOnly: false },
      { step: 2, operator: 'charge_card', actuator: 'card.charge', args: { amount: 780, card: 'card-visa-4242', flight: 'f-tp1353', hotel: 'h-alfama', traveller: 'me' }, readOnly: false },
      { step: 3, operator: 'confirm_flight', actuator: 'airline.confirm', args: { flight: 'f-tp1353', traveller: 'me' }, readOnly: false },
      { step: 4, operator: 'confirm_hotel', actuator: 'hotel.confirm', args: { hotel: 'h-alfama', traveller: 'me' }, readOnly: false },
    ];
    const [row] = await runtime.list();
    expect(row).toMatchObject({ id: result.id, status: 'awaiting_approval', reason, approvalSteps: asked });

    const d = await describeInvocation(store, result.id);
    expect(d).toMatchObject({ status: 'awaiting_approval', reason, ending: null, seal: null });
    expect(d.waiting).toEqual({ kind: 'approval', reason, plan: d.epochs[1]!.plan, steps: asked, decided: null });
    const book = d.epochs[1]!;
    expect(book).toMatchObject({ outcome: 'open', admission: { decision: 'require_approval', policy: 'spend-approval@strict', reason }, approval: { reason, decision: null } });
    expect(book.steps.map((s) => [s.operator, s.actuator, s.outcome, s.attempts])).toEqual(asked.map((s) => [s.operator, s.actuator, 'pending', 0]));
    expect(d.commands.map((c) => c.command)).toEqual([`weft approve ${result.id} --by "$USER"`, `weft approve ${result.id} --by "$USER" --reject`]);

    // A decision left in the inbox: it is shown, and resume is what records it.
    await runtime.approve(result.id, { decision: 'approved', by: 'ana' }, { run: false });
    const decided = await describeInvocation(store, result.id);
    expect(decided.waiting).toMatchObject({ kind: 'approval', reason, decided: { decision: 'approved', by: 'ana', note: null } });
    expect(decided.commands.map((c) => c.command)).toEqual([`weft resume ${result.id}`]);
  });

  test('a compensated epoch: a transient retry, a permanent failure, what was done undone, the frontier truncated; the run fails in the gap path after', async () => {
    const { store, stateDir, runtime } = travel();
    const id = 'soldout';
    // The world as a provider would have it: the hotel sells its last room while held; the airline is down once.
    const world = initialTravelState();
    world.faults.soldOut.push('h-alfama');
    world.faults.flaky['airline.hold'] = 1;
    seedTravelState(join(stateDir, id, TRAVEL_STATE_FILE), world);
    const result = await (await runtime.start(travelDomain.intent!, { ...start, id })).done;
    const d = await describeInvocation(store, id);
    // With nothing booked no method shares an itinerary, and the demo's model has no fragment to author: the run fails there.
    expect(result.status).toBe('failed');
    expect(d).toMatchObject({ status: 'failed', ending: { status: 'failed', code: 'model.no_scripted_reply', class: 'permanent' } });
    expect(d.reason).toContain('the model could not be asked');
    expect(d.epochs.map((e) => [e.goal?.task, e.source, e.outcome])).toEqual([['find_options', 'htn', 'completed'], ['book_trip', 'htn', 'compensated'], ['share_itinerary', 'gap', 'failed']]);
    const book = d.epochs[1]!;
    expect(book).toMatchObject({ epoch: 2, outcome: 'compensated', truncated: { removed: [0, 1, 2, 3, 4] } });
    expect(book.steps.map((s) => [s.step, s.actuator, s.outcome, s.attempts, s.compensation?.outcome ?? null])).toEqual([
      [0, 'airline.hold', 'compensated', 2, 'ok'],
      [1, 'hotel.hold', 'compensated', 1, 'ok'],
      [2, 'card.charge', 'compensated', 1, 'ok'],
      [3, 'airline.confirm', 'compensated', 1, 'ok'],
      [4, 'hotel.confirm', 'failed', 1, null],
    ]);
    expect(book.steps[4]!.failure).toMatchObject({ class: 'permanent', code: 'hotel.sold_out' });
    expect(book.steps[3]!.compensation).toMatchObject({ actuator: 'airline.cancel', attempts: 1, failure: null });
    expect(book.steps[0]!.result).toMatchObject({ item: 'f-tp1353' }); // what was undone is still shown
  });

  test('suspended by a refused model key: the class, code and reason, and resume as the next command', async () => {
    const scripted = new ScriptedModel(travelTranscript);
    const refusing: Model = {
      id: scripted.id,
      params: scripted.params,
      complete: (request) => (request.epoch >= 2 ? Promise.reject(new ModelRequestError(scripted.id, 401, 'bad key')) : scripted.complete(request)),
    };
    const { store, runtime } = travel({ model: refusing });
    const result = await (await runtime.start(travelDomain.intent!, start)).done;
    expect(result.status).toBe('suspended');
    const d = await describeInvocation(store, result.id);
    expect(d.status).toBe('suspended');
    expect(d.reason).toContain('HTTP 401');
    expect(d.waiting).toMatchObject({ kind: 'suspended', class: 'credentials', state: 'parse' });
    expect((d.waiting as { code: string }).code).toBeTruthy();
    expect(d.fix).toContain(`weft resume ${result.id}`);
    expect(d.commands.map((c) => c.command)).toEqual([`weft resume ${result.id}`]);
    expect(d.epochs.map((e) => e.outcome)).toEqual(['completed']); // epoch 2 planned nothing yet
  });

  test('hibernated at the first boundary: waits to be resumed', async () => {
    const { store, runtime } = travel();
    const handle = await runtime.start(travelDomain.intent!, start);
    handle.hibernate();
    const result = await handle.done;
    expect(result.status).toBe('hibernated');
    const d = await describeInvocation(store, result.id);
    expect(d).toMatchObject({ status: 'hibernated', waiting: { kind: 'hibernated' }, commands: [{ command: `weft resume ${result.id}` }] });
    expect(d.epochs.map((e) => [e.epoch, e.outcome])).toEqual([[1, 'completed']]);
  });

  test('a bad id and an unknown id are typed errors; a tampered record is where the description stops trusting the journal', async () => {
    const { store, runtime } = travel();
    await expect(describeInvocation(store, '../etc/passwd')).rejects.toMatchObject({ code: 'runtime.bad_invocation_id' });
    await expect(describeInvocation(store, 'nobody')).rejects.toMatchObject({ code: 'invocation.not_found', message: expect.stringContaining('weft ls') });
    const result = await (await runtime.start(travelDomain.intent!, start)).done;
    const file = store.journalPath(result.id);
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[5] = lines[5]!.replace('"epoch":1', '"epoch":7');
    writeFileSync(file, lines.join('\n'));
    const d: InvocationDescription = await describeInvocation(store, result.id);
    expect(d.records).toBe(5);
    expect(d.journal).toEqual({ verified: false, problem: expect.stringMatching(/^seq 5: /) });
    expect(d.epochs.flatMap((e) => e.steps)).toEqual([]);
  });

  test('waiting on a durable sleep step: the step sleeps, the timer says until when', async () => {
    const WAKE = '2026-12-02T08:00:00.000Z';
    const library = remindLaterLibrary();
    const intent = 'Remind Alice tomorrow morning';
    const model = new ScriptedModel({ model: 'remind', entries: [{ match: { intent, epoch: 1 }, reply: { goal: { task: 'remind_later', args: ['alice', Date.parse(WAKE)] } } }] });
    const store = new FileStore(join(root, `ws${n++}`));
    const runtime = createRuntime({ store, libraries: [library], actuators: notifyActuators(newLedger()), observe: 'world.observe', model, signingKey: signingKeyFromSecret(new Uint8Array(32).fill(3)), now: () => new Date('2026-12-01T20:00:00Z'), sleep: async () => undefined });
    const result = await (await runtime.start(intent, { tenant: 't', seed: 1, asOf: '2026-12-01T20:00:00Z' })).done;
    expect(result.status).toBe('waiting_timer');
    const d = await describeInvocation(store, result.id);
    expect(d).toMatchObject({ status: 'waiting_timer', waiting: { kind: 'timer', step: 0, until: WAKE }, commands: [{ command: `weft resume ${result.id}` }] });
    expect(d.epochs[0]!.steps.map((s) => [s.step, s.operator, s.actuator, s.outcome])).toEqual([
      [0, 'wait_until', 'weft.sleep', 'sleeping'],
      [1, 'send', 'msg.send', 'pending'],
    ]);
  });
});
