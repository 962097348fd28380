/**
 * The hash chain. Each record commits to everything before it:
 *
 *   genesis = SHA-256(canonical({ genesis: "weft.journal.v1", invocation, pin }))
 *   hash    = SHA-256(prev ‖ canonical({ seq, kind, epoch, body }))      (prev as its 32 raw bytes)
 *
 * so the first record's `prev` binds the journal to one invocation id and pin, and the last hash
 * (the fingerprint) binds the whole history. The envelope (`meta`) is deliberately outside.
 *
 * Pure: computes, never stores.
 */
import { canonicalBytes } from './canonical.js';
import { digestOf, hexToBytes, sha256Hex } from './digest.js';
import { type BodyOf, type JournalRecord, type Pin, type RecordContent, type RecordKind } from './records.js';

export const JOURNAL_FORMAT = 'weft.journal.v1';

/** The `prev` of seq 0 for an invocation with this id and pin. */
export function genesisHash(invocation: string, pin: Pin): string {
  return digestOf({ genesis: JOURNAL_FORMAT, invocation, pin });
}

/** The bytes a record's hash covers: prev's raw bytes followed by its canonical content. */
export function hashedBytes(prev: string, content: RecordContent): Uint8Array {
  // Built in canonical key order so the canonicalizer's fast path applies (same bytes either way).
  const body = canonicalBytes({ body: content.body, epoch: content.epoch, kind: content.kind, seq: content.seq });
  const out = new Uint8Array(32 + body.length);
  out.set(hexToBytes(prev), 0);
  out.set(body, 32);
  return out;
}

/** The hash of a record with this content after `prev`. */
export function recordHash(prev: string, content: RecordContent): string {
  return sha256Hex(hashedBytes(prev, content));
}

/** Link a record's content to the chain: fills `prev` and `hash`. */
export function chainRecord<K extends RecordKind>(
  prev: string,
  content: { seq: number; kind: K; epoch: number; body: BodyOf<K> },
): JournalRecord<K> {
  return { seq: content.seq, kind: content.kind, epoch: content.epoch, body: content.body, prev, hash: recordHash(prev, content) };
}
