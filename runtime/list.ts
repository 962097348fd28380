/**
 * Listing a store's invocations and their status — what `weft ls` and `runtime.list()` show. It
 * needs no domain: the status comes from the journal (its sealed ending) and the latest snapshot
 * (its resting state). One damaged journal never breaks or hides the listing: it is listed as
 * `damaged`, with what is wrong and the command that repairs or sets it aside.
 */
import { isWeftError, TornTailError } from '../journal/errors.js';
import type { JournalRecord } from '../journal/records.js';
import type { JournalStore } from '../journal/store.js';
import type { InvocationStatus } from './handle.js';

export type ListedStatus = InvocationStatus | 'running' | 'damaged';

export interface InvocationSummary {
  id: string;
  tenant: string;
  intent: string;
  records: number;
  status: ListedStatus;
  /** Why a damaged invocation is listed as such. */
  problem?: string;
  /** The command that repairs it or sets it aside. */
  fix?: string;
}

/** The status an invocation's journal ending and latest snapshot say it is in. */
export async function invocationStatus(store: JournalStore, id: string): Promise<InvocationStatus | 'running'> {
  const length = await store.length(id);
  if (length === 0) return 'running';
  const last = await store.read(id, Math.max(0, length - 2));
  const kinds = last.map((r) => r.kind);
  if (kinds.includes('invocation.completed')) return 'completed';
  if (kinds.includes('invocation.failed')) return 'failed';
  if (kinds.includes('invocation.handed_off')) return 'handed_off';
  const snapshot = await store.getSnapshot(id);
  const value = (snapshot?.data as { value?: unknown } | undefined)?.value;
  if (value === 'awaitingApproval') return 'awaiting_approval';
  if (value === 'hibernated') return 'hibernated';
  return 'running';
}

export async function listInvocations(store: JournalStore): Promise<InvocationSummary[]> {
  const out: InvocationSummary[] = [];
  for (const id of await store.list()) out.push(await summarize(store, id));
  return out;
}

async function summarize(store: JournalStore, id: string): Promise<InvocationSummary> {
  let first: JournalRecord<'invocation.pinned'> | undefined;
  try {
    first = (await store.read(id, 0, 1))[0] as JournalRecord<'invocation.pinned'> | undefined;
    const base = { id, tenant: first?.body?.tenant ?? '?', intent: first?.body?.intent ?? '?' };
    if (!first || first.kind !== 'invocation.pinned') {
      return { ...base, records: 0, status: 'damaged', problem: 'the journal does not start with invocation.pinned', fix: `move ${id}'s journal aside; it cannot be resumed` };
    }
    if (first.body.invocation !== id) {
      return {
        ...base,
        records: await store.length(id).catch(() => 0),
        status: 'damaged',
        problem: `the journal filed as ${id} belongs to invocation ${first.body.invocation} (copied or moved)`,
        fix: `restore ${id}'s own journal, or move this one aside; resume and replay refuse it`,
      };
    }
    return { ...base, records: await store.length(id), status: await invocationStatus(store, id) };
  } catch (err) {
    const base = { id, tenant: first?.body?.tenant ?? '?', intent: first?.body?.intent ?? '?', records: 0, status: 'damaged' as const };
    if (err instanceof TornTailError) {
      return { ...base, records: err.seq, problem: `torn final record at seq ${err.seq} (a crash mid-append; never acknowledged)`, fix: `weft resume ${id} --quarantine-torn` };
    }
    const problem = isWeftError(err) || err instanceof Error ? err.message : String(err);
    return { ...base, problem, fix: `weft verify on ${id}'s journal names the first bad record; move the journal aside to set it apart` };
  }
}
