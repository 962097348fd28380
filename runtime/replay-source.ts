/**
 * `runtime.replay(source)`: find the records, check them, and hand them to replay.ts — which re-runs
 * the machine over them without calling anything, re-deriving every decomposition, and stops with
 * ReplayDivergenceError at any difference.
 *
 * The source is an id in this runtime's store, a journal file, or records with the libraries they
 * pinned (a bundle); a scoped runtime replays only its tenant's, whichever it is. The pin is checked
 * first (library, evaluables, policy, flags, limits — not the model, nor which actuators spend:
 * replay calls none, and reads the spenders from the pin), and a journal filed under another
 * invocation's id is refused. A fork is proven by its parent first (fork-parent.ts): the parent's
 * journal up to the boundary it forked at, and the state re-derived from it.
 */
import { readFileSync } from 'node:fs';
import { verifyRecords } from '../journal/reader.js';
import type { JournalRecord } from '../journal/records.js';
import { readJournalBytes } from '../journal/verify-bytes.js';
import type { Library } from '../htn/library/schema.js';
import { checkFileTenant, checkGenesis, checkPin, checkTenant } from './call-checks.js';
import type { Executor } from './executor.js';
import { checkForkOf } from './fork.js';
import { checkForkParent } from './fork-parent.js';
import { guardedObserver, type InspectionObserver } from './inspection.js';
import { replayJournal, type ReplayResult } from './replay.js';

/** What can be replayed: an id in the store, a journal file, or records with the libraries they pinned (a bundle). */
export type ReplaySource = string | { journalPath: string } | { records: readonly JournalRecord[]; libraries?: readonly Library[] };

export async function replaySource(ex: Executor, source: ReplaySource, options: { inspect?: InspectionObserver } = {}): Promise<ReplayResult> {
  if (typeof source === 'object' && 'journalPath' in source) checkFileTenant(ex, source.journalPath);
  const records = typeof source === 'string' ? await ex.store.read(source) : 'journalPath' in source ? parseJournalFile(source.journalPath) : source.records;
  const bundled = typeof source === 'object' && 'records' in source ? (source.libraries ?? []) : [];
  const first = records[0];
  if (typeof source === 'string') checkGenesis(ex, source, first, ex.options.tenant);
  // Records handed in: a scoped runtime replays only its tenant's, as for an id or a file.
  else if ('records' in source && ex.options.tenant !== undefined) {
    const named = first?.kind === 'invocation.pinned' ? (first as JournalRecord<'invocation.pinned'>).body.invocation : '(no pin)';
    checkTenant(ex, named, first, ex.options.tenant);
  }
  // A journal that does not start with its pin is refused by replayJournal's own verification.
  const pinned = first?.kind === 'invocation.pinned' ? (first as JournalRecord<'invocation.pinned'>) : undefined;
  const library = pinned ? await checkPin(ex, 'replay', pinned, bundled, false) : undefined;
  // A fork is proven by its parent: the parent's journal up to the boundary, and the state re-derived from it.
  if (pinned && (records[1]?.kind === 'invocation.forked' || pinned.body.forkOf !== undefined)) {
    const report = verifyRecords(records.slice(0, 2));
    if (!report.ok) throw report.error!;
    checkForkOf(pinned, records[1]);
    await checkForkParent(ex, pinned, records[1] as JournalRecord<'invocation.forked'>);
  }
  return replayJournal(records, {
    ...ex.replayDeps(library, pinned?.body.pin.library ?? ''),
    // A replay is shown to an observer only when asked: the runtime's own observer watches live runs.
    ...(options.inspect ? { inspect: guardedObserver(options.inspect) } : {}),
  });
}

function parseJournalFile(path: string): JournalRecord[] {
  const report = readJournalBytes(readFileSync(path));
  if (!report.ok) throw report.error!;
  return report.records;
}
