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

/** The key in force for `id` in `store`, or undefined when none is (any key seals it). */
export async function keyInForce(store: Pick<JournalStore, 'getMetadata' | 'read'>, id: string): Promise<SealKeyInForce | undefined> {
  const recorded = (await store.getMetadata(id))?.sealKey;
  return sealKeyInForce(await store.read(id), recorded);
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
