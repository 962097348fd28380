/**
 * `weft fork` (issue 23, "Upgrade in flight, lawfully"): a hibernated travel run forked at its
 * epoch boundary onto a new library version — the fork's journal names its parent, the hash of the
 * parent's `epoch.closed`, what was re-pinned and the state at that boundary; it completes under the
 * new pin in its parent's world; both journals verify, both replay to their fingerprints (the fork's
 * replay checks the parent's journal first); the parent ends superseded and sealed; the world shows
 * each effect once. And the refusals, each writing nothing: effects after the boundary not
 * compensated (named), an epoch the parent did not close, a parent held live by another process,
 * another tenant's parent. A tampered parent fails the fork's replay clearly.
 *
 * The fork's semantics go through the runtime's API (`runtime.fork`), in this process. `weft fork`'s
 * own tests are processes: its JSON line and refusals, `--library` by file and by name, what it
 * prints for a superseded and an ended parent, the lineage `ls` prints, and `replay` and `verify` of
 * a fork's exported bundle. What those tests start from or only read afterwards — the parent runs,
 * the cancel that ends one, the fork's offline check and replay, the bundle `weft export` prints,
 * the rows `ls --json` prints — is made or read in this process as the commands do it
 * (test/support/runs-here.ts, journals-here.ts); what `show` prints of the lineage, and the verdicts
 * of `verify` and `replay` on bundles that lack or alter it, come from those commands' own modules
 * run in this process (test/support/command-in-process.ts): their subject is what the command
 * computes for each damage, not its process.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import '../journal/ed25519-node.js';
import type { JournalRecord } from '../journal/records.js';
import { canonicalize } from '../journal/canonical.js';
import { chainRecord } from '../journal/chain.js';
import type { ActuatorContext } from '../actors/actuator.js';
import { publicKeyOf, signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { createRuntime, invocationDescription, Runtime, type RuntimeOptions } from '../runtime/index.js';
import { checkForkOf, forkOfBody } from '../runtime/fork.js';
import { listInvocations } from '../runtime/list.js';
import { TRAVEL_STATE_FILE, travelDomain } from '../examples/travel/domain.js';
import { readTravelState, travelPolicy, TRAVEL_LIBRARY_BEFORE_BINDINGS_DIGEST } from '../examples/travel/index.js';
import { readPolicyFile } from '../cli/policy-choice.js';
import { spendApprovalPolicy } from '../machines/policy.js';
import { ModelUnavailableError, type Model } from '../actors/model/model.js';
import { travelTranscript } from '../examples/travel/transcript.js';
import { TravelScriptedModel } from '../examples/travel/transfer-script.js';
import { travelLibrary } from '../examples/travel/library.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Library } from '../htn/library/schema.js';
import { assertBuilt, weft } from './support/cli.js';
import { weftHere } from './support/command-in-process.js';
import { inWorkspace, runInWorkspace } from './support/runs-here.js';
import { exportAs, verifyJournal } from './support/journals-here.js';
import { redisAvailable, startRedis, type RedisServer } from './support/redis-server.js';

const root = mkdtempSync(join(tmpdir(), 'weft-fork-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const key = signingKeyFromSecret(new Uint8Array(32).fill(7));
const publicKey = publicKeyOf(key);
const INTENT = travelDomain.intent!;
let n = 0;

/** Version 2 of the travel library: one method renamed (same behaviour, another digest). */
function travelV2(): Library {
  const v2 = JSON.parse(JSON.stringify(travelLibrary)) as Library;
  const method = v2.methods.find((m) => m.name === 'direct-flight-hotel-near-venue')!;
  method.name = 'direct-flight-hotel-by-the-venue';
  return v2;
}

function workspace(options: Partial<RuntimeOptions> = {}) {
  const dir = join(root, `ws${n++}`);
  const store = new FileStore(join(dir, 'store'));
  const stateDir = join(dir, 'state');
  const runtime = createRuntime({ store, domain: travelDomain, stateDir, signingKey: key, sleep: async () => undefined, ...options });
  return { dir, store, stateDir, runtime };
}

/** A travel run hibernated at the end of its first epoch (searches only), or of its `epochs`-th. */
async function hibernatedRun(ws: ReturnType<typeof workspace>, epochs = 1) {
  const start = { tenant: 'acme', seed: '6', asOf: travelDomain.asOf! };
  const id = Runtime.defaultId(INTENT, start);
  const first = await ws.runtime.start(INTENT, { ...start, id });
  first.hibernate();
  expect((await first.done).status).toBe('hibernated');
  for (let e = 1; e < epochs; e++) {
    const again = await ws.runtime.resume(id);
    again.hibernate();
    expect((await again.done).status).toBe('hibernated');
  }
  return id;
}

/** The error `promise` is refused with (a test failure when it is not refused). */
async function refusal(promise: Promise<unknown>): Promise<Error & { code: string }> {
  try {
    await promise;
  } catch (err) {
    return err as Error & { code: string };
  }
  throw new Error('expected the fork to be refused');
}

const kinds = (records: readonly JournalRecord[]) => records.map((r) => r.kind);
/** Poll `check` until it holds (60 s at most). */
async function waitUntil(check: () => Promise<boolean>): Promise<void> {
  for (const until = Date.now() + 60_000; !(await check()); ) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
const worldOf = (ws: ReturnType<typeof workspace>, id: string) => readTravelState(join(ws.stateDir, id, TRAVEL_STATE_FILE));

/** Nothing was written: the store holds the parent alone, with the records it had, resting as it was. */
async function expectUntouched(ws: ReturnType<typeof workspace>, id: string, records: number) {
  expect(await ws.store.list()).toEqual([id]);
  expect(await ws.store.length(id)).toBe(records);
  expect((await ws.runtime.list()).find((row) => row.id === id)?.status).toBe('hibernated');
}

describe('runtime.fork', () => {
  test('a hibernated run forked at epoch 1 onto library v2: both journals verify and replay, the parent is superseded and sealed, each effect happens once', async () => {
    const ws = workspace();
    const parent = await hibernatedRun(ws);
    const v2 = travelV2();
    const handle = await ws.runtime.fork(parent, { atEpoch: 1, library: v2 });
    expect(handle.id).not.toBe(parent);
    const result = await handle.done;
    expect(result.status, result.reason).toBe('completed');

    const parentRecords = await ws.store.read(parent);
    const closed = parentRecords.find((r) => r.kind === 'epoch.closed' && r.epoch === 1)!;
    // The parent: its journal to the boundary, then its ending naming the fork, and the seal.
    expect(kinds(parentRecords).slice(-3)).toEqual(['epoch.closed', 'invocation.superseded', 'invocation.sealed']);
    expect(parentRecords.at(-2)!.body).toMatchObject({ by: handle.id, atEpoch: 1 });
    expect((await ws.runtime.list()).find((r) => r.id === parent)?.status).toBe('superseded');

    // The fork: its own pin (v2), then where it came from and the state at that boundary.
    const records = await ws.store.read(handle.id);
    const pinned = records[0] as JournalRecord<'invocation.pinned'>;
    const parentPinned = parentRecords[0] as JournalRecord<'invocation.pinned'>;
    expect(pinned.body).toMatchObject({ invocation: handle.id, tenant: 'acme', intent: INTENT });
    expect(pinned.body.pin).toEqual({ ...parentPinned.body.pin, library: libraryDigest(v2) });
    const forked = records[1] as JournalRecord<'invocation.forked'>;
    expect(forked.kind).toBe('invocation.forked');
    expect(forked.body).toMatchObject({ parent, parentSeq: closed.seq, parentHash: closed.hash, atEpoch: 1, repinned: ['library'], world: parent });
    expect(forked.body.state).toMatchObject({ epoch: 2, replans: 0, spent: 0, effects: [], obligations: [] });
    expect((forked.body.state.outcomes as Array<{ goal: { task: string } }>).map((o) => o.goal.task)).toEqual(['find_options']);
    // It goes on at epoch 2 under v2, and ends sealed.
    expect(records[2]).toMatchObject({ kind: 'model.requested', epoch: 2 });
    expect(records.filter((r) => r.kind === 'epoch.derived').every((r) => (r.body as { library: string }).library === libraryDigest(v2))).toBe(true);
    expect(records.at(-1)!.kind).toBe('invocation.sealed');

    // Both verify offline with the public key; both replay to their fingerprints.
    expect((await ws.runtime.verify(parent, publicKey)).ok).toBe(true);
    expect((await ws.runtime.verify(handle.id, publicKey)).ok).toBe(true);
    expect(await ws.runtime.replay(handle.id)).toMatchObject({ status: 'completed', sealed: true, fingerprint: result.fingerprint });
    expect(await ws.runtime.replay(parent)).toMatchObject({ status: 'superseded', sealed: true, fingerprint: (parentRecords.at(-1)!.body as { fingerprint: string }).fingerprint });

    // The world: the fork acted in its parent's world; every booking, charge and message once, under the fork's keys.
    expect(existsSync(join(ws.stateDir, handle.id))).toBe(false);
    const world = worldOf(ws, parent);
    expect(world.bookings.map((b) => b.kind).sort()).toEqual(['flight', 'hotel']);
    expect(world.charges).toHaveLength(1);
    expect(world.messages).toHaveLength(1);
    const effects = Object.entries(world.ledger).filter(([, entry]) => !entry.actuator.endsWith('.search'));
    expect(effects.length).toBeGreaterThan(0);
    for (const [k, entry] of effects) {
      expect(k.startsWith(`${handle.id}.`)).toBe(true);
      expect(entry.applied).toBe(1);
    }

    // The superseded parent is not resumed, nor approved; the same fork asked again is the same fork.
    expect((await (await ws.runtime.resume(parent)).done).status).toBe('superseded');
    const again = await ws.runtime.fork(parent, { atEpoch: 1, library: v2 });
    expect(again.id).toBe(handle.id);
    expect((await again.done).status).toBe('completed');
    expect((await ws.store.list()).sort()).toEqual([parent, handle.id].sort());
    // A fork of the same parent under another pin is refused: one run goes on from a parent.
    await expect(ws.runtime.fork(parent, { atEpoch: 1 })).rejects.toMatchObject({ code: 'fork.parent_superseded' });
  });

  test('a fork is refused after world effects the parent did not compensate, naming them; forked at the last boundary, they are carried, not redone', async () => {
    const ws = workspace();
    const parent = await hibernatedRun(ws, 2);
    const length = await ws.store.length(parent);
    const bookings = (await ws.store.read(parent)).filter((r) => r.kind === 'step.completed' && r.epoch === 2);
    expect(bookings.length).toBeGreaterThan(0);

    const before = await ws.store.read(parent);
    const worldBefore = worldOf(ws, parent);
    const replayedBefore = await ws.runtime.replay(parent);
    const dispatched = before.filter((r) => r.kind === 'step.dispatched' && r.epoch === 2) as JournalRecord<'step.dispatched'>[];

    const refused = await refusal(ws.runtime.fork(parent, { atEpoch: 1 }));
    expect(refused).toMatchObject({ code: 'fork.uncompensated_effects' });
    // Each effect named: its step, actuator and key.
    for (const done of bookings) {
      const { step, key: effectKey } = done.body as { step: number; key: string };
      const actuator = dispatched.find((d) => d.body.step === step)!.body.actuator;
      expect(refused.message).toMatch(new RegExp(`epoch 2 step ${step} \\S+ via ${actuator.replace('.', '\\.')} key ${effectKey.replace(/\./g, '\\.')}`));
    }
    expect(refused.message).toMatch(/epoch 2 step \d+ \S+ via card\.charge/);
    expect(refused.message).toContain(`applied ${bookings.length} world effect(s)`);
    expect(refused.message).toContain('a second time under new keys');
    await expectUntouched(ws, parent, length);
    // The parent's journal: every record as it was; its file still verifies offline (hibernated, it has no seal yet: the
    // public key checks the seal once the fork below supersedes and seals it), and it replays to the same fingerprint.
    expect(await ws.store.read(parent)).toEqual(before);
    const offline = await ws.runtime.verify({ journalPath: join(ws.dir, 'store', 'invocations', parent, 'journal.jsonl') });
    expect(offline.ok, offline.error?.message).toBe(true);
    expect(offline.records).toHaveLength(before.length);
    expect(await ws.runtime.replay(parent)).toEqual(replayedBefore);
    // The world right at the refusal: the uncompensated effects still applied once, nothing new, nothing undone.
    const worldAfter = worldOf(ws, parent);
    expect(worldAfter).toEqual(worldBefore);
    expect(worldAfter.charges).toHaveLength(1);
    expect(worldAfter.bookings).toHaveLength(2);
    for (const done of bookings) expect(worldAfter.ledger[(done.body as { key: string }).key]?.applied).toBe(1);

    const handle = await ws.runtime.fork(parent, { atEpoch: 2 });
    const result = await handle.done;
    expect(result.status, result.reason).toBe('completed');
    const forked = (await ws.store.read(handle.id, 1, 2))[0] as JournalRecord<'invocation.forked'>;
    expect(forked.body.repinned).toEqual([]);
    expect(forked.body.state.epoch).toBe(3);
    expect(forked.body.state.effects.map((e) => e.actuator)).toContain('card.charge');
    expect(forked.body.state.effects.every((e) => e.epoch === 2 && e.key.startsWith(`${parent}.2.`))).toBe(true);
    expect(forked.body.state.obligations.length).toBeGreaterThan(0);
    // Nothing booked or charged again: the fork only sent the itinerary and set the reminder.
    const world = worldOf(ws, parent);
    expect(world.charges).toHaveLength(1);
    expect(world.bookings).toHaveLength(2);
    expect(world.messages).toHaveLength(1);
    expect(await ws.runtime.replay(handle.id)).toMatchObject({ status: 'completed', fingerprint: result.fingerprint });
    // The parent, superseded from its rest at the end of epoch 2: the records it had, then its ending; sealed, verified with the public key.
    const parentRecords = await ws.store.read(parent);
    expect(parentRecords.slice(0, before.length)).toEqual(before);
    expect(kinds(parentRecords.slice(before.length))).toEqual(['invocation.superseded', 'invocation.sealed']);
    expect(await ws.runtime.verify(parent, publicKey)).toMatchObject({ ok: true, sealed: true });
    expect(await ws.runtime.replay(parent)).toMatchObject({ status: 'superseded', fingerprint: (parentRecords.at(-1)!.body as { fingerprint: string }).fingerprint });
  });

  test('a run awaiting approval under a strict policy, forked at epoch 1 onto the domain\'s policy: the parent is superseded from its rest, the fork needs no person', async () => {
    const strict = spendApprovalPolicy({ version: 'strict', limit: 100, amountArg: 'amount' });
    const ws = workspace({ policy: strict, policies: [travelPolicy] });
    const start = { tenant: 'acme', seed: '6', asOf: travelDomain.asOf! };
    const first = await ws.runtime.start(INTENT, start);
    const parent = first.id;
    expect((await first.done).status).toBe('awaiting_approval');
    const handle = await ws.runtime.fork(parent, { atEpoch: 1, policy: travelPolicy.id, reason: 'the new spend policy' });
    const result = await handle.done;
    expect(result.status, result.reason).toBe('completed');
    const forked = (await ws.store.read(handle.id, 1, 2))[0] as JournalRecord<'invocation.forked'>;
    expect(forked.body.repinned).toEqual(['policy']);
    const records = await ws.store.read(handle.id);
    expect(records.some((r) => r.kind === 'approval.requested')).toBe(false);
    const parentRecords = await ws.store.read(parent);
    expect(kinds(parentRecords).slice(-3)).toEqual(['approval.requested', 'invocation.superseded', 'invocation.sealed']);
    expect(parentRecords.at(-2)!.body).toEqual({ by: handle.id, atEpoch: 1, reason: 'the new spend policy' });
    expect(await ws.runtime.replay(parent)).toMatchObject({ status: 'superseded', sealed: true });
    expect(await ws.runtime.replay(handle.id)).toMatchObject({ status: 'completed', fingerprint: result.fingerprint });
    expect((await ws.runtime.verify(parent, publicKey)).ok).toBe(true);
    expect((await ws.runtime.verify(handle.id, publicKey)).ok).toBe(true);
    // Approving the superseded parent is refused: it has ended.
    await expect(ws.runtime.approve(parent, { decision: 'approved', by: 'ops' })).rejects.toMatchObject({ code: 'runtime.not_awaiting_approval', message: expect.stringContaining('superseded') });
  });

  test('a hibernated run forked at epoch 1 onto a policy pack: the fork pins the pack by digest and files it, so a runtime never given the pack resumes and replays it', async () => {
    const ws = workspace();
    const parent = await hibernatedRun(ws);
    const pack = await readPolicyFile(join(import.meta.dirname, '..', 'examples', 'travel', 'policy-approval.json'));
    const handle = await ws.runtime.fork(parent, { atEpoch: 1, policy: pack });
    const result = await handle.done;
    // The pack asks a person above 500 EUR: the booking epoch rests awaiting approval.
    expect(result.status, result.reason).toBe('awaiting_approval');
    const records = await ws.store.read(handle.id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.policy).toBe(pack.id);
    expect((records[1] as JournalRecord<'invocation.forked'>).body.repinned).toEqual(['policy']);
    // Another runtime, with the domain's policies only, finds the pinned pack in the store.
    const other = workspaceOver(ws, {});
    const approved = await (await other.approve(handle.id, { decision: 'approved', by: 'ops' })).done;
    expect(approved.status, approved.reason).toBe('completed');
    expect(await other.replay(handle.id)).toMatchObject({ status: 'completed', fingerprint: approved.fingerprint });
    expect((await other.verify(handle.id, publicKey)).ok).toBe(true);
  });

  test('refused with nothing written: a parent with a cancel waiting in its inbox, and a shadow run after its shadowed epoch', async () => {
    const ws = workspace();
    const parent = await hibernatedRun(ws);
    const length = await ws.store.length(parent);
    await ws.store.putInbox(parent, { type: 'cancel', by: 'ops', reason: 'stop it', at: Date.parse('2026-06-01T10:00:00Z') });
    expect(await refusal(ws.runtime.fork(parent, { atEpoch: 1 }))).toMatchObject({ code: 'fork.cancel_pending' });
    expect(await ws.store.length(parent)).toBe(length);
    expect((await ws.store.peekInbox(parent))?.type).toBe('cancel');

    const shadow = workspace();
    const run = await (await shadow.runtime.start(INTENT, { tenant: 'acme', seed: '6', asOf: travelDomain.asOf!, shadow: true })).done;
    expect(run.status).toBe('completed');
    const shadowed = await shadow.store.read(run.id);
    const epoch = shadowed.find((r) => r.kind === 'step.shadowed')!.epoch;
    expect(await refusal(shadow.runtime.fork(run.id, { atEpoch: epoch }))).toMatchObject({ code: 'fork.shadow_parent' });
    expect(await shadow.store.list()).toEqual([run.id]);
  });

  test('a parent held live by another runtime is asked through its inbox to come to rest: it hibernates at its next boundary, then the fork goes on from there', async () => {
    // The holder's epoch-2 observation waits on a gate: the parent is held live, between boundaries.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let observing!: () => void;
    const observed = new Promise<void>((resolve) => (observing = resolve));
    const ws = workspace();
    const gated = travelDomain.actuators({ stateDir: ws.stateDir }).map((a) =>
      a.name !== travelDomain.observe ? a : { ...a, run: async (args: unknown, ctx: ActuatorContext) => {
        if (ctx.epoch === 2) {
          observing();
          await gate;
        }
        return a.run(args, ctx);
      } },
    );
    const holderRuntime = workspaceOver(ws, { actuators: gated, writer: 'holder-process' });
    const start = { tenant: 'acme', seed: '8', asOf: travelDomain.asOf! };
    const parentRun = await holderRuntime.start(INTENT, start);
    await observed;
    expect((await ws.store.holder(parentRun.id))?.live).toBe(true);

    const forking = ws.runtime.fork(parentRun.id, { atEpoch: 2, library: travelV2(), waitMs: 60_000 });
    // The request is in the parent's inbox before its holder goes on.
    await waitUntil(async () => (await ws.store.peekInbox(parentRun.id))?.type === 'rest');
    open();
    const parentResult = await parentRun.done;
    expect(parentResult.status).toBe('hibernated'); // at the end of epoch 2: the booking epoch ran whole
    const fork = await forking;
    const result = await fork.done;
    expect(result.status, result.reason).toBe('completed');
    const forked = (await ws.store.read(fork.id, 1, 2))[0] as JournalRecord<'invocation.forked'>;
    expect(forked.body).toMatchObject({ parent: parentRun.id, atEpoch: 2, repinned: ['library'] });
    const parentRecords = await ws.store.read(parentRun.id);
    expect(kinds(parentRecords).slice(-3)).toEqual(['epoch.closed', 'invocation.superseded', 'invocation.sealed']);
    expect(await ws.store.peekInbox(parentRun.id)).toBeUndefined();
    expect(await ws.runtime.replay(parentRun.id)).toMatchObject({ status: 'superseded', sealed: true });
    expect(await ws.runtime.replay(fork.id)).toMatchObject({ status: 'completed', fingerprint: result.fingerprint });
    // Each booking once: the parent's, carried by the fork, not redone.
    const world = worldOf(ws, parentRun.id);
    expect(world.charges).toHaveLength(1);
    expect(world.messages).toHaveLength(1);
  });

  test('a fork of a fork: it acts in the first parent\'s world, and its replay checks the whole lineage', async () => {
    const ws = workspace();
    const root = await hibernatedRun(ws);
    const first = await ws.runtime.fork(root, { atEpoch: 1 });
    first.hibernate();
    expect((await first.done).status).toBe('hibernated'); // at the end of epoch 2: booked and paid, in root's world
    const second = await ws.runtime.fork(first.id, { atEpoch: 2, library: travelV2() });
    const result = await second.done;
    expect(result.status, result.reason).toBe('completed');
    const forked = (await ws.store.read(second.id, 1, 2))[0] as JournalRecord<'invocation.forked'>;
    expect(forked.body).toMatchObject({ parent: first.id, atEpoch: 2, world: root, repinned: ['library'] });
    expect(forked.body.state.effects.every((e) => e.key.startsWith(`${first.id}.2.`))).toBe(true);
    const rows = await ws.runtime.list();
    expect(rows.find((r) => r.id === root)?.status).toBe('superseded');
    expect(rows.find((r) => r.id === first.id)?.status).toBe('superseded');
    expect(await ws.runtime.replay(second.id)).toMatchObject({ status: 'completed', fingerprint: result.fingerprint });
    expect(await ws.runtime.replay(first.id)).toMatchObject({ status: 'superseded' });
    const world = worldOf(ws, root);
    expect(world.charges).toHaveLength(1);
    expect(world.bookings).toHaveLength(2);
    expect(world.messages).toHaveLength(1);
    expect(existsSync(join(ws.stateDir, first.id))).toBe(false);
    // The first parent changed before its boundary: the grandchild's replay says so.
    const file = join(ws.dir, 'store', 'invocations', root, 'journal.jsonl');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"price":310', '"price":311'));
    const fresh = createRuntime({ store: new FileStore(join(ws.dir, 'store')), domain: travelDomain, stateDir: ws.stateDir, signingKey: key });
    await expect(fresh.replay(second.id)).rejects.toMatchObject({ code: 'fork.parent_mismatch', message: expect.stringContaining(`parent ${root} does not verify`) });
  });

  test('a run suspended on a failing model, forked onto another model: repinned model, the parent superseded from its suspension', async () => {
    const good = new TravelScriptedModel(travelTranscript);
    // Model "flaky-1" answers epoch 1, then is unreachable: the run suspends (transient) in epoch 2.
    const flaky: Model = {
      id: 'flaky-1',
      params: {},
      complete: async (request) => {
        if (request.epoch >= 2) throw new ModelUnavailableError('flaky-1', 'connection refused');
        return good.complete(request);
      },
    };
    const ws = workspace({ model: flaky, limits: { modelAttempts: 2 } });
    const start = { tenant: 'acme', seed: '6', asOf: travelDomain.asOf! };
    const first = await ws.runtime.start(INTENT, start);
    const stopped = await first.done;
    expect(stopped.status).toBe('suspended');
    expect(stopped.suspension?.class).toBe('transient');

    const handle = await ws.runtime.fork(first.id, { atEpoch: 1, model: good });
    const result = await handle.done;
    expect(result.status, result.reason).toBe('completed');
    const [pinned, forked] = (await ws.store.read(handle.id, 0, 2)) as [JournalRecord<'invocation.pinned'>, JournalRecord<'invocation.forked'>];
    expect(pinned.body.pin.model).toEqual({ id: good.id, params: {} });
    expect(forked.body.repinned).toEqual(['model']);
    const parentRecords = await ws.store.read(first.id);
    expect(kinds(parentRecords).slice(-3)).toEqual(['model.failed', 'invocation.superseded', 'invocation.sealed']);
    expect(await ws.runtime.replay(first.id)).toMatchObject({ status: 'superseded' });
    expect(await ws.runtime.replay(handle.id)).toMatchObject({ status: 'completed', fingerprint: result.fingerprint });
    // Another fork of it (here: without the new model) is refused: one run goes on from a parent.
    await expect(ws.runtime.fork(first.id, { atEpoch: 1 })).rejects.toMatchObject({ code: 'fork.parent_superseded' });
  });

  test('a crash between superseding the parent and writing the fork: asking for the same fork again writes it, once', async () => {
    const ws = workspace();
    const parent = await hibernatedRun(ws);
    // The store fails the fork's first append once (as a crash there would leave it: the parent sealed, no fork).
    let failOnce = true;
    const flaky = new Proxy(ws.store, {
      get(target, name, receiver) {
        if (name === 'append') {
          return async (lease: { invocation: string }, expected: number, records: readonly JournalRecord[]) => {
            if (failOnce && lease.invocation !== parent && records[0]?.kind === 'invocation.pinned') {
              failOnce = false;
              throw new Error('the process died here');
            }
            return target.append(lease as never, expected, records);
          };
        }
        const value = Reflect.get(target, name, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const crashing = workspaceOver(ws, { store: flaky });
    await expect(crashing.fork(parent, { atEpoch: 1 })).rejects.toThrow('the process died here');
    expect(kinds(await ws.store.read(parent)).slice(-2)).toEqual(['invocation.superseded', 'invocation.sealed']);
    const by = ((await ws.store.read(parent)).at(-2)!.body as { by: string }).by;
    expect(await ws.store.length(by)).toBe(0);

    const handle = await ws.runtime.fork(parent, { atEpoch: 1 });
    expect(handle.id).toBe(by);
    expect((await handle.done).status).toBe('completed');
    expect((await ws.store.list()).sort()).toEqual([parent, by].sort());
    expect((await ws.store.read(by, 1, 2))[0]!.kind).toBe('invocation.forked');
    expect(await ws.runtime.replay(by)).toMatchObject({ status: 'completed' });
  });

  test('refused with nothing written: an epoch not closed, a parent held live by another process, another tenant', async () => {
    const ws = workspace();
    const parent = await hibernatedRun(ws);
    const length = await ws.store.length(parent);

    await expect(ws.runtime.fork(parent, { atEpoch: 2 })).rejects.toMatchObject({ code: 'fork.epoch_not_closed', message: expect.stringContaining('closed: 1') });
    await expectUntouched(ws, parent, length);

    const holder = `${hostname()}:${process.pid}`;
    const lease = await ws.store.acquire(parent, { writer: holder, ttlMs: 60_000 });
    try {
      const held = await refusal(ws.runtime.fork(parent, { atEpoch: 1, waitMs: 0 }));
      expect(held).toMatchObject({ code: 'fork.parent_held' });
      expect(held.message).toContain(holder);
      expect(held.message).toMatch(/cancel or hibernate it/i);
      // Asked through its inbox, a holder that does not come to rest in time: refused, and the request withdrawn.
      const unanswered = await refusal(ws.runtime.fork(parent, { atEpoch: 1, waitMs: 500 }));
      expect(unanswered).toMatchObject({ code: 'fork.parent_held' });
      expect(unanswered.message).toMatch(/asked through its inbox to come to rest/);
      expect(await ws.store.peekInbox(parent)).toBeUndefined();
    } finally {
      await ws.store.release(lease);
    }
    expect(await ws.store.list()).toEqual([parent]);
    expect(await ws.store.length(parent)).toBe(length);

    await expect(ws.runtime.fork(parent, { atEpoch: 1, tenant: 'other' })).rejects.toMatchObject({ code: 'invocation.not_found' });
    await expect(workspaceOver(ws, { tenant: 'other' }).fork(parent, { atEpoch: 1 })).rejects.toMatchObject({ code: 'invocation.not_found' });
    await expectUntouched(ws, parent, length);
  });

  test("the fork's first record names its lineage (pin forkOf = invocation.forked's parent, epoch, seq, hash); a journal that is not a fork has none; the two must agree", async () => {
    const ws = workspace();
    const parent = await hibernatedRun(ws);
    const handle = await ws.runtime.fork(parent, { atEpoch: 1 });
    expect((await handle.done).status).toBe('completed');
    const [pinned, forked] = (await ws.store.read(handle.id, 0, 2)) as [JournalRecord<'invocation.pinned'>, JournalRecord<'invocation.forked'>];
    const closed = (await ws.store.read(parent)).find((r) => r.kind === 'epoch.closed' && r.epoch === 1)!;
    expect(pinned.kind).toBe('invocation.pinned');
    expect(pinned.body.forkOf).toEqual({ parent, atEpoch: 1, parentSeq: closed.seq, parentHash: closed.hash });
    expect(forkOfBody(forked.body)).toEqual(pinned.body.forkOf);
    expect(Object.keys(pinned.body.pin)).not.toContain('forkOf'); // the pin itself (what a runtime must match) is unchanged
    expect(((await ws.store.read(parent, 0, 1))[0] as JournalRecord<'invocation.pinned'>).body.forkOf).toBeUndefined();
    // checkForkOf: agreeing, or a fork written before the pin named it (no forkOf), passes; a difference, or a forkOf with no invocation.forked, is named.
    expect(() => checkForkOf(pinned, forked)).not.toThrow();
    expect(() => checkForkOf({ ...pinned, body: { ...pinned.body, forkOf: undefined } }, forked)).not.toThrow();
    expect(() => checkForkOf({ ...pinned, body: { ...pinned.body, forkOf: { ...pinned.body.forkOf!, parentSeq: 3 } } }, forked)).toThrow(/invocation\.forked says/);
    expect(() => checkForkOf(pinned, undefined)).toThrow(/not invocation\.forked/);
  });

  test('a superseded parent is refused at once, naming its fork — under another pin, at another epoch, under another id; the same fork asked again is that fork', async () => {
    const ws = workspace();
    const parent = await hibernatedRun(ws);
    const handle = await ws.runtime.fork(parent, { atEpoch: 1 });
    expect((await handle.done).status).toBe('completed');
    const records = await ws.store.read(parent);
    for (const asked of [{ atEpoch: 1, library: travelV2() }, { atEpoch: 1, id: 'inv-another-fork' }, { atEpoch: 1, policy: travelPolicy.id, reason: 'again' }, { atEpoch: 7 }]) {
      const refused = await refusal(ws.runtime.fork(parent, asked));
      expect(refused).toMatchObject({ code: 'fork.parent_superseded' });
      expect(refused.message).toContain(`superseded by fork ${handle.id} at the end of epoch 1`);
      expect(refused.message).toContain(`fork ${handle.id} instead`);
    }
    expect((await ws.store.list()).sort()).toEqual([parent, handle.id].sort());
    expect(await ws.store.read(parent)).toEqual(records);
    expect((await ws.runtime.fork(parent, { atEpoch: 1 })).id).toBe(handle.id);
    expect((await ws.runtime.fork(parent, { atEpoch: 1, id: handle.id })).id).toBe(handle.id);
    expect(await ws.store.read(parent)).toEqual(records);
  });

  test('a parent that had ended (cancelled) may be forked, and stays as it was; asked twice, one fork; the listing names the lineage both ways', async () => {
    const ws = workspace();
    const parent = await hibernatedRun(ws);
    expect((await (await ws.runtime.cancel(parent, { by: 'ops', reason: 'changed plans' })).done).status).toBe('cancelled');
    const records = await ws.store.read(parent);
    const handle = await ws.runtime.fork(parent, { atEpoch: 1 });
    expect((await handle.done).status).toBe('completed');
    const again = await ws.runtime.fork(parent, { atEpoch: 1 });
    expect(again.id).toBe(handle.id);
    expect((await again.done).status).toBe('completed');
    expect(await ws.store.read(parent)).toEqual(records);
    expect((await ws.store.list()).sort()).toEqual([parent, handle.id].sort());
    const rows = await ws.runtime.list();
    expect(rows.find((r) => r.id === parent)).toMatchObject({ status: 'cancelled' });
    expect(rows.find((r) => r.id === parent)?.supersededBy).toBeUndefined();
    expect(rows.find((r) => r.id === handle.id)).toMatchObject({ status: 'completed', forkOf: { parent, atEpoch: 1 } });
  });

  test('runtime.list and the file summaries name a fork\'s parent and a superseded run\'s fork; describe gives both', async () => {
    const ws = workspace();
    const parent = await hibernatedRun(ws);
    const handle = await ws.runtime.fork(parent, { atEpoch: 1 });
    expect((await handle.done).status).toBe('completed');
    const expectLineage = (rows: Awaited<ReturnType<typeof ws.runtime.list>>) => {
      expect(rows.find((r) => r.id === parent)).toMatchObject({ status: 'superseded', supersededBy: handle.id });
      expect(rows.find((r) => r.id === parent)?.forkOf).toBeUndefined();
      expect(rows.find((r) => r.id === handle.id)).toMatchObject({ status: 'completed', forkOf: { parent, atEpoch: 1 } });
      expect(rows.find((r) => r.id === handle.id)?.supersededBy).toBeUndefined();
    };
    expectLineage(await ws.runtime.list());
    // Both ended: a fresh store lists them from the summaries kept beside their journals, which carry the lineage too.
    for (const id of [parent, handle.id]) expect(existsSync(join(ws.dir, 'store', 'invocations', id, 'summary.json'))).toBe(true);
    expect(JSON.parse(readFileSync(join(ws.dir, 'store', 'invocations', handle.id, 'summary.json'), 'utf8')).summary.forkOf).toEqual({ parent, atEpoch: 1 });
    expectLineage(await listInvocations(new FileStore(join(ws.dir, 'store'))));
    const records = await ws.store.read(handle.id);
    const summary = (await listInvocations(ws.store)).find((r) => r.id === handle.id)!;
    const closed = (await ws.store.read(parent)).find((r) => r.kind === 'epoch.closed' && r.epoch === 1)!;
    expect(invocationDescription({ summary, records }).lineage).toEqual({ forkOf: { parent, atEpoch: 1, parentSeq: closed.seq, parentHash: closed.hash }, supersededBy: null });
    const parentSummary = (await listInvocations(ws.store)).find((r) => r.id === parent)!;
    expect(invocationDescription({ summary: parentSummary, records: await ws.store.read(parent) }).lineage).toEqual({ forkOf: null, supersededBy: handle.id });
  });

  test("a fork's replay checks its parent: a parent's journal changed before the boundary is a clear error", async () => {
    const ws = workspace();
    const parent = await hibernatedRun(ws);
    const handle = await ws.runtime.fork(parent, { atEpoch: 1 });
    expect((await handle.done).status).toBe('completed');
    // Change one price in an epoch-1 search result of the parent (same length: only the hash chain notices).
    const file = join(ws.dir, 'store', 'invocations', parent, 'journal.jsonl');
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('"price":310');
    writeFileSync(file, text.replace('"price":310', '"price":311'));
    const fresh = createRuntime({ store: new FileStore(join(ws.dir, 'store')), domain: travelDomain, stateDir: ws.stateDir, signingKey: key });
    await expect(fresh.replay(handle.id)).rejects.toMatchObject({ code: 'fork.parent_mismatch', message: expect.stringMatching(new RegExp(`parent ${parent} does not verify up to seq`)) });
  });
});

function workspaceOver(ws: ReturnType<typeof workspace>, options: Partial<RuntimeOptions>) {
  return createRuntime({ store: ws.store, domain: travelDomain, stateDir: ws.stateDir, signingKey: key, sleep: async () => undefined, ...options });
}

const redisHere = redisAvailable();
if (!redisHere && process.env.CI !== 'true') console.warn('\n*** redis-server is not installed: the fork-on-Redis test is SKIPPED ***\n');
(redisHere || process.env.CI === 'true' ? describe : describe.skip)('runtime.fork on Redis', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => server?.stop());

  test("the status index lists the parent superseded (ended: not open), the fork completed; the fork's replay checks its parent in Redis", async () => {
    const runtime = createRuntime({ redis: server.url, redisPrefix: 'fork', redisGiveUpMs: 10_000, dispatch: 'in-process', domain: travelDomain, signingKey: key, sleep: async () => undefined });
    try {
      const start = { tenant: 'acme', seed: '6', asOf: travelDomain.asOf! };
      const first = await runtime.start(INTENT, start);
      first.hibernate();
      expect((await first.done).status).toBe('hibernated');
      const handle = await runtime.fork(first.id, { atEpoch: 1 });
      const result = await handle.done;
      expect(result.status, result.reason).toBe('completed');
      const rows = await runtime.list();
      expect(rows.find((r) => r.id === first.id)).toMatchObject({ status: 'superseded', supersededBy: handle.id });
      expect(rows.find((r) => r.id === handle.id)).toMatchObject({ status: 'completed', forkOf: { parent: first.id, atEpoch: 1 } });
      expect((await runtime.listOpen()).map((r) => r.id)).not.toContain(first.id);
      expect(await runtime.replay(handle.id)).toMatchObject({ status: 'completed', fingerprint: result.fingerprint });
    } finally {
      await runtime.close();
    }
  });
});

describe('weft fork', () => {
  beforeAll(() => assertBuilt());

  test('forks a hibernated run onto a library file: one JSON line, the fork verifies and replays; an open epoch is refused', async () => {
    const dir = join(root, 'cli');
    // The parent is a fixture made in this process as `weft run --hibernate` makes it (test/support/runs-here.ts).
    const made = await runInWorkspace('travel', { dir, intent: INTENT, seed: '6', asOf: travelDomain.asOf!, hibernate: true });
    expect(made.status, made.reason ?? '').toBe('hibernated');
    const parent = made.id;
    const open = await weft(['fork', parent, '--at-epoch', '3', '--dir', dir]);
    expect(open.code).toBe(1);
    expect(open.stderr).toContain('not an epoch the parent closed (closed: 1)');

    const file = join(root, 'travel-v2.json');
    writeFileSync(file, JSON.stringify(travelV2()));
    const out = await weft(['fork', parent, '--at-epoch', '1', '--library', file, '--dir', dir, '--json']);
    expect(out.code, out.stderr).toBe(0);
    const line = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { id: string; status: string; journal: string; publicKey: string; fingerprint: string; parent: string; repinned: string[] };
    expect(line).toMatchObject({ status: 'completed', parent, atEpoch: 1, repinned: ['library'] });
    expect(line.id).not.toBe(parent);
    // The fork's journal, checked as `weft verify` checks it and replayed as `weft replay` replays it (in this process;
    // both commands on a fork run end to end below, on its exported bundle). ls showing the parent superseded: below too.
    expect((await verifyJournal(line.journal, { publicKey: line.publicKey })).code).toBe(0);
    expect(await inWorkspace(dir, (ws) => ws.runtime.replay(line.id))).toMatchObject({ status: 'completed', fingerprint: line.fingerprint });
  });
});

describe('weft fork --library <name>', () => {
  beforeAll(() => assertBuilt());

  test('a library named picks the domain\'s current version, though the domain keeps an older one for its journals', async () => {
    const dir = join(root, 'cli-library-name');
    // The parent, pinned to the older library by its digest: made in this process as `weft run --library DIGEST --hibernate` makes it.
    const run = await runInWorkspace('travel', { dir, intent: INTENT, seed: '7', asOf: travelDomain.asOf!, library: TRAVEL_LIBRARY_BEFORE_BINDINGS_DIGEST, hibernate: true });
    expect(run.status, run.reason ?? '').toBe('hibernated');
    const parent = run.id;
    expect((JSON.parse(readFileSync(run.journal, 'utf8').split('\n')[0]!) as JournalRecord<'invocation.pinned'>).body.pin.library).toBe(TRAVEL_LIBRARY_BEFORE_BINDINGS_DIGEST);
    const out = await weft(['fork', parent, '--at-epoch', '1', '--library', 'travel', '--dir', dir, '--json']);
    expect(out.code, out.stderr).toBe(0);
    const line = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { id: string; journal: string };
    expect(line).toMatchObject({ status: 'completed', parent, repinned: ['library'] });
    const pinned = JSON.parse(readFileSync(line.journal, 'utf8').split('\n')[0]!) as JournalRecord<'invocation.pinned'>;
    expect(pinned.body.pin.library).toBe(libraryDigest(travelLibrary));
    expect(pinned.body.pin.library).not.toBe(TRAVEL_LIBRARY_BEFORE_BINDINGS_DIGEST);
  });
});

describe('weft fork: lineage in the CLI', () => {
  beforeAll(() => assertBuilt());

  test('ls and show name a fork\'s parent and a superseded run\'s fork; export of a fork carries its lineage and replays and verifies on its own; a bundle without it says so', async () => {
    const dir = join(root, 'cli-lineage');
    const made = await runInWorkspace('travel', { dir, intent: INTENT, seed: '6', asOf: travelDomain.asOf!, hibernate: true });
    expect(made.status, made.reason ?? '').toBe('hibernated');
    const parent = made.id;
    const out = await weft(['fork', parent, '--at-epoch', '1', '--dir', dir]);
    expect(out.code, out.stderr).toBe(0);
    const fork = /^forked (\S+) from/.exec(out.stdout)![1]!;
    expect(out.stdout.split('\n')[0]).toContain(`${parent} is superseded`);

    const ls = await weft(['ls', '--dir', dir]);
    const lines = ls.stdout.split('\n');
    expect(lines.find((l) => l.startsWith(parent))).toMatch(/superseded/);
    expect(lines[lines.findIndex((l) => l.startsWith(fork)) + 1]).toContain(`fork of ${parent} at epoch 1`);
    expect(lines[lines.findIndex((l) => l.startsWith(parent)) + 1]).toContain(`superseded by fork ${fork}`);
    // The rows `weft ls --json` prints: the runtime's listing (in this process; `ls --json` runs end to end in cli-ls.test.ts).
    const rows = await inWorkspace(dir, (ws) => ws.runtime.list());
    expect(rows.find((r) => r.id === fork)?.forkOf).toEqual({ parent, atEpoch: 1 });
    expect(rows.find((r) => r.id === parent)?.supersededBy).toBe(fork);
    // What `weft show` prints of each (the command's module, in this process; `show` runs end to end in cli-show.test.ts).
    expect((await weftHere(['show', fork, '--dir', dir])).stdout).toMatch(new RegExp(`fork of\\s+${parent} at the end of epoch 1`));
    expect((await weftHere(['show', parent, '--dir', dir])).stdout).toMatch(new RegExp(`forked as\\s+${fork}`));

    // A second fork of the superseded parent is refused, naming the fork to go on from.
    writeFileSync(join(root, 'travel-v2-lineage.json'), JSON.stringify(travelV2()));
    const second = await weft(['fork', parent, '--at-epoch', '1', '--library', join(root, 'travel-v2-lineage.json'), '--dir', dir]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`superseded by fork ${fork}`);
    expect(second.stderr).toContain(`fork ${fork} instead`);

    // Exported, the fork replays and verifies in an empty folder: its bundle carries its parent's journal up to the boundary.
    // (The bundle is made in this process by `weft export`'s own function, printed as the command prints it; the command
    // runs end to end in policy-pack-cli.test.ts, cli-domain.test.ts and others.)
    const exported = { stdout: await exportAs(dir, fork) };
    const bundle = JSON.parse(exported.stdout) as { lineage?: Array<{ invocation: string; journal: string }>; libraries: Record<string, unknown> };
    expect(bundle.lineage?.map((e) => e.invocation)).toEqual([parent]);
    const parentLines = readFileSync(join(dir, 'invocations', parent, 'journal.jsonl'), 'utf8').split('\n');
    const seq = (JSON.parse(bundle.lineage![0]!.journal.trim().split('\n').at(-1)!) as { seq: number; kind: string }).seq;
    expect(bundle.lineage![0]!.journal).toBe(parentLines.slice(0, seq + 1).join('\n') + '\n');
    const empty = join(root, 'empty-replay');
    rmSync(empty, { recursive: true, force: true });
    mkdirSync(empty);
    const file = join(empty, 'bundle.json');
    writeFileSync(file, exported.stdout);
    const replayed = await weft(['replay', file, '--json'], {}, empty);
    expect(replayed.code, replayed.stderr).toBe(0);
    const verified = await weft(['verify', file], {}, empty);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);

    // The verdicts on bundles that lack or alter the lineage: what replay and verify print and exit with, from the
    // commands' modules in this process (test/support/command-in-process.ts) — the two processes above ran them end to end.
    // An older bundle (no lineage) replays no further than its parent: it says which parent is missing, and what to do.
    const old = join(empty, 'old.json');
    writeFileSync(old, JSON.stringify({ ...bundle, lineage: undefined }));
    const noParent = await weftHere(['replay', old], {}, empty);
    expect(noParent.code).toBe(1);
    expect(noParent.stderr).toContain(`is a fork of ${parent} (at the end of epoch 1), whose journal up to seq ${seq} the bundle does not carry`);
    expect((await weftHere(['verify', old], {}, empty)).code).toBe(1);
    // A parent's journal changed inside the bundle: verify names it.
    const tampered = join(empty, 'tampered.json');
    const changed = JSON.parse(exported.stdout) as typeof bundle;
    changed.lineage![0]!.journal = changed.lineage![0]!.journal.replace('"price":310', '"price":311');
    writeFileSync(tampered, JSON.stringify(changed));
    const bad = await weftHere(['verify', tampered], {}, empty);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(`the bundle's journal of ${parent} (the parent of ${fork}) does not verify`);

    // The fork's own first line replaced by a record with no body: not intact (exit 1), never a crash (exit 2).
    const headless = join(empty, 'headless.json');
    const noBody = JSON.parse(exported.stdout) as typeof bundle & { journal: string };
    noBody.journal = ['{"kind":"invocation.pinned"}', ...noBody.journal.split('\n').slice(1)].join('\n');
    writeFileSync(headless, JSON.stringify(noBody));
    const broken = await weftHere(['verify', headless, '--no-signature'], {}, empty);
    expect(broken.code, broken.stdout + broken.stderr).toBe(1);
    expect(broken.stderr).not.toMatch(/Cannot read properties/);

    // A fork whose pin names another boundary than its invocation.forked, re-chained so the chain holds:
    // verify refuses it, as replay does.
    const records = (JSON.parse(exported.stdout) as { journal: string }).journal.trim().split('\n').map((line) => JSON.parse(line) as JournalRecord);
    const pinned = records[0] as JournalRecord<'invocation.pinned'>;
    const disagreeing = [{ ...pinned, body: { ...pinned.body, forkOf: { ...pinned.body.forkOf!, parentSeq: pinned.body.forkOf!.parentSeq - 1 } } }, ...records.slice(1)];
    const rechained: JournalRecord[] = [];
    for (const r of disagreeing.slice(0, -1)) rechained.push(chainRecord(rechained.at(-1)?.hash ?? records[0]!.prev, { seq: r.seq, kind: r.kind, epoch: r.epoch, body: r.body as never }) as JournalRecord);
    const other = JSON.parse(exported.stdout) as typeof bundle & { journal: string };
    other.journal = rechained.map((r) => canonicalize(r) + '\n').join('');
    const mismatch = join(empty, 'mismatch.json');
    writeFileSync(mismatch, JSON.stringify(other));
    const refused = await weftHere(['verify', mismatch, '--no-signature'], {}, empty);
    expect(refused.code, refused.stdout + refused.stderr).toBe(1);
    expect(refused.stdout + refused.stderr).toContain(`invocation.pinned names its parent as`);
  });

  test('forking a run that had already ended says so, and leaves it as it was', async () => {
    const dir = join(root, 'cli-ended');
    const made = await runInWorkspace('travel', { dir, intent: INTENT, seed: '6', asOf: travelDomain.asOf!, hibernate: true });
    expect(made.status, made.reason ?? '').toBe('hibernated');
    const parent = made.id;
    // Cancelled in this process, as `weft cancel` cancels it (the command runs end to end in cancel-cli.test.ts).
    const cancelled = await inWorkspace(dir, async (ws) => (await ws.runtime.cancel(parent, { by: 'test' })).done);
    expect(cancelled.status, cancelled.reason).toBe('cancelled');
    const out = await weft(['fork', parent, '--at-epoch', '1', '--dir', dir]);
    expect(out.code, out.stderr).toBe(0);
    const first = out.stdout.split('\n')[0]!;
    expect(first).toContain(`${parent} had already ended cancelled; it stays as it is`);
    expect(first).not.toContain('is superseded');
    // Left as it was: listed cancelled (the runtime's listing, which `weft ls` prints).
    expect((await inWorkspace(dir, (ws) => ws.runtime.list())).find((r) => r.id === parent)?.status).toBe('cancelled');
  });
});
