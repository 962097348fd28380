/**
 * One journal per invocation id, whatever order the journals arrive in. The same invocation can be
 * reached twice — a journal file and its workspace, a copy taken while the run was still going and
 * the finished journal, two stores — and mining must not depend on which copy came first:
 *
 * - two copies whose records agree (same hash at every seq both hold): one is a prefix of the
 *   other, so the longer is kept — it is the same run, further on;
 * - two copies that differ at some seq are two different histories of one id: neither can be
 *   chosen without guessing, so the merge refuses (DivergentJournalsError names the id, both
 *   sources and the first seq where they differ).
 *
 * The journals are assumed verified (their chains intact): the hash at a seq then stands for the
 * whole history up to it. Pure.
 */
import type { JournalRecord } from '../journal/records.js';

/** A journal kept for an id, and where it was read (every source that held it or a prefix of it). */
export interface SourcedJournal {
  records: JournalRecord[];
  sources: string[];
}

/** One invocation id, two journals that are not one a prefix of the other. */
export class DivergentJournalsError extends Error {
  override readonly name = 'DivergentJournalsError';
  constructor(
    readonly invocation: string,
    readonly first: string,
    readonly second: string,
    readonly seq: number,
  ) {
    super(
      `invocation ${invocation} is read twice with different histories: ${first} and ${second} differ at seq ${seq} ` +
        '(neither is a prefix of the other): mine one of them, not both',
    );
  }
}

/** The invocation id a journal records (its first record, `invocation.pinned`). */
export function invocationOf(records: readonly JournalRecord[]): string {
  return (records[0] as JournalRecord<'invocation.pinned'>).body.invocation;
}

/** The first seq where two journals differ (their shared length when one is a prefix of the other). */
function firstDifference(a: readonly JournalRecord[], b: readonly JournalRecord[]): number {
  const shared = Math.min(a.length, b.length);
  for (let i = 0; i < shared; i++) if (a[i]!.hash !== b[i]!.hash) return i;
  return shared;
}

/** Add `records` (read from `source`) to `into`, keyed by invocation id; see the header. Throws DivergentJournalsError. */
export function mergeJournal(into: Map<string, SourcedJournal>, records: JournalRecord[], source: string): void {
  const id = invocationOf(records);
  const held = into.get(id);
  if (!held) {
    into.set(id, { records, sources: [source] });
    return;
  }
  const at = firstDifference(held.records, records);
  if (at < held.records.length && at < records.length) throw new DivergentJournalsError(id, held.sources.join(' and '), source, at);
  if (records.length > held.records.length) held.records = records;
  if (!held.sources.includes(source)) held.sources.push(source);
}
