/**
 * A client's handle on one invocation: its id, and what can be asked of it from any process —
 * `describe()` (what `weft show` shows), `result()` (wait until it ends, reading the store),
 * `approve()` and `cancel()` (a decision or a request written to its inbox, for the executor that
 * holds it or takes it up). It holds no lease and runs nothing: an executor (`weft serve`, a
 * runtime's `resume`) moves the invocation; the handle reads and writes the store.
 */
import type { InvocationResult } from '../runtime/handle.js';
import type { InvocationDescription } from '../runtime/describe.js';
import type { ApprovalDecision } from '../runtime/approve.js';

/** What a cancel found: `requested` — the request is in the inbox; false — it had ended already, and nothing was written (`handle.result()` says how). */
export interface CancelReceipt {
  handle: ClientHandle;
  requested: boolean;
}

/** What a handle asks of the client that made it (client.ts WeftClient). */
export interface ClientCalls {
  describe(id: string, options: { tenant?: string }): Promise<InvocationDescription>;
  result(id: string, options: ResultOptions & { tenant?: string }): Promise<InvocationResult>;
  approve(id: string, decision: ApprovalDecision, options: { tenant?: string }): Promise<ClientHandle>;
  cancel(id: string, options: { reason?: string; by?: string; tenant?: string }): Promise<CancelReceipt>;
}

export interface ResultOptions {
  /** Stop waiting when this aborts: `result()` rejects with the signal's reason (nothing is written either way). */
  signal?: AbortSignal;
  /** How often the store is read while waiting (default 250 ms). */
  pollMs?: number;
}

export class ClientHandle {
  constructor(
    private readonly client: ClientCalls,
    /** The invocation's id. */
    readonly id: string,
    /** The tenant asked for on the call that made this handle (a scoped client's own otherwise). */
    private readonly tenant?: string,
  ) {}

  /** What `weft show` shows: status, the plan per epoch, what it waits for, the commands that move it. */
  describe(): Promise<InvocationDescription> {
    return this.client.describe(this.id, this.scope());
  }

  /**
   * Wait until the invocation has ended — completed, failed, handed off, cancelled or superseded,
   * sealed — and return how (its status, fingerprint, records, and for a cancel what stays done).
   * A resting invocation (awaiting approval, hibernated, asleep, suspended) has not ended: this goes
   * on waiting for whoever moves it; pass a `signal` to stop.
   */
  result(options: ResultOptions = {}): Promise<InvocationResult> {
    return this.client.result(this.id, { ...options, ...this.scope() });
  }

  /** Write a person's decision to its inbox (it must await approval); the executor records it and goes on. */
  approve(decision: ApprovalDecision): Promise<ClientHandle> {
    return this.client.approve(this.id, decision, this.scope());
  }

  /** Ask it to stop: the request goes to its inbox, for the runtime that holds it or the next that takes it up. */
  cancel(options: { reason?: string; by?: string } = {}): Promise<CancelReceipt> {
    return this.client.cancel(this.id, { ...options, ...this.scope() });
  }

  private scope(): { tenant?: string } {
    return this.tenant === undefined ? {} : { tenant: this.tenant };
  }
}
