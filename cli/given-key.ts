/**
 * A signing key a command was *given* (`--signing-key FILE`, else WEFT_SIGNING_KEY) must be the
 * key in force for the invocation (runtime/key-in-force.ts), checked before anything is written —
 * also where this process does not seal: `weft approve --leave-to-serve` (a serve seals the
 * decision) and `weft cancel` of a run a live runtime holds (that runtime seals the cancel). So a
 * tenant's command given another tenant's key is refused (`pin.seal_key`) and writes nothing, as
 * the README says. The workspace's own key, used when none is given, is not held to it there:
 * leaving a decision to serve needs no key. `--rekey` asks to change the key, and is the runtime's
 * to check. Run after the workspace is open (so another tenant's id has already been refused as
 * unknown, and no key of its journal is named).
 */
import { loadSigningKey } from '../runtime/keys.js';
import { keyInForce, refuseOtherKey } from '../runtime/key-in-force.js';
import type { JournalStore } from '../journal/store.js';

export async function refuseGivenOtherKey(store: JournalStore, id: string, command: 'approve' | 'cancel', flag: string | undefined, rekey = false): Promise<void> {
  const given = flag ?? (process.env.WEFT_SIGNING_KEY || undefined);
  if (given === undefined || rekey) return;
  const key = await loadSigningKey(given);
  refuseOtherKey(command, id, await keyInForce(store, id), key.keyId, false);
}
