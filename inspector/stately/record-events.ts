/**
 * Per-step progress for the Stately inspector: an event synthesized from each durable journal record
 * that marks work within an epoch — a step dispatched, completed or failed, a compensation, an
 * approval asked or decided, a plan derived, an epoch closed. The machine itself moves once per
 * epoch boundary (`execute` is one actor), so without these the inspector would show an epoch's
 * steps as nothing at all.
 *
 * An event carries the record's seq, the step number, the actuator, the attempt, a failure's class
 * and code — never args, results, observations, a model's reply or a person's note: those are
 * customer data (and may be redacted), and the inspector is a page on someone else's server.
 * Pure: a record in, an event (or none) out.
 */
import type { JournalRecord } from '../../journal/records.js';

export interface SynthesizedEvent {
  type: string;
  seq: number;
  epoch: number;
  [field: string]: unknown;
}

type Body = Record<string, unknown>;
/** The fields of `body` that hold a scalar (a plain loop: this runs for every durable record of a relayed run). */
const pick = (body: Body, ...fields: string[]): Body => {
  const out: Body = {};
  for (const f of fields) {
    const v = body[f];
    if (v !== undefined && typeof v !== 'object') out[f] = v;
  }
  return out;
};

/** The event a durable record stands for in the inspector, or undefined for records that mark no progress. */
export function recordEvent(record: Pick<JournalRecord, 'seq' | 'kind' | 'epoch' | 'body'>): SynthesizedEvent | undefined {
  const body = (record.body ?? {}) as Body;
  const at = { seq: record.seq, epoch: record.epoch };
  switch (record.kind) {
    case 'step.dispatched':
      return { type: 'weft.step.dispatched', ...at, ...pick(body, 'step', 'actuator', 'attempt') };
    case 'step.completed':
      return { type: 'weft.step.completed', ...at, ...pick(body, 'step', 'attempt') };
    case 'step.shadowed':
      return { type: 'weft.step.shadowed', ...at, ...pick(body, 'step', 'actuator', 'source') };
    case 'step.failed':
      return { type: 'weft.step.failed', ...at, ...pick(body, 'step', 'attempt', 'class', 'code') };
    case 'step.refused':
      return { type: 'weft.step.refused', ...at, ...pick(body, 'step', 'attempt', 'code', 'worker') };
    case 'compensation.dispatched':
      return { type: 'weft.compensation.dispatched', ...at, ...pick(body, 'step', 'actuator', 'attempt') };
    case 'compensation.completed': {
      const failure = typeof body.failure === 'object' && body.failure !== null ? (body.failure as Body) : undefined;
      return { type: failure ? 'weft.compensation.failed' : 'weft.compensation.completed', ...at, ...pick(body, 'step', 'attempt'), ...(failure ? pick(failure, 'class', 'code') : {}) };
    }
    case 'approval.requested':
      return { type: 'weft.approval.requested', ...at };
    case 'approval.decided':
      return { type: 'weft.approval.decided', ...at, ...pick(body, 'decision') };
    case 'epoch.derived':
      return { type: 'weft.epoch.derived', ...at, ...pick(body, 'source', 'steps') };
    case 'epoch.closed':
      return { type: 'weft.epoch.closed', ...at, ...pick(body, 'outcome', 'steps') };
    case 'frontier.truncated':
      return { type: 'weft.frontier.truncated', ...at };
    case 'timer.set':
      return { type: 'weft.timer.set', ...at, ...pick(body, 'step', 'until') };
    case 'timer.fired':
      return { type: 'weft.timer.fired', ...at, ...pick(body, 'step') };
    case 'cancel.requested':
      return { type: 'weft.cancel.requested', ...at, ...pick(body, 'by') };
    case 'deadline.passed':
      return { type: 'weft.deadline.passed', ...at, ...pick(body, 'deadline') };
    case 'invocation.sealed':
      return { type: 'weft.sealed', ...at, ...pick(body, 'fingerprint') };
    default:
      return undefined;
  }
}
