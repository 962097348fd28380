/**
 * `runtime.resume(id)` — and the run that approve and cancel go on with: re-open an invocation
 * from its latest snapshot (or one given) and the journal's tail. The records after the snapshot
 * are read back, not re-done, then it runs live. A hibernated invocation is woken, a suspended one
 * retried, a sleeping one goes on if its time has come (else it rests again); one awaiting approval
 * records the decision the journal or the inbox holds, else stops there.
 *
 * Checked before the lease is taken, so a refusal changes nothing (call-checks.ts): the genesis is
 * this id's and this tenant's, the pin is one this runtime can run, and its signing key is the key
 * in force (seal-key.ts) — unless `rekey` records a change of key first. A sealed journal answers
 * with a finished handle. A resting invocation with a cancel or a passed deadline waiting stops as
 * it is taken up (cancel.ts stopEventFor).
 */
import { hexToBytes } from '../journal/digest.js';
import type { JournalRecord } from '../journal/records.js';
import { DamagedMetadataError, type InboxMessage } from '../journal/store.js';
import { JournalWriter } from '../journal/writer.js';
import { checkGenesis, checkPin } from './call-checks.js';
import { cancelledHandle, RESTING_STATES, stopEventFor } from './cancel.js';
import { RuntimeUsageError } from './errors.js';
import type { Executor } from './executor.js';
import type { InvocationHandle } from './handle.js';
import { repairRecordedKey } from './key-in-force.js';
import { inputFromJournal } from './limits.js';

export interface ResumeOptions {
  snapshot?: unknown;
  at?: { seq: number; tail: string };
  /**
   * When this runtime's signing key is not the key in force (seal-key.ts), change it on purpose —
   * an `invocation.rekeyed` record (from, to) is appended before the run goes on, the store's
   * metadata names the new key, and the journal is then sealed by it. Without it such a resume is
   * refused (SealKeyMismatchError).
   */
  rekey?: boolean;
  /**
   * Act only if the invocation belongs to this tenant (its pinned tenant); otherwise it is refused
   * as unknown, exactly as an id that does not exist — one tenant learns nothing of another's.
   * Defaults to the runtime's own `tenant`; a scoped runtime's scope cannot be changed per call
   * (another tenant named here is refused as unknown, tenant-of.ts callScope).
   */
  tenant?: string;
}

/**
 * Continue an invocation from its latest snapshot (or one given) and the journal after it, for
 * `command` (resume, approve, or cancel: the one it answers to in refusals). `cancel` is the request
 * a canceller wrote: it wins over whatever the inbox holds by now.
 */
export async function resumeInvocation(ex: Executor, command: 'resume' | 'approve' | 'cancel', id: string, options: ResumeOptions & { cancel?: InboxMessage } = {}): Promise<InvocationHandle> {
  await ex.ready();
  const store = ex.store;
  // The pin as the runtime was opened with it (executor.ts genesisOf), and the record after it (a fork's).
  const first = await ex.genesisOf(id);
  const head = first === undefined ? [] : [first, ...(await store.read(id, 1, 2))];
  checkGenesis(ex, id, first, options.tenant ?? ex.options.tenant);
  const pinnedRecord = first as JournalRecord<'invocation.pinned'>;
  const tail = await store.tail(id);
  if (tail?.kind === 'invocation.sealed') {
    // A sealed journal ended completed, failed, handed off or cancelled: its ending record says which.
    return (await cancelledHandle(store, id, ex.pathOf(id), command === 'cancel' ? 'before' : 'now'))!;
  }
  const library = await checkPin(ex, command, pinnedRecord, [], true);
  // The key in force must be this runtime's — or, asked for, the change is recorded first.
  const stored = await store.getSnapshot(id);
  const inForce = await ex.sealKeyOf(id, stored?.seq ?? 0);
  const rekey = ex.checkSealKey(command, id, inForce, options.rekey === true);
  const snapshot =
    options.snapshot !== undefined && options.at
      ? { ...options.at, data: options.snapshot }
      : stored
        ? { seq: stored.seq, tail: stored.hash, data: stored.data }
        : undefined;
  const writer = await JournalWriter.open(store, id, ex.writerOptions());
  // Under the lease, once more: no other process can re-key now, so the key in force read here is
  // the one this run goes on under, and the metadata is put right after a crash's re-key
  // (key-in-force.ts) with nobody able to re-key behind it.
  try {
    const held = await ex.sealKeyOf(id, stored?.seq ?? 0);
    if (held?.keyId !== inForce?.keyId) {
      ex.checkSealKey(command, id, held, options.rekey === true);
      throw new RuntimeUsageError('runtime.key_changed', `the key in force for ${id} changed while this ${command} began (another process re-keyed it); nothing was written: ask again`);
    }
    await repairRecordedKey(store, id, held);
  } catch (err) {
    await writer.close().catch(() => undefined);
    throw err;
  }
  // Resumed on purpose, it goes on: a request to rest left by a fork that has given up (or been withdrawn) no longer applies,
  // and a request to resume (the viewer's, left to serve) is carried out by this resume.
  const waiting = command === 'resume' ? (await store.peekInbox(id).catch(() => undefined))?.type : undefined;
  if (waiting === 'rest' || waiting === 'resume') await store.clearInbox(id).catch(() => undefined);
  try {
    if (rekey?.from !== undefined && rekey.from !== rekey.to) {
      // The new key's public half by its id, as start does, so that export finds the key that seals.
      const key = ex.options.signingKey!;
      await ex.putBlobOnce(key.keyId, () => hexToBytes(key.publicKey));
      await writer.append({ kind: 'invocation.rekeyed', epoch: tail?.epoch ?? 0, body: { from: rekey.from, to: rekey.to } });
      // The journal now says which key seals; the metadata follows it (were this lost, the journal's re-key still wins).
      // A damaged record is rebuilt here: the journal's re-key says which key seals from now on.
      const meta = await store.getMetadata(id).catch((err: unknown) => {
        if (err instanceof DamagedMetadataError) return undefined;
        throw err;
      });
      await store.putMetadata(id, { ...(meta ?? ex.domainMetadata(pinnedRecord.body.pin.library, library)), sealKey: rekey.to });
    }
    const input = inputFromJournal(head);
    const from = snapshot ? snapshot.seq : input.seq;
    const existing = await store.read(id, from);
    const handle = ex.run(writer, library, input, existing, snapshot ?? undefined, rekey?.to);
    // Resting, it stops first if it must: a cancel or a passed deadline the journal holds next, or
    // — where the journal ends — one waiting in the inbox, or the pinned deadline passed by now.
    if (RESTING_STATES.has(handle.state?.value ?? '')) {
      const stop = await stopEventFor(store, id, existing, input.pin, ex.now(), options.cancel);
      if (stop) {
        handle.send(stop);
        return handle;
      }
    }
    // A decision the journal already holds after the snapshot (recorded, then the run stopped) is read back as that decision;
    // else a decision waiting in the inbox is the person's: record it (the inbox is cleared once it is in the journal).
    const decided = existing.find((r) => r.kind !== 'invocation.rekeyed');
    if (handle.state?.value === 'awaitingApproval' && decided?.kind === 'approval.decided') {
      const b = (decided as JournalRecord<'approval.decided'>).body;
      handle.send({ type: 'approval.decided', decision: b.decision, by: b.by, ...(b.note === undefined ? {} : { note: b.note }) });
    } else if (handle.state?.value === 'awaitingApproval' && !(await deliverInbox(ex, handle))) {
      // No decision anywhere: it stays awaiting approval, and this run stops there (approve and serve act on it).
      handle.rest();
    }
    // A suspended invocation is resumed by asking: it goes back to the state it suspended in.
    // So is one waiting on a durable sleep: its execute fires the timer if the time has come, else it rests again.
    // A hibernated one is woken: resuming it is the decision to go on (and one woken before, whose
    // journal has gone past its snapshot, reads those records back only once awake).
    const resting = handle.state?.value;
    // A cancel that could not stop it at rest (its journal goes on past the snapshot) wakes it: the run sees the cancel before its next step.
    if ((command === 'resume' || command === 'cancel') && (resting === 'suspended' || resting === 'awaitingTimer' || resting === 'hibernated')) handle.send({ type: 'resume' });
    return handle;
  } catch (err) {
    await writer.close().catch(() => undefined);
    throw err;
  }
}

/** Send the decision waiting in the inbox, if there is one; returns whether there was. */
async function deliverInbox(ex: Executor, handle: InvocationHandle): Promise<boolean> {
  const store = ex.store;
  const message = await store.peekInbox(handle.id);
  if (message?.type !== 'approval') return false;
  handle.on('record', (record: JournalRecord) => {
    // Cleared only while it still holds the approval: a cancel written meanwhile stays (the canceller asks again, too).
    if (record.kind === 'approval.decided') {
      void (async () => {
        if ((await store.peekInbox(handle.id))?.type === 'approval') await store.clearInbox(handle.id);
      })().catch(() => undefined);
    }
  });
  handle.send({ type: 'approval.decided', decision: message.decision, by: message.by, ...(message.note === undefined ? {} : { note: message.note }) });
  return true;
}
