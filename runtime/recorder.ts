/**
 * The recorder: the one path by which the invocation's actors touch the journal. It holds the
 * journal position and, on resume or replay, the records already written from that position on.
 *
 * - `derive(draft)`: a record the runtime computes (a plan digest, a dispatch, an admission). If
 *   the journal already has a record at this seq, the draft must equal it (kind, epoch, body) or
 *   replay stops with ReplayDivergenceError naming the seq; otherwise it is appended live.
 * - `complete(match, live)`: a reply from outside (the model, an actuator, an observation). If the
 *   journal has it, it is returned and nothing is called; otherwise `live()` is called — only in
 *   live mode — and its record appended. In replay mode running out of journal is ReplayEndedError.
 *
 * Every record read back is re-chained from the recorder's own tail, so a replay that gets to
 * the end has proved the journal byte for byte (same hashes, same fingerprint).
 *
 * An explicit re-key (`invocation.rekeyed`, seal-key.ts) is written by the runtime, not derived by
 * the machine: wherever it stands, the recorder passes over it (re-chained like any record) before
 * the next record, and from then on `sealKey` — the key id that must seal the journal — is its `to`.
 *
 * Durability (invariant 1, write-ahead): a record that announces a call out of the process — a
 * model request, a dispatch, a refusal (the job goes back on the queue), a compensation, a timer — is appended at once, with whatever is staged
 * before it, and is durable before the call. So are a person's decision and a cancel (the inbox is
 * cleared once it is recorded), a passed deadline, and the seal (its fingerprint is handed to the caller). Every other record — a completion, an observation, a plan, an admission — is
 * staged: chained at once, written with the next of those, with the seal, or when the run comes to
 * rest (the handle makes the journal durable before it snapshots or stops). A crash loses only
 * staged records, each of which the run re-derives or re-obtains: a lost completion is asked for
 * again under the request's attempt or the step's idempotency key.
 *
 * Turns of the event loop: after each durable append (live mode only) the recorder gives the event
 * loop one turn (setImmediate) before the run goes on. A run on the file store with in-process
 * actuators otherwise never leaves its promise chain — synchronous writes, synchronous effects — and
 * nothing else in the process would run until it ended: not a Ctrl-C handler (cli/interrupt.ts), not
 * a lease renewal, not another invocation `serve` runs. A signal lands between two durable appends,
 * where a crash leaves the journal resumable. Replay and read-back never yield: nothing is written.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { recordHash } from '../journal/chain.js';
import type { BodyOf, JournalRecord, RecordKind } from '../journal/records.js';
import type { JournalWriter, RecordDraft } from '../journal/writer.js';
import { ReplayDivergenceError, ReplayEndedError } from './errors.js';

/** The records appended at once (see the header); every other kind is staged. */
const APPENDED_AT_ONCE: ReadonlySet<RecordKind> = new Set<RecordKind>(['model.requested', 'step.dispatched', 'step.refused', 'compensation.dispatched', 'timer.set', 'approval.decided', 'cancel.requested', 'deadline.passed', 'invocation.sealed']);

export interface RecorderOptions {
  seq: number;
  tail: string;
  /** Records already in the journal from `seq` on. */
  existing: readonly JournalRecord[];
  /** Live mode: appends go here once `existing` is used up. Absent: replay mode (never acts). */
  writer?: JournalWriter;
  /** Called for every record the recorder passes, read back or written (progress, inspector). */
  onRecord?: (record: JournalRecord, replayed: boolean) => void;
  /** The key id that must seal the journal (the key in force, seal-key.ts); undefined when any key may. */
  sealKey?: string;
}

export class Recorder {
  private position: number;
  private tailHash: string;
  private index = 0;
  private wroteLast = false;
  private keyInForce: string | undefined;

  constructor(private readonly options: RecorderOptions) {
    this.position = options.seq;
    this.tailHash = options.tail;
    this.keyInForce = options.sealKey;
  }

  /** The key id that must seal the journal, as of the records passed so far; undefined when any key may. */
  get sealKey(): string | undefined {
    return this.keyInForce;
  }

  get seq(): number {
    return this.position;
  }
  get tail(): string {
    return this.tailHash;
  }
  get live(): boolean {
    return this.options.writer !== undefined;
  }
  /** True while records already in the journal remain to be read back. */
  get replaying(): boolean {
    return this.index < this.options.existing.length;
  }

  /**
   * True when the last record this recorder passed was written now, not read back: a dispatch
   * written ahead this moment has no job anywhere yet (a dispatcher need not look for one).
   */
  get lastWritten(): boolean {
    return this.wroteLast;
  }

  /** The next record already in the journal that the machine produces, if any (replay drives resting states from it); re-keys are looked past. */
  peek(): JournalRecord | undefined {
    let i = this.index;
    while (this.options.existing[i]?.kind === 'invocation.rekeyed') i++;
    return this.options.existing[i];
  }

  /** Pass over the re-keys that stand next in the journal (see the header). */
  passOverRekeys(): void {
    for (let recorded = this.options.existing[this.index]; recorded?.kind === 'invocation.rekeyed'; recorded = this.options.existing[this.index]) {
      this.readBack(recorded, recorded);
      this.keyInForce = (recorded as JournalRecord<'invocation.rekeyed'>).body.to;
    }
  }

  /** Where this recorder stands, for the machine's context. */
  at(): { seq: number; tail: string } {
    return { seq: this.position, tail: this.tailHash };
  }

  async derive<K extends RecordKind>(draft: RecordDraft<K>): Promise<JournalRecord<K>> {
    this.passOverRekeys();
    const recorded = this.options.existing[this.index];
    if (recorded) return this.readBack(recorded, draft) as JournalRecord<K>;
    return this.write(draft);
  }

  /**
   * The completion of an outside call. `accepts` says whether a recorded record is this call's
   * completion (right kind, step and attempt); anything else at this seq is a divergence.
   */
  async complete<K extends RecordKind>(
    expected: { kinds: readonly K[]; epoch: number; describe: string; accepts: (record: JournalRecord<K>) => boolean },
    live: () => Promise<RecordDraft<K>>,
  ): Promise<JournalRecord<K>> {
    this.passOverRekeys();
    const recorded = this.options.existing[this.index];
    if (recorded) {
      const ok = (expected.kinds as readonly string[]).includes(recorded.kind) && recorded.epoch === expected.epoch && expected.accepts(recorded as JournalRecord<K>);
      if (!ok) throw new ReplayDivergenceError(recorded.seq, recorded.kind, summary(recorded), expected.describe);
      return this.readBack(recorded, recorded) as JournalRecord<K>;
    }
    if (!this.options.writer) throw new ReplayEndedError(this.position);
    return this.write(await live());
  }

  /**
   * Accept the journal's record at this seq as what the run produces here: `content` is what the
   * run derived (derive) or the record itself (a completion read back). Re-hashing it from the
   * recorder's own tail proves, in one canonicalization, both the chain and — for derived records —
   * that the run re-derived exactly what the journal holds.
   */
  private readBack(recorded: JournalRecord, content: { kind: RecordKind; epoch: number; body: unknown }): JournalRecord {
    if (recorded.prev !== this.tailHash) {
      throw new ReplayDivergenceError(recorded.seq, recorded.kind, { prev: recorded.prev }, { prev: this.tailHash });
    }
    const hash = recordHash(this.tailHash, { seq: this.position, kind: content.kind, epoch: content.epoch, body: content.body as never });
    if (hash !== recorded.hash) {
      throw content === recorded
        ? new ReplayDivergenceError(recorded.seq, recorded.kind, { hash: recorded.hash }, { hash })
        : new ReplayDivergenceError(recorded.seq, recorded.kind, summary(recorded), summary(content));
    }
    this.index++;
    this.position++;
    this.tailHash = recorded.hash;
    this.wroteLast = false;
    this.options.onRecord?.(recorded, true);
    return recorded;
  }

  /** Write a record: appended now, or staged (see the header). */
  private async write<K extends RecordKind>(draft: RecordDraft<K>): Promise<JournalRecord<K>> {
    const writer = this.options.writer;
    if (!writer) throw new ReplayEndedError(this.position);
    if (writer.seq !== this.position) {
      throw new Error(`recorder at seq ${this.position} but the journal ends at seq ${writer.seq - 1}: resume must read back every record after its snapshot`);
    }
    const appended = APPENDED_AT_ONCE.has(draft.kind);
    const record = appended ? await writer.append(draft) : writer.stage(draft);
    this.position = record.seq + 1;
    this.tailHash = record.hash;
    this.wroteLast = true;
    this.options.onRecord?.(record, false);
    if (appended) await nextTurn(); // a durable boundary: let the event loop run (see the header)
    return record;
  }
}

function summary(record: { kind: string; epoch: number; body: unknown }): { kind: string; epoch: number; body: unknown } {
  return { kind: record.kind, epoch: record.epoch, body: record.body };
}

export type { BodyOf };
