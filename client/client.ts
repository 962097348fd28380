/**
 * `createClient(options)` — Weft's client: the calls that validate, write a pin or an inbox message
 * to the store, and return a handle, apart from the executor that runs machines under the lease
 * (`createRuntime`, `weft serve`, `weft worker`). Temporal keeps its Client apart from its Worker the
 * same way: a web server that starts and approves invocations needs neither the domain's actuators
 * to run, nor a model endpoint, nor the secret key that seals.
 *
 * - `start(intent, options?)` checks the options and pins the invocation — the same blobs, metadata
 *   and `invocation.pinned` a runtime's start writes (runtime/start.ts pinInvocation) — and leaves it
 *   `pending` for an executor to take up; asked again with the same pin, it writes nothing.
 * - `approve(id, decision)` and `cancel(id, options)` write to the invocation's inbox exactly as
 *   `weft approve --leave-to-serve` and a cancel from another process do (runtime/approve.ts
 *   requestApproval, runtime/cancel-request.ts requestCancel).
 * - `list(filter?)`, `describe(id)` read what `weft ls` and `weft show` show.
 * - `handle(id)` names an invocation; its `result()` waits, reading the store, until it has ended.
 *
 * A fork stays on the executor (`runtime.fork`): it replays the parent to its boundary under the new
 * pin, which takes the new library's code — nothing a request in an inbox could carry.
 *
 * Every call that names an invocation answers another tenant's (with a scoped client, or a per-call
 * `tenant`) exactly as a missing one: InvocationNotFoundError, `invocation.not_found`.
 */
import { isValidInvocationId, type JournalStore } from '../journal/store.js';
import { requestApproval, type ApprovalDecision } from '../runtime/approve.js';
import { cancelledHandle, type CancelOptions } from '../runtime/cancel.js';
import { requestCancel } from '../runtime/cancel-request.js';
import { checkGenesis } from '../runtime/call-checks.js';
import { ClientCore } from '../runtime/client-core.js';
import { describeInvocation } from '../runtime/describe-load.js';
import type { InvocationDescription } from '../runtime/describe.js';
import { assertInvocationId, InvocationNotFoundError, RuntimeUsageError } from '../runtime/errors.js';
import type { InvocationResult } from '../runtime/handle.js';
import { listInvocations, type InvocationSummary, type ListedStatus } from '../runtime/list.js';
import type { StartOptions } from '../runtime/start-options.js';
import { pinInvocation } from '../runtime/start.js';
import { pause } from '../runtime/pause.js';
import { callScope } from '../runtime/tenant-of.js';
import { ClientHandle, type CancelReceipt, type ResultOptions } from './handle.js';
import { resolveClientOptions, type ClientOptions } from './options.js';

export type { CancelReceipt } from './handle.js';

export class WeftClient {
  private readonly core: ClientCore;

  constructor(options: ClientOptions) {
    const { core, ownsStore } = resolveClientOptions(options);
    this.core = new ClientCore(core, ownsStore);
  }

  /** The store the client writes to (not scoped: whoever holds it reads every tenant's). */
  get store(): JournalStore {
    return this.core.store;
  }

  /**
   * Pin a new invocation and leave it to an executor: options as `runtime.start` takes them (tenant,
   * seed, asOf, id, library, shadow, deadline, stepTimeoutMs; a malformed one is refused before
   * anything is written). Listed `pending` until `weft serve` (or a runtime's `resume(id)`) runs it —
   * to the same journal and fingerprint `runtime.start` would have given.
   */
  async start(intent: string, options?: Partial<StartOptions>): Promise<ClientHandle> {
    const { id } = await pinInvocation(this.core, intent, options);
    return new ClientHandle(this, id, options?.tenant);
  }

  /** A person's decision on an invocation awaiting approval, written to its inbox (`weft approve --leave-to-serve`); the executor records it. */
  async approve(id: string, decision: ApprovalDecision, options: { tenant?: string } = {}): Promise<ClientHandle> {
    this.checkId(id);
    await requestApproval(this.core, id, decision, options);
    return new ClientHandle(this, id, options.tenant);
  }

  /**
   * Ask an invocation to stop: the request goes to its inbox (a request already there is kept) —
   * the runtime that holds it sees it before its next step; resting, `weft serve` or the next resume
   * stops it (compensating the current epoch, ending it cancelled). Already ended: nothing is
   * written (`requested: false`).
   */
  async cancel(id: string, options: Pick<CancelOptions, 'reason' | 'by' | 'tenant'> = {}): Promise<CancelReceipt> {
    this.checkId(id);
    const request = await requestCancel(this.core, id, { by: 'client', ...options }, false);
    return { handle: new ClientHandle(this, id, options.tenant), requested: !('ended' in request) };
  }

  /** The invocations in the store with their status (`weft ls`) — the client's tenant's only, when it is scoped to one. */
  async list(filter: { tenant?: string; status?: ListedStatus } = {}): Promise<InvocationSummary[]> {
    const { tenant, foreign } = callScope(this.core.options.tenant, filter.tenant);
    if (foreign) return [];
    return listInvocations(this.core.store, { ...(tenant === undefined ? {} : { tenant }), ...(filter.status === undefined ? {} : { status: filter.status }) });
  }

  /** What `weft show` shows of one invocation (runtime/describe.ts); an unknown id (or another tenant's) is InvocationNotFoundError. */
  async describe(id: string, options: { tenant?: string } = {}): Promise<InvocationDescription> {
    this.checkId(id);
    const { tenant, foreign } = callScope(this.core.options.tenant, options.tenant);
    if (foreign) throw new InvocationNotFoundError(id, this.core.store.name, tenant);
    if (tenant !== undefined) checkGenesis(this.core, id, await this.core.genesisOf(id), tenant);
    return describeInvocation(this.core.store, id);
  }

  /** A handle on invocation `id` (nothing is read until it is asked something). */
  handle(id: string, options: { tenant?: string } = {}): ClientHandle {
    this.checkId(id);
    return new ClientHandle(this, id, options.tenant);
  }

  /** Wait until invocation `id` has ended (sealed), reading the store every `pollMs`; see ClientHandle.result. */
  async result(id: string, options: ResultOptions & { tenant?: string } = {}): Promise<InvocationResult> {
    this.checkId(id);
    const pollMs = options.pollMs ?? 250;
    if (!(Number.isFinite(pollMs) && pollMs > 0)) throw new RuntimeUsageError('client.bad_poll', `pollMs must be a positive number of milliseconds, got ${JSON.stringify(options.pollMs)}`);
    checkGenesis(this.core, id, await this.core.genesisOf(id), options.tenant ?? this.core.options.tenant);
    for (;;) {
      options.signal?.throwIfAborted();
      const ended = await cancelledHandle(this.core.store, id, this.core.pathOf(id), 'now');
      if (ended) return ended.done;
      await pause(pollMs, options.signal);
    }
  }

  /** Close the store if the client opened it (from `redis`). */
  async close(): Promise<void> {
    if (this.core.ownsStore) await this.core.store.close();
  }

  private checkId(id: string): void {
    assertInvocationId(id, isValidInvocationId);
  }
}

export function createClient(options: ClientOptions): WeftClient {
  return new WeftClient(options);
}
