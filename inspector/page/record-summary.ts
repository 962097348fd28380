/**
 * One line saying what a journal record says, for the journal view of an invocation's page: the
 * step and actuator of a dispatch with its args, an admission's decision and the rule that made it,
 * a failure's class and code, an approval's decider. One summariser per record kind, in a table
 * that must name every kind of journal/records.ts (the compiler refuses a missing one; a unit test
 * checks that no kind's summary is empty), so a new kind cannot be forgotten here.
 *
 * Pure: no DOM, no clock. A body is read defensively — a journal that failed verification may hold
 * any shape — and values are bounded (a long reply or result is cut, the page shows the whole body
 * pretty-printed under the line). The text is untrusted (intents, args, replies): the page puts it
 * in as text through dom.ts, which makes control and bidi characters visible.
 */
import type { RecordKind } from '../../journal/records.js';

type Body = Record<string, unknown>;

/** A value as short text: a string as it is, anything else as compact JSON, cut at `max` characters. */
function short(value: unknown, max = 80): string {
  const text = typeof value === 'string' ? value : value === undefined ? '' : (JSON.stringify(value) ?? String(value));
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A value as JSON (a string quoted), cut at `max` characters. */
function json(value: unknown, max = 80): string {
  const text = value === undefined ? '' : (JSON.stringify(value) ?? String(value));
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A digest's first 12 hex digits. */
const digest = (value: unknown) => short(value, 200).slice(0, 12);

const obj = (value: unknown): Body => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Body) : {});
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
/** ` — text` when there is text, else nothing. */
const dash = (value: unknown, max = 160) => (value === undefined || value === null || value === '' ? '' : ` — ${short(value, max)}`);
/** A failure's `class code: message`. */
const failure = (f: Body) => `${short(f.class, 20)} ${short(f.code, 60)}${f.message ? `: ${short(f.message, 140)}` : ''}`;
/** A call: `actuator(args)`, the args as JSON without their outer brackets when they are an object or array. */
const call = (actuator: unknown, args: unknown) => `${short(actuator, 60)}(${json(args, 100).replace(/^[[{]|[\]}]$/g, '')})`;

/** Each kind's summary of its body (see the header). */
const SUMMARIES = {
  'invocation.pinned': (b) => {
    const pin = obj(b.pin);
    const fork = obj(b.forkOf);
    return `${short(b.tenant, 40)}: ${json(b.intent, 120)}${b.intentCut ? ' (cut)' : ''} · policy ${short(pin.policy, 40)} · model ${short(obj(pin.model).id, 40)} · seed ${short(pin.seed, 20)}${fork.parent ? ` · fork of ${short(fork.parent, 40)} at epoch ${short(fork.atEpoch)}` : ''}`;
  },
  'admission.decided': (b) =>
    `${short(b.subject, 20)}${b.step !== undefined ? ` #${short(b.step)}` : ''}: ${short(b.decision, 20).replace(/_/g, ' ')} by ${short(b.policy, 60)}${b.rule ? ` (rule ${short(b.rule, 60)})` : ''}${dash(b.reason)}${list(b.warnings).length ? ` · ${plural(list(b.warnings).length, 'warning')}` : ''}`,
  'model.requested': (b) => `${short(b.purpose, 20)} · attempt ${short(b.attempt)} · asked the model`,
  'model.completed': (b) => `${short(b.purpose, 20)} · attempt ${short(b.attempt)} · replied ${short(b.reply, 120)}${b.refused ? ` · refused: ${short(obj(b.refused).code, 60)}` : ''}`,
  'model.failed': (b) => `${short(b.purpose, 20)} · attempt ${short(b.attempt)} · call failed: ${failure(b)}`,
  'model.rejected': (b) => `attempt ${short(b.attempt)} rejected: ${short(b.reason, 200)}`,
  'state.observed': (b) => `observed by ${short(b.actuator, 60)}${b.failure ? ` — failed: ${failure(obj(b.failure))}` : `: ${json(b.state, 120)}`}`,
  'epoch.derived': (b) => {
    const goal = obj(b.goal);
    return `${short(b.source, 20)} plan for ${short(goal.task, 60)}(${list(goal.args).map((a) => short(a, 40)).join(', ')}) · ${plural(Number(b.steps) || 0, 'step')} · plan ${digest(b.plan)}`;
  },
  'epoch.certified': (b) => `plan ${digest(b.plan)} certified under policy ${short(b.policy, 60)}`,
  'approval.requested': (b) => `approval asked for ${b.subject === 'authoring' ? 'authoring a fragment' : `plan ${digest(b.plan)}`}${dash(b.reason, 200)}`,
  'approval.decided': (b) => `${short(b.decision, 20)} by ${short(b.by, 60)}${dash(b.note, 200)}`,
  'step.dispatched': (b) => `#${short(b.step)} → ${call(b.actuator, b.args)} · attempt ${short(b.attempt)}`,
  'step.completed': (b) => `#${short(b.step)} done · attempt ${short(b.attempt)} → ${json(b.result, 120)}`,
  'step.failed': (b) => `#${short(b.step)} failed · attempt ${short(b.attempt)}: ${failure(b)}`,
  'step.refused': (b) => `#${short(b.step)} refused by worker ${short(b.worker, 60)} (${short(b.code, 60)}), no attempt spent${dash(b.reason)}`,
  'step.shadowed': (b) =>
    `#${short(b.step)} → ${call(b.actuator, b.args)} shadowed, not dispatched${b.failure ? ` — shadow failed: ${failure(obj(b.failure))}` : b.source === 'actuator' ? ` → ${json(b.result, 100)}` : ' (no shadow result)'}`,
  'compensation.dispatched': (b) => `undo #${short(b.step)} → ${call(b.actuator, b.args)} · attempt ${short(b.attempt)}`,
  'compensation.completed': (b) => `undo #${short(b.step)} ${b.failure ? `failed · attempt ${short(b.attempt)}: ${failure(obj(b.failure))}` : `done · attempt ${short(b.attempt)} → ${json(b.result, 100)}`}`,
  'compensation.halted': (b) =>
    `compensation halted at #${short(b.at)} (${short(b.why, 30).replace(/_/g, ' ')}): ${list(b.undone).length} undone, ${list(b.notUndone).length} stay applied${dash(b.reason)}`,
  'timer.set': (b) => `#${short(b.step)} sleeps until ${short(b.until, 40)}`,
  'timer.fired': (b) => `#${short(b.step)} timer fired at ${short(b.at, 40)}`,
  'frontier.truncated': (b) => `epoch ${short(b.epoch)} frontier cut: removed ${list(b.removed).map((n) => `#${short(n)}`).join(', ') || 'nothing'}${dash(b.reason)}`,
  'epoch.closed': (b) => `epoch closed ${short(b.outcome, 20)} · ${plural(Number(b.steps) || 0, 'step')}`,
  'cancel.requested': (b) => `cancel asked by ${short(b.by, 60)} at ${short(b.at, 40)}${dash(b.reason)}`,
  'deadline.passed': (b) => `deadline ${short(b.deadline, 40)} passed (seen at ${short(b.at, 40)})`,
  'invocation.completed': (b) => `completed${dash(b.summary, 200)}`,
  'invocation.failed': (b) => `failed: ${short(b.class, 20)} ${short(b.code, 60)}${dash(b.reason, 200)}`,
  'invocation.handed_off': (b) => `handed off to a person${dash(b.reason, 200)}`,
  'invocation.forked': (b) => `fork of ${short(b.parent, 60)} from the end of epoch ${short(b.atEpoch)} (its seq ${short(b.parentSeq)})${list(b.repinned).length ? ` · repinned ${list(b.repinned).map((r) => short(r, 30)).join(', ')}` : ' · same pin'}`,
  'invocation.superseded': (b) => `superseded by fork ${short(b.by, 60)} after epoch ${short(b.atEpoch)}${dash(b.reason)}`,
  'invocation.cancelled': (b) => `cancelled by ${short(b.by, 60)}${dash(b.reason)} · ${plural(list(b.kept).length, 'effect')} kept`,
  'invocation.rekeyed': (b) => `re-keyed: sealed by key ${digest(b.to)} from here on (was ${digest(b.from)})`,
  'invocation.sealed': (b) => `sealed (${short(b.algorithm, 20)}) by key ${digest(b.keyId)} · fingerprint ${digest(b.fingerprint)}`,
} satisfies Record<RecordKind, (body: Body) => string>;

/** The kinds this module summarises (the test compares them with journal/records.ts `recordKinds`). */
export const summarisedKinds = Object.keys(SUMMARIES).sort();

/** One line for a record of `kind` with `body`; a kind this viewer does not know is summarised by its body. */
export function recordSummary(kind: unknown, body: unknown): string {
  const summarise = typeof kind === 'string' && Object.hasOwn(SUMMARIES, kind) ? SUMMARIES[kind as RecordKind] : undefined;
  let line: string;
  if (!summarise) line = `unknown kind: ${json(body, 160) || 'no body'}`;
  else {
    try {
      line = summarise(obj(body));
    } catch {
      line = `unreadable body: ${json(body, 160)}`;
    }
  }
  // One line: a line break or tab inside a recorded string is written as its escape.
  return line.replace(/[\n\r\t]/g, (c) => (c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'));
}

/** Whether a record of `kind` says something went wrong (its summary is shown in red). */
export function isSadKind(kind: unknown): boolean {
  return typeof kind === 'string' && /\.(rejected|failed|halted|refused|passed|truncated|cancelled)$|^model\.failed$/.test(kind);
}
