/**
 * FileStore — the embedded default: a `.weft/` directory on local disk.
 *
 *   <dir>/invocations/<id>/journal.jsonl    one canonical-JSON record per line, "\n"-terminated
 *   <dir>/invocations/<id>/lease.json       the lease (file-lease.ts)
 *   <dir>/invocations/<id>/journal.durable  how much of the journal is flushed (file-durable.ts)
 *   <dir>/invocations/<id>/snapshot.json    the latest snapshot, replaced by atomic rename
 *   <dir>/invocations/<id>/journal.jsonl.torn-<seq>   torn bytes moved aside by quarantineTornTail
 *   <dir>/invocations/<id>/status.json      the runtime's unhashed status note, replaced by atomic rename
 *   <dir>/invocations/<id>/meta.json        its unhashed metadata (domain name, library digest, sealing key id, redaction marks), replaced by atomic rename
 *   <dir>/invocations/<id>/summary.json     an ended journal's summary for cheap listing, valid only while the journal is unchanged (file-summary.ts)
 *   <dir>/blobs/<sha256 hex>                content-addressed bytes
 *
 * Invariants:
 * - Durability: an append returns only after its bytes are written and fdatasync'd. All records
 *   of one `append` go out in ONE write and ONE fdatasync (group commit); no other fsync is on the
 *   append path. Snapshots, blobs and leases are written by atomic rename with fsyncs.
 * - Flushing (`FileStoreOptions.flush`): an append's fdatasync — the one long wait on the append
 *   path — either blocks the calling thread (fdatasyncSync) or runs on libuv's thread pool, the
 *   event loop free meanwhile. The pool lets invocations appending at the same time flush at the
 *   same time, up to its size (UV_THREADPOOL_SIZE, 4 unless set; shared with DNS lookups, zlib and
 *   crypto), and the file system commits their flushes together: about twice the appends per
 *   second with 8 invocations. But a lone append pays the pool's round trip — tens of µs on bare
 *   metal, 0.1–0.2 ms on a small VM whose idle vCPUs must be woken (a runtime step there takes
 *   about 1.4× as long with its two flushes on the pool). So the default, `'auto'`, blocks while
 *   this store has one journal open for appending (appended to under its lease and not released)
 *   and uses the pool once it has more; `'thread-pool'` always uses the pool (a server that must
 *   not hold its event loop even for one flush); `'blocking'` never does. The write itself, the
 *   lease check and the rarer snapshot, blob and lease writes are synchronous in every mode.
 *   `npm run bench -- journal` and `-- runtime` measure the modes.
 * - One at a time per journal: this store's operations on one invocation (acquire, append,
 *   putSnapshot, quarantineTornTail, release) run one at a time, each to its end, in call order
 *   (`serially`); close waits for all of them. A reader (read, length, tail) is not queued: it may
 *   see a record whose flush is still running, as a reader in another process always could — the
 *   writer is told only once it is flushed, and a failed flush takes it back (`takeBack`).
 * - All or nothing: every check (fence, expected seq, linkage, torn tail, canonical encoding)
 *   runs before the write; if the write or fdatasync fails, the file is truncated back to its
 *   previous length (those bytes were never acknowledged).
 * - Fencing: each append reads lease.json (≈4 µs) and compares tokens; the holder caches the
 *   journal's length, tail hash and size, and re-scans when fstat shows the size changed.
 * - A torn final line (no "\n": a crash mid-append) is never dropped or repaired implicitly:
 *   read/length/tail/append throw TornTailError; only quarantineTornTail moves it aside.
 * - Listing: an invocation folder is listed when it holds a journal file (even an empty one — a
 *   crash between creating it and writing the first record) or a snapshot; a folder holding only a
 *   lease or a status note is not. A folder that cannot be examined is listed (its readers report why).
 * - Durable mark (file-durable.ts): `journal.durable` says how many bytes of the journal are flushed;
 *   the holder creates it before it opens the journal for appending and moves it after each
 *   successful flush, so a reader in another process (`durableJournal`, the viewer) shows only
 *   durable records.
 * - status.json is written outside the lease and the per-journal queue (a runtime whose append just
 *   failed may still record why it stopped); a status.json that does not parse reads as no note.
 *
 * Over 400 lines on purpose: one class, the JournalStore interface's methods over one folder; its
 * I/O, lease, ranges, summary and durability live in file-*.ts.
 */
import { closeSync, fdatasyncSync, fstatSync, ftruncateSync, openSync, readdirSync, statSync, unlinkSync, writeSync, writeFileSync, fsyncSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { canonicalize } from '../journal/canonical.js';
import { sha256Hex } from '../journal/digest.js';
import { recordLine } from '../journal/encode.js';
import { BlobError, JournalIntegrityError, TornTailError } from '../journal/errors.js';
import { splitJournalText } from '../journal/reader.js';
import type { JournalRecord } from '../journal/records.js';
import { endingOf, isStatusNote, isValidInvocationId, normalizeInvocationMetadata, normalizeStatusNote, parseInvocationMetadata, type InvocationMetadata, type AcquireOptions, type JournalStore, type Lease, type Snapshot, type StatusNote, type InboxMessage } from '../journal/store.js';
import { advisoryKey, assertAdvisoryMessage, MAX_ADVISORIES, orderedAdvisories, type AdvisoryMessage } from '../journal/advisory.js';
import { assertBlobDigest, assertInboxMessage, assertInvocationId, checkAppend, parseInboxMessage, checkFence, checkSnapshotAnchor, leaseExcludes } from './checks.js';
import { atomicWrite, errno, fdatasyncOnPool, fsyncDir, readIfExists } from './file-io.js';
import { acquireLease, holderAlive, LeaseReader, readLease, releaseLease, renewLease } from './file-lease.js';
import { readJournalSummary, SummaryCache, writeJournalSummary, type JournalSummary } from './file-summary.js';
import { bytesFrom, endsTorn, headLines, lastLine, linesFrom, offsetOfLine } from './file-ranges.js';
import { openDurableMark, readDurableMark, writeDurableMark } from './file-durable.js';

export type FlushMode = 'auto' | 'thread-pool' | 'blocking';

export interface FileStoreOptions {
  /** Wall clock in ms since the epoch, for lease expiry. Default Date.now. */
  now?: () => number;
  /**
   * How an append waits for its fdatasync (see the header): `'auto'` (default) blocks while this
   * store has one journal open for appending and uses libuv's thread pool once it has more;
   * `'thread-pool'` always uses the pool, the event loop free meanwhile; `'blocking'` always blocks.
   * Durability is the same in every mode.
   */
  flush?: FlushMode;
}

/** What the lease holder knows about its journal file. */
interface OpenJournal {
  token: number;
  fd: number;
  size: number;
  length: number;
  tailHash: string | undefined;
  torn: { seq: number; bytes: number } | undefined;
  /** The durable mark's fd (file-durable.ts), moved after each successful flush; undefined when it could not be opened. */
  mark: number | undefined;
}

const JOURNAL = 'journal.jsonl';
const SNAPSHOT = 'snapshot.json';
const STATUS = 'status.json';
const INBOX = 'inbox.json';
/** The inbox's advisories (journal/advisory.ts): apart from the command slot, one JSON array. */
const ADVISORIES = 'advisories.json';
const META = 'meta.json';
const NEWLINE = 0x0a;

export class FileStore implements JournalStore {
  readonly name: string;
  readonly dir: string;
  private readonly now: () => number;
  private readonly flushMode: FlushMode;
  private readonly open = new Map<string, OpenJournal>();
  /** Byte offsets of snapshot anchors (seq → where its line starts), so resume reads only the tail. */
  private readonly anchors = new Map<string, { seq: number; offset: number }>();
  private readonly leases = new LeaseReader();
  /** Ended journals' summaries already read (file-summary.ts): a listing again stats each journal and reads nothing else. */
  private readonly summaries = new SummaryCache();
  /** Per invocation: the end of the holder's last queued operation on its journal (`serially`). */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(dir: string, options: FileStoreOptions = {}) {
    this.dir = resolve(dir);
    this.name = `file:${this.dir}`;
    this.now = options.now ?? Date.now;
    this.flushMode = options.flush ?? 'auto';
  }

  /** The journal file of an invocation (for tools and tests; the store owns its contents). */
  journalPath(invocation: string): string {
    return join(this.invocationDir(invocation), JOURNAL);
  }

  async acquire(invocation: string, options: AcquireOptions): Promise<Lease> {
    // Queued behind this store's own operations on the journal, like release: see `serially`.
    return this.serially(invocation, async () => {
      const lease = await acquireLease(this.invocationDir(invocation), invocation, options, this.now);
      this.forget(invocation); // re-read the journal on the first append under the new token
      return lease;
    });
  }

  async renew(lease: Lease, ttlMs: number): Promise<Lease> {
    return renewLease(this.invocationDir(lease.invocation), lease, ttlMs, this.now);
  }

  /** Give the lease up once this store's operations on the journal have ended (see `serially`). */
  async release(lease: Lease): Promise<void> {
    return this.serially(lease.invocation, async () => {
      if (this.open.get(lease.invocation)?.token === lease.token) this.forget(lease.invocation);
      await releaseLease(this.invocationDir(lease.invocation), lease, this.now);
    });
  }

  async append(lease: Lease, expectedSeq: number, records: readonly JournalRecord[]): Promise<void> {
    return this.serially(lease.invocation, () => this.appendNow(lease, expectedSeq, records));
  }

  private async appendNow(lease: Lease, expectedSeq: number, records: readonly JournalRecord[]): Promise<void> {
    const dir = this.invocationDir(lease.invocation);
    checkFence(lease, this.leases.read(dir));
    const journal = this.writable(lease);
    if (journal.torn) throw new TornTailError(lease.invocation, journal.torn.seq, journal.torn.bytes);
    checkAppend(lease.invocation, expectedSeq, journal, records);
    if (records.length === 0) return;
    const bytes = Buffer.from(records.map((record) => recordLine(record) + '\n').join(''), 'utf8');
    try {
      let done = 0;
      while (done < bytes.length) done += writeSync(journal.fd, bytes, done);
      if (this.flushBlocks()) fdatasyncSync(journal.fd);
      else await fdatasyncOnPool(journal.fd);
    } catch (err) {
      this.takeBack(lease, journal, bytes.length);
      this.forget(lease.invocation);
      throw err;
    }
    journal.size += bytes.length;
    journal.length += records.length;
    journal.tailHash = records[records.length - 1]!.hash;
    // Flushed: a viewer in another process may now show these records (file-durable.ts).
    if (journal.mark !== undefined) writeDurableMark(journal.mark, { size: journal.size, records: journal.length });
    // An ending just became durable: summarise the journal for listings (file-summary.ts; best effort).
    if (endingOf(records.map((record) => record.kind)) !== undefined) writeJournalSummary(dir, lease.invocation, this.journalPath(lease.invocation), journal.fd, journal.length);
  }

  /** Whether the next flush blocks: the mode's answer (`'auto'`: while only one journal is open for appending). */
  private flushBlocks(): boolean {
    return this.flushMode === 'blocking' || (this.flushMode === 'auto' && this.open.size <= 1);
  }

  /**
   * After a failed write or flush: cut the file back to where this append began — its bytes were
   * never acknowledged — but only while nothing can have been built on them: the lease is still
   * this holder's and the file ends where this append's bytes end. Otherwise (the lease expired and
   * was taken over, and the new holder read and continued the journal) the bytes stay: cutting
   * them would delete what another writer had already acknowledged. (The check and the cut are
   * not one atomic step: a takeover by another process in the microseconds between them, after the
   * lease expired mid-flush, would still be cut. Only an expired lease opens that window.)
   */
  private takeBack(lease: Lease, journal: OpenJournal, written: number): void {
    try {
      const stored = this.leases.read(this.invocationDir(lease.invocation));
      if (stored?.token !== lease.token || stored.released) return;
      if (fstatSync(journal.fd).size > journal.size + written) return;
      ftruncateSync(journal.fd, journal.size);
    } catch {
      /* the write error is the one to report; the next read reports any torn tail */
    }
  }

  /**
   * Run the holder's operations on one journal one at a time, in call order, each to its end (its
   * flush included) — what one synchronous call gave when appends blocked on the disk. A failed
   * operation does not stop the ones queued after it: each reports its own outcome.
   */
  private serially<T>(invocation: string, operation: () => Promise<T>): Promise<T> {
    // acquire and release go through here too, so a lease is never released (and another writer
    // let in) while this store still has a write of that journal in flight.
    const before = this.queues.get(invocation); // never rejects: it is the previous `settled`
    const result = before === undefined ? operation() : before.then(operation);
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(invocation, settled);
    void settled.then(() => {
      if (this.queues.get(invocation) === settled) this.queues.delete(invocation);
    });
    return result;
  }

  async read(invocation: string, from = 0, to?: number): Promise<JournalRecord[]> {
    const path = this.journalPath(invocation);
    const torn = endsTorn(path);
    if (torn === undefined) return [];
    if (!torn) {
      if (from === 0 && to !== undefined && to <= 64) {
        const head = headLines(path, to);
        if (head) return head.lines.map((line, seq) => this.parse(invocation, line, seq));
      }
      const tail = this.linesAfterAnchor(invocation, from);
      if (tail) {
        const end = to === undefined ? tail.lines.length : Math.max(0, Math.min(to - tail.seq, tail.lines.length));
        const out: JournalRecord[] = [];
        for (let i = from - tail.seq; i < end; i++) out.push(this.parse(invocation, tail.lines[i]!, tail.seq + i));
        return out;
      }
    }
    const lines = this.lines(invocation);
    const end = Math.min(to ?? lines.length, lines.length);
    const out: JournalRecord[] = [];
    for (let seq = Math.max(0, from); seq < end; seq++) out.push(this.parse(invocation, lines[seq]!, seq));
    return out;
  }

  async length(invocation: string): Promise<number> {
    return this.lengthNow(invocation);
  }

  async tail(invocation: string): Promise<JournalRecord | undefined> {
    const last = lastLine(this.journalPath(invocation));
    if (!last) return undefined;
    if (!last.torn) {
      if (last.line === undefined) return undefined;
      try {
        return JSON.parse(last.line) as JournalRecord;
      } catch {
        /* report it with its seq through the full read below */
      }
    }
    const lines = this.lines(invocation);
    return lines.length === 0 ? undefined : this.parse(invocation, lines[lines.length - 1]!, lines.length - 1);
  }

  async list(): Promise<string[]> {
    let names: string[];
    try {
      names = readdirSync(join(this.dir, 'invocations'));
    } catch (err) {
      if (errno(err) === 'ENOENT') return [];
      throw err;
    }
    const base = join(this.dir, 'invocations');
    return names.filter((id) => isValidInvocationId(id) && (present(join(base, id, JOURNAL)) || present(join(base, id, SNAPSHOT)))).sort();
  }

  async quarantineTornTail(lease: Lease): Promise<{ seq: number; keptAt: string } | undefined> {
    return this.serially(lease.invocation, async () => this.quarantineNow(lease));
  }

  private quarantineNow(lease: Lease): { seq: number; keptAt: string } | undefined {
    const dir = this.invocationDir(lease.invocation);
    checkFence(lease, this.leases.read(dir));
    const path = join(dir, JOURNAL);
    const bytes = readIfExists(path);
    if (!bytes || bytes.length === 0 || bytes[bytes.length - 1] === NEWLINE) return undefined;
    const keep = bytes.lastIndexOf(NEWLINE) + 1;
    const seq = countNewlines(bytes, keep);
    let keptAt = `${path}.torn-${seq}`;
    for (let n = 1; fileSize(keptAt) >= 0; n++) keptAt = `${path}.torn-${seq}.${n}`;
    const kept = openSync(keptAt, 'wx');
    try {
      writeFileSync(kept, bytes.subarray(keep));
      fsyncSync(kept);
    } finally {
      closeSync(kept);
    }
    const fd = openSync(path, 'r+');
    try {
      ftruncateSync(fd, keep);
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
    fsyncDir(dir);
    this.forget(lease.invocation);
    return { seq, keptAt };
  }

  async putSnapshot(lease: Lease, snapshot: Snapshot): Promise<void> {
    return this.serially(lease.invocation, async () => this.putSnapshotNow(lease, snapshot));
  }

  private putSnapshotNow(lease: Lease, snapshot: Snapshot): void {
    const dir = this.invocationDir(lease.invocation);
    checkFence(lease, this.leases.read(dir));
    const path = join(dir, JOURNAL);
    const held = this.open.get(lease.invocation);
    // Synchronous from here on, and queued behind this holder's appends (`serially`): no append of
    // this process can interleave between counting lines and locating the anchor's offset (other
    // processes are fenced out by the lease).
    const length = held && held.token === lease.token && !held.torn ? held.length : this.lengthNow(lease.invocation);
    let anchor: JournalRecord | undefined;
    if (snapshot.seq > 0 && snapshot.seq <= length) {
      const at = offsetOfLine(path, length, snapshot.seq - 1);
      const line = at === undefined ? undefined : linesFrom(path, at)?.lines[0];
      anchor = line === undefined ? undefined : this.parse(lease.invocation, line, snapshot.seq - 1);
    }
    checkSnapshotAnchor(snapshot, length, anchor);
    const offset = offsetOfLine(path, length, snapshot.seq);
    atomicWrite(join(dir, SNAPSHOT), canonicalize({ seq: snapshot.seq, hash: snapshot.hash, data: snapshot.data, ...(offset === undefined ? {} : { offset }) }) + '\n');
    if (offset !== undefined) this.anchors.set(lease.invocation, { seq: snapshot.seq, offset });
  }

  async getSnapshot(invocation: string): Promise<Snapshot | undefined> {
    const bytes = readIfExists(join(this.invocationDir(invocation), SNAPSHOT));
    if (bytes === undefined) return undefined;
    const stored = JSON.parse(bytes.toString('utf8')) as Snapshot & { offset?: number };
    if (typeof stored.offset === 'number') this.anchors.set(invocation, { seq: stored.seq, offset: stored.offset });
    return { seq: stored.seq, hash: stored.hash, data: stored.data };
  }

  /**
   * An ended journal's summary (file-summary.ts), while the journal is unchanged since it was
   * written; undefined when there is none or it is stale — then read the journal.
   */
  async summary(invocation: string): Promise<JournalSummary | undefined> {
    return readJournalSummary(this.invocationDir(invocation), invocation, this.journalPath(invocation), this.summaries);
  }

  /**
   * The journal's bytes a viewer may show (file-durable.ts): while a live writer holds the lease,
   * only up to its durable mark — never a record still being flushed, nor one a failed flush takes
   * back; when no live writer holds it (ended, released, its process gone) or the journal has no
   * mark (written before there was one), the whole file, byte for byte. undefined: no journal.
   * `bounded` says which. The lease is read before and after the journal: a writer that took it
   * meanwhile is bounded by the mark read before its first byte could be written. A journal that
   * ends within the mark read before it needs no lease read at all: the follower's usual case.
   *
   * `prefix` is a follower's read, which comes back at the next change: when the journal runs past
   * the mark and there are bytes past `fromByte` under it, those are given (bounded) without reading
   * the lease — a busy writer has usually written its next record before a follower woken by the
   * mark reads. The bytes past the mark come with a later read: at the mark's next move, or — a
   * writer gone without moving it, when no change comes — at the follower's next poll (the viewer
   * reads every followed journal each second), where nothing new is under the mark and the lease
   * decides as above.
   */
  async durableJournal(invocation: string, fromByte = 0, options: { prefix?: boolean } = {}): Promise<{ bytes: Buffer; bounded: boolean } | undefined> {
    const dir = this.invocationDir(invocation);
    const read = () => (fromByte === 0 ? readIfExists(join(dir, JOURNAL)) : bytesFrom(join(dir, JOURNAL), fromByte));
    // What a follower reads most: a journal no longer than its mark is durable to its last byte,
    // whoever holds the lease (bytes under the mark are flushed and never change).
    const first = readDurableMark(dir);
    if (first !== 'absent') {
      const bytes = read();
      if (bytes === undefined) return undefined;
      if (fromByte + bytes.length <= first.size) return { bytes, bounded: false };
      if (options.prefix && first.size > fromByte) return { bytes: bytes.subarray(0, first.size - fromByte), bounded: true };
    }
    const before = readLease(dir);
    const mark = readDurableMark(dir);
    const bytes = read();
    if (bytes === undefined) return undefined;
    const after = readLease(dir);
    const unchanged = before?.token === after?.token && before?.released === after?.released;
    if (mark === 'absent' || (unchanged && !leaseExcludes(after, this.now(), holderAlive))) return { bytes, bounded: false };
    return { bytes: bytes.subarray(0, Math.max(0, Math.min(mark.size - fromByte, bytes.length))), bounded: true };
  }

  async putStatus(invocation: string, note: StatusNote): Promise<void> {
    const path = join(this.invocationDir(invocation), STATUS);
    atomicWrite(path, canonicalize(normalizeStatusNote(note)) + '\n');
  }

  async getStatus(invocation: string): Promise<StatusNote | undefined> {
    const bytes = readIfExists(join(this.invocationDir(invocation), STATUS));
    if (bytes === undefined) return undefined;
    let note: unknown;
    try {
      note = JSON.parse(bytes.toString('utf8'));
    } catch {
      return undefined; // observability only: a torn or garbled note is no note
    }
    return isStatusNote(note) ? normalizeStatusNote(note) : undefined;
  }

  async clearStatus(invocation: string): Promise<void> {
    try {
      unlinkSync(join(this.invocationDir(invocation), STATUS));
    } catch (err) {
      if (errno(err) !== 'ENOENT') throw err;
    }
  }

  async putMetadata(invocation: string, meta: InvocationMetadata): Promise<void> {
    assertInvocationId(invocation);
    // Not fsynced: a record a crash loses reads as none, and readers fall back to the pinned library's name.
    atomicWrite(join(this.invocationDir(invocation), META), canonicalize(normalizeInvocationMetadata(meta)) + '\n', { durable: false });
  }

  async getMetadata(invocation: string): Promise<InvocationMetadata | undefined> {
    assertInvocationId(invocation);
    const bytes = readIfExists(join(this.invocationDir(invocation), META));
    return bytes === undefined ? undefined : parseInvocationMetadata(bytes.toString('utf8'), invocation);
  }

  async putInbox(invocation: string, message: InboxMessage): Promise<void> {
    assertInvocationId(invocation);
    assertInboxMessage(message);
    atomicWrite(join(this.invocationDir(invocation), INBOX), new TextEncoder().encode(JSON.stringify(message) + '\n'));
  }

  async peekInbox(invocation: string): Promise<InboxMessage | undefined> {
    assertInvocationId(invocation);
    const bytes = readIfExists(join(this.invocationDir(invocation), INBOX));
    return bytes === undefined ? undefined : parseInboxMessage(new TextDecoder().decode(bytes));
  }

  async clearInbox(invocation: string): Promise<void> {
    assertInvocationId(invocation);
    try {
      unlinkSync(join(this.invocationDir(invocation), INBOX));
    } catch (err) {
      if (errno(err) !== 'ENOENT') throw err;
    }
  }

  async putAdvisory(invocation: string, message: AdvisoryMessage): Promise<void> {
    assertInvocationId(invocation);
    assertAdvisoryMessage(message);
    const kept = this.readAdvisories(invocation);
    if (kept.length >= MAX_ADVISORIES || kept.some((a) => advisoryKey(a) === advisoryKey(message))) return;
    atomicWrite(join(this.invocationDir(invocation), ADVISORIES), new TextEncoder().encode(JSON.stringify(orderedAdvisories([...kept, message])) + '\n'), { durable: false });
  }

  async advisories(invocation: string): Promise<AdvisoryMessage[]> {
    assertInvocationId(invocation);
    return this.readAdvisories(invocation);
  }

  /** Synchronous, so a put reads and writes the shelf with no turn of the event loop between. */
  private readAdvisories(invocation: string): AdvisoryMessage[] {
    const bytes = readIfExists(join(this.invocationDir(invocation), ADVISORIES));
    if (bytes === undefined) return [];
    try {
      const values: unknown = JSON.parse(new TextDecoder().decode(bytes));
      return Array.isArray(values) ? orderedAdvisories(values) : [];
    } catch {
      return []; // a damaged shelf reads as empty: the journal holds every warning
    }
  }

  async holder(invocation: string): Promise<{ writer: string; expiresAt: number; live: boolean } | undefined> {
    assertInvocationId(invocation);
    const lease = readLease(this.invocationDir(invocation));
    if (!lease || lease.released) return undefined;
    return { writer: lease.writer, expiresAt: lease.expiresAt, live: leaseExcludes(lease, this.now(), holderAlive) };
  }

  async putBlob(bytes: Uint8Array): Promise<string> {
    const digest = sha256Hex(bytes);
    const path = join(this.dir, 'blobs', digest);
    const existing = readIfExists(path);
    if (existing === undefined || sha256Hex(existing) !== digest) atomicWrite(path, bytes);
    return digest;
  }

  async getBlob(digest: string): Promise<Uint8Array | undefined> {
    assertBlobDigest(digest);
    const bytes = readIfExists(join(this.dir, 'blobs', digest));
    if (bytes === undefined) return undefined;
    if (sha256Hex(bytes) !== digest) {
      throw new BlobError(digest, `the file ${join(this.dir, 'blobs', digest)} does not match its digest (corrupt); put the original bytes again`);
    }
    return new Uint8Array(bytes);
  }

  /** Close the journals once every queued operation has ended (see `serially`). */
  async close(): Promise<void> {
    while (this.queues.size > 0) await Promise.all([...this.queues.values()]);
    for (const invocation of [...this.open.keys()]) this.forget(invocation);
  }

  private invocationDir(invocation: string): string {
    assertInvocationId(invocation);
    return join(this.dir, 'invocations', invocation);
  }

  /** The complete lines of the journal; throws TornTailError if the last one is incomplete. */
  private lines(invocation: string): string[] {
    const bytes = readIfExists(join(this.invocationDir(invocation), JOURNAL));
    if (bytes === undefined) return [];
    const { lines, torn } = splitJournalText(bytes.toString('utf8'));
    if (torn !== undefined) throw new TornTailError(invocation, lines.length, Buffer.byteLength(torn, 'utf8'));
    return lines;
  }

  private parse(invocation: string, line: string, seq: number): JournalRecord {
    try {
      return JSON.parse(line) as JournalRecord;
    } catch (err) {
      throw new JournalIntegrityError(seq, `line ${seq + 1} of ${this.journalPath(invocation)} is not valid JSON (${(err as Error).message}); verify the journal with weft verify`);
    }
  }

  /** The number of complete records (throws TornTailError on a torn tail). Synchronous. */
  private lengthNow(invocation: string): number {
    const path = this.journalPath(invocation);
    const torn = endsTorn(path);
    if (torn === undefined) return 0;
    if (!torn) {
      const tail = this.linesAfterAnchor(invocation, this.anchors.get(invocation)?.seq ?? Infinity);
      if (tail) return tail.seq + tail.lines.length;
      const bytes = readIfExists(path) ?? Buffer.alloc(0);
      return countNewlines(bytes, bytes.length);
    }
    return this.lines(invocation).length;
  }

  /**
   * The lines from a known snapshot anchor to the end, when `from` is at or after it and the
   * anchor still starts the line it claims (its record carries that seq); undefined otherwise.
   */
  private linesAfterAnchor(invocation: string, from: number): { seq: number; lines: string[] } | undefined {
    const anchor = this.anchors.get(invocation);
    if (!anchor || from < anchor.seq) return undefined;
    const got = linesFrom(this.journalPath(invocation), anchor.offset);
    if (!got || got.torn) return undefined;
    if (got.lines.length > 0) {
      let seq: unknown;
      try {
        seq = (JSON.parse(got.lines[0]!) as { seq?: unknown }).seq;
      } catch {
        seq = undefined;
      }
      if (seq !== anchor.seq) {
        this.anchors.delete(invocation);
        return undefined;
      }
    }
    return { seq: anchor.seq, lines: got.lines };
  }

  /** The holder's open journal, (re)loaded when new for this token or changed underneath. */
  private writable(lease: Lease): OpenJournal {
    const cached = this.open.get(lease.invocation);
    if (cached && cached.token === lease.token && fstatSync(cached.fd).size === cached.size) return cached;
    this.forget(lease.invocation);
    const path = this.journalPath(lease.invocation);
    // The durable mark exists before the journal is opened for appending (file-durable.ts): when it
    // is new, it holds the journal's complete lines as they are now (none, for a new journal).
    const mark = openDurableMark(this.invocationDir(lease.invocation), () => {
      const bytes = readIfExists(path) ?? Buffer.alloc(0);
      const size = bytes.lastIndexOf(NEWLINE) + 1;
      return { size, records: countNewlines(bytes, size) };
    });
    let fd: number | undefined;
    try {
      fd = openSync(path, 'a');
      const journal: OpenJournal = { token: lease.token, fd, mark, ...(this.scanFromAnchor(lease.invocation) ?? this.scan(lease.invocation, readIfExists(path) ?? Buffer.alloc(0))) };
      this.open.set(lease.invocation, journal);
      return journal;
    } catch (err) {
      if (fd !== undefined) closeSync(fd);
      if (mark !== undefined) closeSync(mark);
      throw err;
    }
  }

  /** The holder's view of the journal end, read from a snapshot anchor instead of the whole file. */
  private scanFromAnchor(invocation: string): Omit<OpenJournal, 'token' | 'fd' | 'mark'> | undefined {
    const tail = this.linesAfterAnchor(invocation, Infinity);
    if (!tail || tail.seq === 0) return undefined;
    const last = lastLine(this.journalPath(invocation));
    if (!last || last.torn || last.line === undefined) return undefined;
    return { size: last.size, length: tail.seq + tail.lines.length, tailHash: (JSON.parse(last.line) as JournalRecord).hash, torn: undefined };
  }

  private scan(invocation: string, bytes: Buffer): Omit<OpenJournal, 'token' | 'fd' | 'mark'> {
    const complete = bytes.lastIndexOf(NEWLINE) + 1;
    const length = countNewlines(bytes, complete);
    const torn = complete < bytes.length ? { seq: length, bytes: bytes.length - complete } : undefined;
    let tailHash: string | undefined;
    if (length > 0) {
      const start = bytes.lastIndexOf(NEWLINE, complete - 2) + 1;
      tailHash = this.parse(invocation, bytes.subarray(start, complete - 1).toString('utf8'), length - 1).hash;
    }
    return { size: bytes.length, length, tailHash, torn };
  }

  /**
   * Drop the holder's view of a journal and close its fd. No flush on that fd is running then:
   * every caller is one of this journal's queued operations (`serially`) or runs after them
   * (close) — closing an fd under a running fdatasync could let the number be reused by another
   * open and the flush land on the wrong file.
   */
  private forget(invocation: string): void {
    const journal = this.open.get(invocation);
    if (!journal) return;
    this.open.delete(invocation);
    closeSync(journal.fd);
    if (journal.mark !== undefined) closeSync(journal.mark);
  }
}

function countNewlines(bytes: Buffer, end: number): number {
  let n = 0;
  for (let i = bytes.indexOf(NEWLINE); i >= 0 && i < end; i = bytes.indexOf(NEWLINE, i + 1)) n++;
  return n;
}

/** Whether something is at `path`: false only when it (or its folder) does not exist. */
function present(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch (err) {
    const code = errno(err);
    return code !== 'ENOENT' && code !== 'ENOTDIR';
  }
}

/** The file's size, or -1 when it does not exist. */
function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch (err) {
    if (errno(err) === 'ENOENT') return -1;
    throw err;
  }
}
