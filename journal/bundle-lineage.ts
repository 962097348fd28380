/**
 * A fork's lineage in a bundle (`weft export` of a fork): the journals of its parents — the parent,
 * the parent's parent when that is a fork too, and so on — each up to the record the child names
 * (its `epoch.closed` at `parentSeq`), which is all a fork's replay reads of them (runtime/fork.ts).
 *
 *   "lineage"?: [{ "invocation": <parent id>, "journal": "<JSONL text: its records 0 … parentSeq>" }, …]
 *
 * A bundle of an invocation that is not a fork carries none, and one made before bundles carried a
 * lineage has none either: both stay readable. What `bundleLineage` checks, from the fork's records
 * up: each parent's journal is carried, verifies (chain and schemas), is that parent's, reaches
 * `parentSeq` with the hash the child names there, and pins a library the bundle carries. It does
 * not replay them (replay does, re-deriving the state at the boundary).
 *
 * Pure: records and text in, records or a problem out; no I/O.
 */
import type { Bundle } from './bundle.js';
import { forkOfDisagreement } from './lineage.js';
import type { JournalRecord } from './records.js';
import { readJournalBytes } from './verify-bytes.js';

/** A parent a fork names: from its `invocation.forked` (seq 1), which its pin's `forkOf` repeats. */
export interface ParentRef {
  parent: string;
  atEpoch: number;
  parentSeq: number;
  parentHash: string;
}

/** The parent `records` (a journal's, from seq 0) are a fork of, or undefined when they are not a fork's. */
export function parentOf(records: readonly JournalRecord[]): ParentRef | undefined {
  const second = records[1];
  if (second?.kind === 'invocation.forked') {
    const { parent, atEpoch, parentSeq, parentHash } = (second as JournalRecord<'invocation.forked'>).body;
    return { parent, atEpoch, parentSeq, parentHash };
  }
  const first = records[0];
  return first?.kind === 'invocation.pinned' ? (first as JournalRecord<'invocation.pinned'>).body.forkOf : undefined;
}

/** One parent's records as a journal's text (every line newline-terminated), as a bundle carries it. */
export type LineageEntry = NonNullable<Bundle['lineage']>[number];

/**
 * The parents' verified records, nearest first, for a bundle whose journal's records are `records`;
 * or the first problem, saying what is missing or wrong and what to do.
 */
export function bundleLineage(bundle: Pick<Bundle, 'lineage' | 'libraries'>, records: readonly JournalRecord[]): { parents: Array<{ invocation: string; records: JournalRecord[] }> } | { problem: string } {
  const parents: Array<{ invocation: string; records: JournalRecord[] }> = [];
  let child = records;
  const pinned = records[0]?.kind === 'invocation.pinned' ? (records[0] as JournalRecord<'invocation.pinned'>).body : undefined;
  let childId = pinned?.invocation ?? '?';
  // The pin's forkOf and invocation.forked must name the same boundary, as replay checks (lineage.ts).
  const disagreement = pinned ? forkOfDisagreement({ body: pinned }, records[1]) : undefined;
  if (disagreement) {
    return { problem: `${childId}'s invocation.pinned names its parent as ${disagreement.named}, but its seq 1 ${disagreement.forked === undefined ? 'is no invocation.forked' : `says ${disagreement.forked}`}` };
  }
  for (let ref = parentOf(child); ref !== undefined; ref = parentOf(child)) {
    if (parents.some((p) => p.invocation === ref!.parent) || ref.parent === childId) return { problem: `the lineage of ${childId} loops back to ${ref.parent}` };
    const entry = bundle.lineage?.find((e) => e.invocation === ref!.parent);
    if (!entry) {
      return {
        problem:
          `${childId} is a fork of ${ref.parent} (at the end of epoch ${ref.atEpoch}), whose journal up to seq ${ref.parentSeq} the bundle does not carry, and replaying a fork checks its parent first: ` +
          `export the fork again with a weft whose bundles carry a fork's lineage (weft export ${records[0] ? (records[0] as JournalRecord<'invocation.pinned'>).body.invocation : childId}), or replay it by id where ${ref.parent}'s journal is`,
      };
    }
    const read = readJournalBytes(new TextEncoder().encode(entry.journal));
    if (!read.ok) return { problem: `the bundle's journal of ${ref.parent} (the parent of ${childId}) does not verify: ${read.error!.message}` };
    if (read.invocation !== ref.parent) return { problem: `the bundle's lineage entry ${ref.parent} holds the journal of ${read.invocation ?? 'nothing'}` };
    const boundary = read.records[ref.parentSeq];
    if (!boundary || boundary.hash !== ref.parentHash) {
      return { problem: `the bundle's journal of ${ref.parent} ${boundary ? `has hash ${boundary.hash} at seq ${ref.parentSeq}` : `ends before seq ${ref.parentSeq}`}, not the hash ${ref.parentHash} ${childId} names there (its epoch.closed of epoch ${ref.atEpoch})` };
    }
    // A parent has its fork's tenant and intent (a fork goes on with the same request, for the same tenant).
    const parentPinned = read.records[0] as JournalRecord<'invocation.pinned'> | undefined;
    if (pinned && parentPinned && (parentPinned.body.tenant !== pinned.tenant || parentPinned.body.intent !== pinned.intent)) {
      return { problem: `the bundle's journal of ${ref.parent} (the parent of ${childId}) has another tenant or intent than ${childId}` };
    }
    const library = read.pin?.library;
    if (library !== undefined && !Object.hasOwn(bundle.libraries, library)) return { problem: `the journal of ${ref.parent} (in the bundle's lineage) pins library ${library}, which the bundle does not carry` };
    parents.push({ invocation: ref.parent, records: read.records.slice(0, ref.parentSeq + 1) });
    child = read.records;
    childId = ref.parent;
  }
  return { parents };
}
