/**
 * The epochs of a journal, described one by one for `weft show` and the viewer (describe.ts): each
 * epoch's goal, plan source and digest, admission, its rules' warnings and approval, outcome and truncation, and each
 * step with its actuator, args, outcome, attempts, result or failure, and its compensation.
 *
 * The journal keeps a plan's digest, not its steps: a step is known from its records (dispatched,
 * completed, failed, compensated, its timer) — and, for the plan a snapshot holds for the same
 * epoch and digest, from that plan too (operators, read-only flags, the steps not yet dispatched).
 * Pure: records walked in order, epochs and steps sorted by number.
 */
import type { Json } from '../machines/context.js';
import type { JournalRecord } from '../journal/records.js';
import { SLEEP_ACTUATOR } from '../machines/sleep.js';
import type { SnapshotPlan } from './approval-request.js';

export interface Failure {
  class: string;
  code: string;
  message: string;
}

export interface StepDescription {
  step: number;
  operator: string | null;
  actuator: string | null;
  args: Json;
  readOnly: boolean | null;
  /** `shadowed`: a shadow run's world effect, recorded and never dispatched (result: its shadow result, if any). */
  outcome: 'pending' | 'dispatched' | 'ok' | 'failed' | 'compensated' | 'denied' | 'sleeping' | 'shadowed';
  attempts: number;
  result: Json;
  failure: Failure | null;
  compensation: { actuator: string; attempts: number; outcome: 'ok' | 'failed' | 'dispatched'; result: Json; failure: Failure | null } | null;
  /** Workers that refused the step's job without running it (flag 13: `step.refused`, no attempt spent), in order; absent when none did. */
  refusals?: Array<{ attempt: number; worker: string; code: string; reason: string }>;
}

export interface EpochDescription {
  epoch: number;
  goal: { task: string; args: Json[] } | null;
  source: 'htn' | 'gap' | null;
  /** The gap path: why no method covered the goal, as the planner explained it to the model (the authoring request's `explanation`); null otherwise. */
  noMethod: string | null;
  plan: string | null;
  admission: { decision: string; policy: string; reason: string | null } | null;
  /** The rules that warned on this epoch's admissions (flag 12: authoring call, epoch, steps at dispatch), in journal order; they stopped nothing. */
  warnings: Array<{ subject: 'authoring' | 'epoch' | 'step'; step: number | null; rule: string; reason: string }>;
  approval: { reason: string; decision: 'approved' | 'rejected' | null; by: string | null; note: string | null } | null;
  outcome: 'completed' | 'compensated' | 'denied' | 'failed' | 'handed_off' | 'cancelled' | 'open';
  truncated: { removed: number[]; reason: string } | null;
  steps: StepDescription[];
}

/** The records of each epoch (>= 1), in journal order. */
function byEpoch(records: readonly JournalRecord[]): Map<number, JournalRecord[]> {
  const out = new Map<number, JournalRecord[]>();
  for (const record of records) {
    if (record.epoch < 1 || record.kind.startsWith('invocation.')) continue;
    const list = out.get(record.epoch) ?? [];
    list.push(record);
    out.set(record.epoch, list);
  }
  return out;
}

/** Records that say an epoch planned or did something (an epoch with only model exchanges is the run's last word, not an epoch of work). */
const EPOCH_WORK = new Set(['epoch.derived', 'admission.decided', 'approval.requested', 'step.dispatched', 'step.shadowed', 'timer.set', 'epoch.closed']);

/** Every epoch that planned or did something, in order; one the run ended in without closing it takes the run's ending (`ended`: failed, handed off or cancelled). */
export function epochsOf(records: readonly JournalRecord[], held: SnapshotPlan | undefined, ended: 'completed' | 'failed' | 'handed_off' | 'cancelled' | undefined): EpochDescription[] {
  const out: EpochDescription[] = [];
  const groups = byEpoch(records);
  for (const epoch of [...groups.keys()].sort((a, b) => a - b)) {
    const list = groups.get(epoch)!;
    if (!list.some((r) => EPOCH_WORK.has(r.kind))) continue;
    const described = describeEpoch(epoch, list, held);
    // An epoch the run ended in without closing it ended with the run (failed, handed off, cancelled).
    if (described.outcome === 'open' && ended !== undefined && ended !== 'completed') described.outcome = ended;
    out.push(described);
  }
  return out;
}

function describeEpoch(epoch: number, records: readonly JournalRecord[], held: SnapshotPlan | undefined): EpochDescription {
  const out: EpochDescription = { epoch, goal: null, source: null, noMethod: null, plan: null, admission: null, warnings: [], approval: null, outcome: 'open', truncated: null, steps: [] };
  const steps = new Map<number, StepDescription>();
  const step = (i: number, actuator: string | null = null, args: Json = {}): StepDescription => {
    let draft = steps.get(i);
    if (!draft) {
      draft = { step: i, operator: null, actuator, args, readOnly: null, outcome: 'pending', attempts: 0, result: null, failure: null, compensation: null };
      steps.set(i, draft);
    }
    return draft;
  };
  for (const record of records) {
    switch (record.kind) {
      case 'epoch.derived': {
        const b = (record as JournalRecord<'epoch.derived'>).body;
        out.goal = { task: b.goal.task, args: [...b.goal.args] };
        out.source = b.source === 'authored' ? 'gap' : 'htn';
        out.plan = b.plan;
        break;
      }
      case 'model.requested': {
        // The gap path asks the model to author a plan for the goal no method covered: the epoch's goal, before any plan is derived.
        const b = (record as JournalRecord<'model.requested'>).body;
        const goal = isRecord(b.request) ? b.request.goal : undefined;
        if (b.purpose === 'author' && out.goal === null && isRecord(goal) && typeof goal.task === 'string' && Array.isArray(goal.args)) {
          out.goal = { task: goal.task, args: [...(goal.args as Json[])] };
          out.source = 'gap';
        }
        if (b.purpose === 'author' && isRecord(b.request) && typeof b.request.explanation === 'string') out.noMethod = b.request.explanation;
        break;
      }
      case 'admission.decided': {
        const b = (record as JournalRecord<'admission.decided'>).body;
        for (const w of b.warnings ?? []) out.warnings.push({ subject: b.subject, step: b.step ?? null, rule: w.rule, reason: w.reason });
        if (b.subject === 'epoch' || b.subject === 'authoring') {
          // The epoch's own decision wins over the authoring call's (which comes first).
          if (b.subject === 'epoch' || out.admission === null) out.admission = { decision: b.decision, policy: b.policy, reason: b.reason ?? null };
        } else if (b.step !== undefined && b.decision !== 'allow') {
          const s = step(b.step);
          s.outcome = 'denied';
          s.failure = { class: 'policy', code: 'step.denied', message: b.reason ?? b.decision };
        }
        break;
      }
      case 'approval.requested':
        out.approval = { reason: (record as JournalRecord<'approval.requested'>).body.reason, decision: null, by: null, note: null };
        break;
      case 'approval.decided': {
        const b = (record as JournalRecord<'approval.decided'>).body;
        out.approval = { reason: out.approval?.reason ?? '', decision: b.decision, by: b.by, note: b.note ?? null };
        break;
      }
      case 'step.dispatched': {
        const b = (record as JournalRecord<'step.dispatched'>).body;
        const s = step(b.step, b.actuator, b.args);
        s.actuator = b.actuator;
        s.args = b.args;
        s.attempts = Math.max(s.attempts, b.attempt);
        s.outcome = 'dispatched';
        s.failure = null;
        break;
      }
      case 'step.shadowed': {
        const b = (record as JournalRecord<'step.shadowed'>).body;
        const s = step(b.step, b.actuator, b.args);
        s.actuator = b.actuator;
        s.args = b.args;
        s.outcome = 'shadowed';
        s.result = b.result;
        s.failure = b.failure ? { ...b.failure } : null;
        break;
      }
      case 'step.completed': {
        const b = (record as JournalRecord<'step.completed'>).body;
        const s = step(b.step);
        s.outcome = 'ok';
        s.result = b.result;
        s.failure = null;
        break;
      }
      case 'step.failed': {
        const b = (record as JournalRecord<'step.failed'>).body;
        const s = step(b.step);
        s.outcome = 'failed';
        s.failure = { class: b.class, code: b.code, message: b.message };
        break;
      }
      case 'step.refused': {
        const b = (record as JournalRecord<'step.refused'>).body;
        const s = step(b.step);
        (s.refusals ??= []).push({ attempt: b.attempt, worker: b.worker, code: b.code, reason: b.reason });
        break;
      }
      case 'timer.set': {
        const b = (record as JournalRecord<'timer.set'>).body;
        const s = step(b.step, SLEEP_ACTUATOR, { until: b.until });
        s.outcome = 'sleeping';
        break;
      }
      case 'timer.fired': {
        const b = (record as JournalRecord<'timer.fired'>).body;
        const s = step(b.step, SLEEP_ACTUATOR);
        s.outcome = 'ok';
        s.attempts = 1;
        s.result = { woke: b.at };
        break;
      }
      case 'compensation.dispatched': {
        const b = (record as JournalRecord<'compensation.dispatched'>).body;
        const s = step(b.step);
        const attempts = Math.max(s.compensation?.attempts ?? 0, b.attempt);
        s.compensation = { actuator: b.actuator, attempts, outcome: 'dispatched', result: null, failure: null };
        break;
      }
      case 'compensation.completed': {
        const b = (record as JournalRecord<'compensation.completed'>).body;
        const s = step(b.step);
        const c = s.compensation ?? { actuator: s.actuator ?? '?', attempts: b.attempt, outcome: 'dispatched' as const, result: null, failure: null };
        s.compensation = b.failure ? { ...c, outcome: 'failed', result: null, failure: { ...b.failure } } : { ...c, outcome: 'ok', result: b.result, failure: null };
        if (!b.failure && s.outcome === 'ok') s.outcome = 'compensated';
        break;
      }
      case 'frontier.truncated': {
        const b = (record as JournalRecord<'frontier.truncated'>).body;
        out.truncated = { removed: [...b.removed], reason: b.reason };
        break;
      }
      case 'epoch.closed':
        out.outcome = (record as JournalRecord<'epoch.closed'>).body.outcome;
        break;
      default:
        break;
    }
  }
  // The plan the snapshot holds, when it is this epoch's: operators, and the steps not yet dispatched.
  if (held && held.epoch === epoch && held.digest === out.plan) {
    for (const planned of held.steps) {
      const s = step(planned.step, planned.actuator, planned.args);
      s.operator = planned.operator;
      s.readOnly = planned.readOnly;
      if (s.actuator === null) s.actuator = planned.actuator;
    }
  }
  out.steps = [...steps.keys()].sort((a, b) => a - b).map((i) => steps.get(i)!);
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
