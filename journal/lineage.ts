/**
 * A journal's lineage, as listings show it (runtime/list.ts, the file store's summaries, Redis's
 * status index): the parent a fork goes on from — named by its very first record, the pin's
 * `forkOf` (runtime/fork.ts) — and, for a run a fork superseded, that fork (`invocation.superseded`'s
 * `by`). Read from parsed JSON that may be anything (a summary, an index entry, a damaged line):
 * a fact that is not well-formed is absent, never a throw.
 *
 * Pure: values in, values out.
 */
import { canonicalize } from './canonical.js';

/** Where a fork comes from: its parent and the epoch whose boundary it goes on from. */
export interface ForkOfFact {
  parent: string;
  atEpoch: number;
}

/** The `forkOf` of an `invocation.pinned` body (or of a stored fact), when it names a parent. */
export function forkOfFact(value: unknown): ForkOfFact | undefined {
  const forkOf = (value as { forkOf?: unknown } | null | undefined)?.forkOf ?? value;
  if (typeof forkOf !== 'object' || forkOf === null) return undefined;
  const { parent, atEpoch } = forkOf as { parent?: unknown; atEpoch?: unknown };
  return typeof parent === 'string' && parent !== '' && typeof atEpoch === 'number' && Number.isSafeInteger(atEpoch) ? { parent, atEpoch } : undefined;
}

/** The fork that superseded a run: the `by` of an `invocation.superseded` among `records` (its last ones). */
export function supersededByFact(records: ReadonlyArray<{ kind?: unknown; body?: unknown }>): string | undefined {
  const record = records.find((r) => r.kind === 'invocation.superseded');
  const by = (record?.body as { by?: unknown } | undefined)?.by;
  return typeof by === 'string' && by !== '' ? by : undefined;
}

/** How a listing words a row's lineage ("fork of X at epoch N", "superseded by Y"), or undefined. */
export function lineageText(row: { forkOf?: ForkOfFact; supersededBy?: string }): string | undefined {
  const parts = [
    ...(row.forkOf ? [`fork of ${row.forkOf.parent} at epoch ${row.forkOf.atEpoch}`] : []),
    ...(row.supersededBy ? [`superseded by fork ${row.supersededBy}`] : []),
  ];
  return parts.length > 0 ? parts.join('; ') : undefined;
}

/** The boundary a fork's `invocation.forked` names (the fields its pin's `forkOf` repeats). */
export function forkedBoundary(forked: { parent: string; atEpoch: number; parentSeq: number; parentHash: string }): { parent: string; atEpoch: number; parentSeq: number; parentHash: string } {
  return { parent: forked.parent, atEpoch: forked.atEpoch, parentSeq: forked.parentSeq, parentHash: forked.parentHash };
}

/**
 * Where a fork's first two records disagree, or undefined when they agree: the pin's `forkOf` (absent
 * on forks made before it was written) must name the boundary its `invocation.forked` names, and a
 * pin naming a parent must be followed by `invocation.forked`. One answer for replay
 * (runtime/fork.ts checkForkOf) and for a bundle's lineage (bundle-lineage.ts), each wording it.
 */
export function forkOfDisagreement(
  pinned: { body: { forkOf?: { parent: string; atEpoch: number; parentSeq: number; parentHash: string } } },
  second: { kind: string; body?: unknown } | undefined,
): { forkOf: { parent: string }; named: string; forked: string | undefined; secondKind: string | undefined } | undefined {
  const forkOf = pinned.body.forkOf;
  if (forkOf === undefined) return undefined;
  if (second?.kind !== 'invocation.forked') return { forkOf, named: canonicalize(forkOf), forked: undefined, secondKind: second?.kind };
  const forked = canonicalize(forkedBoundary(second.body as { parent: string; atEpoch: number; parentSeq: number; parentHash: string }));
  const named = canonicalize(forkOf);
  return named === forked ? undefined : { forkOf, named, forked, secondKind: second.kind };
}
