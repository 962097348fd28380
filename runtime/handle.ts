/**
 * The handle of a running invocation: progress events, the `done` promise, and the hibernation
 * image. It persists a snapshot whenever the machine reaches an epoch boundary after the first
 * (entering `parse`), waits for a person (`awaitingApproval`), for a timer, hibernates or suspends —
 * never per step, and not when the run ends sealed — after making the journal durable up to it
 * (the recorder stages records that announce no call; see recorder.ts), and releases
 * the invocation's lease when the run stops, so another process can resume it.
 *
 * `done` resolves with the status the run stopped in: completed, failed, handed_off, cancelled (sealed), or
 * awaiting_approval, hibernated, suspended (resumable). `suspended` carries its reason and class:
 * a recorded model or observation failure (transient after the pinned attempts, credentials, a
 * moved endpoint) or a runtime-side error (the store down, a bug) — nothing is lost, the journal
 * holds everything up to that point, and `runtime.resume(id)` continues from there. A run whose
 * last write failed (or whose reply was lost: its outcome unknown) is suspended on that write, never
 * reported in the state it was reaching, with no records count or fingerprint. A runtime-side
 * reason cannot be hashed into the journal: it goes to the store's status index, which `weft ls`
 * shows. `done` rejects only if the machine itself breaks outside its actors.
 */
import { EventEmitter } from 'node:events';
import type { Actor } from 'xstate';
import { FencedError, isWeftError } from '../journal/errors.js';
import type { JournalRecord } from '../journal/records.js';
import { SEALED_STATUSES, type JournalStore } from '../journal/store.js';
import type { JournalWriter } from '../journal/writer.js';
import { handedOffReason } from '../machines/authored-allowance.js';
import type { InvocationContext, InvocationEvent, KeptEffect, Suspension } from '../machines/context.js';
import type { InvocationMachine } from '../machines/invocation-machine.js';

export type InvocationStatus = 'completed' | 'failed' | 'handed_off' | 'cancelled' | 'superseded' | 'awaiting_approval' | 'waiting_timer' | 'hibernated' | 'suspended';

export interface InvocationResult {
  id: string;
  status: InvocationStatus;
  fingerprint?: string;
  summary?: string;
  reason?: string;
  /** For a suspended invocation: the class of its suspension and the command that continues it. */
  suspension?: { class: Suspension['class']; code: string; state: string; fix: string };
  /** For an invocation waiting on a durable sleep step: when it is due (ISO 8601). */
  wakeAt?: string;
  /** For a runtime-side suspension: the error itself (not serialized anywhere). */
  error?: unknown;
  journal?: string;
  records?: number;
  /** For a cancelled invocation: who cancelled it, why, and the world effects that stay done (its `invocation.cancelled`). */
  cancelled?: { by: string; reason: string; kept: KeptEffect[] };
  /** For a cancel: the invocation ended another way (before the request, or before its runtime saw it), so nothing was cancelled. */
  alreadyEnded?: true;
}

const STOPPING: Record<string, InvocationStatus> = {
  completed: 'completed',
  failed: 'failed',
  handedOff: 'handed_off',
  superseded: 'superseded',
  cancelled: 'cancelled',
  awaitingApproval: 'awaiting_approval',
  awaitingTimer: 'waiting_timer',
  hibernated: 'hibernated',
  suspended: 'suspended',
};

export class InvocationHandle extends EventEmitter {
  readonly done: Promise<InvocationResult>;
  private resolveDone!: (result: InvocationResult) => void;
  private rejectDone!: (err: unknown) => void;
  private actor?: Actor<InvocationMachine>;
  private writer?: JournalWriter;
  private store?: JournalStore;
  private lastValue: string | undefined;
  private persisting: Promise<void> = Promise.resolve();
  private settled = false;
  private actorError: unknown;
  private renewal: NodeJS.Timeout | undefined;

  constructor(
    readonly id: string,
    readonly journal: string | undefined,
  ) {
    super();
    this.done = new Promise((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    this.done.catch(() => undefined); // callers who never await must not crash the process
  }

  /** A handle for an invocation that had already ended when it was asked for. */
  static finished(result: Omit<InvocationResult, 'status' | 'journal'> & { status: InvocationStatus | 'running'; journal: string | undefined }): InvocationHandle {
    const handle = new InvocationHandle(result.id, result.journal);
    handle.settled = true;
    const { journal, status, ...rest } = result;
    handle.resolveDone({ ...rest, status: status === 'running' ? 'completed' : status, ...(journal ? { journal } : {}) });
    return handle;
  }

  /** The machine's current state and context (for the CLI, tests and the inspector). */
  get state(): { value: string; context: InvocationContext } | undefined {
    const snap = this.actor?.getSnapshot();
    return snap ? { value: String(snap.value), context: snap.context } : undefined;
  }

  /**
   * The hibernation image right now (JSON-safe). Mid-epoch, some records the run has chained may not
   * be durable yet (see recorder.ts); to keep an image to resume from, use `durableSnapshot()`.
   */
  persistedSnapshot(): unknown {
    return this.actor ? JSON.parse(JSON.stringify(this.actor.getPersistedSnapshot())) : undefined;
  }

  /**
   * The hibernation image right now and the journal position it stands on (`runtime.resume(id,
   * { snapshot: data, at: { seq, tail } })`), returned once every record up to that position is
   * durable. Undefined when the run is not live.
   */
  async durableSnapshot(): Promise<{ data: unknown; seq: number; tail: string } | undefined> {
    const snap = this.actor?.getSnapshot();
    if (!snap || !this.writer) return undefined;
    const image = { data: this.persistedSnapshot(), seq: snap.context.seq, tail: snap.context.tail };
    await this.writer.flush();
    return image;
  }

  send(event: InvocationEvent): void {
    this.actor?.send(event);
  }

  /** Ask the run to hibernate at its next epoch boundary. */
  hibernate(): void {
    this.send({ type: 'hibernate' });
  }

  /** Stop without persisting anything more (a simulated crash; the journal stays as it is). */
  async abandon(): Promise<void> {
    this.settled = true;
    clearInterval(this.renewal);
    this.actor?.stop();
    await this.writer?.close().catch(() => undefined);
  }

  /**
   * 'record' (record, replayed): each record the run passes, as it is chained — a staged one is not
   * durable yet (recorder.ts). 'durable' (record, replayed): each record once it is in the journal —
   * read back, or its write acknowledged — which is what a person may be shown as done.
   */
  emitRecord(record: JournalRecord, replayed: boolean): void {
    if (record.kind === 'approval.requested') this.approvalReason = (record as JournalRecord<'approval.requested'>).body.reason;
    this.emit('record', record, replayed);
    if (replayed) this.emit('durable', record, true);
  }

  attach(actor: Actor<InvocationMachine>, store: JournalStore, writer: JournalWriter, leaseTtlMs = 30_000): void {
    this.actor = actor;
    this.store = store;
    this.writer = writer;
    writer.onDurable((records) => {
      for (const record of records) this.emit('durable', record, false);
    });
    // Hold the lease while the run lives (a slow model or worker must not look like a dead runtime).
    // A failed renewal is not acted on here: if the lease was lost, the next append is fenced.
    this.renewal = setInterval(() => void writer.renew(leaseTtlMs).catch(() => undefined), Math.max(50, Math.floor(leaseTtlMs / 3)));
    this.renewal.unref();
    // A run resumed in a resting state (awaiting approval, hibernated) waits there for its event;
    // only a transition INTO a resting state stops the run.
    const initial = String(actor.getSnapshot().value);
    if (initial === 'awaitingApproval' || initial === 'awaitingTimer' || initial === 'hibernated' || initial === 'suspended') this.lastValue = initial;
    // Running again: an earlier note (a suspension) no longer says where the invocation stands.
    this.persisting = this.persisting.then(() => store.clearStatus(this.id)).then(
      () => void (this.noteCleared = true),
      () => undefined,
    );
    actor.subscribe({
      next: (snapshot) => this.onSnapshot(String(snapshot.value), snapshot.context),
      error: (err) => void this.fail(err),
    });
  }

  /**
   * Stop at the resting state the run was resumed in, when nothing came to move it on (an approval
   * with no decision in its inbox): the handle settles with that status — what `weft approve` and
   * serve act on — instead of holding the lease, and the process, for an event only another command
   * brings. A run that moved on, or ended, is left as it is.
   */
  rest(): void {
    const status = STOPPING[this.lastValue ?? ''];
    if (this.settled || status === undefined || this.actor === undefined || String(this.actor.getSnapshot().value) !== this.lastValue) return;
    void this.stop(status, this.actor.getSnapshot().context);
  }

  private onSnapshot(value: string, context: InvocationContext): void {
    if (this.settled || value === this.lastValue) return;
    this.lastValue = value;
    this.emit('state', value, context);
    const stopping = STOPPING[value];
    // A snapshot at every epoch boundary after the first (the first would hold only the pin and
    // the request) and at every resting state; a sealed run is never resumed, so it gets none.
    if ((value === 'parse' && context.epoch > 1) || (stopping && !SEALED_STATUSES.has(stopping))) this.persist(context);
    if (stopping) void this.stop(stopping, context);
  }

  /**
   * Save the hibernation image, after the records it stands on are durable (staged ones are written
   * first). A failure is kept for `stop` to report, and never stops a later link of the chain.
   */
  private persist(context: InvocationContext): void {
    const actor = this.actor!;
    const data = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
    const snapshot = { seq: context.seq, hash: context.tail, data };
    this.persisting = this.persisting
      .then(async () => {
        await this.writer!.flush();
        await this.store!.putSnapshot(this.writer!.currentLease, snapshot);
      })
      .catch((err: unknown) => {
        this.snapshotError = err;
      });
  }

  /** Why the latest snapshot could not be saved, if it could not. */
  private snapshotError: unknown;
  /** The policy's reason of the latest approval request this run recorded or read back (an awaiting_approval result's reason). */
  private approvalReason: string | undefined;
  /** Whether an earlier status note is known to be gone (cleared when the run started). */
  private noteCleared = false;

  /** Called with the result before `done` resolves (the runtime schedules a durable sleep's wake-up). */
  beforeSettle?: (result: InvocationResult) => Promise<void>;

  /** The error behind a runtime-side suspension (set by the runtime's actors). */
  noteActorError(err: unknown): void {
    this.actorError = err;
  }

  private async stop(reached: InvocationStatus, context: InvocationContext): Promise<void> {
    this.settled = true;
    clearInterval(this.renewal);
    let status = reached;
    let suspension: Pick<Suspension, 'class' | 'code' | 'message'> & { state: string } | undefined = status === 'suspended' ? (context.suspension ?? undefined) : undefined;
    let trouble: string | undefined;
    let fenced = false;
    /** False when the records the run stopped on are not (known to be) durable. */
    let saved = true;
    await this.persisting;
    if (this.snapshotError !== undefined) {
      // The journal is the truth: a resume starts from the previous snapshot and reads the rest back.
      trouble = `the snapshot could not be saved (${message(this.snapshotError)})`;
    }
    try {
      await this.writer!.flush();
    } catch (err) {
      // Records the run went on from are not durable (or, when a reply was lost, may not be): as far
      // as the store knows it has not reached `reached` — not even a suspension it recorded. It is
      // suspended (runtime) on the write itself, resumable from what is durable; never reported done.
      // A writer whose lease was taken over (fenced) no longer owns the invocation: the new holder
      // goes on from what is durable, and writes its notes; this one says so and writes nothing.
      fenced = err instanceof FencedError;
      saved = false;
      status = 'suspended';
      suspension = { state: String(this.actor!.getSnapshot().value), class: 'runtime', ...unsaved(err) };
      trouble = undefined;
    }
    this.actor!.stop();
    if (fenced) {
      // nothing: the status note is the new holder's
    } else if (suspension) {
      await this.store!.putStatus(this.id, { status: 'suspended', reason: suspension.message, class: suspension.class, code: suspension.code, fix: suspensionFix(this.id, suspension), at: Date.now() }).catch(() => undefined);
    } else if (!this.noteCleared) {
      // The note the start meant to clear may still be there: it must not outlive this run.
      await this.store!.clearStatus(this.id).catch(() => undefined);
    }
    await this.writer!.close().catch((err: unknown) => {
      if (status !== 'suspended') trouble = `the lease could not be released (${(err as Error).message}); it expires on its own`;
    });
    const cancel = status === 'cancelled' && context.stop?.kind === 'cancel' ? { by: context.stop.by, reason: context.stop.reason, kept: context.kept ?? [] } : undefined;
    const reason = suspension ? suspension.message : status === 'awaiting_approval' ? this.approvalReason : cancel ? `cancelled by ${cancel.by}${cancel.reason ? `: ${cancel.reason}` : ''}` : status === 'handed_off' && context.failure ? handedOffReason(context) : context.failure?.message;
    const result: InvocationResult = {
      id: this.id,
      status,
      ...(saved ? { records: context.seq } : {}),
      ...(context.fingerprint && saved ? { fingerprint: context.fingerprint } : {}),
      ...(context.summary ? { summary: context.summary } : {}),
      ...(reason ? { reason: trouble ? `${reason}; ${trouble}` : reason } : trouble ? { reason: trouble } : {}),
      ...(suspension ? { suspension: { class: suspension.class, code: suspension.code, state: suspension.state, fix: suspensionFix(this.id, suspension) } } : {}),
      ...(suspension?.class === 'runtime' && this.actorError !== undefined && saved ? { error: this.actorError } : {}),
      ...(status === 'waiting_timer' && context.timer ? { wakeAt: context.timer.until } : {}),
      ...(this.journal ? { journal: this.journal } : {}),
      ...(cancel ? { cancelled: cancel } : {}),
    };
    await this.beforeSettle?.(result).catch(() => undefined);
    this.resolveDone(result);
  }

  private async fail(err: unknown): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    clearInterval(this.renewal);
    await this.persisting.catch(() => undefined);
    await this.writer?.close().catch(() => undefined);
    this.rejectDone(err);
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Why the journal's last write failed, as a suspension: taken over (fenced); an append whose reply
 * was lost (its outcome unknown: the store's message says so); the store unreachable (nothing was
 * written); or anything else the store threw.
 */
function unsaved(err: unknown): { code: string; message: string } {
  if (err instanceof FencedError) return { code: 'journal.fenced', message: `another runtime took this invocation over (${message(err)}); it goes on there from what is durable` };
  if (isWeftError(err) && err.code === 'journal.outcome_unknown') return { code: err.code, message: err.message };
  if (isWeftError(err) && err.code === 'store.unreachable') return { code: err.code, message: `the journal could not be saved: ${err.message}` };
  return { code: 'journal.unsaved', message: `the journal could not be saved (${message(err)}); it resumes from what is durable once the store is back` };
}

/** Codes of a run stopped by its store going away: resumed once the store answers again. */
const STORE_DOWN: ReadonlySet<string> = new Set(['store.unreachable', 'journal.outcome_unknown']);

/**
 * The command that continues a suspended invocation, by what suspended it: a command that runs as
 * printed, with what to do first on the line before it and any remark behind a `#` (the CLI adds
 * its location flags after the id: cli/hints.ts).
 */
export function suspensionFix(id: string, suspension: Pick<Suspension, 'class'> & { code?: string }): string {
  switch (suspension.class) {
    case 'credentials':
      return `fix the model key (WEFT_MODEL_KEY), then: weft resume ${id}`;
    case 'endpoint':
      return `fix the model endpoint (--model-url), then: weft resume ${id}`;
    case 'transient':
      return `weft resume ${id}   # or leave it to weft serve, which retries with backoff`;
    default:
      return STORE_DOWN.has(suspension.code ?? '') ? `weft resume ${id}   # once the store is reachable again` : `weft resume ${id}   # once the cause is fixed`;
  }
}
