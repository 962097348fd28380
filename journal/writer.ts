/**
 * The journal writer: the single writer of one invocation's journal. It holds the lease, knows the
 * tail (next seq and last hash), validates every body against its kind's schema BEFORE anything is
 * written (fail closed), chains records and appends them through the store.
 *
 * `append` writes one record durably; `appendAll` writes records that belong together in one
 * durable append (one fsync in the file store); `stage` chains a record now and writes it with the
 * next of those (or `flush`). `seal` writes `invocation.sealed` with the signature over the
 * fingerprint; nothing may follow it. Writes reach the store one at a time, in seq order.
 *
 * `onDurable(listener)`: told the records of each write once the store has acknowledged it, in seq
 * order — what a person may be shown as done (cli/follow.ts), as opposed to what is only chained.
 */
import { chainRecordForAppend, genesisHash } from './chain.js';
import { forgetContentText } from './encode.js';
import { InvalidRecordError, WeftError } from './errors.js';
import { checkBody } from './record-check.js';
import type { BodyOf, JournalRecord, Pin, RecordKind, RecordMeta } from './records.js';
import { signFingerprint, type SigningKey } from './seal.js';
import type { JournalStore, Lease } from './store.js';

export interface RecordDraft<K extends RecordKind = RecordKind> {
  kind: K;
  epoch: number;
  body: BodyOf<K>;
  /** Who ran the call this record completes: goes into the unhashed envelope (`meta.worker`), never the hash. */
  worker?: string;
}

export interface WriterOptions {
  writer: string;
  ttlMs?: number;
  /** Wall clock for the unhashed envelope only. */
  now?: () => Date;
}

export interface Genesis {
  invocation: string;
  tenant: string;
  intent: string;
  pin: Pin;
  /** When the intent was over the pinned cap or not well-formed: its size and digest (`intent` holds a prefix). */
  intentCut?: { chars: number; digest: string };
  /** A fork's lineage (runtime/fork.ts): written on its `invocation.pinned`, so the first record names the parent. */
  forkOf?: { parent: string; atEpoch: number; parentSeq: number; parentHash: string };
}

export class JournalWriter {
  private constructor(
    readonly store: JournalStore,
    private lease: Lease,
    private nextSeq: number,
    private tailHash: string,
    private readonly options: WriterOptions,
  ) {}

  /**
   * Start a new journal: takes the lease and writes `invocation.pinned` as seq 0 — with `then`, the
   * records that follow it in the same durable write (a fork's `invocation.forked`: all or none).
   */
  static async create(store: JournalStore, genesis: Genesis, options: WriterOptions, then: readonly RecordDraft[] = []): Promise<JournalWriter> {
    // The lease and the length together (one round trip on a networked store). The length is for a
    // clear error only: the store refuses a genesis at seq 0 of a journal that has records anyway.
    const [acquired, length] = await Promise.allSettled([store.acquire(genesis.invocation, { writer: options.writer, ttlMs: options.ttlMs ?? 30_000 }), store.length(genesis.invocation)]);
    if (acquired.status === 'rejected') throw acquired.reason;
    const lease = acquired.value;
    try {
      if (length.status === 'rejected') throw length.reason;
      const existing = length.value;
      if (existing > 0) {
        throw new WeftError('journal.exists', 'permanent', `invocation ${genesis.invocation} already has a journal (${existing} records); resume it instead of creating it`);
      }
      const writer = new JournalWriter(store, lease, 0, genesisHash(genesis.invocation, genesis.pin), options);
      await writer.appendAll([
        {
          kind: 'invocation.pinned',
          epoch: 0,
          body: { schema: 1, invocation: genesis.invocation, tenant: genesis.tenant, intent: genesis.intent, pin: genesis.pin, ...(genesis.intentCut ? { intentCut: genesis.intentCut } : {}), ...(genesis.forkOf ? { forkOf: genesis.forkOf } : {}) },
        },
        ...then,
      ]);
      return writer;
    } catch (err) {
      await store.release(lease).catch(() => undefined);
      throw err;
    }
  }

  /** Continue an existing journal: takes the lease and positions at its tail. */
  static async open(store: JournalStore, invocation: string, options: WriterOptions): Promise<JournalWriter> {
    const lease = await store.acquire(invocation, { writer: options.writer, ttlMs: options.ttlMs ?? 30_000 });
    try {
      const tail = await store.tail(invocation);
      if (!tail) throw new WeftError('journal.missing', 'permanent', `invocation ${invocation} has no journal; start it first`);
      if (tail.kind === 'invocation.sealed') {
        throw new WeftError('journal.sealed', 'permanent', `invocation ${invocation} is sealed; a sealed journal takes no more records`);
      }
      return new JournalWriter(store, lease, tail.seq + 1, tail.hash, options);
    } catch (err) {
      await store.release(lease).catch(() => undefined);
      throw err;
    }
  }

  /** Records chained by `stage` and not yet written. */
  private staged: JournalRecord[] = [];
  /**
   * The last write handed to the store. Writes go to the store one at a time, in seq order: the
   * runtime's actors append while the handle may make the journal durable before a snapshot.
   */
  private writing: Promise<void> = Promise.resolve();
  /** Who is told of each acknowledged write (onDurable). */
  private readonly durableListeners: Array<(records: readonly JournalRecord[]) => void> = [];

  /**
   * Call `listener` with the records of each write once the store has acknowledged it (in seq
   * order; a staged record with the write that carries it). A listener cannot fail the write.
   */
  onDurable(listener: (records: readonly JournalRecord[]) => void): void {
    this.durableListeners.push(listener);
  }

  get invocation(): string {
    return this.lease.invocation;
  }
  get seq(): number {
    return this.nextSeq;
  }
  get tail(): string {
    return this.tailHash;
  }
  get currentLease(): Lease {
    return this.lease;
  }

  async append<K extends RecordKind>(draft: RecordDraft<K>): Promise<JournalRecord<K>> {
    return (await this.appendAll([draft]))[0] as JournalRecord<K>;
  }

  /**
   * Chain a record now and write it with the next append (or `flush`): a record whose durability
   * can wait for the next write-ahead record, so that records which announce no call out of the
   * process cost no durable write of their own. Returns the record as it will be stored. Not
   * durable until then.
   */
  stage<K extends RecordKind>(draft: RecordDraft<K>): JournalRecord<K> {
    const record = this.chain([draft], this.tailHash, this.nextSeq)[0] as JournalRecord<K>;
    this.staged.push(record);
    this.nextSeq++;
    this.tailHash = record.hash;
    return record;
  }

  /** Write what `stage` holds, if anything, and wait until every record chained so far is durable. */
  async flush(): Promise<void> {
    if (this.staged.length > 0) {
      const records = this.staged;
      this.staged = [];
      await this.write(this.nextSeq - records.length, records);
    } else {
      await this.writing;
    }
  }

  /** Append records that belong together in one durable write (after any staged ones). All or none. */
  async appendAll(drafts: readonly RecordDraft[]): Promise<JournalRecord[]> {
    const records = this.chain(drafts, this.tailHash, this.nextSeq);
    const batch = this.staged.length ? [...this.staged, ...records] : records;
    const from = this.nextSeq - this.staged.length;
    this.staged = [];
    this.nextSeq += records.length;
    this.tailHash = records.length ? records.at(-1)!.hash : this.tailHash;
    await this.write(from, batch);
    return records;
  }

  /**
   * Hand `records` (seq `from` on) to the store after the writes before them. A failed write fails
   * every later one too: the store refuses an append that does not continue its journal.
   */
  private write(from: number, records: readonly JournalRecord[]): Promise<void> {
    const done = this.writing
      .then(() => this.store.append(this.lease, from, records))
      .then(() => {
        for (const listener of this.durableListeners) {
          try {
            listener(records);
          } catch {
            /* a listener's trouble is not the journal's */
          }
        }
      })
      .finally(() => forgetContentText(records));
    this.writing = done;
    return done;
  }

  private chain(drafts: readonly RecordDraft[], tail: string, first: number): JournalRecord[] {
    const records: JournalRecord[] = [];
    let prev = tail;
    let seq = first;
    // One envelope for the batch: the same object on every record (encode.ts writes its text once).
    const meta = this.envelope();
    for (const draft of drafts) {
      const check = checkBody(draft.kind, draft.body);
      if (!check.ok) throw new InvalidRecordError(draft.kind, check.reason);
      if (draft.kind === 'invocation.sealed' && (draft.body as BodyOf<'invocation.sealed'>).fingerprint !== prev) {
        throw new InvalidRecordError(draft.kind, 'a seal must carry the hash of the record before it as its fingerprint');
      }
      const record = chainRecordForAppend(prev, { seq, kind: draft.kind as RecordKind, epoch: draft.epoch, body: draft.body as never }, draft.worker === undefined ? meta : { ...meta, worker: draft.worker }) as JournalRecord;
      records.push(record);
      prev = record.hash;
      seq++;
    }
    return records;
  }

  /** Seal the journal (with whatever is staged, in one write): the fingerprint is the current tail hash. Returns it. */
  async seal(key: SigningKey, epoch: number): Promise<string> {
    const fingerprint = this.tailHash;
    const body: BodyOf<'invocation.sealed'> = {
      algorithm: 'ed25519',
      fingerprint,
      keyId: key.keyId,
      signature: signFingerprint(key, fingerprint),
    };
    const record = chainRecordForAppend(fingerprint, { seq: this.nextSeq, kind: 'invocation.sealed' as const, epoch, body }, this.envelope()) as JournalRecord;
    const batch = [...this.staged, record];
    const from = this.nextSeq - this.staged.length;
    this.staged = [];
    this.nextSeq++;
    this.tailHash = record.hash;
    await this.write(from, batch);
    return fingerprint;
  }

  /** The unhashed envelope of the next append: this writer, and the wall time when a clock is given. */
  private envelope(): RecordMeta {
    const now = this.options.now?.();
    if (now === undefined) return { writer: this.options.writer };
    // Records chained within the same millisecond share one envelope (formatting the time is not free).
    const ms = now.getTime();
    if (this.lastEnvelope?.ms !== ms) this.lastEnvelope = { ms, meta: { at: now.toISOString(), writer: this.options.writer } };
    return this.lastEnvelope.meta;
  }

  private lastEnvelope: { ms: number; meta: RecordMeta } | undefined;

  async renew(ttlMs = this.options.ttlMs ?? 30_000): Promise<void> {
    this.lease = await this.store.renew(this.lease, ttlMs);
  }

  async close(): Promise<void> {
    await this.store.release(this.lease);
  }
}
