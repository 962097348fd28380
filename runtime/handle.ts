/**
 * The handle of a running invocation: progress events, the `done` promise, and the hibernation
 * image. It persists a snapshot whenever the machine reaches an epoch boundary (entering `parse`),
 * waits for a person (`awaitingApproval`), hibernates, or ends — never per step — and releases
 * the invocation's lease when the run stops, so another process can resume it.
 *
 * `done` resolves with the status the run stopped in (completed, failed, handed_off — sealed — or
 * awaiting_approval / hibernated — resumable); it rejects when an actor failed in a way that
 * leaves the invocation resumable (the model unreachable, the store down): nothing is lost, the
 * journal holds everything up to that point, and `runtime.resume(id)` continues from there.
 */
import { EventEmitter } from 'node:events';
import type { Actor } from 'xstate';
import type { JournalRecord } from '../journal/records.js';
import type { JournalStore } from '../journal/store.js';
import type { JournalWriter } from '../journal/writer.js';
import type { InvocationContext, InvocationEvent } from '../machines/context.js';
import type { InvocationMachine } from '../machines/invocation-machine.js';

export type InvocationStatus = 'completed' | 'failed' | 'handed_off' | 'awaiting_approval' | 'hibernated';

export interface InvocationResult {
  id: string;
  status: InvocationStatus;
  fingerprint?: string;
  summary?: string;
  reason?: string;
  journal?: string;
  records?: number;
}

const STOPPING: Record<string, InvocationStatus> = {
  completed: 'completed',
  failed: 'failed',
  handedOff: 'handed_off',
  awaitingApproval: 'awaiting_approval',
  hibernated: 'hibernated',
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

  /** The hibernation image right now (JSON-safe). */
  persistedSnapshot(): unknown {
    return this.actor ? JSON.parse(JSON.stringify(this.actor.getPersistedSnapshot())) : undefined;
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
    this.actor?.stop();
    await this.writer?.close().catch(() => undefined);
  }

  emitRecord(record: JournalRecord, replayed: boolean): void {
    this.emit('record', record, replayed);
  }

  attach(actor: Actor<InvocationMachine>, store: JournalStore, writer: JournalWriter): void {
    this.actor = actor;
    this.store = store;
    this.writer = writer;
    // A run resumed in a resting state (awaiting approval, hibernated) waits there for its event;
    // only a transition INTO a resting state stops the run.
    const initial = String(actor.getSnapshot().value);
    if (initial === 'awaitingApproval' || initial === 'hibernated') this.lastValue = initial;
    actor.subscribe({
      next: (snapshot) => this.onSnapshot(String(snapshot.value), snapshot.context),
      error: (err) => void this.fail(err),
    });
  }

  private onSnapshot(value: string, context: InvocationContext): void {
    if (this.settled || value === this.lastValue) return;
    this.lastValue = value;
    this.emit('state', value, context);
    const stopping = STOPPING[value];
    if (value === 'parse' || stopping) this.persist(context);
    if (stopping) void this.stop(stopping, context);
  }

  private persist(context: InvocationContext): void {
    const actor = this.actor!;
    const data = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
    const snapshot = { seq: context.seq, hash: context.tail, data };
    this.persisting = this.persisting.then(() => this.store!.putSnapshot(this.writer!.currentLease, snapshot));
  }

  private async stop(status: InvocationStatus, context: InvocationContext): Promise<void> {
    this.settled = true;
    try {
      await this.persisting;
      this.actor!.stop();
      await this.writer!.close();
      this.resolveDone({
        id: this.id,
        status,
        records: context.seq,
        ...(context.fingerprint ? { fingerprint: context.fingerprint } : {}),
        ...(context.summary ? { summary: context.summary } : {}),
        ...(context.failure ? { reason: context.failure.message } : {}),
        ...(this.journal ? { journal: this.journal } : {}),
      });
    } catch (err) {
      this.rejectDone(err);
    }
  }

  private async fail(err: unknown): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    await this.persisting.catch(() => undefined);
    await this.writer?.close().catch(() => undefined);
    this.rejectDone(err);
  }
}
