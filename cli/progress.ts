/**
 * Live progress of a run, for a terminal: one line per meaningful record as it is written —
 * the goal each epoch parsed, the plan the engine derived, each step and its outcome, rejected
 * replies, approvals, compensations — so `weft run` shows the epochs unfold.
 */
import type { JournalRecord } from '../journal/records.js';

type Body = Record<string, any>;

function brief(value: unknown, width = 90): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

/** The line to print for a record, or undefined for records that are bookkeeping. */
export function progressLine(record: JournalRecord, replayed: boolean): string | undefined {
  const b = record.body as Body;
  const tag = replayed ? ' (read back)' : '';
  const e = `epoch ${record.epoch}`;
  switch (record.kind) {
    case 'invocation.pinned':
      return `pinned      library ${String(b.pin.library).slice(0, 12)}…  seed ${b.pin.seed}  asOf ${b.pin.asOf}  policy ${b.pin.policy}${b.pin.shadow ? `  SHADOW run (${b.pin.shadow.results === 'actuators' ? 'with shadow results' : 'no shadow results: ends after its first shadowed epoch'}): nothing reaches the world` : ''}`;
    case 'model.completed':
      return `${e}  model       ${b.purpose} reply #${b.attempt}: ${brief(b.reply)}${tag}`;
    case 'model.failed':
      return `${e}  model       ${b.purpose} request #${b.attempt} failed (${b.class}): ${brief(b.message, 80)}`;
    case 'state.observed':
      return b.failure ? `${e}  observe     ${b.failure.class} failure: ${brief(b.failure.message, 80)}` : undefined;
    case 'model.rejected':
      return `${e}  rejected    ${brief(b.reason)} — re-prompting`;
    case 'epoch.derived':
      return `${e}  plan        ${b.goal.task}(${b.goal.args.join(', ')}) → ${b.steps} step(s) by ${b.source === 'htn' ? 'the HTN engine' : 'the model (gap path)'}  ${String(b.plan).slice(0, 12)}…`;
    case 'admission.decided':
      return b.decision === 'allow' ? undefined : `${e}  admission   ${b.decision}: ${b.reason ?? ''}`;
    case 'approval.requested':
      return `${e}  approval    needed: ${b.reason} — the run hibernates until someone decides`;
    case 'approval.decided':
      return `${e}  approval    ${b.decision} by ${b.by}`;
    case 'step.dispatched':
      return undefined;
    case 'step.completed':
      return `${e}  step ${String(b.step).padEnd(6)} ok  ${brief(b.result, 80)}${tag}`;
    case 'step.shadowed':
      return `${e}  step ${String(b.step).padEnd(6)} shadowed, not dispatched: ${b.actuator} ${brief(b.args, 50)}${b.failure ? ` — shadow failed (${b.failure.class}): ${brief(b.failure.message, 50)}` : b.source === 'actuator' ? ` → ${brief(b.result, 50)}` : ''}${tag}`;
    case 'step.failed':
      return `${e}  step ${String(b.step).padEnd(6)} ${b.class} failure (attempt ${b.attempt}): ${brief(b.message, 70)}`;
    case 'step.refused':
      return `${e}  step ${String(b.step).padEnd(6)} refused by worker ${brief(b.worker, 40)} (${b.code}), no attempt spent: waiting for a worker that can run it`;
    case 'compensation.completed':
      return `${e}  undo ${String(b.step).padEnd(6)} ${b.failure ? `failed: ${b.failure.message}` : `ok  ${brief(b.result, 70)}`}`;
    case 'compensation.halted':
      return `${e}  undo halted at step ${b.at} (${b.why === 'pivot' ? 'a pivot: no inverse' : 'its compensation failed'}) — NOT undone: ${(b.notUndone as Array<{ step: number; actuator: string }>).map((x) => `step ${x.step} ${x.actuator}`).join(', ')}`;
    case 'timer.set':
      return `${e}  sleep       step ${b.step} until ${b.until} — the run rests until then`;
    case 'timer.fired':
      return `${e}  woke        step ${b.step} at ${b.at}`;
    case 'frontier.truncated':
      return `${e}  truncated   ${b.removed.length} step(s) removed from the plan: ${brief(b.reason, 70)}`;
    case 'epoch.closed':
      return `${e}  closed      ${b.outcome}, ${b.steps} step(s)`;
    case 'invocation.completed':
      return `completed   ${b.summary}`;
    case 'invocation.failed':
      return `failed      ${b.reason}`;
    case 'invocation.handed_off':
      return `handed off  ${b.reason}`;
    case 'invocation.forked':
      return `forked      from ${b.parent} at the end of epoch ${b.atEpoch}; re-pinned: ${(b.repinned as string[]).join(', ') || 'nothing'}`;
    case 'invocation.superseded':
      return `superseded  by fork ${b.by} (at epoch ${b.atEpoch}): ${b.reason}`;
    case 'cancel.requested':
      return `${e}  cancel      asked by ${b.by}${b.reason ? `: ${brief(b.reason, 70)}` : ''} — compensating this epoch's effects`;
    case 'deadline.passed':
      return `${e}  deadline    ${b.deadline} passed — compensating this epoch's effects`;
    case 'invocation.cancelled':
      return `cancelled   by ${b.by}${b.reason ? `: ${b.reason}` : ''}; ${b.kept.length === 0 ? 'no effect stays done' : `${b.kept.length} effect(s) stay done (not undone by the cancel)`}`;
    case 'invocation.rekeyed':
      return `re-keyed    the seal's key is now ${String(b.to).slice(0, 16)} (was ${String(b.from).slice(0, 16)})`;
    case 'invocation.sealed':
      return `sealed      fingerprint ${b.fingerprint}`;
    default:
      return undefined;
  }
}
