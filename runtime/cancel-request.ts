/**
 * `runtime.cancel(id, { reason })` — a request first, from any process (cancel.ts says how a cancel
 * stops a run); the request alone (`requestCancel`) is the client's `cancel`:
 *
 * - Validates, writing nothing on a refusal: the invocation is this tenant's (another's is unknown,
 *   as for approve); already ended, it answers with a finished handle and writes nothing; when no
 *   live runtime holds it (so this one will take it up), this runtime's key must be the key in force.
 * - Writes the request to the invocation's inbox (no lease needed) — or keeps the one already there.
 * - Then either takes it up here (no live runtime holds it: resume.ts, which stops it at rest —
 *   `cancel.requested`, the current epoch's effects compensated in reverse order,
 *   `invocation.cancelled` listing the effects that stay done, sealed), or waits, up to `waitMs`,
 *   for the live holder to see the request before its next step and end the journal.
 */
import { LeaseHeldError } from '../journal/errors.js';
import type { InboxMessage, JournalStore } from '../journal/store.js';
import { checkGenesis } from './call-checks.js';
import { cancelledHandle, waitForEnd, type CancelOptions } from './cancel.js';
import type { ClientCore } from './client-core.js';
import { RuntimeUsageError } from './errors.js';
import type { Executor } from './executor.js';
import type { InvocationHandle } from './handle.js';
import { resumeInvocation } from './resume.js';

export async function cancelInvocation(ex: Executor, id: string, options: CancelOptions = {}): Promise<InvocationHandle> {
  const store = ex.store;
  const request = await requestCancel(ex, id, options, true);
  if ('ended' in request) return request.ended;
  const { message, since } = request;
  let heldLive = request.heldLive;
  const tenant = options.tenant ?? ex.options.tenant;
  const resumeOptions = tenant === undefined ? {} : { tenant };
  for (;;) {
    // Held by a live runtime, it is that runtime's to stop (this one need not be able to run it); else this one takes it up.
    if (!heldLive) {
      try {
        return await resumeInvocation(ex, 'cancel', id, { ...resumeOptions, cancel: message });
      } catch (err) {
        if (!(err instanceof LeaseHeldError)) throw err;
      }
    }
    // A live runtime holds it: it sees the request before its next step. Wait for the journal to end, or the lease to come free.
    const waited = await waitForEnd(store, id, ex.pathOf(id), options, { message, since });
    if (waited) return waited;
    heldLive = (await store.holder(id).catch(() => undefined))?.live === true; // read again only after the wait
  }
}

/** What a cancel request found and wrote: the handle of an invocation that had already ended (nothing written), or the request in its inbox. */
export type CancelRequest = { ended: InvocationHandle } | { message: InboxMessage; since: number; heldLive: boolean };

/**
 * Validate a cancel and write it to the invocation's inbox (or keep the one already there) — what
 * `runtime.cancel` does before it takes the invocation up, and all the client's `cancel` does.
 * `takeUp`: the caller takes it up when no live runtime holds it, so this process's key must then
 * be the key in force (refused before the inbox is written).
 */
export async function requestCancel(core: ClientCore, id: string, options: CancelOptions, takeUp: boolean): Promise<CancelRequest> {
  await core.ready();
  const store = core.store;
  checkGenesis(core, id, await core.genesisOf(id), options.tenant ?? core.options.tenant);
  if (options.reason !== undefined && typeof options.reason !== 'string') throw new RuntimeUsageError('runtime.bad_cancel', `a cancel's reason is text, got ${JSON.stringify(options.reason)?.slice(0, 80)}`);
  if (options.by !== undefined && (typeof options.by !== 'string' || options.by.length === 0)) throw new RuntimeUsageError('runtime.bad_cancel', `a cancel's by names who asks (non-empty text), got ${JSON.stringify(options.by)?.slice(0, 80)}`);
  const ended = await cancelledHandle(store, id, core.pathOf(id), 'before');
  if (ended) return { ended };
  // Taken up here (no live runtime holds it), it is sealed by this runtime's key: another key is refused before the inbox is written.
  const heldLive = (await store.holder(id).catch(() => undefined))?.live === true;
  if (takeUp && !heldLive) core.checkSealKey('cancel', id, await core.sealKeyOf(id), false);
  const since = await store.length(id);
  const { message } = await putCancelRequest(store, id, { by: options.by ?? 'runtime', reason: options.reason ?? '', at: core.now().getTime() });
  return { message, since, heldLive };
}

/**
 * Write a cancel to invocation `id`'s inbox — or keep the cancel already waiting there (`kept`): the
 * request in force. The store-level half of every cancel request (requestCancel above, the viewer's
 * Cancel: cli/inspect-actions.ts), after the caller's own checks.
 */
export async function putCancelRequest(store: JournalStore, id: string, request: { by: string; reason: string; at: number }): Promise<{ message: InboxMessage; kept: boolean }> {
  const waiting = await store.peekInbox(id).catch(() => undefined);
  if (waiting?.type === 'cancel') return { message: waiting, kept: true };
  const message: InboxMessage = { type: 'cancel', ...request };
  await store.putInbox(id, message);
  return { message, kept: false };
}
