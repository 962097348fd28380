/**
 * The key in force for one stored invocation (seal-key.ts: its journal's last re-key, else the key
 * its store metadata recorded at start), and the check a call makes with it before it writes
 * anything: a key that is not the one in force is refused (SealKeyMismatchError) — before an
 * inbox is written, not after. The runtime checks every call that seals (resume, approve, and a
 * cancel it takes up itself); the CLI also checks a key it was *given* (`--signing-key`,
 * WEFT_SIGNING_KEY) on a call that leaves the sealing to another process (`approve
 * --leave-to-serve`, a cancel a live runtime will honour): a tenant's command given another
 * tenant's key is a mistake to stop, not a request to pass on.
 */
import type { JournalStore } from '../journal/store.js';
import { SealKeyMismatchError } from './errors.js';
import { sealKeyChoice, sealKeyInForce, type SealKeyInForce } from './seal-key.js';

/**
 * The key in force for `id` in `store`, or undefined when none is (any key seals it).
 *
 * It reads only the journal after the latest snapshot — a resume must not cost a read of the whole
 * journal — which is exact because the store metadata's `sealKey` is right for every record before
 * a snapshot: a re-key writes the metadata right after its record, and should a crash come between
 * them, the re-key is after every snapshot (none is taken before the run goes on), so the next
 * reader finds it here, and the next resume puts it right (`repairRecordedKey`) before it can
 * snapshot. With no key recorded (an invocation from before the store kept one), the whole journal.
 * `snapshotSeq`: the latest snapshot's seq when the caller has read it already.
 */
export async function keyInForce(store: Pick<JournalStore, 'getMetadata' | 'getSnapshot' | 'read'>, id: string, snapshotSeq?: number): Promise<SealKeyInForce | undefined> {
  const recorded = (await store.getMetadata(id))?.sealKey;
  const from = recorded === undefined ? 0 : (snapshotSeq ?? (await store.getSnapshot(id))?.seq ?? 0);
  return sealKeyInForce(await store.read(id, from), recorded);
}

/** After a crash between a re-key and its metadata: make the metadata name the key the journal says (see keyInForce). */
export async function repairRecordedKey(store: Pick<JournalStore, 'getMetadata' | 'putMetadata'>, id: string, inForce: SealKeyInForce | undefined): Promise<void> {
  if (!inForce?.rekeyed) return;
  const meta = await store.getMetadata(id);
  if (meta !== undefined && meta.sealKey !== inForce.keyId) await store.putMetadata(id, { ...meta, sealKey: inForce.keyId });
}

/**
 * Throws SealKeyMismatchError (nothing written) unless `offered` (a key id; undefined: none) may
 * seal `id` — it is the key in force, none is in force, or `rekey` asks to change it. Returns the
 * `{ from, to }` choice as sealKeyChoice does.
 */
export function refuseOtherKey(command: 'resume' | 'approve' | 'cancel', id: string, inForce: SealKeyInForce | undefined, offered: string | undefined, rekey: boolean): { from: string; to: string } | undefined {
  const choice = sealKeyChoice(inForce, offered, rekey);
  if (choice === 'refused') throw new SealKeyMismatchError(id, command, inForce!.keyId, offered, inForce!.rekeyed);
  return choice;
}
