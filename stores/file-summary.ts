/**
 * A sealed journal's summary, kept beside it (`<dir>/invocations/<id>/summary.json`, unhashed, like
 * the status note and the metadata), so that listing a store of 10,000 ended invocations reads one
 * small file and stats one journal per invocation instead of reading every journal.
 *
 * What it holds are facts read from the journal itself — its first record's kind, invocation,
 * tenant, intent and envelope time (and a fork's parent), its length, and the kinds of its last two records (and the
 * fork that superseded it) — never a status: the lister
 * decides the status from them exactly as it would from the journal (runtime/list.ts).
 *
 * Why it can never show a wrong status, even after a crash:
 * - It is written only after the append that put an ending record in the journal has been flushed,
 *   from what that flush left on disk; a crash before it leaves no summary (the lister reads the
 *   journal, as without one).
 * - It names the journal file it describes by size, inode, mtime and ctime (to the nanosecond). A
 *   reader uses it only while the journal still matches all four: any later write, truncation,
 *   quarantine, replacement or copy of the journal changes one of them, and the summary is then
 *   ignored (stale) — the journal is read instead. Nothing ever trusts it without that check.
 * - It is written by atomic rename, not fsynced: a summary a crash loses reads as none; a torn or
 *   garbled one does not parse and reads as none.
 */
import { fstatSync, statSync, type BigIntStats } from 'node:fs';
import { join } from 'node:path';
import { canonicalize } from '../journal/canonical.js';
import { atomicWrite, errno, readIfExists } from './file-io.js';
import { headLines, linesFrom, offsetOfLine } from './file-ranges.js';
import { forkOfFact, supersededByFact, type ForkOfFact } from '../journal/lineage.js';

export const SUMMARY = 'summary.json';

/** What a journal says about itself at its ending, and which bytes of it said so. */
export interface JournalSummary {
  invocation: string;
  /** The first record's kind and `body.invocation`: a journal filed under another id is not summarised as this one's. */
  firstKind: string;
  pinnedFor: string | undefined;
  tenant: string | undefined;
  intent: string | undefined;
  records: number;
  /** The kinds of the last two records (what runtime/list.ts reads an ending from). */
  lastKinds: string[];
  /** The last record's epoch and envelope time (ISO 8601), for the listing's columns. */
  lastEpoch?: number;
  lastAt?: string;
  /** The first record's envelope time (ISO 8601): when it started, for the listing's columns. */
  startedAt?: string;
  /** A shadow run's pinned `shadow.results`; absent on a real run. */
  shadow?: string;
  /** A fork's parent and epoch (its first record's `forkOf`, journal/lineage.ts); absent otherwise. */
  forkOf?: ForkOfFact;
  /** The fork that superseded it (its `invocation.superseded`'s `by`); absent otherwise. */
  supersededBy?: string;
}

/** The identity of a journal file's bytes: equal stamps mean the same, unchanged file. */
interface Stamp {
  size: string;
  ino: string;
  mtimeNs: string;
  ctimeNs: string;
}

function stampOf(stats: BigIntStats): Stamp {
  return { size: String(stats.size), ino: String(stats.ino), mtimeNs: String(stats.mtimeNs), ctimeNs: String(stats.ctimeNs) };
}

/**
 * Write the summary of the journal open at `fd` (path `journalPath`, `length` complete records) in
 * `dir`. Called after a flushed append that recorded an ending. Best effort: the append has
 * already succeeded, and a missing summary only makes a listing read the journal.
 */
export function writeJournalSummary(dir: string, invocation: string, journalPath: string, fd: number, length: number): void {
  try {
    const stamp = stampOf(fstatSync(fd, { bigint: true }));
    const first = headLines(journalPath, 1)?.lines[0];
    const at = offsetOfLine(journalPath, length, Math.max(0, length - 2));
    const last = at === undefined ? undefined : linesFrom(journalPath, at)?.lines;
    if (first === undefined || last === undefined || length === 0) return;
    const head = JSON.parse(first) as { kind?: unknown; meta?: { at?: unknown }; body?: { invocation?: unknown; tenant?: unknown; intent?: unknown; pin?: { shadow?: { results?: unknown } } } };
    const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
    const tail = last.map((line) => JSON.parse(line) as { kind?: unknown; epoch?: unknown; body?: unknown; meta?: { at?: unknown } });
    const end = tail.at(-1);
    const summary: JournalSummary = {
      invocation,
      firstKind: String(head.kind),
      pinnedFor: text(head.body?.invocation),
      tenant: text(head.body?.tenant),
      intent: text(head.body?.intent),
      records: length,
      lastKinds: tail.map((record) => String(record.kind)),
      lastEpoch: typeof end?.epoch === 'number' ? end.epoch : undefined,
      lastAt: text(end?.meta?.at),
      startedAt: text(head.meta?.at),
      shadow: text(head.body?.pin?.shadow?.results),
      forkOf: forkOfFact(head.body),
      supersededBy: supersededByFact(tail),
    };
    atomicWrite(join(dir, SUMMARY), canonicalize({ v: 1, stamp, summary: stripUndefined(summary) }) + '\n', { durable: false });
  } catch {
    /* best effort: without a summary a listing reads the journal */
  }
}

const sameStamp = (a: Partial<Stamp>, b: Stamp) => a.size === b.size && a.ino === b.ino && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;

/**
 * The summaries a store has read, each with the stamp of the journal it describes: a listing that
 * comes back (a viewer's list page, again and again) stats each journal and, while it still matches,
 * reads nothing else. A summary is a function of its journal's bytes, so a matching stamp is all
 * that makes it valid — as for the file. At most `max` are kept (the oldest read go first).
 */
export class SummaryCache {
  private readonly entries = new Map<string, { stamp: Stamp; summary: JournalSummary }>();
  constructor(private readonly max = 100_000) {}

  get(invocation: string, now: Stamp): JournalSummary | undefined {
    const kept = this.entries.get(invocation);
    return kept && sameStamp(kept.stamp, now) ? kept.summary : undefined;
  }

  set(invocation: string, stamp: Stamp, summary: JournalSummary): void {
    this.entries.delete(invocation);
    this.entries.set(invocation, { stamp, summary });
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }
}

/** The summary of `invocation`'s journal, only while the journal is byte for byte the one it describes; otherwise undefined. */
export function readJournalSummary(dir: string, invocation: string, journalPath: string, cache?: SummaryCache): JournalSummary | undefined {
  let now: Stamp;
  try {
    now = stampOf(statSync(journalPath, { bigint: true }));
  } catch (err) {
    if (errno(err) === 'ENOENT') return undefined;
    throw err;
  }
  const cached = cache?.get(invocation, now);
  if (cached) return cached;
  const bytes = readIfExists(join(dir, SUMMARY));
  if (bytes === undefined) return undefined;
  let stored: { v?: unknown; stamp?: Partial<Stamp>; summary?: Partial<JournalSummary> };
  try {
    stored = JSON.parse(bytes.toString('utf8')) as typeof stored;
  } catch {
    return undefined;
  }
  if (stored.v !== 1 || !stored.stamp || !sameStamp(stored.stamp, now)) return undefined;
  const s = stored.summary;
  if (!s || s.invocation !== invocation || typeof s.firstKind !== 'string' || typeof s.records !== 'number' || !Array.isArray(s.lastKinds)) return undefined;
  const summary: JournalSummary = {
    invocation,
    firstKind: s.firstKind,
    pinnedFor: typeof s.pinnedFor === 'string' ? s.pinnedFor : undefined,
    tenant: typeof s.tenant === 'string' ? s.tenant : undefined,
    intent: typeof s.intent === 'string' ? s.intent : undefined,
    records: s.records,
    lastKinds: s.lastKinds.filter((k): k is string => typeof k === 'string'),
    ...(typeof s.lastEpoch === 'number' ? { lastEpoch: s.lastEpoch } : {}),
    ...(typeof s.lastAt === 'string' ? { lastAt: s.lastAt } : {}),
    ...startedAtOf(s.startedAt, journalPath),
    ...(typeof s.shadow === 'string' ? { shadow: s.shadow } : {}),
    ...(forkOfFact(s.forkOf) ? { forkOf: forkOfFact(s.forkOf)! } : {}),
    ...(typeof s.supersededBy === 'string' ? { supersededBy: s.supersededBy } : {}),
  };
  cache?.set(invocation, now, summary);
  return summary;
}

/**
 * A summary's `startedAt`, or — for one written before summaries kept it — the journal's first
 * line's envelope time, read once (the summary is cached with it). Absent when neither says.
 */
function startedAtOf(kept: unknown, journalPath: string): { startedAt?: string } {
  if (typeof kept === 'string') return { startedAt: kept };
  try {
    const first = headLines(journalPath, 1)?.lines[0];
    const at = first === undefined ? undefined : (JSON.parse(first) as { meta?: { at?: unknown } }).meta?.at;
    return typeof at === 'string' ? { startedAt: at } : {};
  } catch {
    return {};
  }
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
