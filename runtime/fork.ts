/**
 * A fork: the lawful way to move a run to a new library, model or policy (`runtime.fork`, `weft
 * fork`). The pin is law — a run pinned to library v1 never silently moves to v2 — so instead a new
 * invocation starts from the parent's epoch boundary N under a new pin, with proof:
 *
 * - its journal opens with its own `invocation.pinned` (same tenant and intent, the new pin) whose
 *   `forkOf` names the lineage — the parent, epoch N, the seq and hash of the parent's `epoch.closed`
 *   of epoch N — so the very first record says where the fork comes from (seq 0 stays the pin, as
 *   every reader expects; journals that are not forks have no `forkOf`, and forks written before it
 *   existed have none either); then `invocation.forked` saying the same (replay checks they agree:
 *   `checkForkOf`), what was re-pinned, and the state at that boundary (`ForkState`: the outcomes
 *   the model sees, what was spent, the re-plans, the world effects not compensated and the
 *   compensations they declare, and — under flag 11 — the model-authored ones with their amounts);
 * - the machine starts from that state at epoch N+1 (InvocationInput.from) and runs live;
 * - the parent, if it had not ended, ends `superseded` and sealed, naming the fork. A parent that had
 *   ended otherwise (completed, cancelled, failed, handed off) stays as it was: forking it is a
 *   person's explicit act. A parent that ended superseded is refused, naming its fork
 *   (`supersededRefusal`): one lineage point goes on in one run; the same fork asked again (same
 *   epoch and pin, hence the same derived id) is that fork.
 *
 * Replaying a fork checks its parent's journal up to `parentSeq` — in the store, or in the bundle
 * `weft export` made of the fork, which carries its lineage (journal/bundle-lineage.ts).
 *
 * This module holds the parts that read a parent's records: the state at a boundary (re-derived by
 * replaying the parent's journal up to it, so replay of the fork can re-derive it again and compare),
 * the world effects applied after it (a fork that would apply them a second time, under new keys,
 * is refused, naming them), the fork's id, and the refusals. fork-run.ts does the writing;
 * fork-parent.ts re-derives a parent's state through the runtime and checks a fork's lineage on replay.
 */
import { canonicalize } from '../journal/canonical.js';
import { digestOf } from '../journal/digest.js';
import { forkedBoundary, forkOfDisagreement } from '../journal/lineage.js';
import { WeftError } from '../journal/errors.js';
import type { BodyOf, JournalRecord, Pin } from '../journal/records.js';
import type { AuthoredEffect, EpochPlan } from '../machines/context.js';
import type { Model } from '../actors/model/model.js';
import type { Library } from '../htn/library/schema.js';
import type { AdmissionPolicy } from '../machines/policy.js';
import { replayJournal, type ReplayDeps } from './replay.js';

export interface ForkOptions {
  /** The parent's epoch whose boundary the fork goes on from: an epoch the parent closed. */
  atEpoch: number;
  /** The library version the fork pins: a Library, or one of this runtime's by name or digest (or the store's by digest). Default: the parent's. */
  library?: Library | string;
  /** The model the fork pins and runs with. Default: the parent's pinned model (this runtime's model must be it). */
  model?: Model;
  /** The admission policy the fork pins: one this runtime knows by id, or a policy. Default: the parent's. */
  policy?: string | AdmissionPolicy;
  /** The fork's id. Default: derived from the parent, the epoch and the new pin, so the same fork asked twice is one fork. */
  id?: string;
  /** Act only on that tenant's parent (another's is refused as unknown). Defaults to the runtime's own, which a scoped runtime's call cannot change (tenant-of.ts callScope). */
  tenant?: string;
  /** Why (recorded in the parent's `invocation.superseded`). */
  reason?: string;
  /**
   * A parent held by a live runtime is asked, through its inbox, to come to rest at its next epoch
   * boundary; the fork waits up to this long (ms, default 60 000) for it, then goes on — or is
   * refused, naming the holder, when it did not rest in time. 0: refuse at once.
   */
  waitMs?: number;
}

export type ForkState = BodyOf<'invocation.forked'>['state'];
export type ForkedBody = BodyOf<'invocation.forked'>;
/** A fork's lineage as its `invocation.pinned` names it. */
export type ForkOf = NonNullable<BodyOf<'invocation.pinned'>['forkOf']>;

/** A world effect of the parent: a step that changed the world (not read-only) and was not compensated. */
export interface WorldEffect {
  epoch: number;
  step: number;
  operator: string;
  actuator: string;
  key: string;
  /** True when its completion is not in the journal (dispatched, outcome unknown): it may have been applied. */
  unknown?: boolean;
  compensate?: { actuator: string; args: Record<string, string | number> };
}

/** A fork refused before anything was written. */
export class ForkRefusedError extends WeftError {
  constructor(code: string, message: string) {
    super(code, 'permanent', message);
  }
}

/** A fork whose parent's journal does not prove what the fork's `invocation.forked` says (replay of the fork). */
export class ForkParentError extends WeftError {
  constructor(readonly fork: string, readonly parent: string, problem: string) {
    super('fork.parent_mismatch', 'permanent', `fork ${fork}: its parent ${parent} ${problem}; the fork's journal is not proven by its parent's`);
  }
}

/** What a fork's `invocation.pinned` says of its lineage (`forkOf`): its `invocation.forked`'s parent, epoch, seq and hash. */
export function forkOfBody(forked: Pick<ForkedBody, 'parent' | 'atEpoch' | 'parentSeq' | 'parentHash'>): ForkOf {
  return forkedBoundary(forked);
}

/**
 * A fork's first two records must agree: the pin's `forkOf` (when written: forks made before it was
 * added have none) names the parent, epoch, seq and hash `invocation.forked` names; a pin naming a
 * parent is followed by `invocation.forked`. Throws ForkParentError naming the difference.
 */
export function checkForkOf(pinned: JournalRecord<'invocation.pinned'>, second: JournalRecord | undefined): void {
  const disagreement = forkOfDisagreement(pinned, second);
  if (disagreement === undefined) return;
  const { forkOf, named, forked, secondKind } = disagreement;
  if (forked === undefined) throw new ForkParentError(pinned.body.invocation, forkOf.parent, `is named by the fork's invocation.pinned, but its seq 1 is ${secondKind ? `a ${secondKind}` : 'missing'}, not invocation.forked`);
  throw new ForkParentError(pinned.body.invocation, forkOf.parent, `is named by the fork's invocation.pinned as ${named}, but its invocation.forked says ${forked}`);
}

/**
 * The refusal of a fork of a parent that a fork already superseded: one lineage point goes on in
 * one run. Names the fork to go on from instead — or, when a crash left the parent superseded and the
 * fork not yet written, says to ask for that same fork again.
 */
export function supersededRefusal(parent: string, superseded: BodyOf<'invocation.superseded'>, forkWritten: boolean): ForkRefusedError {
  const by = superseded.by;
  const next = forkWritten
    ? `fork ${by} instead (weft fork ${by} --at-epoch N), or inspect it (weft show ${by})`
    : `its journal was not written (a crash between the two): ask for that same fork again (same epoch ${superseded.atEpoch} and pin, or --id ${by}) to write it`;
  return new ForkRefusedError(
    'fork.parent_superseded',
    `cannot fork ${parent}: it ended superseded by fork ${by} at the end of epoch ${superseded.atEpoch}, and one run goes on from a lineage point — ${next}. Nothing was written`,
  );
}

/** The pin fields that differ between `parent` and `fork`, sorted. */
export function repinnedFields(parent: Pin, fork: Pin): string[] {
  const fields = Object.keys({ ...parent, ...fork }) as (keyof Pin)[];
  return fields.filter((f) => canonicalize(parent[f] ?? null) !== canonicalize(fork[f] ?? null)).sort();
}

/** The id a fork gets when none is given: a digest of its parent, epoch and pin (the same fork asked twice is one fork). */
export function forkId(parent: string, atEpoch: number, pin: Pin): string {
  return `inv-${digestOf({ forkOf: parent, atEpoch, pin }).slice(0, 32)}`;
}

/** The `epoch.closed` record of epoch `atEpoch`, or a refusal naming the epochs the parent closed. */
export function boundaryOf(parent: string, records: readonly JournalRecord[], atEpoch: number): JournalRecord<'epoch.closed'> {
  const closed = records.filter((r) => r.kind === 'epoch.closed') as JournalRecord<'epoch.closed'>[];
  const found = closed.find((r) => r.epoch === atEpoch);
  if (!found) {
    const list = closed.map((r) => r.epoch);
    throw new ForkRefusedError(
      'fork.epoch_not_closed',
      `cannot fork ${parent} at epoch ${atEpoch}: it is not an epoch the parent closed (closed: ${list.length ? list.join(', ') : 'none'}); a fork goes on from an epoch boundary — pick one of those. Nothing was written`,
    );
  }
  return found;
}

/**
 * Replay a parent's records (verified, calling nothing) and read what a fork needs: each epoch's
 * plan, and the machine's state once epoch `atEpoch` closed. The parent's records may end anywhere
 * (a hibernated or unfinished run replays as far as its journal goes).
 */
export async function parentHistory(records: readonly JournalRecord[], deps: Omit<ReplayDeps, 'onState' | 'inspect' | 'onRecord'>, atEpoch: number): Promise<{ plans: Map<number, EpochPlan>; boundary: Boundary | undefined }> {
  const plans = new Map<number, EpochPlan>();
  let boundary: Boundary | undefined;
  await replayJournal(records, {
    ...deps,
    onState: (_value, context) => {
      if (context.plan) plans.set(context.epoch, context.plan);
      if (!boundary && context.epoch === atEpoch + 1) {
        boundary = { epoch: context.epoch, outcomes: JSON.parse(JSON.stringify(context.outcomes)) as unknown[], spent: context.spent ?? 0, replans: context.replans, authored: [...(context.authored ?? [])] };
      }
    },
  });
  return { plans, boundary };
}

/**
 * The world effects the records show in the epochs `within` selects: steps that are not read-only,
 * dispatched and completed (or dispatched with no outcome recorded: maybe applied), and not undone
 * by a completed compensation. A step whose plan is not known counts as a world effect.
 */
export function worldEffects(records: readonly JournalRecord[], plans: ReadonlyMap<number, EpochPlan>, within: (epoch: number) => boolean): WorldEffect[] {
  const at = (epoch: number, step: number) => `${epoch}:${step}`;
  const compensated = new Set<string>();
  const outcome = new Map<string, { kind: 'completed' | 'failed'; key: string }>();
  const dispatched = new Map<string, JournalRecord<'step.dispatched'>>();
  for (const r of records) {
    if (!within(r.epoch)) continue;
    if (r.kind === 'compensation.completed' && !(r as JournalRecord<'compensation.completed'>).body.failure) compensated.add(at(r.epoch, (r as JournalRecord<'compensation.completed'>).body.step));
    if (r.kind === 'step.dispatched') dispatched.set(at(r.epoch, (r as JournalRecord<'step.dispatched'>).body.step), r as JournalRecord<'step.dispatched'>);
    if (r.kind === 'step.completed' || r.kind === 'step.failed') {
      const b = (r as JournalRecord<'step.completed' | 'step.failed'>).body;
      outcome.set(at(r.epoch, b.step), { kind: r.kind === 'step.completed' ? 'completed' : 'failed', key: b.key });
    }
  }
  const effects: WorldEffect[] = [];
  for (const [where, dispatch] of dispatched) {
    const { epoch } = dispatch;
    const { step, actuator, key } = dispatch.body;
    const planned = plans.get(epoch)?.steps[step];
    if (planned?.readOnly) continue;
    if (compensated.has(where)) continue;
    const done = outcome.get(where);
    if (done?.kind === 'failed') continue; // a failed step applied nothing (after its last attempt)
    effects.push({
      epoch,
      step,
      operator: planned?.operator ?? '?',
      actuator: planned?.actuator ?? actuator,
      key: done?.key ?? key,
      ...(done ? {} : { unknown: true }),
      ...(planned?.compensate ? { compensate: planned.compensate } : {}),
    });
  }
  return effects.sort((a, b) => a.epoch - b.epoch || a.step - b.step);
}

/**
 * What a parent that is itself a fork inherited: the effects and obligations its own
 * `invocation.forked` recorded (what its ancestors left done), or none for a parent of its own.
 */
export function inheritedState(parentRecords: readonly JournalRecord[]): Pick<ForkState, 'effects' | 'obligations'> | undefined {
  const second = parentRecords[1];
  if (second?.kind !== 'invocation.forked') return undefined;
  const { effects, obligations } = (second as JournalRecord<'invocation.forked'>).body.state;
  return { effects, obligations };
}

/** The parent's machine state once the fork's boundary epoch closed. */
export interface Boundary {
  epoch: number;
  outcomes: unknown[];
  spent: number;
  replans: number;
  /** The model-authored effects that stay done (flag 11; empty under a parent pinned without it). */
  authored?: AuthoredEffect[];
}

/**
 * The state at the boundary, as `invocation.forked` records it. `inherited` (flag 10): what the
 * parent itself inherited comes first, so a fork of a fork lists every world effect its lineage
 * left done — what a run-wide count and a cancel see — not only its parent's own. `authored` only
 * when there are any (a parent pinned with flag 11 — whose forks pin it too — that a plan from the
 * model acted for): so the fork's run-wide allowance counts its lineage's, and a fork of an older
 * parent records the state it always did.
 */
export function forkState(boundary: Boundary, effects: readonly WorldEffect[], inherited?: Pick<ForkState, 'effects' | 'obligations'>): ForkState {
  return {
    epoch: boundary.epoch,
    outcomes: boundary.outcomes as ForkState['outcomes'],
    spent: boundary.spent,
    replans: boundary.replans,
    effects: [...(inherited?.effects ?? []), ...effects.map((e) => ({ epoch: e.epoch, step: e.step, operator: e.operator, actuator: e.actuator, key: e.key }))],
    obligations: [...(inherited?.obligations ?? []), ...effects.filter((e) => e.compensate).map((e) => ({ epoch: e.epoch, step: e.step, actuator: e.compensate!.actuator, args: e.compensate!.args }))],
    ...(boundary.authored?.length ? { authored: boundary.authored.map((a) => ({ epoch: a.epoch, step: a.step, actuator: a.actuator, key: a.key, amount: a.amount })) } : {}),
  };
}

/** The refusal of a fork whose parent applied world effects after the boundary. */
export function effectsAfterRefusal(parent: string, atEpoch: number, effects: readonly WorldEffect[]): ForkRefusedError {
  const named = effects.map((e) => `epoch ${e.epoch} step ${e.step} ${e.operator} via ${e.actuator} key ${e.key}${e.unknown ? ' (dispatched, outcome not recorded)' : ''}`).join('; ');
  return new ForkRefusedError(
    'fork.uncompensated_effects',
    `cannot fork ${parent} at epoch ${atEpoch}: after that epoch the parent applied ${effects.length} world effect(s) that were not compensated — ${named}. ` +
      `The fork would apply them a second time under new keys. Fork at a later epoch (the last closed one), or let the parent go on. Nothing was written`,
  );
}

/** The statuses a parent may be superseded in: at rest, with no process running it. */
export const SUPERSEDABLE: ReadonlySet<string> = new Set(['hibernated', 'awaiting_approval', 'waiting_timer', 'suspended']);
