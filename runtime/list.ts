/**
 * Listing a store's invocations and their status — what `weft ls` and `runtime.list()` show. It
 * needs no domain: the status comes from the journal (its sealed ending), the latest snapshot (its
 * resting state) and the store's status index (the runtime's unhashed note: why it stopped when it
 * could not say so in the journal). One damaged journal never breaks or hides the listing: it is
 * listed as `damaged`, with what is wrong and the command that repairs or sets it aside. A
 * suspended invocation is listed with why it stopped and the command that continues it.
 *
 * Cheap at 10,000 invocations: a store with a status index (Redis) answers from it, and a file store
 * gives the summary it keeps beside each ended journal (stores/file-summary.ts), valid only
 * while that journal is unchanged, so an ended invocation costs a stat and one small read; only the
 * ones that have not ended (or have no valid summary) are read in full.
 *
 * Longer than 400 lines on purpose: the listing and one invocation's status (`invocationStatus`,
 * what a refusal's JSON line reports) share `restingState` and the fixes it names (resume, move
 * aside, snapshot, verify), which must say the same thing wherever a status is shown.
 */
import { dirname, join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { isWeftError, TornTailError } from '../journal/errors.js';
import type { JournalRecord } from '../journal/records.js';
import { endingOf, SEALED_STATUSES, type JournalStore, type Snapshot, type StatusNote } from '../journal/store.js';
import { askedSteps, type AskedStep } from './approval-request.js';
import { forkOfFact, supersededByFact, type ForkOfFact } from '../journal/lineage.js';
import type { InvocationStatus } from './handle.js';

/**
 * `interrupted`: not ended, not resting, and no live runtime holds it — its process stopped (a crash,
 * a kill) or gave up on an unreachable store, when it could not say so in the store either.
 * `pending`: pinned and never taken up — a client's start (runtime/start.ts pinInvocation) released
 * its lease with nothing but the pin written; `weft serve` (or a resume) runs it.
 */
export type ListedStatus = InvocationStatus | 'running' | 'pending' | 'interrupted' | 'damaged' | 'suspended';

/** What `invocationStatus` can say: every listed status but `damaged` (which only a failed read shows). */
export type RestingStatus = Exclude<ListedStatus, 'damaged'>;

export interface InvocationSummary {
  id: string;
  tenant: string;
  intent: string;
  records: number;
  status: ListedStatus;
  /** Why a damaged invocation is listed as such. */
  problem?: string;
  /** Why a suspended invocation stopped (from its snapshot's suspension or the runtime's status note). */
  reason?: string;
  /** For an invocation waiting on a durable sleep step: when it is due (ISO 8601). */
  wakeAt?: string;
  /** For one awaiting approval: a person's decision waits in its inbox (serve records it). */
  decided?: boolean;
  /** For a resting one: a cancel waits in its inbox (serve, or the next resume, stops it). */
  cancelRequested?: boolean;
  /** For a hibernated or suspended one: a request to resume waits in its inbox (the viewer's Resume; serve carries it out). */
  resumeRequested?: boolean;
  /** Its pinned deadline (ISO 8601), if it has one: serve ends it once passed. */
  deadline?: string;
  /** For one awaiting approval: the steps of the epoch the approval is asked for (`reason` says why it is). */
  approvalSteps?: AskedStep[];
  /** For one awaiting approval of the model's authoring call (flag 5) rather than of an epoch's steps. */
  approvalOf?: 'authoring';
  /** For a suspended invocation: the class of what suspended it (transient, credentials, endpoint, runtime). */
  suspendedAs?: string;
  /** The command that repairs a damaged invocation or sets it aside, or that continues a suspended one. */
  fix?: string;
  /** A shadow run (its pin's `shadow`; nothing of it reached the world): whether its actuators gave shadow results. Absent: a real run. */
  shadow?: 'none' | 'actuators';
  /** A fork: its parent and the epoch whose boundary it goes on from (its first record's `forkOf`). */
  forkOf?: ForkOfFact;
  /** A run a fork superseded: that fork (its `invocation.superseded`'s `by`). */
  supersededBy?: string;
  /** The epoch of the last record (when known). */
  epoch?: number;
  /** The last record's kind and envelope time (ISO 8601, the writer's clock), when known. */
  last?: { kind: string; at?: string };
  /** When it started: its first record's envelope time (ISO 8601, the writer's clock), when known. */
  startedAt?: string;
}

/** The listing's `epoch` and `last` fields from a last record's facts (absent facts stay absent). */
function lastFields(kind: string | undefined, epoch: number | undefined, at: string | undefined): Pick<InvocationSummary, 'epoch' | 'last'> {
  return {
    ...(epoch === undefined ? {} : { epoch }),
    ...(kind === undefined ? {} : { last: at === undefined ? { kind } : { kind, at } }),
  };
}

/** The listing's `startedAt` field from the first record's envelope time (absent when unknown). */
function startedField(at: unknown): Pick<InvocationSummary, 'startedAt'> {
  return typeof at === 'string' && at !== '' ? { startedAt: at } : {};
}

/** The listing's `shadow` field from a pin's `shadow.results` (however it was kept), absent on a real run. */
function shadowField(results: unknown): Pick<InvocationSummary, 'shadow'> {
  return results === 'none' || results === 'actuators' ? { shadow: results } : {};
}

/** The listing's `forkOf` and `supersededBy` fields (journal/lineage.ts), absent when there is none. */
function lineageFields(forkOf: unknown, supersededBy: unknown): Pick<InvocationSummary, 'forkOf' | 'supersededBy'> {
  const fork = forkOfFact(forkOf);
  return { ...(fork ? { forkOf: fork } : {}), ...(typeof supersededBy === 'string' && supersededBy !== '' ? { supersededBy } : {}) };
}

/** The suspension a suspended snapshot carries: `data.context.suspension`. */
interface Suspension {
  state?: string;
  class?: string;
  code?: string;
  message?: string;
}

const EMPTY_JOURNAL = 'the journal is empty (its first record was never written)';

/** The status an invocation's journal ending, latest snapshot and status note say it is in. */
export async function invocationStatus(store: JournalStore, id: string): Promise<RestingStatus> {
  return (await restingState(store, id)).status;
}

/** A store with a status index (RedisStore): listing reads it instead of every journal. */
interface IndexedStore extends JournalStore {
  indexed(filter?: { tenant?: string; status?: string }): Promise<Array<{ id: string; tenant: string; intent: string; status: string; records: number; epoch?: number; lastKind?: string; lastAt?: string; startedAt?: string; shadow?: string; forkOf?: unknown; supersededBy?: string }>>;
}

function isIndexed(store: JournalStore): store is IndexedStore {
  return typeof (store as Partial<IndexedStore>).indexed === 'function';
}


/**
 * Every invocation in the store with its status, optionally only a tenant's or only one status. A
 * store with a status index answers from it; an invocation the index does not show as ended is
 * looked at in full (why it is suspended, whether a live runtime holds it).
 */
export async function listInvocations(store: JournalStore, filter: { tenant?: string; status?: string } = {}): Promise<InvocationSummary[]> {
  const keep = (row: InvocationSummary) => (filter.tenant === undefined || row.tenant === filter.tenant) && (filter.status === undefined || row.status === filter.status);
  if (isIndexed(store)) {
    const out: InvocationSummary[] = [];
    for (const entry of await store.indexed(filter.tenant === undefined ? {} : { tenant: filter.tenant })) {
      const row = SEALED_STATUSES.has(entry.status)
        ? { id: entry.id, tenant: entry.tenant, intent: entry.intent, records: entry.records, status: entry.status as ListedStatus, ...shadowField(entry.shadow), ...lineageFields(entry.forkOf, entry.supersededBy), ...lastFields(entry.lastKind, entry.epoch, entry.lastAt), ...startedField(entry.startedAt) }
        : await summarize(store, entry.id).catch((err: unknown) => damagedRow(entry.id, err));
      if (keep(row)) out.push(row);
    }
    return out;
  }
  return (await listAll(store)).filter(keep);
}

/** A store with an open set (RedisStore): the entries of the invocations that have not ended. */
interface OpenIndexedStore extends JournalStore {
  openIndexed(options?: { repair?: boolean }): Promise<Array<{ id: string }>>;
  reindex(ids?: readonly string[]): Promise<string[]>;
}

function hasOpenIndex(store: JournalStore): store is OpenIndexedStore {
  return typeof (store as Partial<OpenIndexedStore>).openIndexed === 'function' && typeof (store as Partial<OpenIndexedStore>).reindex === 'function';
}

/**
 * The invocations that have not ended, each looked at in full as `listInvocations` does — what
 * `weft serve` reads every poll. A store with an open set answers from it, so the cost does not
 * grow with the ended invocations (`repair`: bring the set in line with the index first); an entry
 * the set still holds for a run that has ended meanwhile is re-indexed, which drops it. Any other
 * store is listed in full.
 */
export async function listOpenInvocations(store: JournalStore, options: { repair?: boolean } = {}): Promise<InvocationSummary[]> {
  if (!hasOpenIndex(store)) return (await listAll(store)).filter((row) => !SEALED_STATUSES.has(row.status));
  const out: InvocationSummary[] = [];
  for (const entry of await store.openIndexed(options)) {
    const row = await summarize(store, entry.id).catch((err: unknown) => damagedRow(entry.id, err));
    if (SEALED_STATUSES.has(row.status)) await store.reindex([entry.id]).catch(() => undefined);
    else out.push(row);
  }
  return out;
}

function damagedRow(id: string, err: unknown): InvocationSummary {
  return { id, tenant: '?', intent: '?', records: 0, status: 'damaged', problem: message(err), fix: verifyFix(id) };
}

/**
 * A store that keeps a summary beside each ended journal (FileStore, stores/file-summary.ts):
 * facts read from the journal, given only while the journal is unchanged since.
 */
interface SummarizingStore extends JournalStore {
  summary(id: string): Promise<{ firstKind: string; pinnedFor: string | undefined; tenant: string | undefined; intent: string | undefined; records: number; lastKinds: string[]; lastEpoch?: number; lastAt?: string; startedAt?: string; shadow?: string; forkOf?: unknown; supersededBy?: string } | undefined>;
}

function isSummarizing(store: JournalStore): store is SummarizingStore {
  return typeof (store as Partial<SummarizingStore>).summary === 'function';
}

/**
 * The row of an ended invocation from the store's summary of its journal — the row `summarize`
 * makes from the journal itself, without reading it — or undefined when there is no valid summary
 * or it shows no ending (then the journal is read).
 */
async function endedFromSummary(store: JournalStore, id: string): Promise<InvocationSummary | undefined> {
  if (!isSummarizing(store)) return undefined;
  const facts = await store.summary(id).catch(() => undefined);
  if (!facts || facts.firstKind !== 'invocation.pinned' || facts.pinnedFor !== id) return undefined;
  const ending = endingOf(facts.lastKinds);
  return ending === undefined ? undefined : { id, tenant: facts.tenant ?? '?', intent: facts.intent ?? '?', records: facts.records, status: ending, ...shadowField(facts.shadow), ...lineageFields(facts.forkOf, facts.supersededBy), ...lastFields(facts.lastKinds.at(-1), facts.lastEpoch, facts.lastAt), ...startedField(facts.startedAt) };
}

/**
 * How many invocations a listing looks at between two turns it gives the event loop (setImmediate:
 * the I/O callbacks and timers already due run first): a file store's reads are synchronous, and a
 * process that lists 10,000 invocations while it also serves (weft inspect following live journals,
 * weft serve) must not hold everything else up for the whole list.
 */
const LIST_TURN = 64;

async function listAll(store: JournalStore): Promise<InvocationSummary[]> {
  const out: InvocationSummary[] = [];
  let looked = 0;
  for (const id of await store.list()) {
    if (++looked % LIST_TURN === 0) await nextTurn();
    const ended = await endedFromSummary(store, id);
    if (ended) {
      out.push(ended);
      continue;
    }
    out.push(
      await summarize(store, id).catch((err: unknown) => ({
        id,
        tenant: '?',
        intent: '?',
        records: 0,
        status: 'damaged' as const,
        problem: message(err),
        fix: verifyFix(id),
      })),
    );
  }
  return out;
}

/** What the journal's ending, the snapshot and the status note say, with why and what to run for a suspended one. */
async function restingState(store: JournalStore, id: string, length?: number): Promise<{ status: RestingStatus; supersededBy?: string; reason?: string; fix?: string; suspendedAs?: string; wakeAt?: string; decided?: boolean; cancelRequested?: boolean; resumeRequested?: boolean; approvalSteps?: AskedStep[]; approvalOf?: 'authoring' }> {
  length ??= await store.length(id);
  if (length > 0) {
    const tail = await store.read(id, Math.max(0, length - 2));
    const ending = endingOf(tail.map((r) => r.kind));
    if (ending) return { status: ending, ...lineageFields(undefined, supersededByFact(tail)) };
  }
  const snapshot = await store.getSnapshot(id);
  // A snapshot the journal has gone past is a rest a later run left (woken, approved, resumed): not where it stands.
  const value = snapshot !== undefined && snapshot.seq < length ? undefined : (snapshot?.data as { value?: unknown } | undefined)?.value;
  const note = await readNote(store, id);
  // A cancel waiting in the inbox of a resting invocation: the next resume (or serve) stops it.
  const inbox = value === 'awaitingApproval' || value === 'hibernated' || value === 'awaitingTimer' || value === 'suspended' || note?.status === 'suspended' ? await store.peekInbox(id).catch(() => undefined) : undefined;
  if (inbox?.type === 'cancel') {
    const status: RestingStatus = value === 'awaitingApproval' ? 'awaiting_approval' : value === 'hibernated' ? 'hibernated' : value === 'awaitingTimer' ? 'waiting_timer' : 'suspended';
    return { status, cancelRequested: true, reason: `a cancel by ${inbox.by} waits in its inbox${inbox.reason ? ` (${inbox.reason})` : ''}`, fix: `weft resume ${id}   # it ends cancelled (or leave it to weft serve)` };
  }
  // A resume asked for (the viewer's Resume): serve, or the next resume, goes on with it.
  const resumeAsked = inbox?.type === 'resume' ? { resumeRequested: true, fix: `weft resume ${id}   # a resume by ${inbox.by} waits in its inbox (or leave it to weft serve)` } : undefined;
  if (value === 'suspended') {
    const suspension = suspensionOf(snapshot);
    const reason = suspension?.message ?? note?.reason;
    const suspendedAs = suspension?.class ?? note?.class;
    return { status: 'suspended', ...(reason === undefined ? {} : { reason }), fix: resumeFix(id, suspendedAs), ...(suspendedAs === undefined ? {} : { suspendedAs }), ...resumeAsked };
  }
  // The note is the runtime's latest word, newer than any resting snapshot it failed to move past.
  if (note?.status === 'suspended') {
    return { status: 'suspended', ...(note.reason === undefined ? {} : { reason: note.reason }), fix: note.fix ?? resumeFix(id, note.class), ...(note.class === undefined ? {} : { suspendedAs: note.class }), ...resumeAsked };
  }
  if (value === 'awaitingApproval') {
    const decided = inbox?.type === 'approval' ? inbox : undefined;
    return decided
      ? { status: 'awaiting_approval', decided: true, reason: `${decided.decision} by ${decided.by}, waiting in its inbox to be recorded`, fix: `weft resume ${id}   # or leave it to weft serve` }
      : { status: 'awaiting_approval', ...(await approvalAsked(store, id, snapshot)) };
  }
  if (value === 'hibernated') return { status: 'hibernated', ...resumeAsked };
  if (value === 'awaitingTimer') {
    const until = (snapshot?.data as { context?: { timer?: { until?: unknown } } } | undefined)?.context?.timer?.until;
    return { status: 'waiting_timer', ...(typeof until === 'string' ? { wakeAt: until, reason: `sleeping until ${until}` } : {}), fix: `weft resume ${id}   # once it is due (weft serve wakes it then); earlier, it rests again` };
  }
  if (note?.status === 'running' && note.reason !== undefined) return { status: 'running', reason: note.reason, ...(note.fix === undefined ? {} : { fix: note.fix }) };
  const holder = await store.holder(id).catch(() => undefined);
  if (holder?.live) return { status: 'running' };
  // Only its pin, and no lease was ever left on it (a client's start releases the one it took): nothing has run yet.
  if (holder === undefined && length === 1) return { status: 'pending', reason: 'pinned by a client, not yet taken up by a runtime', fix: `weft resume ${id}   # or leave it to weft serve, which runs it` };
  return {
    status: 'interrupted',
    reason: holder
      ? `its runtime (${holder.writer}) stopped without resting it (a crash, a kill, or it lost its store with an append in flight); the journal keeps everything that landed, and resume goes on from there`
      : 'no runtime holds it and it did not rest (a crash, a kill, or it lost its store with an append in flight)',
    fix: `weft resume ${id}   # or leave it to weft serve, which takes over expired leases`,
  };
}

/** One invocation's row of the listing (what `weft show` starts from): never throws for a damaged journal, which is a row too. */
export function invocationSummary(store: JournalStore, id: string): Promise<InvocationSummary> {
  return summarize(store, id);
}

async function summarize(store: JournalStore, id: string): Promise<InvocationSummary> {
  let first: JournalRecord<'invocation.pinned'> | undefined;
  try {
    first = (await store.read(id, 0, 1))[0] as JournalRecord<'invocation.pinned'> | undefined;
    const base = { id, tenant: first?.body?.tenant ?? '?', intent: first?.body?.intent ?? '?', ...startedField(first?.meta?.at), ...shadowField(first?.body?.pin?.shadow?.results), ...lineageFields(first?.body?.forkOf, undefined) };
    if (!first) {
      const note = await readNote(store, id);
      return { ...base, records: 0, status: 'damaged', problem: EMPTY_JOURNAL, ...(note?.reason === undefined ? {} : { reason: note.reason }), fix: moveAsideFix(store, id) };
    }
    if (first.kind !== 'invocation.pinned') {
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
    const records = await store.length(id);
    const lastRecord = (await store.read(id, records - 1, records))[0];
    const last = lastFields(lastRecord?.kind, lastRecord?.epoch, lastRecord?.meta?.at);
    let state;
    try {
      state = await restingState(store, id, records);
    } catch (err) {
      if (err instanceof TornTailError || !(await snapshotUnreadable(store, id))) throw err;
      return { ...base, records, ...last, status: 'damaged', problem: `the snapshot cannot be read (${message(err)})`, fix: snapshotFix(store, id) };
    }
    const deadline = first.body.pin?.deadline;
    return { ...base, records, ...last, ...state, ...(typeof deadline === 'string' ? { deadline } : {}) };
  } catch (err) {
    const base = { id, tenant: first?.body?.tenant ?? '?', intent: first?.body?.intent ?? '?', records: 0, status: 'damaged' as const };
    if (err instanceof TornTailError) {
      if (err.seq === 0) {
        return { ...base, problem: 'the journal\'s first record is torn (a crash mid-append; nothing was recorded)', fix: moveAsideFix(store, id) };
      }
      return { ...base, records: err.seq, problem: `torn final record at seq ${err.seq} (a crash mid-append; never acknowledged)`, fix: `weft resume ${id} --quarantine-torn` };
    }
    return { ...base, problem: message(err), fix: verifyFix(id) };
  }
}

/**
 * What an invocation awaiting approval asks for: the policy's reason (its `approval.requested`,
 * the record just before the resting snapshot's position) and the steps (see approval-request.ts).
 */
async function approvalAsked(store: JournalStore, id: string, snapshot: Snapshot | undefined): Promise<{ reason?: string; approvalSteps?: AskedStep[]; approvalOf?: 'authoring' }> {
  const at = snapshot?.seq ?? 0;
  const [record] = at > 0 ? await store.read(id, at - 1, at).catch(() => []) : [];
  if (record?.kind !== 'approval.requested') return {};
  const { reason, plan, subject } = record.body as Partial<JournalRecord<'approval.requested'>['body']>;
  const steps = typeof plan === 'string' ? askedSteps(snapshot, record.epoch, plan) : undefined;
  return { ...(typeof reason === 'string' ? { reason } : {}), ...(steps ? { approvalSteps: steps } : {}), ...(subject === 'authoring' ? { approvalOf: subject } : {}) };
}

/** The runtime's status note, or undefined when there is none or it cannot be read (it is observability only). */
async function readNote(store: JournalStore, id: string): Promise<StatusNote | undefined> {
  try {
    return await store.getStatus(id);
  } catch {
    return undefined;
  }
}

function suspensionOf(snapshot: Snapshot | undefined): Suspension | undefined {
  const suspension = (snapshot?.data as { context?: { suspension?: unknown } } | undefined)?.context?.suspension;
  if (typeof suspension !== 'object' || suspension === null) return undefined;
  const s = suspension as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return { state: str(s.state), class: str(s.class), code: str(s.code), message: str(s.message) };
}

/** The command that continues a suspended invocation, by the class of what stopped it. */
export function resumeFix(id: string, failureClass: string | undefined): string {
  switch (failureClass) {
    case 'transient':
      return `weft resume ${id}   # or leave it: a later weft serve retries it with backoff`;
    case 'credentials':
      return `fix the model key, then weft resume ${id}`;
    case 'endpoint':
      return `fix the model endpoint (--model-url), then weft resume ${id}`;
    default:
      return `weft resume ${id}`;
  }
}

/** The invocation's folder, when the store keeps one on disk. */
function folderOf(store: JournalStore, id: string): string | undefined {
  const journalPath = (store as { journalPath?: (id: string) => string }).journalPath;
  return typeof journalPath === 'function' ? dirname(journalPath.call(store, id)) : undefined;
}

function moveAsideFix(store: JournalStore, id: string): string {
  const folder = folderOf(store, id);
  if (folder === undefined) return `delete ${id}'s journal and snapshot from ${store.name}: it cannot be resumed (nothing was recorded); run it again under a new id`;
  const aside = join(dirname(dirname(folder)), 'aside');
  return `move its folder aside (mkdir -p ${aside} && mv ${folder} ${aside}/): it cannot be resumed (nothing was recorded); run it again`;
}

async function snapshotUnreadable(store: JournalStore, id: string): Promise<boolean> {
  try {
    await store.getSnapshot(id);
    return false;
  } catch {
    return true;
  }
}

function snapshotFix(store: JournalStore, id: string): string {
  const folder = folderOf(store, id);
  if (folder === undefined) return `remove ${id}'s snapshot, then weft resume ${id} replays its journal from the start`;
  const file = join(folder, 'snapshot.json');
  return `mv ${file} ${file}.bad, then weft resume ${id} (it replays the journal from the start)`;
}

/** The fix of a journal that cannot be read. Its commands name no store: the CLI adds its location flags. */
function verifyFix(id: string): string {
  return `weft verify ${id} names the first bad record; move the journal aside to set it apart`;
}

function message(err: unknown): string {
  return isWeftError(err) || err instanceof Error ? err.message : String(err);
}
