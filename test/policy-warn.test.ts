/**
 * A rule may warn (issue 30, "A rule may warn"; the verifier's third verdict, seed 001 §11.4). Each
 * scenario runs the travel domain under a policy pack and asserts the journal's records, the world's
 * effects, the inbox, and a replay to the same fingerprint:
 * - approve-above at 500 with `verdict: "warn"`: the run completes without a person; epoch 2's
 *   `admission.decided` is an allow that carries the warning with its rule (flag 12); the world
 *   holds the bookings and the charge; the inbox holds one advisory and no command;
 * - a warning beside a decision another rule took (approve-above asks a person, approve-mutations
 *   warns): the record names the deciding rule and still carries the warning; the listing serve
 *   reads sees no decision waiting; an approval written beside the advisory is the one recorded;
 * - a predicate on steps that warns: each step's admission at dispatch carries it, the steps run;
 * - a pack without verdicts keeps its digest and decides as before; a run pinned before flag 12
 *   replays unchanged;
 * - the schema refuses an unknown verdict, a verdict on a kind that takes none, a predicate with
 *   both decision and verdict, a step predicate asking a person, more than 32 warn rules.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test, vi } from 'vitest';
import '../journal/sha256-node.js';
import type { Model, ModelRequest } from '../actors/model/model.js';
import { travelDomain } from '../examples/travel/domain.js';
import { readTravelState } from '../examples/travel/state.js';
import { TRAVEL_GOALS, TRAVEL_INTENT } from '../examples/travel/transcript.js';
import { digestOf } from '../journal/digest.js';
import type { JournalRecord } from '../journal/records.js';
import { isInboxMessage } from '../journal/store.js';
import { publicKeyOf, signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { FLAG_WARNINGS } from '../machines/flags.js';
import { compileRulePack, packDigest, parseRulePack, PredicateRegistry, RulePackError, type PolicyPredicate, type RulePack } from '../policy/index.js';
import { explainAdmissions } from '../runtime/admissions.js';
import { createRuntime } from '../runtime/index.js';
import { listWarnings } from '../runtime/list-warnings.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(12));
const root = mkdtempSync(path.join(tmpdir(), 'weft-policy-warn-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Body = Record<string, any>;
const approvalJson = JSON.parse(readFileSync(path.join(import.meta.dirname, '..', 'examples', 'travel', 'policy-approval.json'), 'utf8')) as { rules: Array<Record<string, unknown>> } & Record<string, unknown>;
/** travel-approval@1 (approve-above-500 asks a person) with its rules edited. */
function variant(name: string, edit: (rules: Array<Record<string, unknown>>) => Array<Record<string, unknown>>): RulePack {
  return parseRulePack({ ...structuredClone(approvalJson), name, version: '1', rules: edit(structuredClone(approvalJson.rules)) }, name);
}
const warnAbove = (rules: Array<Record<string, unknown>>) => rules.map((r) => (r.id === 'approve-above-500' ? { ...r, id: 'warn-above-500', verdict: 'warn' } : r));

/** Epoch 1 searches, 2 books (780 EUR), 3 shares the itinerary, then done. */
const model: Model = {
  id: 'scripted:policy-warn',
  params: {},
  async complete(request: ModelRequest) {
    const goals = [TRAVEL_GOALS.findOptions, TRAVEL_GOALS.bookTrip, TRAVEL_GOALS.shareItinerary];
    const stopped = (request.outcomes as Array<{ outcome?: string }>).some((o) => o.outcome !== 'completed');
    const goal = stopped ? undefined : goals[request.epoch - 1];
    return { text: JSON.stringify(goal ? { goal: { task: goal.task, args: [...goal.args] } } : { done: true, summary: 'booked and shared' }) };
  },
};

function runtimeOver(storeDir: string, options: { pack?: RulePack; predicates?: PolicyPredicate[]; stateDir?: string; create?: typeof createRuntime } = {}) {
  const stateDir = options.stateDir ?? mkdtempSync(path.join(root, 'state-'));
  const policyPredicates = new PredicateRegistry(options.predicates ?? []);
  const runtime = (options.create ?? createRuntime)({
    store: new FileStore(storeDir),
    domain: travelDomain,
    stateDir,
    actuators: travelDomain.actuators({ stateDir }),
    model,
    policyPredicates,
    ...(options.pack ? { policy: compileRulePack(options.pack, policyPredicates) } : {}),
    signingKey: key,
    sleep: async () => undefined,
  });
  return { runtime, stateDir };
}
const worldOf = (stateDir: string, id: string) => readTravelState(path.join(stateDir, id, 'providers.json'));
const start = (seed: string) => ({ tenant: 't1', seed, asOf: travelDomain.asOf! });
const decided = (records: JournalRecord[]) => records.filter((r) => r.kind === 'admission.decided') as JournalRecord<'admission.decided'>[];

async function expectReplaysAndVerifies(storeDir: string, id: string, fingerprint: string, predicates: PolicyPredicate[] = []) {
  const { runtime } = runtimeOver(storeDir, { predicates });
  expect(await runtime.replay(id)).toMatchObject({ sealed: true, fingerprint });
  expect((await runtime.verify({ journalPath: runtime.journalPath(id)! }, publicKeyOf(key))).ok).toBe(true);
}

describe('a rule that warns', () => {
  test('approve-above 500 that warns: the run completes without a person, the warning on epoch 2\'s admission and in the inbox; replays', async () => {
    const pack = variant('travel-warn', warnAbove);
    const dir = mkdtempSync(path.join(root, 'store-'));
    const { runtime, stateDir } = runtimeOver(dir, { pack });
    const handle = await runtime.start(TRAVEL_INTENT, start('warn'));
    const result = await handle.done;
    expect(result.status).toBe('completed');
    const records = await runtime.store.read(handle.id);
    const pin = (records[0] as JournalRecord<'invocation.pinned'>).body.pin;
    expect(pin.flags).toContain(FLAG_WARNINGS);
    const epoch2 = decided(records).find((r) => r.epoch === 2 && r.body.subject === 'epoch')!;
    expect(epoch2.body).toEqual({
      subject: 'epoch',
      decision: 'allow',
      policy: pin.policy,
      rule: 'weft:default',
      warnings: [{ rule: 'warn-above-500', reason: 'the epoch spends 780, above the 500 limit' }],
    });
    // Only that admission warned; nobody was asked.
    expect(decided(records).filter((r) => r.body.warnings !== undefined).map((r) => r.seq)).toEqual([epoch2.seq]);
    expect(records.some((r) => r.kind === 'approval.requested' || r.kind === 'approval.decided')).toBe(false);
    expect(records.find((r) => r.kind === 'epoch.closed' && r.epoch === 2)!.body).toMatchObject({ outcome: 'completed' });
    const world = worldOf(stateDir, handle.id);
    expect(world.charges.map((c) => c.amount)).toEqual([780]);
    expect(world.bookings.length).toBe(2);
    expect(world.messages.length).toBe(1);
    // The inbox: one advisory, copied from that record; no command in its slot.
    const advisories = await runtime.store.advisories(handle.id);
    expect(advisories).toEqual([{ type: 'advisory', seq: epoch2.seq, index: 0, epoch: 2, subject: 'epoch', rule: 'warn-above-500', reason: 'the epoch spends 780, above the 500 limit', at: expect.any(Number) }]);
    expect(isInboxMessage(advisories[0])).toBe(false);
    expect(await runtime.store.peekInbox(handle.id)).toBeUndefined();
    // What `weft policy explain` and `weft ls --warnings` read.
    const explained = explainAdmissions(records, pack);
    expect(explained.admissions.find((a) => a.seq === epoch2.seq)!.warnings).toEqual([
      { rule: 'warn-above-500', kind: 'approve-above', says: 'an epoch spending more than 500 amount goes on with a warning', reason: 'the epoch spends 780, above the 500 limit' },
    ]);
    expect((await listWarnings(runtime.store)).map((r) => [r.id, r.status, r.warnings.map((w) => `${w.epoch}:${w.rule}`)])).toEqual([[handle.id, 'completed', ['2:warn-above-500']]]);
    await expectReplaysAndVerifies(dir, handle.id, result.fingerprint!);
  });

  test('a warning beside another rule\'s decision: approve-above asks a person, the warning is still recorded; the advisory is never taken for the approval', async () => {
    const pack = variant('travel-warn-ask', (rules) => [...rules, { id: 'note-mutations', rule: 'approve-mutations', verdict: 'warn' }]);
    const dir = mkdtempSync(path.join(root, 'store-'));
    const { runtime, stateDir } = runtimeOver(dir, { pack });
    const handle = await runtime.start(TRAVEL_INTENT, start('warn-ask'));
    expect(await handle.done).toMatchObject({ status: 'awaiting_approval' });
    let records = await runtime.store.read(handle.id);
    const epoch2 = decided(records).find((r) => r.epoch === 2 && r.body.subject === 'epoch')!;
    const mutations = expect.stringMatching(/^the epoch has 5 world effect\(s\), the first step 0 .*; the pack warns on any epoch with a mutation$/);
    expect(epoch2.body).toMatchObject({ decision: 'require_approval', rule: 'approve-above-500', reason: 'the epoch spends 780, above the 500 limit', warnings: [{ rule: 'note-mutations', reason: mutations }] });
    expect(records.find((r) => r.kind === 'approval.requested')!.body).toMatchObject({ reason: 'the epoch spends 780, above the 500 limit' });
    // Resting, with an advisory in the inbox and nothing in its command slot: the listing (what serve reads) sees no decision waiting.
    expect((await runtime.store.advisories(handle.id)).map((a) => a.rule)).toEqual(['note-mutations']);
    expect(await runtime.store.peekInbox(handle.id)).toBeUndefined();
    const [row] = await runtime.list();
    expect(row).toMatchObject({ id: handle.id, status: 'awaiting_approval', reason: 'the epoch spends 780, above the 500 limit' });
    expect(row!.decided).toBeUndefined();
    expect(row!.cancelRequested).toBeUndefined();
    expect(worldOf(stateDir, handle.id).charges).toEqual([]);
    // A person's approval, written beside the advisory, is the one recorded; epoch 3 (a message) warns again and goes on.
    const done = await (await runtime.approve(handle.id, { decision: 'approved', by: 'alice' })).done;
    expect(done.status).toBe('completed');
    records = await runtime.store.read(handle.id);
    expect(records.filter((r) => r.kind === 'approval.decided').map((r) => r.body)).toEqual([{ decision: 'approved', by: 'alice' }]);
    const epoch3 = decided(records).find((r) => r.epoch === 3 && r.body.subject === 'epoch')!;
    expect(epoch3.body).toMatchObject({ decision: 'allow', rule: 'weft:default', warnings: [{ rule: 'note-mutations' }] });
    expect((await runtime.store.advisories(handle.id)).map((a) => `${a.seq}:${a.epoch}:${a.rule}`)).toEqual([`${epoch2.seq}:2:note-mutations`, `${epoch3.seq}:3:note-mutations`]);
    expect(await runtime.store.peekInbox(handle.id)).toBeUndefined();
    expect(worldOf(stateDir, handle.id).charges.map((c) => c.amount)).toEqual([780]);
    expect(worldOf(stateDir, handle.id).messages.length).toBe(1);
    await expectReplaysAndVerifies(dir, handle.id, done.fingerprint!);
  });

  test('a predicate on steps that warns: each booking step\'s admission at dispatch carries it, and every step runs', async () => {
    const bookings: PolicyPredicate = { name: 'books', version: '1', test: (input) => input.subject === 'step' && /\.(hold|confirm)$/.test(input.request.step.actuator ?? '') };
    const pack = variant('travel-warn-steps', (rules) => [...rules.filter((r) => r.rule !== 'approve-above'), { id: 'note-bookings', rule: 'predicate', predicate: 'books@1', on: 'step', verdict: 'warn', reason: 'a booking step: the provider may charge a fee to undo it' }]);
    const dir = mkdtempSync(path.join(root, 'store-'));
    const { runtime, stateDir } = runtimeOver(dir, { pack, predicates: [bookings] });
    const handle = await runtime.start(TRAVEL_INTENT, start('warn-steps'));
    const result = await handle.done;
    expect(result.status).toBe('completed');
    const records = await runtime.store.read(handle.id);
    const warned = decided(records).filter((r) => r.body.warnings !== undefined);
    expect(warned.length).toBeGreaterThan(0);
    for (const r of warned) {
      expect(r.body).toMatchObject({ subject: 'step', decision: 'allow', rule: 'weft:default', warnings: [{ rule: 'note-bookings', reason: 'a booking step: the provider may charge a fee to undo it' }] });
      const dispatched = records.find((d) => d.kind === 'step.dispatched' && d.epoch === r.epoch && (d.body as Body).step === r.body.step)!;
      expect((dispatched.body as Body).actuator).toMatch(/\.(hold|confirm)$/);
      expect(dispatched.seq).toBeGreaterThan(r.seq);
    }
    expect((await runtime.store.advisories(handle.id)).map((a) => `${a.epoch}#${a.step}`)).toEqual(warned.map((r) => `${r.epoch}#${r.body.step}`));
    expect(worldOf(stateDir, handle.id).bookings.length).toBe(2);
    await expectReplaysAndVerifies(dir, handle.id, result.fingerprint!, [bookings]);
  });

  test('a pack without verdicts keeps its digest and its decisions; a run pinned before flag 12 replays unchanged', async () => {
    // No default is written into the data: the parsed pack is the file, so its digest is the file's.
    const parsed = parseRulePack(structuredClone(approvalJson), 'policy-approval.json');
    expect(parsed).toEqual(approvalJson);
    expect(packDigest(parsed)).toBe(digestOf(approvalJson as never));
    const dir = mkdtempSync(path.join(root, 'store-'));
    vi.resetModules();
    vi.doMock('../machines/flags.js', async (original) => ({ ...(await original<typeof import('../machines/flags.js')>()), IMPLEMENTED_FLAGS: [1, 2, 4, 5, 7, 8, 9] }));
    const older = (await import('../runtime/index.js')).createRuntime;
    vi.doUnmock('../machines/flags.js');
    vi.resetModules();
    const { runtime: old, stateDir } = runtimeOver(dir, { pack: parsed, create: older });
    const handle = await old.start(TRAVEL_INTENT, start('before-12'));
    expect((await handle.done).status).toBe('awaiting_approval');
    const { runtime: today } = runtimeOver(dir, { stateDir });
    const done = await (await today.approve(handle.id, { decision: 'approved', by: 'bob' })).done;
    expect(done.status).toBe('completed');
    const records = await today.store.read(handle.id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.flags).toEqual([1, 2, 4, 5, 7, 8, 9]);
    expect(decided(records).find((r) => r.epoch === 2 && r.body.subject === 'epoch')!.body).toMatchObject({ decision: 'require_approval', rule: 'approve-above-500' });
    expect(decided(records).some((r) => 'warnings' in r.body)).toBe(false);
    expect(await today.store.advisories(handle.id)).toEqual([]);
    await expectReplaysAndVerifies(dir, handle.id, done.fingerprint!);
  });
});

describe('how a pack decides with warn rules (policy/rules.ts)', () => {
  const plan = { digest: 'd'.repeat(64), source: 'htn' as const, steps: [{ operator: 'charge', actuator: 'card.charge', actuatorArgs: { amount: 780 }, readOnly: false }] };
  const request = { tenant: 't1', epoch: 2, goal: { task: 'book_trip', args: [] }, plan } as never;
  const policyOf = (rules: Array<Record<string, unknown>>) => compileRulePack(parseRulePack({ pack: 1, name: 'unit', version: '1', rules }, 'unit'));

  test('a denial by one rule keeps the warnings of the others beside it, in pack order; with none, no warnings field', () => {
    const policy = policyOf([
      { id: 'w1', rule: 'approve-above', arg: 'amount', amount: 100, verdict: 'warn' },
      { id: 'only-mail', rule: 'tenant-actuators', tenants: { '*': ['message.send'] } },
      { id: 'w2', rule: 'approve-mutations', verdict: 'warn' },
      { id: 'ask', rule: 'approve-above', arg: 'amount', amount: 500 },
    ]);
    expect(policy.admitEpoch(request)).toEqual({
      decision: 'deny',
      rule: 'only-mail',
      reason: expect.stringContaining('dispatches card.charge'),
      warnings: [
        { rule: 'w1', reason: 'the epoch spends 780, above the 100 limit' },
        { rule: 'w2', reason: 'the epoch has 1 world effect(s), the first step 0 (charge); the pack warns on any epoch with a mutation' },
      ],
    });
    expect(policyOf([{ id: 'ask', rule: 'approve-above', arg: 'amount', amount: 500 }]).admitEpoch(request)).toEqual({ decision: 'require_approval', rule: 'ask', reason: 'the epoch spends 780, above the 500 limit' });
    expect(policyOf([{ id: 'stop', rule: 'approve-above', arg: 'amount', amount: 500, verdict: 'block' }]).admitEpoch(request)).toEqual({ decision: 'deny', rule: 'stop', reason: 'the epoch spends 780, above the 500 limit' });
    expect(policyOf([{ id: 'w', rule: 'approve-above', arg: 'amount', amount: 5000, verdict: 'warn' }]).admitEpoch(request)).toEqual({ decision: 'allow', rule: 'weft:default' });
  });
});

describe('a policy pack states a rule\'s verdict', () => {
  const refused = (edit: (rules: Array<Record<string, unknown>>) => Array<Record<string, unknown>>) => {
    try {
      variant('bad', edit);
    } catch (err) {
      expect(err).toBeInstanceOf(RulePackError);
      return (err as Error).message;
    }
    throw new Error('the pack was accepted');
  };

  test('block, warn or approval on the kinds that take one; an unknown verdict is refused, saying which are known', () => {
    for (const verdict of ['block', 'warn', 'approval']) {
      const pack = variant('ok', (rules) => [...rules.map((r) => (r.rule === 'approve-above' ? { ...r, verdict } : r)), { id: 'm', rule: 'approve-mutations', verdict }, { id: 'p', rule: 'pivot-last', verdict }]);
      expect(pack.rules.filter((r) => 'verdict' in r && r.verdict === verdict).length).toBe(3);
    }
    expect(refused((rules) => rules.map((r) => (r.rule === 'approve-above' ? { ...r, verdict: 'maybe' } : r)))).toMatch(/rules\[7\]\.verdict: a verdict is "block", "warn" or "approval", not "maybe"/);
  });

  test('a verdict on a kind that takes none is refused, saying why and what to write instead', () => {
    expect(refused((rules) => rules.map((r) => (r.rule === 'spend-cap' ? { ...r, verdict: 'warn' } : r)))).toMatch(
      /rules\[1\]\.verdict: a spend-cap rule takes no verdict: spend-cap sets the contract envelope, a hard limit that always blocks \(a soft limit is an approve-above rule with verdict "warn"\)/,
    );
    expect(refused((rules) => [...rules, { id: 't', rule: 'tenant-actuators', tenants: { '*': [] }, verdict: 'warn' }])).toMatch(/a tenant-actuators rule takes no verdict: tenant-actuators keeps tenants apart and always blocks/);
  });

  test('a predicate states decision or verdict, once; on steps never approval; at most 32 rules warn', () => {
    const predicate = { id: 'p', rule: 'predicate', predicate: 'x@1', on: 'epoch', reason: 'r' };
    expect(refused((rules) => [...rules, { ...predicate, decision: 'deny', verdict: 'warn' }])).toMatch(/states what it does once: "verdict" .* or "decision"/);
    expect(refused((rules) => [...rules, predicate])).toMatch(/states what it does once/);
    expect(refused((rules) => [...rules, { ...predicate, on: 'step', verdict: 'approval' }])).toMatch(/never put to a person: a predicate rule on steps states verdict "block" or "warn"/);
    expect(variant('ok', (rules) => [...rules, { ...predicate, on: 'step', verdict: 'warn' }]).rules.at(-1)).toEqual({ ...predicate, on: 'step', verdict: 'warn' });
    const many = Array.from({ length: 33 }, (_, i) => ({ ...predicate, id: `w${i}`, verdict: 'warn' }));
    expect(refused((rules) => [...rules, ...many])).toMatch(/a pack has at most 32 rules that warn/);
  });
});
