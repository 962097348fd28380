/**
 * Cancel from any process (`runtime.cancel`, `weft cancel`): the request is written to the
 * invocation's inbox (any process may write it; no lease needed), then
 *
 * - if no live runtime holds the invocation, the canceller takes it up: resting (hibernated,
 *   awaiting approval, asleep, suspended), it is sent `cancel` and stops there; interrupted mid-run,
 *   it simply goes on and its next step sees the request;
 * - if a live runtime holds it, that runtime sees the request before its next step (or as its epoch
 *   closes) and stops; the canceller waits — polling the journal's tail, bounded by `waitMs` — until
 *   the journal is sealed, or the lease comes free (a holder that came to rest without seeing it:
 *   then the canceller takes it up itself). A holder that does not answer in time leaves the
 *   request in the inbox, and the canceller says so.
 *
 * The helpers here are what the cancel verb (cancel-request.ts) and resume.ts need around that:
 * the handle of an invocation that has ended (with what its `invocation.cancelled` says), the event
 * that stops a resting invocation when it is taken up, and the wait.
 */
import type { JournalRecord, Pin } from '../journal/records.js';
import type { InboxMessage, JournalStore } from '../journal/store.js';
import type { InvocationEvent } from '../machines/context.js';
import { restingStates } from '../machines/invocation-machine.js';
import { RuntimeUsageError } from './errors.js';
import { InvocationHandle, type InvocationStatus } from './handle.js';
import { invocationStatus } from './list.js';

export interface CancelOptions {
  /** Why (recorded in `cancel.requested` and `invocation.cancelled`). Default: empty. */
  reason?: string;
  /** Who asks (recorded). Default `runtime`; the CLI passes the user's name. */
  by?: string;
  /** Act only on this tenant's invocation (another's id is unknown, as for approve); default the runtime's scope, which a scoped runtime's call cannot change (tenant-of.ts callScope). */
  tenant?: string;
  /** How long to wait for a live holder to stop (default 60 s). */
  waitMs?: number;
  /** How often the journal's tail is looked at while waiting (default 200 ms). */
  pollMs?: number;
}

/** The resting states: no actor runs, and an event (resume, a decision, a cancel) moves them. */
export const RESTING_STATES: ReadonlySet<string> = new Set<string>(restingStates);

/** A running invocation looks at its inbox before a step at most this often (and always as an epoch closes). */
export const INBOX_LOOK_MS = 100;

/**
 * The handle of a sealed invocation, or undefined when it has not ended. `when`: `before` — the
 * caller came to cancel it and it had already ended otherwise; `meanwhile` — it ended otherwise
 * while the caller waited for its runtime to see the cancel (the reason says so).
 */
export async function cancelledHandle(store: JournalStore, id: string, journal: string | undefined, when: 'before' | 'meanwhile' | 'now'): Promise<InvocationHandle | undefined> {
  const tail = await store.tail(id);
  if (tail?.kind !== 'invocation.sealed') return undefined;
  const seal = (tail as JournalRecord<'invocation.sealed'>).body;
  const status = (await invocationStatus(store, id)) as InvocationStatus;
  const ending = status === 'cancelled' ? ((await store.read(id, Math.max(0, tail.seq - 1), tail.seq))[0] as JournalRecord<'invocation.cancelled'> | undefined) : undefined;
  const cancelled = ending?.kind === 'invocation.cancelled' ? ending.body : undefined;
  const reason = cancelled
    ? `cancelled by ${cancelled.by}${cancelled.reason ? `: ${cancelled.reason}` : ''}`
    : when === 'before'
      ? `it had already ended ${status}; nothing was cancelled`
      : when === 'meanwhile'
        ? `it ended ${status} before its runtime saw the cancel; nothing was cancelled`
        : undefined;
  return InvocationHandle.finished({
    id,
    status,
    fingerprint: seal.fingerprint,
    records: tail.seq + 1,
    journal,
    ...(reason === undefined ? {} : { reason }),
    ...(cancelled ? { cancelled: { by: cancelled.by, reason: cancelled.reason, kept: cancelled.kept } } : {}),
    // Asked to cancel it, the caller finds it ended another way: nothing was cancelled (a flag, not a sentence to match).
    ...(!cancelled && when !== 'now' ? { alreadyEnded: true } : {}),
  });
}

/**
 * The event that stops a resting invocation as it is taken up, or undefined: the cancel or passed
 * deadline its journal holds right after the snapshot (a run that recorded it and stopped before
 * acting on it); where the journal ends at the snapshot, a cancel waiting in the inbox, else the
 * pinned deadline if it has passed by `now`. A journal that goes on past the snapshot with anything
 * else is read back first (the run goes on, and sees the cancel or the deadline before its next step).
 */
export async function stopEventFor(store: JournalStore, id: string, existing: readonly JournalRecord[], pin: Pin, now: Date, asked?: InboxMessage): Promise<InvocationEvent | undefined> {
  const next = existing.find((r) => r.kind !== 'invocation.rekeyed');
  if (next?.kind === 'cancel.requested') {
    const b = (next as JournalRecord<'cancel.requested'>).body;
    return { type: 'cancel', by: b.by, reason: b.reason, at: b.at };
  }
  if (next?.kind === 'deadline.passed') {
    const b = (next as JournalRecord<'deadline.passed'>).body;
    return { type: 'deadline', deadline: b.deadline, at: b.at };
  }
  if (next !== undefined) return undefined;
  // The cancel this process was asked for wins over whatever the inbox holds now (an approval may have written over it).
  const waiting = await store.peekInbox(id).catch(() => undefined);
  const message = asked?.type === 'cancel' ? asked : waiting;
  if (message?.type === 'cancel') return { type: 'cancel', by: message.by, reason: message.reason, at: new Date(message.at).toISOString() };
  if (pin.deadline !== undefined && now.getTime() >= Date.parse(pin.deadline)) return { type: 'deadline', deadline: pin.deadline, at: now.toISOString() };
  return undefined;
}

/**
 * Wait while a live runtime holds the invocation: the handle once its journal is sealed, or
 * undefined once no live runtime holds it (the caller takes it up). Throws, saying the request
 * stays in the inbox, when `waitMs` passes first.
 */
export async function waitForEnd(store: JournalStore, id: string, journal: string | undefined, options: Pick<CancelOptions, 'waitMs' | 'pollMs'>, request?: { message: InboxMessage; since: number }): Promise<InvocationHandle | undefined> {
  const waitMs = options.waitMs ?? 60_000;
  const pollMs = options.pollMs ?? 200;
  const until = Date.now() + waitMs;
  for (;;) {
    const ended = await cancelledHandle(store, id, journal, 'meanwhile');
    if (ended) {
      // A request its runtime never saw (the run ended first) must not linger in the inbox.
      await store.clearInbox(id).catch(() => undefined);
      return ended;
    }
    const holder = await store.holder(id).catch(() => undefined);
    if (!holder?.live) return undefined;
    // The inbox holds one message, and another process may have written over the cancel (an approval
    // racing it) or cleared it (a recorded decision): until the journal holds the cancel, it is asked again.
    if (request && (await store.peekInbox(id).catch(() => undefined))?.type !== 'cancel') {
      const since = await store.read(id, request.since).catch(() => []);
      if (!since.some((r) => r.kind === 'cancel.requested')) await store.putInbox(id, request.message).catch(() => undefined);
    }
    if (Date.now() >= until) {
      throw new RuntimeUsageError(
        'runtime.cancel_unanswered',
        `invocation ${id} is held by a running runtime (${holder.writer}) that did not stop within ${Math.round(waitMs / 1000)} s; ` +
          `the cancel stays in its inbox: that runtime sees it before its next step, and any runtime that takes the invocation up (weft resume ${id}, weft serve) cancels it`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
