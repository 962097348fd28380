/**
 * A fork's parent, read through this runtime: the state at the end of one of its epochs, re-derived
 * by replaying its journal up to that boundary (what a fork records in `invocation.forked`, and what
 * its replay derives again), and the check a fork's replay makes of its lineage before it replays
 * the fork itself. The parts that read records alone are fork.ts; the fork's writing is fork-run.ts.
 */
import { canonicalize } from '../journal/canonical.js';
import { verifyRecords } from '../journal/reader.js';
import type { JournalRecord } from '../journal/records.js';
import type { Library } from '../htn/library/schema.js';
import { FLAG_LINEAGE_EFFECTS, hasFlag } from '../machines/flags.js';
import { checkPin } from './call-checks.js';
import type { Executor } from './executor.js';
import { checkForkOf, ForkParentError, ForkRefusedError, forkState, inheritedState, parentHistory, worldEffects } from './fork.js';

/** The state at the end of epoch `atEpoch`, from the parent's records up to that boundary (what `invocation.forked` records, and replay re-derives). */
export async function forkStateOf(ex: Executor, parentId: string, upToBoundary: readonly JournalRecord[], library: Library, atEpoch: number, lineage: boolean) {
  const digest = (upToBoundary[0] as JournalRecord<'invocation.pinned'>).body.pin.library;
  const history = await parentHistory(upToBoundary, ex.replayDeps(library, digest), atEpoch);
  if (!history.boundary) throw new ForkRefusedError('fork.no_boundary', `cannot fork ${parentId} at epoch ${atEpoch}: replaying its journal did not reach the start of epoch ${atEpoch + 1}`);
  return forkState(history.boundary, worldEffects(upToBoundary, history.plans, (epoch) => epoch <= atEpoch), lineage ? inheritedState(upToBoundary) : undefined);
}

/**
 * A fork's replay starts here: its parent must be in this store, of the same tenant and intent,
 * its journal verifying up to `parentSeq` where the record is the `epoch.closed` of `atEpoch` with
 * hash `parentHash`, and the state re-derived from those records must be the state recorded. A
 * parent that is a fork itself is checked against its own parent the same way, up the lineage.
 */
export async function checkForkParent(ex: Executor, pinned: JournalRecord<'invocation.pinned'>, forked: JournalRecord<'invocation.forked'>): Promise<void> {
  const store = ex.store;
  const fork = pinned.body.invocation;
  const { parent, parentSeq, parentHash, atEpoch, state, world } = forked.body;
  const records = await store.read(parent, 0, parentSeq + 1).catch((err: unknown) => {
    throw new ForkParentError(fork, parent, `cannot be read in ${store.name} (${(err as Error).message})`);
  });
  // The parent's tenant first: of another tenant, nothing of it is said (not even how long it is).
  const head = records[0];
  if (head?.kind === 'invocation.pinned' && (head as JournalRecord<'invocation.pinned'>).body.tenant !== pinned.body.tenant) {
    throw new ForkParentError(fork, parent, `is not in ${store.name} as a parent of this fork's tenant: replay the fork where its parent's journal is`);
  }
  if (records.length !== parentSeq + 1) throw new ForkParentError(fork, parent, `is not in ${store.name} as far as seq ${parentSeq} (it has ${records.length} records): replay the fork where its parent's journal is`);
  const first = records[0] as JournalRecord<'invocation.pinned'>;
  if (first.kind !== 'invocation.pinned' || first.body.invocation !== parent) throw new ForkParentError(fork, parent, 'does not start with its own invocation.pinned');
  if (first.body.tenant !== pinned.body.tenant || first.body.intent !== pinned.body.intent) throw new ForkParentError(fork, parent, 'has another tenant or intent than the fork');
  const report = verifyRecords(records);
  if (!report.ok) throw new ForkParentError(fork, parent, `does not verify up to seq ${parentSeq}: ${report.error!.message}`);
  const boundary = records[parentSeq]!;
  if (boundary.hash !== parentHash || boundary.kind !== 'epoch.closed' || boundary.epoch !== atEpoch) {
    throw new ForkParentError(fork, parent, `has at seq ${parentSeq} a ${boundary.kind} of epoch ${boundary.epoch} with hash ${boundary.hash}, not the epoch.closed of epoch ${atEpoch} with hash ${parentHash} the fork names (the parent's journal was changed)`);
  }
  const parentForked = records[1]?.kind === 'invocation.forked' ? (records[1] as JournalRecord<'invocation.forked'>).body : undefined;
  const parentWorld = parentForked ? (parentForked.world ?? parentForked.parent) : parent;
  if (world !== undefined && world !== parentWorld) throw new ForkParentError(fork, parent, `acts in world ${parentWorld}, not the world ${world} the fork names`);
  if (parentForked) {
    checkForkOf(first, records[1] as JournalRecord<'invocation.forked'>);
    await checkForkParent(ex, first, records[1] as JournalRecord<'invocation.forked'>);
  }
  const library = await checkPin(ex, 'replay', first, [], false);
  const derived = await forkStateOf(ex, parent, records, library, atEpoch, hasFlag(pinned.body.pin, FLAG_LINEAGE_EFFECTS));
  if (canonicalize(derived) !== canonicalize(state)) throw new ForkParentError(fork, parent, `gives another state at the end of epoch ${atEpoch} than the fork recorded (recorded ${canonicalize(state).slice(0, 200)}…, re-derived ${canonicalize(derived).slice(0, 200)}…)`);
}
