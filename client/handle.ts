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
import type { WeftClient, CancelReceipt } from './client.js';

export interface ResultOptions {
  /** Stop waiting when this aborts: `result()` rejects with the signal's reason (nothing is written either way). */
  signal?: AbortSignal;
  /** How often the store is read while waiting (default 250 ms). */
  pollMs?: number;
}

export class ClientHandle {
  constructor(
    private readonly client: WeftClient,
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
