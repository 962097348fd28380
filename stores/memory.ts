/**
 * MemoryStore — the journal store for tests and short-lived embedded use. Nothing survives the
 * process; everything else behaves as the durable stores do, checked by the same conformance suite
 * (test/store-conformance.ts).
 *
 * Invariants:
 * - Records are kept as their canonical JSON text, exactly as the file store writes its lines, so
 *   a caller can never mutate a stored record through an object it passed in or got back, and both
 *   stores hand back the same values.
 * - An append is checked completely (fence, expected seq, linkage, canonical encoding) before the
 *   journal is touched: all records or none.
 * - Time comes from the injected `now` (default Date.now), so lease expiry is testable without
 *   sleeping. The holder of a memory lease is "dead" only when its TTL has run out.
 * - Fencing tokens strictly increase per invocation for the store's lifetime, across releases.
 * - Status notes live apart from the journal entries (canonical JSON text, keyed by id): a note
 *   alone does not make an invocation appear in `list()`.
 */
import { canonicalize } from '../journal/canonical.js';
import { sha256Hex } from '../journal/digest.js';
import { recordLine } from '../journal/encode.js';
import { BlobError, LeaseHeldError } from '../journal/errors.js';
import type { JournalRecord } from '../journal/records.js';
import { isStatusNote, normalizeInvocationMetadata, normalizeStatusNote, parseInvocationMetadata, type InvocationMetadata, type AcquireOptions, type JournalStore, type Lease, type Snapshot, type StatusNote, type InboxMessage } from '../journal/store.js';
import { advisoryKey, assertAdvisoryMessage, MAX_ADVISORIES, orderedAdvisories, type AdvisoryMessage } from '../journal/advisory.js';
import { assertBlobDigest, assertInboxMessage, assertInvocationId, parseInboxMessage, checkAppend, checkFence, checkSnapshotAnchor, heldDetail, leaseExcludes, type StoredLease } from './checks.js';

export interface MemoryStoreOptions {
  /** Wall clock in ms since the epoch, for lease expiry. Default Date.now. */
  now?: () => number;
}

interface Entry {
  lines: string[];
  tailHash: string | undefined;
  lease: StoredLease | undefined;
  snapshot: string | undefined;
}

export class MemoryStore implements JournalStore {
  readonly name = 'memory';
  private readonly entries = new Map<string, Entry>();
  private readonly blobs = new Map<string, Uint8Array>();
  private readonly statuses = new Map<string, string>();
  private readonly inboxes = new Map<string, string>();
  private readonly advisoryShelves = new Map<string, Map<string, string>>();
  private readonly metadata = new Map<string, string>();
  private readonly now: () => number;

  constructor(options: MemoryStoreOptions = {}) {
    this.now = options.now ?? Date.now;
  }

  async acquire(invocation: string, options: AcquireOptions): Promise<Lease> {
    assertInvocationId(invocation);
    const entry = this.entry(invocation);
    const now = this.now();
    const current = entry.lease;
    if (current && leaseExcludes(current, now, () => true)) {
      throw new LeaseHeldError(invocation, current.writer, heldDetail(current, now));
    }
    const stored: StoredLease = { writer: options.writer, token: (current?.token ?? 0) + 1, expiresAt: now + options.ttlMs };
    entry.lease = stored;
    return toLease(invocation, stored);
  }

  async renew(lease: Lease, ttlMs: number): Promise<Lease> {
    const entry = this.existing(lease.invocation);
    checkFence(lease, entry?.lease);
    const stored = entry!.lease!;
    stored.expiresAt = this.now() + ttlMs;
    return toLease(lease.invocation, stored);
  }

  async release(lease: Lease): Promise<void> {
    const stored = this.existing(lease.invocation)?.lease;
    // Releasing a lease that was already taken over must not disturb the new holder.
    if (stored && stored.token === lease.token) {
      stored.released = true;
      stored.expiresAt = this.now();
    }
  }

  async append(lease: Lease, expectedSeq: number, records: readonly JournalRecord[]): Promise<void> {
    const entry = this.existing(lease.invocation);
    checkFence(lease, entry?.lease);
    const journal = entry!;
    checkAppend(lease.invocation, expectedSeq, { length: journal.lines.length, tailHash: journal.tailHash }, records);
    const lines = records.map(recordLine);
    if (records.length === 0) return;
    journal.lines.push(...lines);
    journal.tailHash = records[records.length - 1]!.hash;
  }

  async read(invocation: string, from = 0, to?: number): Promise<JournalRecord[]> {
    assertInvocationId(invocation);
    const lines = this.entries.get(invocation)?.lines ?? [];
    return lines.slice(from, to).map((line) => JSON.parse(line) as JournalRecord);
  }

  async length(invocation: string): Promise<number> {
    assertInvocationId(invocation);
    return this.entries.get(invocation)?.lines.length ?? 0;
  }

  async tail(invocation: string): Promise<JournalRecord | undefined> {
    assertInvocationId(invocation);
    const last = this.entries.get(invocation)?.lines.at(-1);
    return last === undefined ? undefined : (JSON.parse(last) as JournalRecord);
  }

  async list(): Promise<string[]> {
    // A lease alone (acquire, never appended) is not an invocation; a journal or a snapshot is.
    return [...this.entries].filter(([, entry]) => entry.lines.length > 0 || entry.snapshot !== undefined).map(([id]) => id).sort();
  }

  /** A memory journal cannot be torn: appends are all-or-nothing in one synchronous step. */
  async quarantineTornTail(lease: Lease): Promise<{ seq: number; keptAt: string } | undefined> {
    checkFence(lease, this.existing(lease.invocation)?.lease);
    return undefined;
  }

  async putSnapshot(lease: Lease, snapshot: Snapshot): Promise<void> {
    const entry = this.existing(lease.invocation);
    checkFence(lease, entry?.lease);
    const journal = entry!;
    const anchor = snapshot.seq > 0 && snapshot.seq <= journal.lines.length ? (JSON.parse(journal.lines[snapshot.seq - 1]!) as JournalRecord) : undefined;
    checkSnapshotAnchor(snapshot, journal.lines.length, anchor);
    journal.snapshot = canonicalize({ seq: snapshot.seq, hash: snapshot.hash, data: snapshot.data });
  }

  async getSnapshot(invocation: string): Promise<Snapshot | undefined> {
    assertInvocationId(invocation);
    const text = this.entries.get(invocation)?.snapshot;
    return text === undefined ? undefined : (JSON.parse(text) as Snapshot);
  }

  async putStatus(invocation: string, note: StatusNote): Promise<void> {
    assertInvocationId(invocation);
    this.statuses.set(invocation, canonicalize(normalizeStatusNote(note)));
  }

  async getStatus(invocation: string): Promise<StatusNote | undefined> {
    assertInvocationId(invocation);
    const text = this.statuses.get(invocation);
    if (text === undefined) return undefined;
    const note: unknown = JSON.parse(text);
    return isStatusNote(note) ? note : undefined;
  }

  async clearStatus(invocation: string): Promise<void> {
    assertInvocationId(invocation);
    this.statuses.delete(invocation);
  }

  async putMetadata(invocation: string, meta: InvocationMetadata): Promise<void> {
    assertInvocationId(invocation);
    this.metadata.set(invocation, canonicalize(normalizeInvocationMetadata(meta)));
  }

  async getMetadata(invocation: string): Promise<InvocationMetadata | undefined> {
    assertInvocationId(invocation);
    const text = this.metadata.get(invocation);
    return text === undefined ? undefined : parseInvocationMetadata(text, invocation);
  }

  async putInbox(invocation: string, message: InboxMessage): Promise<void> {
    assertInvocationId(invocation);
    assertInboxMessage(message);
    this.inboxes.set(invocation, JSON.stringify(message));
  }

  async peekInbox(invocation: string): Promise<InboxMessage | undefined> {
    assertInvocationId(invocation);
    const text = this.inboxes.get(invocation);
    return text === undefined ? undefined : parseInboxMessage(text);
  }

  async clearInbox(invocation: string): Promise<void> {
    assertInvocationId(invocation);
    this.inboxes.delete(invocation);
  }

  async putAdvisory(invocation: string, message: AdvisoryMessage): Promise<void> {
    assertInvocationId(invocation);
    assertAdvisoryMessage(message);
    let shelf = this.advisoryShelves.get(invocation);
    if (!shelf) this.advisoryShelves.set(invocation, (shelf = new Map()));
    if (!shelf.has(advisoryKey(message)) && shelf.size < MAX_ADVISORIES) shelf.set(advisoryKey(message), JSON.stringify(message));
  }

  async advisories(invocation: string): Promise<AdvisoryMessage[]> {
    assertInvocationId(invocation);
    return orderedAdvisories([...(this.advisoryShelves.get(invocation)?.values() ?? [])].map((text) => JSON.parse(text) as unknown));
  }

  async holder(invocation: string): Promise<{ writer: string; expiresAt: number; live: boolean } | undefined> {
    const lease = this.entries.get(invocation)?.lease;
    if (!lease || lease.released) return undefined;
    return { writer: lease.writer, expiresAt: lease.expiresAt, live: leaseExcludes(lease, this.now(), () => true) };
  }

  async putBlob(bytes: Uint8Array): Promise<string> {
    const digest = sha256Hex(bytes);
    if (!this.blobs.has(digest)) this.blobs.set(digest, bytes.slice());
    return digest;
  }

  async getBlob(digest: string): Promise<Uint8Array | undefined> {
    assertBlobDigest(digest);
    const bytes = this.blobs.get(digest);
    if (bytes === undefined) return undefined;
    if (sha256Hex(bytes) !== digest) throw new BlobError(digest, 'the stored bytes do not match their digest (corrupt); put the original bytes again');
    return bytes.slice();
  }

  async close(): Promise<void> {}

  private entry(invocation: string): Entry {
    let entry = this.entries.get(invocation);
    if (!entry) {
      entry = { lines: [], tailHash: undefined, lease: undefined, snapshot: undefined };
      this.entries.set(invocation, entry);
    }
    return entry;
  }

  private existing(invocation: string): Entry | undefined {
    assertInvocationId(invocation);
    return this.entries.get(invocation);
  }
}

function toLease(invocation: string, stored: StoredLease): Lease {
  return { invocation, writer: stored.writer, token: stored.token, expiresAt: stored.expiresAt };
}
