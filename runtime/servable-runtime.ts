/**
 * What `serve` needs of a runtime: its store and domain, the open invocations, a resume, and the
 * wake-ups of durable sleeps. serve.ts depends on this shape, not on runtime.ts, so that the
 * runtime (whose `serve()` calls serve.ts) and serve do not import each other. `Runtime` has it.
 */
import type { Library } from '../htn/library/schema.js';
import type { JournalStore } from '../journal/store.js';
import type { InvocationHandle } from './handle.js';
import type { InvocationSummary } from './list.js';

export interface ServableRuntime {
  readonly store: JournalStore;
  readonly options: { readonly domain?: { readonly name: string; readonly libraries: readonly Library[] } | undefined; readonly tenant?: string | undefined };
  /** Re-open an invocation where its journal stands (LeaseHeldError when another runtime holds it). */
  resume(id: string): Promise<InvocationHandle>;
  /** The invocations that have not ended (see list.ts listOpenInvocations). */
  listOpen(options?: { repair?: boolean }): Promise<InvocationSummary[]>;
  /** A consumer of the dispatcher's wake-ups, when it has them (BullMQ's delayed jobs). */
  onWake(wake: (invocation: string) => void): Promise<{ close(): Promise<void> }> | undefined;
}
