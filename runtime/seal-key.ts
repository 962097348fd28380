/**
 * The key that seals an invocation's journal, and how a resume is held to it (issue 19, point 4).
 *
 * - The id of the key an invocation starts with is recorded in the store's metadata (`sealKey`,
 *   journal/store.ts) — never in the pin or any other hashed record, so a run that is never re-keyed
 *   has the same journal and fingerprint whichever key seals it ("same seed and same recorded
 *   replies ⇒ same bytes", across hosts and workspace folders with keys of their own).
 * - A change of key is explicit and recorded in the journal: `invocation.rekeyed { from, to }`
 *   (hashed, so a re-keyed run's fingerprint differs from the run's that was not, as it should),
 *   and the metadata's `sealKey` becomes `to`.
 * - The key in force is the `to` of the journal's last re-key, else the metadata's `sealKey`, else
 *   none — an invocation started before the store kept it, or without a key: any key seals it, as
 *   before. The journal wins over the metadata, which a crash right after a re-key may leave behind.
 * - A resume or an approval (the calls that seal) must offer the key in force; otherwise the
 *   runtime refuses with SealKeyMismatchError before anything is written — or, asked to re-key,
 *   records the change first.
 *
 * This is a guard against accidents (resuming on a host that holds another key), not a security
 * boundary: the metadata is unhashed, and whoever can write the store can change it. The proof of
 * who sealed a journal remains `verify` with the auditor's public key.
 *
 * Pure: the runtime reads the records and the metadata, and acts on the answer.
 */
import type { JournalRecord } from '../journal/records.js';

export interface SealKeyInForce {
  /** The full key id (SHA-256 hex of the ed25519 public key). */
  keyId: string;
  /** True when an `invocation.rekeyed` record set it (else the metadata recorded it at start). */
  rekeyed: boolean;
}

/** The key in force for a journal and the key id its metadata recorded (see the header); undefined when none is. */
export function sealKeyInForce(records: readonly JournalRecord[], recorded: string | undefined): SealKeyInForce | undefined {
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i]!;
    if (record.kind === 'invocation.rekeyed') return { keyId: (record as JournalRecord<'invocation.rekeyed'>).body.to, rekeyed: true };
  }
  return recorded === undefined ? undefined : { keyId: recorded, rekeyed: false };
}

/**
 * What a call that seals does about the key: `offered` is its key id (undefined: it has none).
 * - `{ from, to }` equal: it seals with the key in force;
 * - `{ from, to }` different: it re-keys (asked with `rekey`), recording the change first;
 * - `undefined`: no key is in force — any key seals it;
 * - `'refused'`: another key (or none) without `rekey`; the caller throws SealKeyMismatchError.
 */
export function sealKeyChoice(inForce: SealKeyInForce | undefined, offered: string | undefined, rekey: boolean): { from: string; to: string } | undefined | 'refused' {
  if (inForce === undefined) return undefined;
  if (offered === inForce.keyId || (rekey && offered !== undefined)) return { from: inForce.keyId, to: offered };
  return 'refused';
}
