/**
 * `createRuntime(options)` — Weft's library API, and `Runtime`, its public face. Each method is a
 * verb in a file of its own, run over one small core, the executor (executor.ts: the resolved
 * options, the store, the dispatcher, this process's writer id for leases, the libraries and
 * policies known, and the machine's run under a lease). The verbs that only validate and write — a
 * decision to the inbox, a cancel request, a fork's request to rest — say so at their file's top.
 *
 * - `start(intent, opts?)` (start.ts) pins, files the library, policy pack and public key in the
 *   store's blobs by digest, writes `invocation.pinned` and runs the machine; the id of the key that
 *   will seal it goes into the store's unhashed metadata, not the pin (seal-key.ts). Options default
 *   as `weft run` does (start-options.ts); starting an id that exists attaches to it — or fails
 *   clearly if its intent, pin or sealing key differ.
 * - `resume(id)` (resume.ts) re-opens an invocation from its latest snapshot and the journal's tail:
 *   the records after the snapshot are read back, not re-done, then it runs live. Its signing key
 *   must be the key in force (seal-key.ts), unless `rekey` records a change of key first.
 * - `approve(id, decision)` (approve.ts) writes a person's decision to the inbox and continues.
 * - `cancel(id, { reason })` (cancel-request.ts) asks an invocation to stop, from any process.
 * - `fork(parentId, { atEpoch, library?, model?, policy? })` (fork-run.ts) starts a new invocation
 *   from a parent's epoch boundary under a new pin, and ends the parent superseded (fork.ts).
 * - `replay(id | journal)` (replay-source.ts) re-runs the machine over a journal without calling
 *   anything; any difference stops with ReplayDivergenceError. `verify` (verify.ts) checks a
 *   journal's chain and seal offline.
 * - `list()`, `listOpen()` (list.ts) and `serve()` (serve.ts).
 *
 * The options are runtime-options.ts; the refusals every verb makes before it writes, call-checks.ts.
 */
import type { JournalReport } from '../journal/reader.js';
import type { JournalRecord } from '../journal/records.js';
import type { PublicKey } from '../journal/seal.js';
import type { JournalStore } from '../journal/store.js';
import type { Library } from '../htn/library/schema.js';
import { approveInvocation } from './approve.js';
import type { CancelOptions } from './cancel.js';
import { cancelInvocation } from './cancel-request.js';
import { Executor } from './executor.js';
import type { ForkOptions } from './fork.js';
import { forkInvocation } from './fork-run.js';
import type { InvocationHandle } from './handle.js';
import type { InspectionObserver } from './inspection.js';
import { listInvocations, listOpenInvocations, type InvocationSummary } from './list.js';
import type { ReplayResult } from './replay.js';
import { replaySource } from './replay-source.js';
import { resumeInvocation, type ResumeOptions } from './resume.js';
import type { ResolvedOptions, RuntimeOptions } from './runtime-options.js';
import { serve, type ServeOptions } from './serve.js';
import { defaultInvocationId, startInvocation } from './start.js';
import type { StartOptions } from './start-options.js';
import { tenantOfJournalFile } from './tenant-of.js';
import { verifySource } from './verify.js';

export type { StartOptions } from './start-options.js';
export type { ForkOptions } from './fork.js';
export type { CancelOptions } from './cancel.js';
export type { ResumeOptions } from './resume.js';
export type { RuntimeOptions, ResolvedOptions } from './runtime-options.js';
export { RUNTIME_VERSION, BEHAVIOUR_FLAGS } from './version.js';
export { pinnedModelParams } from './pin-check.js';

export class Runtime {
  /** The core every verb runs over (executor.ts). */
  private readonly executor: Executor;

  /** The options with the domain's parts filled in: what this runtime actually runs. */
  readonly options: ResolvedOptions;

  constructor(given: RuntimeOptions) {
    this.executor = new Executor(given);
    this.options = this.executor.options;
  }

  get store(): JournalStore {
    return this.options.store;
  }

  /** The invocation id a start without `id` gets: a digest of tenant, intent, seed and asOf. */
  static defaultId(intent: string, opts: Pick<StartOptions, 'tenant' | 'seed' | 'asOf' | 'shadow'>): string {
    return defaultInvocationId(intent, opts);
  }

  /**
   * Start an invocation. Without options it takes the CLI's defaults (tenant `default`, seed `1`,
   * the domain's `asOf`); a malformed option is refused with a RuntimeUsageError before anything
   * is written (start-options.ts).
   */
  async start(intent: string, options?: Partial<StartOptions>): Promise<InvocationHandle> {
    return startInvocation(this.executor, intent, options);
  }

  /**
   * Continue an invocation from its latest snapshot and the journal after it — a hibernated one is
   * woken, a suspended one retried, a sleeping one goes on if its time has come (else it rests
   * again); one awaiting approval waits for `approve`. A journal whose
   * final record is torn (a crash mid-write) is refused with TornTailError; move that record aside
   * explicitly first (`store.quarantineTornTail(lease)`, or `weft resume --quarantine-torn`).
   */
  async resume(id: string, options: ResumeOptions = {}): Promise<InvocationHandle> {
    return resumeInvocation(this.executor, 'resume', id, options);
  }

  /**
   * A person's decision on an epoch awaiting approval: written to the invocation's inbox in the
   * store (any process may write it), then — unless `{ run: false }`, which leaves it to `serve` or
   * a later `resume` — consumed here: the invocation continues and its journal records the decision.
   * Without `run`, the handle returned is a finished one reporting `awaiting_approval`.
   */
  async approve(id: string, decision: { decision: 'approved' | 'rejected'; by: string; note?: string }, options: { run?: boolean; rekey?: boolean; tenant?: string } = {}): Promise<InvocationHandle> {
    return approveInvocation(this.executor, id, decision, options);
  }

  /**
   * Fork `parentId` at the end of its epoch `atEpoch` onto a new pin (fork.ts): a new invocation —
   * same tenant and intent, the pin with `library`, `model`, `policy` changed as asked — whose journal
   * opens with its pin and `invocation.forked` (the parent, the hash of the parent's `epoch.closed`
   * of that epoch, what was re-pinned, the state at that boundary), then runs live from epoch
   * `atEpoch + 1`. The parent, unless it had ended, must be at rest (hibernated, awaiting approval,
   * asleep, suspended) and free: it ends `superseded` and sealed, naming the fork.
   *
   * Refused with nothing written: an epoch the parent did not close; world effects the parent
   * applied after it and did not compensate (named: the fork would apply them again under new
   * keys); a parent held by a live process (named), running, interrupted, or already superseded by
   * another fork; another tenant's parent (unknown, as resume says); a new pin this runtime cannot
   * run. Crash-safe: the parent is superseded first, naming the fork's id (derived from the parent,
   * the epoch and the new pin), then the fork is written in one durable append; asking for the same
   * fork again finishes what a crash left, or attaches to the fork that exists.
   */
  async fork(parentId: string, options: ForkOptions): Promise<InvocationHandle> {
    return forkInvocation(this.executor, parentId, options);
  }

  /**
   * Ask an invocation to stop (see cancel.ts): the request goes to its inbox, then — if no live
   * runtime holds it — this runtime takes it up and, resting, it stops here: `cancel.requested`, the
   * current epoch's effects compensated in reverse order, `invocation.cancelled` (listing the
   * effects that stay done), sealed. Held by a live runtime, that one sees the request before its
   * next step; this waits (up to `waitMs`) for the journal to end. Already ended: a finished handle
   * with its status, and nothing is written. Another tenant's id is unknown, as for approve.
   */
  async cancel(id: string, options: CancelOptions = {}): Promise<InvocationHandle> {
    return cancelInvocation(this.executor, id, options);
  }

  /**
   * Re-run an invocation over its journal without calling anything; see replay.ts. The source is an
   * id in this runtime's store, a journal file, or records with the libraries they pinned (a bundle).
   * The pin is checked first (library, evaluables, policy, flags, limits — not the model, nor which
   * actuators spend: replay calls none, and reads the spenders from the pin), and a journal filed
   * under another invocation's id is refused.
   */
  async replay(source: string | { journalPath: string } | { records: readonly JournalRecord[]; libraries?: readonly Library[] }, options: { inspect?: InspectionObserver } = {}): Promise<ReplayResult> {
    return replaySource(this.executor, source, options);
  }

  /** Verify a journal (by id or file) offline: chain, schemas, and the seal by `publicKey`. */
  async verify(source: string | { journalPath: string }, publicKey?: PublicKey): Promise<JournalReport> {
    return verifySource(this.executor, source, publicKey);
  }

  /**
   * Keep invocations moving until `options.signal` aborts: take over interrupted ones (their
   * runtime died) and retry transient suspensions with backoff; see serve.ts. Several processes may
   * serve one store; the lease decides who runs each invocation.
   */
  serve(options: ServeOptions = {}): Promise<void> {
    return serve(this, options);
  }

  /** With a dispatcher that wakes sleepers (BullMQ): consume durable sleeps' wake-ups (serve does); undefined otherwise. */
  onWake(wake: (invocation: string) => void): Promise<{ close(): Promise<void> }> | undefined {
    return this.executor.dispatcher?.onWake?.(wake);
  }

  /** Every invocation in the store with its status — of the runtime's tenant only, when it is scoped to one; see list.ts (damaged journals are listed and marked). */
  async list(): Promise<InvocationSummary[]> {
    const all = await listInvocations(this.options.store);
    const scope = this.options.tenant;
    return scope === undefined ? all : all.filter((row) => row.tenant === scope);
  }

  /** The invocations that have not ended (what `serve` polls); with Redis, at a cost that does not grow with the ended ones. */
  async listOpen(options: { repair?: boolean } = {}): Promise<InvocationSummary[]> {
    const open = await listOpenInvocations(this.options.store, options);
    const scope = this.options.tenant;
    return scope === undefined ? open : open.filter((row) => row.tenant === scope);
  }

  /** Where the store keeps this invocation's journal file, when it is a file store. */
  journalPath(id: string): string | undefined {
    const file = this.executor.pathOf(id);
    // Scoped to a tenant, another tenant's journal has no path here (nor has a missing one): read from its pin.
    if (file !== undefined && this.options.tenant !== undefined && tenantOfJournalFile(file) !== this.options.tenant) return undefined;
    return file;
  }

  async close(): Promise<void> {
    await this.executor.close();
  }
}

export function createRuntime(options: RuntimeOptions): Runtime {
  return new Runtime(options);
}
