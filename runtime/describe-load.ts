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
import { isAccessRefused, StoreAccessRefusedError } from '../stores/access-refused.js';
import { isWeftError, JournalIntegrityError, TornTailError } from '../journal/errors.js';
import { readFileSync } from 'node:fs';
import { splitJournalText, verifyRecords } from '../journal/reader.js';
import type { JournalRecord } from '../journal/records.js';
import { isValidInvocationId, journalFileOf, type JournalStore } from '../journal/store.js';
import { invocationDescription, type InvocationDescription } from './describe.js';
import { assertInvocationId, InvocationNotFoundError } from './errors.js';
import { invocationSummary } from './list.js';

/** Describe invocation `id` of `store`; throws RuntimeUsageError for a bad or unknown id. */
export async function describeInvocation(store: JournalStore, id: string): Promise<InvocationDescription> {
  assertInvocationId(id, isValidInvocationId);
  if (!(await exists(store, id))) throw new InvocationNotFoundError(id, store.name);
  const summary = await invocationSummary(store, id);
  let records: JournalRecord[] = [];
  let journalProblem: string | undefined;
  try {
    const stored = await readWhatIsGood(store, id);
    const report = verifyRecords(stored.records);
    records = report.records;
    // A record that does not verify comes first; else the damage the store found after the good records.
    journalProblem = !report.ok && report.error ? report.error.message : stored.problem;
  } catch (err) {
    if (isAccessRefused(err)) throw new StoreAccessRefusedError(store.name, err);
    journalProblem = messageOf(err);
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

/**
 * The journal's records, or — when one cannot be read (a torn tail, a stored line that is not
 * JSON) — the records before it and what is wrong there, read as `weft verify` reads a damaged
 * journal (cli/journal-source.ts): a damaged journal is described up to where it stops.
 */
async function readWhatIsGood(store: JournalStore, id: string): Promise<{ records: JournalRecord[]; problem?: string }> {
  try {
    return { records: await store.read(id) };
  } catch (err) {
    if (!(err instanceof TornTailError || err instanceof JournalIntegrityError)) throw err;
    // A store refuses every read of a journal with a torn tail; a file store's complete lines are read from the file.
    const file = err instanceof TornTailError ? journalFileOf(store, id) : undefined;
    if (file === undefined) return { records: await store.read(id, 0, err.seq), problem: err.message };
    const complete = completeRecords(readFileSync(file, 'utf8'), err.seq);
    return { records: complete.records, problem: complete.problem ?? err.message };
  }
}

/** The records of a journal file's first `count` complete lines, up to the first that is not JSON (then: which one). */
function completeRecords(text: string, count: number): { records: JournalRecord[]; problem?: string } {
  const records: JournalRecord[] = [];
  for (const line of splitJournalText(text).lines.slice(0, count)) {
    try {
      records.push(JSON.parse(line) as JournalRecord);
    } catch (err) {
      return { records, problem: `seq ${records.length}: line ${records.length + 1} is not valid JSON (${(err as Error).message})` };
    }
  }
  return { records };
}

function messageOf(err: unknown): string {
  return isWeftError(err) || err instanceof Error ? err.message : String(err);
}

/** Whether the store holds anything of `id` that the listing would show (the full list is read only when journal and snapshot say nothing). */
async function exists(store: JournalStore, id: string): Promise<boolean> {
  const length = await store.length(id).catch((err: unknown) => {
    if (isAccessRefused(err)) throw new StoreAccessRefusedError(store.name, err);
    return 1;
  });
  if (length > 0) return true;
  if ((await store.getSnapshot(id).catch(() => 'unreadable')) !== undefined) return true;
  return (await store.list()).includes(id);
}
