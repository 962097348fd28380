/**
 * `runtime.fork(parentId, { atEpoch, library?, model?, policy? })`: the writing side of a fork
 * (fork.ts says what a fork is, and holds the parts that read a parent's records).
 *
 * - The request (client side): a parent held by a live runtime is asked, through its inbox as a
 *   cancel is, to come to rest at its next epoch boundary, and this waits for it (`askHolderToRest`);
 *   nothing else is written until the parent rests.
 * - The checks, all before anything is written: the parent is this tenant's and verifies, is not
 *   superseded by another fork, is not a shadow run without shadow results, has no cancel waiting,
 *   closed the epoch asked for and applied no world effect after it that it did not compensate; the
 *   new pin (the parent's, with `library`, `model`, `policy` changed as asked) is one this runtime
 *   can run; the fork's id is free or this very fork's.
 * - The writes, crash-safe: the parent, unless it had ended, is driven to `superseded` and sealed,
 *   naming the fork's id (derived from the parent, the epoch and the new pin); then the fork's
 *   journal is written in one durable append (`invocation.pinned` with `forkOf`, then
 *   `invocation.forked`) and it runs live from epoch `atEpoch + 1`. Asking for the same fork again
 *   finishes what a crash left, or attaches to the fork that exists.
 */
import { canonicalBytes, canonicalize } from '../journal/canonical.js';
import { hexToBytes } from '../journal/digest.js';
import { LeaseHeldError, WeftError } from '../journal/errors.js';
import { verifyRecords } from '../journal/reader.js';
import type { JournalRecord, Pin } from '../journal/records.js';
import type { InboxMessage } from '../journal/store.js';
import { JournalWriter } from '../journal/writer.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Library } from '../htn/library/schema.js';
import { validateLibrary } from '../htn/library/validate.js';
import { FLAG_DECLARED_SPEND, FLAG_LINEAGE_EFFECTS, hasFlag } from '../machines/flags.js';
import { isPackPolicy } from '../policy/compile.js';
import { packBytes } from '../policy/digest.js';
import { checkGenesis, checkPin } from './call-checks.js';
import { PinMismatchError, RuntimeUsageError } from './errors.js';
import type { Executor } from './executor.js';
import { boundaryOf, effectsAfterRefusal, forkId, forkOfBody, ForkRefusedError, parentHistory, repinnedFields, SUPERSEDABLE, supersededRefusal, worldEffects, type ForkedBody, type ForkOptions } from './fork.js';
import { forkStateOf } from './fork-parent.js';
import type { InvocationHandle } from './handle.js';
import { inputFromJournal } from './limits.js';
import { invocationStatus } from './list.js';
import { compareEvaluables, compareModel, comparePolicy, compareSpenders, libraryActuators, pinnedModelParams, type PinMismatch } from './pin-check.js';
import { resumeInvocation } from './resume.js';

export async function forkInvocation(ex: Executor, parentId: string, options: ForkOptions): Promise<InvocationHandle> {
  if (!Number.isSafeInteger(options.atEpoch) || options.atEpoch < 1) throw new RuntimeUsageError('fork.bad_epoch', `fork: atEpoch must be an epoch number (1, 2, …), not ${JSON.stringify(options.atEpoch)}`);
  await askHolderToRest(ex, parentId, options);
  return forkAtRest(ex, parentId, options);
}

/**
 * One writer per journal: a parent held by a live runtime is asked, through its inbox (as a cancel
 * is), to come to rest at its next epoch boundary, and this waits for it — then the fork goes on
 * from wherever the parent rests (a boundary later than asked for is refused there, naming the
 * effects it applied after it). Refused, naming the holder, when it does not rest within
 * `waitMs`; its request is withdrawn. Another tenant's parent is unknown before anything is written.
 */
async function askHolderToRest(ex: Executor, parentId: string, options: ForkOptions): Promise<void> {
  const store = ex.store;
  checkGenesis(ex, parentId, await ex.genesisOf(parentId), options.tenant ?? ex.options.tenant);
  const holder = await store.holder(parentId).catch(() => undefined);
  if (!holder?.live) return;
  const waiting = await store.peekInbox(parentId).catch(() => undefined);
  if (waiting?.type === 'cancel') return; // forkAtRest refuses it: the cancel is the parent's to honour
  const waitMs = options.waitMs ?? 60_000;
  if (waitMs <= 0) throw heldRefusal(parentId, holder.writer);
  const request: InboxMessage = { type: 'rest', by: `weft fork (${ex.writerId})`, reason: `a fork at the end of epoch ${options.atEpoch} waits for it to rest`, at: ex.now().getTime() };
  await store.putInbox(parentId, request);
  const until = Date.now() + waitMs;
  for (;;) {
    const now = await store.holder(parentId).catch(() => undefined);
    if (!now?.live) return;
    if (Date.now() >= until) {
      // Withdrawn, unless something else has taken the inbox's one place meanwhile.
      const left = await store.peekInbox(parentId).catch(() => undefined);
      if (left?.type === 'rest' && left.at === request.at && left.by === request.by) await store.clearInbox(parentId).catch(() => undefined);
      throw new ForkRefusedError(
        'fork.parent_held',
        `cannot fork ${parentId}: it is held live by ${now.writer}, which was asked through its inbox to come to rest at its next epoch boundary and did not within ${Math.round(waitMs / 1000)} s ` +
          `(a long step, or a model call, holds it between boundaries). Ask again later, or hibernate or cancel it there. Nothing was written`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function forkAtRest(ex: Executor, parentId: string, options: ForkOptions): Promise<InvocationHandle> {
  const { atEpoch } = options; // checked by forkInvocation, its only caller
  const key = ex.options.signingKey;
  if (!key) throw new RuntimeUsageError('runtime.no_signing_key', 'runtime.fork: this runtime has no signing key, and a fork is sealed by the key it starts with (and seals the parent it supersedes): pass createRuntime({ signingKey })');
  await ex.ready();
  const store = ex.store;
  const records = await store.read(parentId);
  checkGenesis(ex, parentId, records[0], options.tenant ?? ex.options.tenant);
  const report = verifyRecords(records);
  if (!report.ok) throw new ForkRefusedError('fork.parent_damaged', `cannot fork ${parentId}: its journal does not verify (${report.error!.message}); nothing was written`);
  const parentPinned = records[0] as JournalRecord<'invocation.pinned'>;
  const parentPin = parentPinned.body.pin;
  // Superseded already: only the same fork asked again (its epoch, its id if one is given) goes on; anything else is a second run from one lineage point.
  const superseded = records.find((r) => r.kind === 'invocation.superseded') as JournalRecord<'invocation.superseded'> | undefined;
  if (superseded && (superseded.body.atEpoch !== atEpoch || (options.id !== undefined && options.id !== superseded.body.by))) {
    throw supersededRefusal(parentId, superseded.body, (await store.length(superseded.body.by).catch(() => 0)) > 0);
  }
  // A shadow run without shadow results changed nothing its next epoch could observe: nothing can go on from after it.
  if (parentPin.shadow?.results === 'none' && records.some((r) => r.kind === 'step.shadowed' && r.epoch <= atEpoch)) {
    throw new ForkRefusedError('fork.shadow_parent', `cannot fork ${parentId} at epoch ${atEpoch}: it is a shadow run whose world effects by then were shadowed with no shadow result, so the world a fork would observe does not show them; start a real run (weft run without --shadow). Nothing was written`);
  }
  // A cancel someone asked for is not carried on elsewhere: it is the parent's to honour first.
  if ((await store.peekInbox(parentId).catch(() => undefined))?.type === 'cancel') {
    throw new ForkRefusedError('fork.cancel_pending', `cannot fork ${parentId}: a cancel waits in its inbox; it ends cancelled when it is next taken up (weft resume ${parentId}, or weft serve). Nothing was written`);
  }
  const boundary = boundaryOf(parentId, records, atEpoch);
  // The parent's whole journal, replayed over what it pinned: each epoch's plan, and its state at the boundary.
  const parentLibrary = await checkPin(ex, 'replay', parentPinned, [], false);
  const history = await parentHistory(records, ex.replayDeps(parentLibrary, parentPin.library), atEpoch);
  const after = worldEffects(records, history.plans, (epoch) => epoch > atEpoch);
  if (after.length > 0) throw effectsAfterRefusal(parentId, atEpoch, after);
  const state = await forkStateOf(ex, parentId, records.slice(0, boundary.seq + 1), parentLibrary, atEpoch, hasFlag(parentPin, FLAG_LINEAGE_EFFECTS));

  // The new pin: the parent's, with what was asked changed; this runtime must be able to run it.
  const library = await forkLibrary(ex, options.library, parentLibrary);
  const digest = libraryDigest(library);
  const policy = options.policy === undefined ? parentPin.policy : typeof options.policy === 'string' ? options.policy : options.policy.id;
  if (typeof options.policy === 'object' && !ex.policies().some((p) => p.id === policy)) ex.forkPolicies.push(options.policy);
  // A policy pack is filed by its digest, as a start files it, so any process finds the pack the fork pins.
  const pack = options.policy;
  if (typeof pack === 'object' && isPackPolicy(pack)) await ex.putBlobOnce(pack.digest, () => packBytes(pack.pack));
  const modelPin = options.model ? { id: options.model.id, params: pinnedModelParams(options.model) } : parentPin.model;
  const pin: Pin = { ...parentPin, library: digest, model: modelPin, policy };
  const id = options.id ?? forkId(parentId, atEpoch, pin);
  const model = options.model ?? ex.options.model;
  const mismatches: PinMismatch[] = [...compareEvaluables(library, ex.options.evaluables), ...comparePolicy(pin.policy, ex.policies().map((p) => p.id))];
  mismatches.push(...compareModel(pin.model, model ? { id: model.id, params: pinnedModelParams(model) } : undefined));
  if (hasFlag(pin, FLAG_DECLARED_SPEND) && ex.declaredSpenders !== undefined) mismatches.push(...compareSpenders(pin.spenders ?? [], ex.declaredSpenders, libraryActuators(library)));
  if (mismatches.length > 0) throw new PinMismatchError(parentId, 'fork', mismatches);
  // The fork acts in its parent's world (the lineage's first invocation's).
  const world = records[1]?.kind === 'invocation.forked' ? ((records[1] as JournalRecord<'invocation.forked'>).body.world ?? (records[1] as JournalRecord<'invocation.forked'>).body.parent) : parentId;
  const body: ForkedBody = { parent: parentId, parentSeq: boundary.seq, parentHash: boundary.hash, atEpoch, repinned: repinnedFields(parentPin, pin), world, state };
  const { tenant, intent, intentCut } = parentPinned.body;

  // The fork exists already: the same fork asked again (attach), or another one under that id (refused).
  const exists = (await store.length(id)) > 0;
  if (exists) {
    const head = await store.read(id, 0, 2);
    const mine = head[0]?.kind === 'invocation.pinned' && head[1]?.kind === 'invocation.forked' &&
      canonicalize({ tenant, intent, pin }) === canonicalize({ tenant: (head[0] as JournalRecord<'invocation.pinned'>).body.tenant, intent: (head[0] as JournalRecord<'invocation.pinned'>).body.intent, pin: (head[0] as JournalRecord<'invocation.pinned'>).body.pin }) &&
      canonicalize(body) === canonicalize(head[1].body);
    if (!mine) throw new ForkRefusedError('fork.id_conflict', `cannot fork ${parentId} as ${id}: invocation ${id} exists and is not this fork (another parent, epoch or pin); give another --id. Nothing was written`);
  }

  // The parent: ended (nothing to supersede), superseded by this fork (a crash left the rest), or at rest and free.
  const parentTail = records.at(-1)!;
  if (superseded && superseded.body.by !== id) throw supersededRefusal(parentId, superseded.body, (await store.length(superseded.body.by).catch(() => 0)) > 0);
  const reason = options.reason ?? `forked at the end of epoch ${atEpoch}${body.repinned.length ? ` onto a new ${body.repinned.join(', ')}` : ''}`;
  if (parentTail.kind !== 'invocation.sealed') await supersede(ex, parentId, records, parentLibrary, { by: id, atEpoch, reason });

  if (exists) return resumeInvocation(ex, 'resume', id, { tenant });
  await ex.putBlobOnce(digest, () => canonicalBytes(library));
  await ex.putBlobOnce(key.keyId, () => hexToBytes(key.publicKey));
  await store.putMetadata(id, { ...ex.domainMetadata(digest, library), sealKey: key.keyId });
  let writer: JournalWriter;
  try {
    writer = await JournalWriter.create(store, { invocation: id, tenant, intent, pin, ...(intentCut ? { intentCut } : {}), forkOf: forkOfBody(body) }, ex.writerOptions(), [{ kind: 'invocation.forked', epoch: 0, body }]);
  } catch (err) {
    // Created meanwhile by another process asking for the same fork: attach to it.
    if ((await store.length(id).catch(() => 0)) > 0) return resumeInvocation(ex, 'resume', id, { tenant });
    throw err;
  }
  const input = inputFromJournal(await store.read(id, 0, 2));
  return ex.run(writer, library, input, [], undefined, key.keyId, model);
}

/** The library a fork pins: the parent's, one given, or one of this runtime's (by name or digest) or the store's (by digest). */
async function forkLibrary(ex: Executor, asked: Library | string | undefined, parentLibrary: Library): Promise<Library> {
  if (asked === undefined) return parentLibrary;
  if (typeof asked !== 'string') return validateLibrary(asked);
  const found = ex.options.libraries.find((l) => l.name === asked) ?? (await ex.pinnedLibrary(asked, []));
  if (!found) throw new RuntimeUsageError('runtime.unknown_library', `fork: no library named or with digest ${asked}; this runtime has ${ex.options.libraries.map((l) => `${l.name} (${ex.digests.get(l)!.slice(0, 12)})`).join(', ')}`);
  return found;
}

/**
 * End a resting parent `superseded`, sealed, naming the fork: its lease is taken (a live holder is
 * named and refused), its machine restarted from its snapshot in its resting state and driven by
 * the `supersede` event, which records `invocation.superseded` and the seal.
 */
async function supersede(ex: Executor, parentId: string, records: readonly JournalRecord[], library: Library, supersession: { by: string; atEpoch: number; reason: string }): Promise<void> {
  const store = ex.store;
  const holder = await store.holder(parentId).catch(() => undefined);
  if (holder?.live) throw heldRefusal(parentId, holder.writer);
  const status = await invocationStatus(store, parentId);
  const snapshot = await store.getSnapshot(parentId);
  const context = (snapshot?.data as { context?: { suspension?: { class?: string } | null } } | undefined)?.context;
  if (!SUPERSEDABLE.has(status) || !snapshot || snapshot.seq !== records.length) {
    throw new ForkRefusedError(
      'fork.parent_not_at_rest',
      `cannot fork ${parentId}: it is ${status}, not at rest — a parent is superseded only while it rests (hibernated, awaiting approval, asleep, suspended). ` +
        `Resume it (or let weft serve take it over) until it rests, or hibernate it, then fork. Nothing was written`,
    );
  }
  if (status === 'suspended' && context?.suspension?.class === 'runtime') {
    throw new ForkRefusedError('fork.parent_not_at_rest', `cannot fork ${parentId}: it is suspended by a runtime error that its journal does not record; resume it first (weft resume ${parentId}) until it rests, then fork. Nothing was written`);
  }
  const inForce = await ex.sealKeyOf(parentId);
  const sealKey = ex.checkSealKey('resume', parentId, inForce, false);
  let writer: JournalWriter;
  try {
    writer = await JournalWriter.open(store, parentId, ex.writerOptions());
  } catch (err) {
    if (err instanceof LeaseHeldError) throw heldRefusal(parentId, err.holder);
    throw err;
  }
  if (writer.seq !== records.length) {
    await writer.close().catch(() => undefined);
    throw new ForkRefusedError('fork.parent_moved', `cannot fork ${parentId}: its journal grew while the fork was being made (another process ran it); ask again. Nothing was written`);
  }
  const input = inputFromJournal(records);
  const handle = ex.run(writer, library, input, [], { seq: snapshot.seq, tail: snapshot.hash, data: snapshot.data }, sealKey?.to ?? inForce?.keyId);
  handle.send({ type: 'supersede', ...supersession });
  const result = await handle.done;
  if (result.status !== 'superseded') {
    throw new WeftError('fork.supersede_failed', 'permanent', `fork: superseding ${parentId} stopped ${result.status}${result.reason ? ` (${result.reason})` : ''}; ask for the same fork again to finish it`);
  }
  // A decision left in its inbox belongs to a run that has ended.
  await store.clearInbox(parentId).catch(() => undefined);
}

function heldRefusal(parentId: string, holder: string): ForkRefusedError {
  return new ForkRefusedError(
    'fork.parent_held',
    `cannot fork ${parentId}: it is held live by ${holder} — one writer per journal. Cancel or hibernate it there (or wait until it rests), then fork. Nothing was written`,
  );
}
