/**
 * How `weft inspect` carries out Cancel, Resume and Fork asked for in its page
 * (inspector/page-actions.ts's PageActions):
 *
 * - cancel: the `cancel` inbox message the client's cancel writes (runtime/cancel-request.ts), after
 *   the same checks (known, not ended; a cancel already waiting is kept) — the live holder, or
 *   `weft serve` / `weft resume`, acts on it and records `cancel.requested` naming who asked;
 * - resume: a `resume` inbox message on a hibernated or suspended invocation, left to `weft serve`
 *   (runtime/serve.ts) or a later `weft resume`, as a decision is;
 * - fork: `runtime.fork` over the invocation's workspace opened as `weft fork` opens it
 *   (cli/open-invocation.ts: its domain from `--domain`, the module it recorded, or the built-in it
 *   pinned; its pinned model), then the fork runs on in this process, as `weft fork` runs it.
 *
 * With `--read-only` none is taken; a Redis that fails the writers' durability check takes none
 * (the same verdict as the approver's: cli/inspect-approver.ts).
 */
import { hostname } from 'node:os';
import type { ActionOutcome, ActionRequest, PageAction, PageActions } from '../inspector/page-actions.js';
import type { Approver } from '../inspector/approve.js';
import { isValidInvocationId, type JournalStore } from '../journal/store.js';
import { InvocationNotFoundError, RuntimeUsageError } from '../runtime/errors.js';
import { invocationSummary } from '../runtime/list.js';
import { readInvocationMeta, writeInvocationMeta } from './invocation-meta.js';
import { openWorkspaceFor } from './open-invocation.js';
import type { StoreChoice } from './store-choice.js';

/** This viewer as recorded beside the name typed in its page. */
export function viewerIdentity(): string {
  return `inspect:${hostname()}:${process.pid}`;
}

/** The PageActions of a viewer over `store` (opened as `choice` says); `writable` is the approver's verdict on the store. */
export function inspectActions(store: JournalStore, choice: StoreChoice, options: { domain: string | undefined; readOnly: boolean; writable: Approver['writable'] }): PageActions {
  const available = options.writable.ok ? { ok: true as const } : { ok: false as const, reason: options.writable.reason };
  return {
    readOnly: options.readOnly,
    identity: viewerIdentity(),
    available: { cancel: available, resume: available, fork: available },
    act: (action: PageAction, id: string, request: ActionRequest): Promise<ActionOutcome> => {
      if (!isValidInvocationId(id)) throw new RuntimeUsageError('runtime.bad_invocation_id', `${JSON.stringify(id.slice(0, 80))} is not an invocation id`);
      if (action === 'cancel') return requestCancel(store, id, request);
      if (action === 'resume') return requestResume(store, id, request);
      return fork(choice, options.domain, id, request);
    },
  };
}

/** The cancel request, written as the client's is (runtime/cancel-request.ts putCancelRequest): refused on an ended invocation; one already waiting is kept. */
async function requestCancel(store: JournalStore, id: string, request: ActionRequest): Promise<ActionOutcome> {
  await notEnded(store, id, 'cancelled');
  // Loaded here, not at start: runtime/cancel-request.ts brings the machine, which `weft inspect` starts without (cli-startup).
  const { putCancelRequest } = await import('../runtime/cancel-request.js');
  const { message, kept } = await putCancelRequest(store, id, { by: request.by, reason: request.reason, at: Date.now() });
  if (kept) return { requested: false, said: `a cancel by ${message.by} already waits in its inbox` };
  return { requested: true, said: `cancel requested by ${request.by}: the runtime holding it stops it before its next step; resting, weft serve (or weft resume) stops it` };
}

/** The resume request, for a hibernated or suspended invocation with nothing else in its inbox; one already waiting is kept. */
async function requestResume(store: JournalStore, id: string, request: ActionRequest): Promise<ActionOutcome> {
  await notEnded(store, id, 'resumed');
  const row = await invocationSummary(store, id);
  if (row.status !== 'hibernated' && row.status !== 'suspended') throw new RuntimeUsageError('runtime.not_resumable', `invocation ${id} is ${row.status.replace(/_/g, ' ')}, not hibernated or suspended: there is nothing for a resume to wake`);
  const waiting = await store.peekInbox(id).catch(() => undefined);
  if (waiting?.type === 'resume') return { requested: false, said: `a resume by ${waiting.by} already waits in its inbox` };
  if (waiting !== undefined) throw new RuntimeUsageError('runtime.inbox_busy', `invocation ${id} has a ${waiting.type} by ${waiting.by} waiting in its inbox; a resume cannot replace it`);
  await store.putInbox(id, { type: 'resume', by: request.by, reason: request.reason, at: Date.now() });
  return { requested: true, said: `resume requested by ${request.by}: weft serve carries it out (or weft resume ${id})` };
}

/** A fork at the end of `request.atEpoch`, made as `weft fork` makes it; the fork then runs on here. */
async function fork(choice: StoreChoice, domain: string | undefined, parent: string, request: ActionRequest): Promise<ActionOutcome> {
  const atEpoch = request.atEpoch!;
  const ws = await openWorkspaceFor({ dir: choice.dir, id: parent, domain, model: { url: undefined, name: undefined }, ...(choice.redis ? { store: choice } : {}) });
  let handle;
  try {
    const why = `forked from the page by ${request.by} at the end of epoch ${atEpoch}${request.reason ? `: ${request.reason}` : ''}`;
    // A parent held live is refused at once (a page waits for no other process): hibernate or cancel it first.
    handle = await ws.runtime.fork(parent, { atEpoch, reason: why, waitMs: 0 });
  } catch (err) {
    await ws.runtime.close().catch(() => undefined);
    throw err;
  }
  // The workspace remembers how the fork runs, as weft fork does.
  if (!readInvocationMeta(ws.dir, handle.id)) writeInvocationMeta(ws.dir, handle.id, { domain: ws.domainRef });
  handle.done
    .then((result) => process.stdout.write(`weft inspect: fork ${handle.id} of ${parent} (asked by ${request.by}) ended ${result.status}\n`))
    .catch((err: unknown) => process.stderr.write(`weft inspect: fork ${handle.id} of ${parent}: ${err instanceof Error ? err.message : String(err)}\n`))
    .finally(() => void ws.runtime.close().catch(() => undefined));
  return { requested: true, fork: handle.id, said: `forked ${handle.id} from the end of epoch ${atEpoch}; it runs on in this viewer` };
}

/** Refuse (RuntimeUsageError) an action on an invocation that is unknown or has ended. */
async function notEnded(store: JournalStore, id: string, verb: string): Promise<void> {
  const tail = await store.tail(id);
  if (tail === undefined) throw new InvocationNotFoundError(id, store.name);
  if (tail.kind === 'invocation.sealed') throw new RuntimeUsageError('runtime.ended', `invocation ${id} has ended: it cannot be ${verb}`);
}
