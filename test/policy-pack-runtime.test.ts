/**
 * Policy packs in the runtime (issue 23, "Admission as data"). Each scenario runs the travel domain
 * under a pack and asserts the journal's records (every admission names the rule that decided,
 * under flag 7), the world's final state, a replay to the same fingerprint, and an offline verify:
 * - an epoch over the pack's spend cap is denied (nothing held, nothing charged);
 * - a pack's pivot-last rule denies the epoch that sends the itinerary (a message nothing undoes)
 *   before setting the reminder, naming the pivot;
 * - the pack is filed in the store by its digest at start: a runtime in "another process" that was
 *   never given it approves, finishes and replays the run under the pinned rules — and so does
 *   `serve`, recording a decision left in the invocation's inbox;
 * - a pinned pack missing from the store, or filed under its digest with other bytes, is refused as
 *   a pin mismatch, and nothing is written;
 * - an authoring rule asks a person before the model authors (flag 5), and the fragment runs once approved;
 * - a predicate registered by name@version denies a step at dispatch; a runtime without it refuses
 *   to resume such a run;
 * - a run pinned before flag 7 (an older weft) records no rule, and today's runtime replays it as written.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test, vi } from 'vitest';
import '../journal/sha256-node.js';
import type { Model, ModelRequest } from '../actors/model/model.js';
import { travelDomain } from '../examples/travel/domain.js';
import { readTravelState } from '../examples/travel/state.js';
import { TRAVEL_GOALS, TRAVEL_INTENT } from '../examples/travel/transcript.js';
import type { JournalRecord } from '../journal/records.js';
import { publicKeyOf, signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { FLAG_ADMISSION_RULE } from '../machines/flags.js';
import { compileRulePack, packDigest, parseRulePack, parseRulePackText, PredicateRegistry, type PolicyPredicate, type RulePack } from '../policy/index.js';
import { explainAdmissions } from '../runtime/admissions.js';
import { createRuntime, PinMismatchError, type ServeEvent } from '../runtime/index.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(11));
const root = mkdtempSync(path.join(tmpdir(), 'weft-policy-pack-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Body = Record<string, any>;
const travelPack = parseRulePackText(readFileSync(path.join(import.meta.dirname, '..', 'examples', 'travel', 'policy-pack.json'), 'utf8'), 'policy-pack.json');
const approvalPack = parseRulePackText(readFileSync(path.join(import.meta.dirname, '..', 'examples', 'travel', 'policy-approval.json'), 'utf8'), 'policy-approval.json');
/** travel@5 with other rules in place of (or beside) its own. */
function variant(name: string, edit: (rules: RulePack['rules']) => RulePack['rules']): RulePack {
  return parseRulePack({ ...structuredClone(travelPack), name, version: '1', rules: edit(structuredClone(travelPack.rules)) }, name);
}

/** Epoch 1 searches, 2 books, 3 shares the itinerary, then done — or done as soon as an epoch was denied. */
const model: Model = {
  id: 'scripted:policy-pack',
  params: {},
  async complete(request: ModelRequest) {
    const goals = [TRAVEL_GOALS.findOptions, TRAVEL_GOALS.bookTrip, TRAVEL_GOALS.shareItinerary];
    const denied = (request.outcomes as Array<{ outcome?: string }>).some((o) => o.outcome !== 'completed');
    const goal = denied ? undefined : goals[request.epoch - 1];
    return { text: JSON.stringify(goal ? { goal: { task: goal.task, args: [...goal.args] } } : { done: true, summary: 'done as far as the policy allowed' }) };
  },
};

/** Epoch 2 asks for a book_trip under a budget no method covers (the gap path); the model authors a hotel search. */
const gapModel: Model = {
  id: 'scripted:policy-pack-gap',
  params: {},
  async complete(request: ModelRequest) {
    if (request.purpose === 'author') return { text: JSON.stringify({ steps: [{ operator: 'search_hotels', args: ['lisbon', 12] }] }) };
    const goal = request.epoch === 1 ? TRAVEL_GOALS.findOptions : request.epoch === 2 ? { task: 'book_trip', args: ['me', 'lisbon', 12, 300] } : undefined;
    return { text: JSON.stringify(goal ? { goal: { task: goal.task, args: [...goal.args] } } : { done: true, summary: 'looked again; nothing booked' }) };
  },
};

function runtimeOver(storeDir: string, options: { pack?: RulePack; predicates?: PolicyPredicate[]; stateDir?: string; create?: typeof createRuntime; model?: Model } = {}) {
  const stateDir = options.stateDir ?? mkdtempSync(path.join(root, 'state-'));
  const policyPredicates = new PredicateRegistry(options.predicates ?? []);
  const runtime = (options.create ?? createRuntime)({
    store: new FileStore(storeDir),
    domain: travelDomain,
    stateDir,
    actuators: travelDomain.actuators({ stateDir }),
    model: options.model ?? model,
    policyPredicates,
    ...(options.pack ? { policy: compileRulePack(options.pack, policyPredicates) } : {}),
    signingKey: key,
    sleep: async () => undefined,
  });
  return { runtime, stateDir };
}
const worldOf = (stateDir: string, id: string) => readTravelState(path.join(stateDir, id, 'providers.json'));
const start = (seed: string, tenant = 't1') => ({ tenant, seed, asOf: travelDomain.asOf! });
const admissions = (records: JournalRecord[]) =>
  records.filter((r) => r.kind === 'admission.decided').map((r) => {
    const b = r.body as Body;
    return `${r.epoch}:${b.subject}${b.step === undefined ? '' : `#${b.step}`}:${b.decision}:${b.rule ?? '-'}`;
  });
/** Steps 0..n-1 of `epoch` allowed at dispatch by `rule`, as `admissions` lists them (recorded under flag 9). */
const allowed = (epoch: number, n: number, rule: string) => Array.from({ length: n }, (_, i) => `${epoch}:step#${i}:allow:${rule}`);

/** Replays to the same fingerprint with a runtime given no pack, and verifies the journal file offline. */
async function expectReplaysAndVerifies(storeDir: string, id: string, fingerprint: string) {
  const { runtime } = runtimeOver(storeDir);
  expect(await runtime.replay(id)).toMatchObject({ sealed: true, fingerprint });
  expect((await runtime.verify({ journalPath: runtime.journalPath(id)! }, publicKeyOf(key))).ok).toBe(true);
}

describe('policy packs in the runtime', () => {
  test('an epoch over the pack\'s spend cap is denied by its rule: nothing held or charged; replays and verifies', async () => {
    const pack = variant('travel-tight', (rules) => rules.map((r) => (r.rule === 'spend-cap' ? { ...r, cap: 700 } : r)));
    const dir = mkdtempSync(path.join(root, 'store-'));
    const { runtime, stateDir } = runtimeOver(dir, { pack });
    const handle = await runtime.start(TRAVEL_INTENT, start('cap'));
    const result = await handle.done;
    expect(result.status).toBe('completed');
    const records = await runtime.store.read(handle.id);
    const pin = (records[0] as JournalRecord<'invocation.pinned'>).body.pin;
    expect(pin.policy).toBe(`pack:travel-tight@1#${packDigest(pack)}`);
    expect(pin.flags).toContain(FLAG_ADMISSION_RULE);
    const denied = records.find((r) => r.kind === 'admission.decided' && (r.body as Body).decision === 'deny')!;
    expect(denied.epoch).toBe(2);
    expect(denied.body).toEqual({
      subject: 'epoch',
      decision: 'deny',
      policy: pin.policy,
      rule: 'spend-cap',
      reason: 'the epoch would spend 780 with 0 already spent in this invocation (780 in all); the envelope caps amount at 700 per invocation',
    });
    expect(admissions(records)).toEqual(['1:epoch:allow:weft:default', ...allowed(1, 2, 'weft:default'), '2:epoch:deny:spend-cap']);
    expect(records.some((r) => r.kind === 'step.dispatched' && r.epoch === 2)).toBe(false);
    const world = worldOf(stateDir, handle.id);
    expect(world.holds).toEqual([]);
    expect(world.charges).toEqual([]);
    expect(world.bookings).toEqual([]);
    await expectReplaysAndVerifies(dir, handle.id, result.fingerprint!);
  });

  test('pivot-last denies the epoch that sends the itinerary before the reminder, naming the pivot; the booking stands', async () => {
    const pack = variant('travel-pivots', (rules) => [...rules, { id: 'pivots-last', rule: 'pivot-last', undoable: ['airline.hold', 'hotel.hold', 'card.charge', 'reminder.set'] }]);
    const dir = mkdtempSync(path.join(root, 'store-'));
    const { runtime, stateDir } = runtimeOver(dir, { pack });
    const handle = await runtime.start(TRAVEL_INTENT, start('pivot'));
    const result = await handle.done;
    expect(result.status).toBe('completed');
    const records = await runtime.store.read(handle.id);
    expect(admissions(records)).toEqual(['1:epoch:allow:weft:default', ...allowed(1, 2, 'weft:default'), '2:epoch:allow:weft:default', ...allowed(2, 5, 'weft:default'), '3:epoch:deny:pivots-last']);
    const denied = records.find((r) => r.kind === 'admission.decided' && r.epoch === 3)!.body as Body;
    expect(denied.reason).toMatch(/^step 0 \(send_itinerary → message\.send\) is a pivot \(a world effect with no declared compensation\) and step 1 \(set_checkin_reminder → reminder\.set\) may fail after it/);
    expect(records.find((r) => r.kind === 'epoch.closed' && r.epoch === 3)!.body).toMatchObject({ outcome: 'denied' });
    const world = worldOf(stateDir, handle.id);
    expect(world.bookings.length).toBe(2);
    expect(world.messages).toEqual([]);
    expect(world.reminders).toEqual([]);
    await expectReplaysAndVerifies(dir, handle.id, result.fingerprint!);
  });

  test('the pinned pack travels in the store: a runtime never given it approves, finishes and replays under the pinned rules', async () => {
    const dir = mkdtempSync(path.join(root, 'store-'));
    const { runtime: first, stateDir } = runtimeOver(dir, { pack: approvalPack });
    const handle = await first.start(TRAVEL_INTENT, start('approval'));
    const rested = await handle.done;
    expect(rested.status).toBe('awaiting_approval');
    const digest = packDigest(approvalPack);
    expect(await first.store.getBlob(digest)).toBeDefined();
    // Another process: the travel domain's own policies only, no pack, no file.
    const { runtime: second } = runtimeOver(dir, { stateDir });
    const approved = await (await second.approve(handle.id, { decision: 'approved', by: 'alice' })).done;
    expect(approved.status).toBe('completed');
    const records = await second.store.read(handle.id);
    // The searches are read-only: the pack's searches-free rule admits them, at the epoch and at each dispatch.
    expect(admissions(records)).toEqual(['1:epoch:allow:searches-free', ...allowed(1, 2, 'searches-free'), '2:epoch:require_approval:approve-above-500', ...allowed(2, 5, 'weft:default'), '3:epoch:allow:weft:default', ...allowed(3, 2, 'weft:default')]);
    expect(records.find((r) => r.kind === 'approval.requested')!.body).toMatchObject({ reason: 'the epoch spends 780, above the 500 limit' });
    expect(records.find((r) => r.kind === 'approval.decided')!.body).toMatchObject({ decision: 'approved', by: 'alice' });
    expect(records.filter((r) => r.kind === 'epoch.certified').map((r) => (r.body as Body).policy)).toEqual(Array(3).fill(`pack:travel-approval@1#${digest}`));
    const world = worldOf(stateDir, handle.id);
    expect(world.charges.map((c) => c.amount)).toEqual([780]);
    expect(world.bookings.length).toBe(2);
    expect(world.messages.length).toBe(1);
    await expectReplaysAndVerifies(dir, handle.id, approved.fingerprint!);
    // What `weft policy explain` shows, from the records and the pack.
    const explained = explainAdmissions(records, approvalPack);
    expect(explained.admissions.filter((a) => a.subject === 'epoch').map((a) => [a.epoch, a.rule, a.kind, a.approval?.by ?? null])).toEqual([
      [1, 'searches-free', 'read-only-free', null],
      [2, 'approve-above-500', 'approve-above', 'alice'],
      [3, 'weft:default', 'runtime', null],
    ]);
    // Flag 9: each step's admission at dispatch, with the rule that decided it; nothing left implied.
    expect(explained.stepsRecorded).toBe(true);
    expect(explained.implied).toEqual([]);
    const steps = explained.admissions.filter((a) => a.subject === 'step');
    expect(steps.map((a) => `${a.epoch}#${a.step}:${a.decision}:${a.rule}:${a.kind}`)).toEqual([
      '1#0:allow:searches-free:read-only-free', '1#1:allow:searches-free:read-only-free',
      ...[0, 1, 2, 3, 4].map((i) => `2#${i}:allow:weft:default:runtime`),
      '3#0:allow:weft:default:runtime', '3#1:allow:weft:default:runtime',
    ]);
    expect(steps.map((a) => a.says)).toContain('read-only steps are admitted freely');
  });

  test('serve, in a runtime never given the pack, records a decision left in the inbox and finishes the run under the pinned rules', async () => {
    const dir = mkdtempSync(path.join(root, 'store-'));
    const { runtime: first, stateDir } = runtimeOver(dir, { pack: approvalPack });
    const handle = await first.start(TRAVEL_INTENT, start('serve'));
    expect((await handle.done).status).toBe('awaiting_approval');
    const { runtime: server } = runtimeOver(dir, { stateDir });
    expect((await (await server.approve(handle.id, { decision: 'approved', by: 'bob' }, { run: false })).done).status).toBe('awaiting_approval');
    const events: ServeEvent[] = [];
    const stop = new AbortController();
    const serving = server.serve({ pollMs: 5, signal: stop.signal, onEvent: (e) => events.push(e) });
    while (!events.some((e) => e.kind === 'stopped' || e.kind === 'error')) await new Promise((r) => setTimeout(r, 5));
    stop.abort();
    await serving;
    expect(events).toMatchObject([{ kind: 'resuming', id: handle.id, why: 'approval' }, { kind: 'stopped', id: handle.id, status: 'completed' }]);
    const records = await server.store.read(handle.id);
    // The searches are read-only: the pack's searches-free rule admits them, at the epoch and at each dispatch.
    expect(admissions(records)).toEqual(['1:epoch:allow:searches-free', ...allowed(1, 2, 'searches-free'), '2:epoch:require_approval:approve-above-500', ...allowed(2, 5, 'weft:default'), '3:epoch:allow:weft:default', ...allowed(3, 2, 'weft:default')]);
    expect(worldOf(stateDir, handle.id).charges.map((c) => c.amount)).toEqual([780]);
    const seal = records.at(-1) as JournalRecord<'invocation.sealed'>;
    await expectReplaysAndVerifies(dir, handle.id, seal.body.fingerprint);
  });

  test('an authoring rule asks a person before the model authors; approved by a runtime never given the pack, the fragment runs', async () => {
    const pack = variant('travel-review', (rules) => [...rules, { id: 'model-asks', rule: 'authoring', decision: 'require_approval', tasks: ['book_trip'], reason: 'a person reviews bookings the model writes' }]);
    const dir = mkdtempSync(path.join(root, 'store-'));
    const { runtime: first, stateDir } = runtimeOver(dir, { pack, model: gapModel });
    const handle = await first.start(TRAVEL_INTENT, start('authoring'));
    expect(await handle.done).toMatchObject({ status: 'awaiting_approval', reason: 'a person reviews bookings the model writes' });
    const { runtime: second } = runtimeOver(dir, { stateDir, model: gapModel });
    const done = await (await second.approve(handle.id, { decision: 'approved', by: 'ops' })).done;
    expect(done.status).toBe('completed');
    const records = await second.store.read(handle.id);
    // The authored read-only fragment is let through by the pack's authored-effects rule (flag 11), on its epoch and its step, saying why.
    expect(admissions(records)).toEqual(['1:epoch:allow:weft:default', ...allowed(1, 2, 'weft:default'), '2:authoring:require_approval:model-asks', '2:epoch:allow:model-taxi-allowance', '2:step#0:allow:model-taxi-allowance']);
    expect(records.find((r) => r.kind === 'admission.decided' && r.epoch === 2 && (r.body as { subject: string }).subject === 'epoch')!.body).toMatchObject({ reason: 'the model authored no world effect: nothing for a person to approve' });
    expect(records.find((r) => r.kind === 'approval.requested')!.body).toEqual({ subject: 'authoring', reason: 'a person reviews bookings the model writes' });
    const world = worldOf(stateDir, handle.id);
    expect(world.holds).toEqual([]);
    expect(world.charges).toEqual([]);
    await expectReplaysAndVerifies(dir, handle.id, done.fingerprint!);
  });

  test('a pinned pack missing from the store, or other bytes under its digest, is a pin mismatch: nothing is written', async () => {
    const dir = mkdtempSync(path.join(root, 'store-'));
    const { runtime: first, stateDir } = runtimeOver(dir, { pack: approvalPack });
    const handle = await first.start(TRAVEL_INTENT, start('missing'));
    expect((await handle.done).status).toBe('awaiting_approval');
    const digest = packDigest(approvalPack);
    const blob = path.join(dir, 'blobs', digest);
    const bytes = readFileSync(blob);
    const length = await first.store.length(handle.id);
    rmSync(blob);
    const { runtime: second } = runtimeOver(dir, { stateDir });
    const missing = await second.approve(handle.id, { decision: 'approved', by: 'alice' }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(PinMismatchError);
    expect((missing as PinMismatchError).mismatches).toEqual([expect.objectContaining({ field: 'policy', pinned: `pack:travel-approval@1#${digest}`, offered: 'no such pack in the store' })]);
    // Another pack's bytes under the pinned digest (the store's own check refuses the file first).
    writeFileSync(blob, JSON.stringify(travelPack));
    const tampered = await second.replay(handle.id).catch((e: unknown) => e);
    expect(tampered).toBeInstanceOf(PinMismatchError);
    expect((tampered as Error).message).toMatch(/policy: pinned pack:travel-approval@1#[0-9a-f]{64}, offered a damaged blob/);
    expect(await second.store.length(handle.id)).toBe(length);
    writeFileSync(blob, bytes);
    expect((await (await second.approve(handle.id, { decision: 'approved', by: 'alice' })).done).status).toBe('completed');
  });

  test('a predicate registered by name@version denies a step at dispatch; a runtime without it refuses to resume the run', async () => {
    const bySms: PolicyPredicate = { name: 'by-sms', version: '1', test: (input) => input.subject === 'step' && input.request.step.actuator === 'message.send' };
    const pack = variant('travel-quiet', (rules) => [...rules, { id: 'no-messages', rule: 'predicate', predicate: 'by-sms@1', on: 'step', decision: 'deny', reason: 'this tenant receives no messages' }]);
    const dir = mkdtempSync(path.join(root, 'store-'));
    const { runtime, stateDir } = runtimeOver(dir, { pack, predicates: [bySms] });
    const handle = await runtime.start(TRAVEL_INTENT, start('predicate'));
    const result = await handle.done;
    expect(result.status).toBe('completed');
    const records = await runtime.store.read(handle.id);
    expect(admissions(records)).toContain('3:step#0:deny:no-messages');
    expect(worldOf(stateDir, handle.id).messages).toEqual([]);
    // The predicate's name@version is part of the pinned pack: replay needs it registered.
    const { runtime: without } = runtimeOver(dir, { stateDir });
    const refused = await without.replay(handle.id).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PinMismatchError);
    expect((refused as PinMismatchError).mismatches).toEqual([expect.objectContaining({ field: 'policy.predicates', pinned: 'by-sms@1' })]);
    const { runtime: withIt } = runtimeOver(dir, { stateDir, predicates: [bySms] });
    expect(await withIt.replay(handle.id)).toMatchObject({ fingerprint: result.fingerprint });
    expect((await withIt.verify({ journalPath: withIt.journalPath(handle.id)! }, publicKeyOf(key))).ok).toBe(true);
  });

  test('a run pinned before flag 7 records no rule, and today\'s runtime replays it as written', async () => {
    const dir = mkdtempSync(path.join(root, 'store-'));
    vi.resetModules();
    vi.doMock('../machines/flags.js', async (original) => ({ ...(await original<typeof import('../machines/flags.js')>()), IMPLEMENTED_FLAGS: [1, 2, 4, 5] }));
    const older = (await import('../runtime/index.js')).createRuntime;
    vi.doUnmock('../machines/flags.js');
    vi.resetModules();
    const { runtime: old, stateDir } = runtimeOver(dir, { pack: travelPack, create: older });
    const handle = await old.start(TRAVEL_INTENT, start('before-7'));
    const result = await handle.done;
    expect(result.status).toBe('completed');
    const records = await old.store.read(handle.id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.flags).toEqual([1, 2, 4, 5]);
    expect(admissions(records)).toEqual(['1:epoch:allow:-', '2:epoch:allow:-', '3:epoch:allow:-']);
    expect(worldOf(stateDir, handle.id).charges.map((c) => c.amount)).toEqual([780]);
    await expectReplaysAndVerifies(dir, handle.id, result.fingerprint!);
    const explained = explainAdmissions(records, travelPack);
    expect(explained.admissions.map((a) => a.why)).toEqual(Array(3).fill('rule not recorded (pinned before flag 7)'));
    // Before flag 9 no step's allow was recorded: each dispatched step's admission is implied by its first dispatch.
    expect(explained.stepsRecorded).toBe(false);
    const dispatched = records.filter((r) => r.kind === 'step.dispatched' && (r.body as Body).attempt === 1);
    expect(explained.implied).toEqual(dispatched.map((r) => ({ seq: r.seq, epoch: r.epoch, step: (r.body as Body).step, actuator: (r.body as Body).actuator, by: 'step.dispatched' })));
    expect(explained.implied).toHaveLength(9);
  });
});
