/**
 * `runtime.cancel(id, { reason })` — a request first, from any process (cancel.ts says how a cancel
 * stops a run):
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
import type { InboxMessage } from '../journal/store.js';
import { checkGenesis } from './call-checks.js';
import { cancelledHandle, waitForEnd, type CancelOptions } from './cancel.js';
import type { Executor } from './executor.js';
import type { InvocationHandle } from './handle.js';
import { resumeInvocation } from './resume.js';

export async function cancelInvocation(ex: Executor, id: string, options: CancelOptions = {}): Promise<InvocationHandle> {
  await ex.ready();
  const store = ex.store;
  const tenant = options.tenant ?? ex.options.tenant;
  checkGenesis(ex, id, await ex.genesisOf(id), tenant);
  const ended = await cancelledHandle(store, id, ex.pathOf(id), 'before');
  if (ended) return ended;
  // Taken up here (no live runtime holds it), it is sealed by this runtime's key: another key is refused before the inbox is written.
  let heldLive = (await store.holder(id).catch(() => undefined))?.live === true;
  if (!heldLive) ex.checkSealKey('cancel', id, await ex.sealKeyOf(id), false);
  const since = await store.length(id);
  const waiting = await store.peekInbox(id).catch(() => undefined);
  const message: InboxMessage = waiting?.type === 'cancel' ? waiting : { type: 'cancel', by: options.by ?? 'runtime', reason: options.reason ?? '', at: ex.now().getTime() };
  if (waiting?.type !== 'cancel') await store.putInbox(id, message);
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
