/**
 * The checks every store makes before it writes, shared so memory, file (and later Redis) refuse
 * exactly the same things with exactly the same errors.
 *
 * - Names: invocation ids and blob digests become file names and keys, so they are validated
 *   before any path or key is built (InvalidNameError).
 * - Appends: the expected seq must equal the journal's length (SeqConflictError); the batch must
 *   continue the chain — seq `expectedSeq + i`, the first `prev` is the tail hash, each later
 *   `prev` is the hash before it (JournalIntegrityError). Linkage only: hashes are not recomputed
 *   here (that is the reader's job), and the genesis `prev` of seq 0 is not checked (the store does
 *   not know the pin).
 * - Leases: whether a stored lease still excludes others, and the detail a LeaseHeldError shows.
 * - Snapshots: a snapshot covers records [0, seq) and names the hash of record seq-1; one that
 *   points past the journal's end or at a hash the journal does not have is refused (a
 *   hibernation image that does not match its journal would make resume silently diverge).
 *
 * Pure: no I/O, no clock (callers pass `now`).
 */
import { isDigest } from '../journal/digest.js';
import { FencedError, InvalidNameError, JournalIntegrityError, SeqConflictError } from '../journal/errors.js';
import type { JournalRecord } from '../journal/records.js';
import { isInboxMessage, isValidInvocationId, type InboxMessage, type Lease, type Snapshot } from '../journal/store.js';

export function assertInvocationId(id: string): void {
  if (typeof id !== 'string' || !isValidInvocationId(id)) {
    throw new InvalidNameError('invocation id', String(id), 'use 1–200 letters, digits, ".", "_" or "-", starting with a letter or digit, without ".."');
  }
}

/** Throws unless `message` is an inbox message (what every store's putInbox accepts). */
export function assertInboxMessage(message: unknown): asserts message is InboxMessage {
  if (!isInboxMessage(message)) throw new TypeError('not an inbox message: { type: "approval", decision, by, note?, at } , { type: "cancel", by, reason, at } { type: "rest", by, reason, at } or { type: "resume", by, reason, at }');
}

/** The inbox message stored as `text`, or undefined when it is not one (a damaged inbox reads as empty). */
export function parseInboxMessage(text: string): InboxMessage | undefined {
  try {
    const message: unknown = JSON.parse(text);
    return isInboxMessage(message) ? message : undefined;
  } catch {
    return undefined;
  }
}

export function assertBlobDigest(digest: string): void {
  if (!isDigest(digest)) throw new InvalidNameError('blob digest', String(digest), 'a blob is named by its full SHA-256: 64 lowercase hex characters');
}

/** Where the journal currently ends. */
export interface JournalEnd {
  length: number;
  /** Hash of record length-1; undefined for an empty journal. */
  tailHash: string | undefined;
}

/** Throws unless `records` may be appended at `expectedSeq` to a journal ending at `end`. */
export function checkAppend(invocation: string, expectedSeq: number, end: JournalEnd, records: readonly JournalRecord[]): void {
  if (!Number.isSafeInteger(expectedSeq) || expectedSeq < 0) {
    throw new SeqConflictError(invocation, expectedSeq, end.length);
  }
  if (expectedSeq !== end.length) throw new SeqConflictError(invocation, expectedSeq, end.length);
  let prev = end.tailHash;
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    const seq = expectedSeq + i;
    if (record === null || typeof record !== 'object') throw new JournalIntegrityError(seq, 'not a record object; nothing was written');
    if (record.seq !== seq) {
      throw new JournalIntegrityError(seq, `record says seq ${String(record.seq)} but it would be written at seq ${seq}; nothing was written`);
    }
    // A prev equal to the previous hash (already proven a digest) needs no second look.
    if (((i === 0 || record.prev !== prev) && !isDigest(record.prev)) || !isDigest(record.hash)) {
      throw new JournalIntegrityError(seq, 'prev and hash must be 64-hex SHA-256 digests (chain the record with chainRecord); nothing was written');
    }
    if (prev !== undefined && record.prev !== prev) {
      const what = i === 0 ? `the journal's tail hash (seq ${seq - 1})` : `the hash of seq ${seq - 1} in the same batch`;
      throw new JournalIntegrityError(seq, `prev does not match ${what}: re-read the tail and re-chain; nothing was written`);
    }
    prev = record.hash;
  }
}

/** The lease as a store keeps it. `pid`/`host` are set by stores that can tell a dead process. */
export interface StoredLease {
  writer: string;
  token: number;
  expiresAt: number;
  pid?: number;
  host?: string;
  /** Set by `release`: the lease excludes nobody and its token may no longer write. */
  released?: boolean;
}

/** True when `stored` still excludes other writers at time `now`. `alive` tells a dead holder. */
export function leaseExcludes(stored: StoredLease | undefined, now: number, alive: (lease: StoredLease) => boolean): boolean {
  if (!stored || stored.released) return false;
  if (now >= stored.expiresAt) return false;
  return alive(stored);
}

/** The detail shown in LeaseHeldError: who, which token, until when. */
export function heldDetail(stored: StoredLease, now: number): string {
  const secs = Math.max(0, (stored.expiresAt - now) / 1000).toFixed(1);
  const proc = stored.pid === undefined ? '' : `, pid ${stored.pid}${stored.host ? ` on ${stored.host}` : ''}`;
  return `lease token ${stored.token}${proc}, expires in ${secs} s`;
}

/** Throws FencedError unless `lease` is the current, unreleased lease. */
export function checkFence(lease: Lease, stored: StoredLease | undefined): void {
  if (!stored) {
    throw new FencedError(lease.invocation, lease.token, 0, 'no lease is recorded for it; acquire the lease before writing');
  }
  if (stored.token !== lease.token) throw new FencedError(lease.invocation, lease.token, stored.token);
  if (stored.released) {
    throw new FencedError(lease.invocation, lease.token, stored.token, 'it was released; acquire the lease again before writing');
  }
}

/** Throws unless `snapshot` fits a journal of `length` records whose record seq-1 is `anchor`. */
export function checkSnapshotAnchor(snapshot: Snapshot, length: number, anchor: JournalRecord | undefined): void {
  const { seq, hash } = snapshot;
  if (!Number.isSafeInteger(seq) || seq < 0) {
    throw new JournalIntegrityError(length, `snapshot seq ${String(seq)} is not a record count; nothing was written`);
  }
  if (!isDigest(hash)) throw new JournalIntegrityError(seq, 'snapshot hash must be a 64-hex SHA-256 digest; nothing was written');
  if (seq > length) {
    throw new JournalIntegrityError(seq, `snapshot covers ${seq} records but the journal has ${length}: append the records before snapshotting; nothing was written`);
  }
  if (seq > 0 && anchor?.hash !== hash) {
    throw new JournalIntegrityError(seq - 1, `snapshot hash does not match the journal's record at seq ${seq - 1}; nothing was written`);
  }
}
