/**
 * The store interface every journal backend implements (memory, file, Redis), and that one
 * conformance suite (test/store-conformance.ts) checks for each.
 *
 * A store holds, per invocation: the journal (append-only records), a lease (one writer at a time,
 * with a fencing token), and a snapshot (the latest hibernation image, anchored at a seq and
 * hash); and, shared, a content-addressed blob area (method-library versions by digest, so an
 * exported journal can be replayed wherever its store goes).
 *
 * Contract:
 * - `append(lease, expectedSeq, records)` writes all records or none, durably, and only if the
 *   journal currently has exactly `expectedSeq` records, `records[i].seq === expectedSeq + i`,
 *   the first record's `prev` is the current tail hash, and `lease.token` is the current token.
 *   Otherwise it throws SeqConflictError / FencedError / JournalIntegrityError and writes nothing.
 * - `acquire` refuses with LeaseHeldError while a live holder has an unexpired lease; it takes a
 *   lease whose holder is dead (TTL expired; in the file store, a dead process) and bumps the token,
 *   so the old holder's later appends are fenced.
 * - Reading a journal whose final record is torn throws TornTailError naming the seq; the store
 *   never drops or rewrites it on its own. `quarantineTornTail` does, explicitly, keeping the bytes.
 * - The store checks linkage, not hashes: full validation is the reader's job (journal/reader.ts).
 */
import type { JournalRecord } from './records.js';

export interface Lease {
  invocation: string;
  writer: string;
  /** Fencing token: strictly increases every time the lease changes hands. */
  token: number;
  /** Wall-clock expiry (ms since epoch) — observability and takeover only; never hashed. */
  expiresAt: number;
}

export interface AcquireOptions {
  /** Identifies this writer in errors and record envelopes. */
  writer: string;
  /** Lease time-to-live; the holder renews before it runs out. */
  ttlMs: number;
}

export interface Snapshot {
  /** Number of journal records the snapshot covers (the next seq to append). */
  seq: number;
  /** Hash of record seq-1: resume verifies only the tail after it. */
  hash: string;
  /** The hibernation image (plain JSON). */
  data: unknown;
}

export interface JournalStore {
  /** A short name for diagnostics ("memory", "file:/path/.weft", "redis://…"). */
  readonly name: string;

  acquire(invocation: string, options: AcquireOptions): Promise<Lease>;
  renew(lease: Lease, ttlMs: number): Promise<Lease>;
  release(lease: Lease): Promise<void>;

  append(lease: Lease, expectedSeq: number, records: readonly JournalRecord[]): Promise<void>;
  /** Records [from, to) — `to` defaults to the end. */
  read(invocation: string, from?: number, to?: number): Promise<JournalRecord[]>;
  /** Number of records. 0 for an unknown invocation. */
  length(invocation: string): Promise<number>;
  /** The last record, if any. */
  tail(invocation: string): Promise<JournalRecord | undefined>;
  /** Every invocation id in the store, sorted. */
  list(): Promise<string[]>;
  /** Move a torn final record aside (kept, not deleted); returns its seq and where its bytes went. */
  quarantineTornTail(lease: Lease): Promise<{ seq: number; keptAt: string } | undefined>;

  putSnapshot(lease: Lease, snapshot: Snapshot): Promise<void>;
  getSnapshot(invocation: string): Promise<Snapshot | undefined>;

  /** Store bytes under their SHA-256 digest; returns the digest. Idempotent. */
  putBlob(bytes: Uint8Array): Promise<string>;
  /** The bytes stored under `digest` (checked against it), or undefined. */
  getBlob(digest: string): Promise<Uint8Array | undefined>;

  close(): Promise<void>;
}

const INVOCATION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/** Invocation ids become file names and Redis keys: letters, digits, `.`, `_`, `-`; ≤ 200 chars. */
export function isValidInvocationId(id: string): boolean {
  return INVOCATION_ID.test(id) && !id.includes('..');
}
