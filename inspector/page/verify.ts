/**
 * Verification in the browser: a journal's bytes checked by the same pure code `weft verify` runs
 * (journal/verify-bytes.ts — every record's shape, position, chain link, hash and body schema, then
 * the seal's ed25519 signature), here on the @noble reference implementations of SHA-256 and
 * ed25519 (the Node fast paths, sha256-node.ts and ed25519-node.ts, are never loaded by the page).
 * The server's word is not taken for any of it: the page gets the journal's raw lines and the key.
 */
import { verifyJournalBytes } from '../../journal/verify-bytes.js';
import type { TrustedKey } from './wire.js';

export type Verdict =
  /** Chain intact and sealed by the trusted key. */
  | { kind: 'verified'; fingerprint: string; keyId: string; records: number; key: TrustedKey }
  /** Chain intact, but there is no trusted key to check the seal against (or the journal is not sealed yet). */
  | { kind: 'chain-only'; fingerprint: string | null; sealed: boolean; keyId: string | null; records: number }
  /** The first record that does not hold, by seq. */
  | { kind: 'failed'; seq: number; problem: string; sealMismatch: boolean };

export function verifyInPage(bytes: Uint8Array, key: TrustedKey | null): Verdict {
  const verdict = verifyJournalBytes(bytes, key ? { publicKey: { publicKey: key.publicKey, keyId: key.keyId } } : {});
  if (!verdict.ok) {
    const seq = verdict.error?.seq ?? verdict.count;
    const message = verdict.error?.problem ?? 'the journal does not verify';
    return { kind: 'failed', seq, problem: message, sealMismatch: verdict.sealMismatch === true };
  }
  if (key && verdict.sealed) return { kind: 'verified', fingerprint: verdict.fingerprint!, keyId: verdict.keyId!, records: verdict.count, key };
  return { kind: 'chain-only', fingerprint: verdict.fingerprint ?? null, sealed: verdict.sealed, keyId: verdict.keyId ?? null, records: verdict.count };
}
