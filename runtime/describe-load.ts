/**
 * Reading what a store holds for one invocation and describing it (describe.ts) — the effectful
 * half of `weft show`, and what the viewer calls. Reads only: no lease, no write, no domain.
 *
 * What it reads, as the listing does (list.ts): the listing's row (status, reason, fix), the
 * journal — checked record by record (chain, schemas) so the description trusts only records that
 * verified, and says where the journal stops verifying —, the latest snapshot, the status note and
 * the inbox. A damaged invocation is described too (the listing's row says what is wrong); only an
 * id that is not valid, or that names nothing in the store, is an error (RuntimeUsageError).
 */
import { isWeftError } from '../journal/errors.js';
import { verifyRecords } from '../journal/reader.js';
import type { JournalRecord } from '../journal/records.js';
import { isValidInvocationId, type JournalStore } from '../journal/store.js';
import { invocationDescription, type InvocationDescription } from './describe.js';
import { RuntimeUsageError } from './errors.js';
import { invocationSummary } from './list.js';

/** Describe invocation `id` of `store`; throws RuntimeUsageError for a bad or unknown id. */
export async function describeInvocation(store: JournalStore, id: string): Promise<InvocationDescription> {
  if (!isValidInvocationId(id)) {
    throw new RuntimeUsageError('runtime.bad_invocation_id', `${JSON.stringify(id.slice(0, 80))} is not an invocation id (letters, digits, '.', '_' and '-', at most 200); weft ls lists them`);
  }
  if (!(await exists(store, id))) throw new RuntimeUsageError('runtime.unknown_invocation', `no invocation ${id} in ${store.name}; weft ls lists them`);
  const summary = await invocationSummary(store, id);
  let records: JournalRecord[] = [];
  let journalProblem: string | undefined;
  try {
    const report = verifyRecords(await store.read(id));
    records = report.records;
    if (!report.ok && report.error) journalProblem = report.error.message;
  } catch (err) {
    journalProblem = isWeftError(err) || err instanceof Error ? err.message : String(err);
  }
  const [snapshot, note, inbox] = await Promise.all([
    store.getSnapshot(id).catch(() => undefined),
    store.getStatus(id).catch(() => undefined),
    store.peekInbox(id).catch(() => undefined),
  ]);
  return invocationDescription({
    summary,
    records,
    ...(journalProblem === undefined ? {} : { journalProblem }),
    ...(snapshot === undefined ? {} : { snapshot }),
    ...(note === undefined ? {} : { note }),
    ...(inbox === undefined ? {} : { inbox }),
  });
}

/** Whether the store holds anything of `id` that the listing would show (the full list is read only when journal and snapshot say nothing). */
async function exists(store: JournalStore, id: string): Promise<boolean> {
  if ((await store.length(id).catch(() => 1)) > 0) return true;
  if ((await store.getSnapshot(id).catch(() => 'unreadable')) !== undefined) return true;
  return (await store.list()).includes(id);
}
