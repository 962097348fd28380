/**
 * One invocation described in detail — what `weft show` prints and the viewer renders. A pure
 * function over what a store holds for the invocation (describe-load.ts reads it): its listing row
 * (list.ts: the same status, reason and fix as `weft ls`, never computed twice), the journal
 * records that verified, the latest snapshot, the status note and the inbox.
 *
 * The description is plain JSON and stable: fields are only ever added (then `version` stays 1);
 * renaming or removing one raises `version`. Every field below is always present (null when it
 * does not apply), so a reader never tests for absence:
 *
 *   version       1
 *   id, tenant, intent              tenant/intent null when the journal has no readable pin
 *   intentCut     { chars, digest } | null — the intent was over the pinned cap; `intent` is a prefix
 *   status        the listing's status (completed, failed, handed_off, cancelled, awaiting_approval,
 *                 waiting_timer, hibernated, suspended, running, interrupted, damaged)
 *   reason        why it is in that status (the listing's reason; for a failed or handed-off run,
 *                 its ending's reason), or null
 *   problem       what is wrong with a damaged invocation, or null
 *   fix           the listing's advice (the `→` line of `weft ls`), or null
 *   records       journal records that verified
 *   journal       { verified: boolean, problem: string | null } — problem: the first record that did not verify
 *   pin           { library, runtime, seed, asOf, policy, flags, model: { id, params }, limits, spenders, deadline, shadow? } | null
 *                 deadline: the pinned deadline (ISO 8601), null when none; a pinned step timeout is
 *                 `limits.stepTimeoutMs` (absent: none)
 *                 shadow: { results: 'none' | 'actuators' } on a shadow run only (nothing of it reached the world)
 *                 spenders: [{ actuator, arg }] pinned under flag 2 (empty: none declared), null before it
 *   epochs        [{ epoch, goal: { task, args } | null, source: 'htn' | 'gap' | null, plan (digest) | null,
 *                    admission: { decision, policy, reason } | null,
 *                    approval: { reason, decision: 'approved' | 'rejected' | null, by, note } | null,
 *                    outcome: 'completed' | 'compensated' | 'denied' | 'failed' | 'handed_off' | 'cancelled' | 'open',
 *                    truncated: { removed: number[], reason } | null,
 *                    steps: [step] }]
 *                 goal: the derived plan's, or the one a gap-path epoch asked the model to author for;
 *                 outcome: its epoch.closed's, else the run's ending when it ended in it, else open
 *     step        { step, operator | null, actuator | null, args, readOnly | null,
 *                   outcome: 'pending' | 'dispatched' | 'ok' | 'failed' | 'compensated' | 'denied' | 'sleeping' | 'shadowed',
 *                   attempts, result | null, failure: { class, code, message } | null,
 *                   compensation: { actuator, attempts, outcome: 'ok' | 'failed' | 'dispatched', result, failure } | null }
 *                 operator/readOnly are known only for the plan a snapshot holds (the journal keeps a
 *                 plan's digest); `pending`: planned, not dispatched; `dispatched`: no completion
 *                 recorded (in flight, or its runtime stopped); `compensated`: done, then undone.
 *   waiting       what a resting invocation waits for, or null:
 *                   { kind: 'approval', reason, plan, steps: AskedStep[] | null, decided: { decision, by, note } | null }
 *                   { kind: 'timer', step, until }
 *                   { kind: 'hibernated' }
 *                   { kind: 'suspended', class, code, reason, state }
 *   ending        { status, summary, code, class, reason } of a sealed run (a cancelled one adds
 *                 `kept`: the effects that stay done, as its invocation.cancelled lists them), or null
 *   seal          { fingerprint, keyId } of a sealed run, or null
 *   lineage       { forkOf: { parent, atEpoch, parentSeq, parentHash } | null, supersededBy: string | null }:
 *                 a fork's parent (its pin's `forkOf`, or its `invocation.forked` for a fork written
 *                 before the pin named it) and the fork that superseded a run (runtime/fork.ts)
 *   commands      [{ command, does }] — what acts on it now, without location flags (the CLI
 *                 appends `--dir D` or `--redis URL`); each runs as printed in a POSIX shell: the
 *                 approver is `"$USER"` (APPROVER: `weft show` prints the user's name there), no
 *                 `<placeholder>` a shell would read as a redirection
 *
 * Untrusted text: the intent, goals, args, results, failure messages, summaries and notes came
 * from a person, a model or an actuator. They are carried as data, never interpreted; whoever
 * prints them escapes them (cli/terminal-text.ts).
 *
 * Pure: no I/O, no clock; records are walked in order and steps sorted by index.
 */
import type { JournalRecord, Pin } from '../journal/records.js';
import type { InboxMessage, Snapshot, StatusNote } from '../journal/store.js';
import { askedSteps, snapshotPlan, type AskedStep } from './approval-request.js';
import { epochsOf, type EpochDescription } from './describe-epoch.js';
import type { InvocationSummary, ListedStatus } from './list.js';

export type { EpochDescription, Failure, StepDescription } from './describe-epoch.js';

export const DESCRIPTION_VERSION = 1;

export interface DescribeInput {
  /** The invocation's row of the listing (list.ts `invocationSummary`). */
  summary: InvocationSummary;
  /** The journal's records that verified, in order from seq 0. */
  records: readonly JournalRecord[];
  /** Why the journal stopped verifying before its end, if it did. */
  journalProblem?: string;
  snapshot?: Snapshot;
  note?: StatusNote;
  inbox?: InboxMessage;
}

export type Waiting =
  | { kind: 'approval'; reason: string | null; plan: string | null; steps: AskedStep[] | null; decided: { decision: string; by: string; note: string | null } | null }
  | { kind: 'timer'; step: number | null; until: string | null }
  | { kind: 'hibernated' }
  | { kind: 'suspended'; class: string | null; code: string | null; reason: string | null; state: string | null };

export interface CommandDescription {
  /** The command line, without location flags. */
  command: string;
  /** What it does, in a few words. */
  does: string;
}

export interface InvocationDescription {
  version: typeof DESCRIPTION_VERSION;
  id: string;
  tenant: string | null;
  intent: string | null;
  intentCut: { chars: number; digest: string } | null;
  status: ListedStatus;
  reason: string | null;
  problem: string | null;
  fix: string | null;
  records: number;
  journal: { verified: boolean; problem: string | null };
  pin: (Omit<Pin, 'limits' | 'spenders' | 'deadline'> & { limits: Record<string, number> | null; spenders: NonNullable<Pin['spenders']> | null; deadline: string | null }) | null;
  epochs: EpochDescription[];
  waiting: Waiting | null;
  ending: { status: 'completed' | 'failed' | 'handed_off' | 'cancelled' | 'superseded'; summary: string | null; code: string | null; class: string | null; reason: string | null; kept?: JournalRecord<'invocation.cancelled'>['body']['kept'] } | null;
  seal: { fingerprint: string; keyId: string } | null;
  lineage: { forkOf: { parent: string; atEpoch: number; parentSeq: number; parentHash: string } | null; supersededBy: string | null };
  commands: CommandDescription[];
}

/** Describe one invocation (see the header for every field). */
export function invocationDescription(input: DescribeInput): InvocationDescription {
  const { summary, records } = input;
  const pinned = records[0]?.kind === 'invocation.pinned' ? (records[0] as JournalRecord<'invocation.pinned'>).body : undefined;
  const ending = endingOf(records);
  const seal = sealOf(records);
  const held = snapshotPlan(input.snapshot);
  // A superseded run's open epoch stays open (the fork goes on from an earlier boundary); a cancelled run's ended cancelled.
  const epochs = epochsOf(records, held, ending?.status === 'superseded' ? undefined : ending?.status);
  return {
    version: DESCRIPTION_VERSION,
    id: summary.id,
    tenant: pinned?.tenant ?? null,
    intent: pinned?.intent ?? null,
    intentCut: pinned?.intentCut ?? null,
    status: summary.status,
    reason: summary.reason ?? ending?.reason ?? null,
    problem: summary.problem ?? null,
    fix: summary.fix ?? null,
    records: records.length,
    journal: { verified: input.journalProblem === undefined, problem: input.journalProblem ?? null },
    pin: pinned ? { ...pinned.pin, limits: pinned.pin.limits ?? null, spenders: pinned.pin.spenders ?? null, deadline: pinned.pin.deadline ?? null } : null,
    epochs,
    waiting: waitingOf(input, epochs),
    ending,
    seal,
    lineage: lineageOf(records),
    commands: commandsFor(summary),
  };
}

/** Where a fork comes from (its pin's `forkOf`, else its `invocation.forked`), and the fork that superseded a run. */
function lineageOf(records: readonly JournalRecord[]): InvocationDescription['lineage'] {
  const pinned = records[0]?.kind === 'invocation.pinned' ? (records[0] as JournalRecord<'invocation.pinned'>).body : undefined;
  const forked = records[1]?.kind === 'invocation.forked' ? (records[1] as JournalRecord<'invocation.forked'>).body : undefined;
  const from = pinned?.forkOf ?? forked;
  const superseded = records.slice(-2).find((r) => r.kind === 'invocation.superseded') as JournalRecord<'invocation.superseded'> | undefined;
  return {
    forkOf: from ? { parent: from.parent, atEpoch: from.atEpoch, parentSeq: from.parentSeq, parentHash: from.parentHash } : null,
    supersededBy: superseded?.body.by ?? null,
  };
}


function endingOf(records: readonly JournalRecord[]): InvocationDescription['ending'] {
  for (let i = records.length - 1; i >= 0 && i >= records.length - 2; i--) {
    const record = records[i]!;
    if (record.kind === 'invocation.completed') return { status: 'completed', summary: (record as JournalRecord<'invocation.completed'>).body.summary, code: null, class: null, reason: null };
    if (record.kind === 'invocation.failed') {
      const b = (record as JournalRecord<'invocation.failed'>).body;
      return { status: 'failed', summary: null, code: b.code, class: b.class, reason: b.reason };
    }
    if (record.kind === 'invocation.handed_off') return { status: 'handed_off', summary: null, code: null, class: null, reason: (record as JournalRecord<'invocation.handed_off'>).body.reason };
    if (record.kind === 'invocation.superseded') {
      const b = (record as JournalRecord<'invocation.superseded'>).body;
      return { status: 'superseded', summary: null, code: null, class: null, reason: `superseded by fork ${b.by} at epoch ${b.atEpoch}: ${b.reason}` };
    }
    if (record.kind === 'invocation.cancelled') {
      const b = (record as JournalRecord<'invocation.cancelled'>).body;
      return { status: 'cancelled', summary: null, code: null, class: null, reason: `cancelled by ${b.by}${b.reason ? `: ${b.reason}` : ''}`, kept: b.kept };
    }
  }
  return null;
}

function sealOf(records: readonly JournalRecord[]): InvocationDescription['seal'] {
  const last = records.at(-1);
  if (last?.kind !== 'invocation.sealed') return null;
  const b = (last as JournalRecord<'invocation.sealed'>).body;
  return { fingerprint: b.fingerprint, keyId: b.keyId };
}

/** What a resting invocation waits for (by the listing's status; details from the journal, snapshot, note and inbox). */
function waitingOf(input: DescribeInput, epochs: readonly EpochDescription[]): Waiting | null {
  const { summary, snapshot, note, inbox } = input;
  const context = contextOf(snapshot);
  switch (summary.status) {
    case 'awaiting_approval': {
      const current = epochs.at(-1);
      const plan = current?.plan ?? null;
      const steps = current && plan ? (askedSteps(snapshot, current.epoch, plan) ?? null) : null;
      const decided = inbox?.type === 'approval' ? { decision: inbox.decision, by: inbox.by, note: inbox.note ?? null } : null;
      return { kind: 'approval', reason: current?.approval?.reason ?? null, plan, steps, decided };
    }
    case 'waiting_timer': {
      const timer = isRecord(context?.timer) ? context.timer : undefined;
      return { kind: 'timer', step: typeof timer?.step === 'number' ? timer.step : null, until: summary.wakeAt ?? (typeof timer?.until === 'string' ? timer.until : null) };
    }
    case 'hibernated':
      return { kind: 'hibernated' };
    case 'suspended': {
      const suspension = isRecord(context?.suspension) && valueOf(snapshot) === 'suspended' ? context.suspension : undefined;
      const str = (v: unknown) => (typeof v === 'string' ? v : null);
      return {
        kind: 'suspended',
        class: summary.suspendedAs ?? str(suspension?.class) ?? note?.class ?? null,
        code: str(suspension?.code) ?? note?.code ?? null,
        reason: summary.reason ?? null,
        state: str(suspension?.state),
      };
    }
    default:
      return null;
  }
}

/** Who approves, in the commands: the shell's user (`weft show` prints the user's name in its place: cli/hints.ts approverWord). */
export const APPROVER = '"$USER"';

/** The commands that act on the invocation in its status (location flags are the caller's). */
function commandsFor(summary: InvocationSummary): CommandDescription[] {
  const id = summary.id;
  switch (summary.status) {
    case 'awaiting_approval':
      if (summary.decided) return [{ command: `weft resume ${id}`, does: 'record the decision waiting in its inbox and go on (weft serve does it too)' }];
      if (summary.approvalOf === 'authoring') {
        return [
          { command: `weft approve ${id} --by ${APPROVER}`, does: 'let the model author a fragment for the goal (each of its steps is still admitted)' },
          { command: `weft approve ${id} --by ${APPROVER} --reject`, does: 'refuse: the epoch closes as denied and the model is asked for another goal' },
        ];
      }
      return [
        { command: `weft approve ${id} --by ${APPROVER}`, does: 'approve the steps above and continue' },
        { command: `weft approve ${id} --by ${APPROVER} --reject`, does: 'reject them: the epoch closes as denied and the model is asked for another goal' },
      ];
    case 'hibernated':
      return [{ command: `weft resume ${id}`, does: 'continue from its snapshot' }];
    case 'waiting_timer':
      return [{ command: `weft resume ${id}`, does: 'wake it once it is due (weft serve does it then; earlier, it rests again)' }];
    case 'suspended':
      return [{ command: `weft resume ${id}`, does: 'continue where it stopped, once the cause is fixed' }];
    case 'interrupted':
      return [{ command: `weft resume ${id}`, does: 'take it over and continue from what is durable (weft serve does it too)' }];
    case 'pending':
      return [{ command: `weft resume ${id}`, does: 'run it here (weft serve takes it up too)' }];
    case 'completed':
    case 'failed':
    case 'handed_off':
    case 'superseded':
    case 'cancelled':
      return [
        { command: `weft replay ${id}`, does: 're-derive the run from its journal, calling nothing, and check its fingerprint' },
        { command: `weft export ${id}`, does: 'print a bundle (journal, library, public key) that weft verify checks anywhere' },
      ];
    default:
      return [];
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function contextOf(snapshot: Snapshot | undefined): Record<string, unknown> | undefined {
  const data = snapshot?.data;
  return isRecord(data) && isRecord(data.context) ? data.context : undefined;
}

function valueOf(snapshot: Snapshot | undefined): unknown {
  return isRecord(snapshot?.data) ? snapshot.data.value : undefined;
}
