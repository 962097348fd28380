/**
 * `weft log <journal.jsonl | bundle | id> [--width N] [--dir D | --redis URL]` — a readable view of
 * a journal (a file, the journal an exported bundle carries, or an invocation's in a store by id:
 * cli/journal-source.ts), one line per record:
 * seq, epoch, kind and a short per-kind summary of the body, then the unhashed envelope (wall
 * time, writer) marked as unverified, and a final line with the verification status.
 *
 * Invariants: only records the reader accepted are summarised (their bodies are schema-checked,
 * so the summaries can trust their types); on a broken journal the records before the bad one
 * are shown, then the bad line raw, then the error — the view never hides where a journal breaks.
 * The envelope is never presented as verified. Exit codes (cli/exit-codes.ts): 0 intact, 1 broken,
 * 2 usage, unreadable, or no such file or invocation. `--json`: one line, `{ journal, invocation,
 * tenant, ok, problem, records: [{ seq, epoch, kind, summary }] }` — or, refused, the failure line of
 * json-line.ts (`refused: invocation.not_found` for an unknown id, as every command answers it).
 */
import type { JournalRecord, RecordKind, BodyOf } from '../../journal/records.js';
import { splitJournalText } from '../../journal/reader.js';
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { readJournal, statusLines } from '../../journal/bundle-check.js';
import { BundleError, looksLikeBundle, parseBundle } from '../../journal/bundle.js';
import { journalSource, readJournalFile } from '../journal-source.js';
import { tenantOption } from '../tenant-scope.js';
import { storeOptions, storeUsage } from '../store-choice.js';
import { EXIT, REFUSED, refusalCode } from '../exit-codes.js';
import { printFailureLine, printJsonLine } from '../json-line.js';

export const usage =
  `log <journal.jsonl | bundle | id> [--width N] [--dir D] [--tenant T] ${storeUsage} [--json]\n` +
  '                                       show a journal, an exported bundle\'s, or an invocation\'s in the workspace (--dir) or\n' +
  '                                       in Redis (--redis URL) by id, one line per record, and its verification status';

type Summaries = { [K in RecordKind]: (body: BodyOf<K>) => string };

/** Compact JSON, for args/results/replies. */
function j(value: unknown): string {
  return JSON.stringify(value) ?? 'undefined';
}

function short(digest: string): string {
  return `${digest.slice(0, 12)}…`;
}

function arg(value: unknown): string {
  return typeof value === 'string' ? value : j(value);
}

function goalText(goal: { task: string; args: unknown[] }): string {
  return `${goal.task}(${goal.args.map(arg).join(',')})`;
}

function isGoal(value: unknown): value is { task: string; args: unknown[] } {
  return typeof value === 'object' && value !== null && typeof (value as { task?: unknown }).task === 'string' && Array.isArray((value as { args?: unknown }).args);
}

function replyText(reply: unknown): string {
  if (isGoal(reply)) return `goal ${goalText(reply)}`;
  const inner = typeof reply === 'object' && reply !== null ? (reply as { goal?: unknown }).goal : undefined;
  if (isGoal(inner)) return `goal ${goalText(inner)}`;
  const steps = typeof reply === 'object' && reply !== null ? (reply as { steps?: unknown }).steps : undefined;
  if (Array.isArray(steps)) return `fragment of ${steps.length} step${steps.length === 1 ? '' : 's'} ${j(steps)}`;
  return j(reply);
}

const summaries: Summaries = {
  'invocation.pinned': (b) => `${b.invocation} tenant=${b.tenant} ${j(b.intent)} library=${short(b.pin.library)} model=${b.pin.model.id} asOf=${b.pin.asOf} policy=${b.pin.policy}`,
  // The rule that decided (flag 7) says more than the policy's long pinned id; without one, the policy. Each rule that warned (flag 12) follows.
  'admission.decided': (b) => `${b.subject}${b.step === undefined ? '' : ` #${b.step}`} ${b.decision} (${b.rule === undefined ? b.policy : `rule ${b.rule}`})${b.reason ? `: ${b.reason}` : ''}${(b.warnings ?? []).map((w) => ` [warning ${w.rule}: ${w.reason}]`).join('')}`,
  'model.requested': (b) => `${b.purpose} attempt=${b.attempt} ${j(b.request)}`,
  'model.completed': (b) => `${b.purpose} attempt=${b.attempt} → ${replyText(b.reply)}${b.refused ? ` (refused: ${b.refused.code}, ${b.refused.chars} chars, sha256 ${short(b.refused.digest)})` : ''}`,
  'model.failed': (b) => `${b.purpose} attempt=${b.attempt} ${b.class} ${b.code}: ${b.message}`,
  'model.rejected': (b) => `attempt=${b.attempt}: ${b.reason}${b.reply === undefined ? '' : ` reply=${j(b.reply)}`}`,
  'state.observed': (b) => `${b.actuator} key=${b.key} → ${b.failure ? `${b.failure.class} failure ${b.failure.code}: ${b.failure.message}` : j(b.state)}`,
  'epoch.derived': (b) => `${b.source} ${goalText(b.goal)} → ${b.steps} step${b.steps === 1 ? '' : 's'} plan=${short(b.plan)} library=${short(b.library)}`,
  'epoch.certified': (b) => `plan=${short(b.plan)} policy=${b.policy}`,
  'approval.requested': (b) => `${b.plan === undefined ? `${b.subject ?? 'authoring'}` : `plan=${short(b.plan)}`}: ${b.reason}`,
  'approval.decided': (b) => `${b.decision} by ${b.by}${b.note ? `: ${b.note}` : ''}`,
  'step.dispatched': (b) => `#${b.step} ${b.actuator} key=${b.key} attempt=${b.attempt} args=${j(b.args)}`,
  'step.completed': (b) => `#${b.step} key=${b.key} attempt=${b.attempt} → ${j(b.result)}`,
  'step.failed': (b) => `#${b.step} key=${b.key} attempt=${b.attempt} ${b.class} ${b.code}: ${b.message}`,
  'step.refused': (b) => `#${b.step} key=${b.key} attempt=${b.attempt} refused by ${b.worker} (${b.code}; no attempt spent): ${b.reason}`,
  'step.shadowed': (b) => `#${b.step} ${b.actuator} shadowed, not dispatched: key=${b.key} args=${j(b.args)} → ${b.failure ? `${b.failure.class} failure ${b.failure.code}: ${b.failure.message}` : b.source === 'none' ? 'no shadow result' : j(b.result)}`,
  'compensation.dispatched': (b) => `#${b.step} ${b.actuator} key=${b.key} attempt=${b.attempt} args=${j(b.args)}`,
  'compensation.completed': (b) => `#${b.step} key=${b.key} attempt=${b.attempt} → ${j(b.result)}`,
  'compensation.halted': (b) => `at #${b.at} (${b.why}): undone ${b.undone.map((e) => `#${e.step}`).join(',') || 'nothing'}; NOT undone ${b.notUndone.map((e) => `#${e.step} ${e.actuator}`).join(', ')}`,
  'timer.set': (b) => `step ${b.step} sleeps until ${b.until}`,
  'timer.fired': (b) => `step ${b.step} woke at ${b.at}`,
  'frontier.truncated': (b) => `epoch ${b.epoch} removed ${b.removed.map((s) => `#${s}`).join(',') || 'nothing'}: ${b.reason}`,
  'epoch.closed': (b) => `${b.outcome}, ${b.steps} step${b.steps === 1 ? '' : 's'}`,
  'cancel.requested': (b) => `by ${b.by} at ${b.at}${b.reason ? `: ${b.reason}` : ''}`,
  'deadline.passed': (b) => `deadline ${b.deadline} passed (seen at ${b.at})`,
  'invocation.completed': (b) => j(b.summary),
  'invocation.failed': (b) => `${b.code} (${b.class}): ${b.reason}`,
  'invocation.handed_off': (b) => b.reason,
  'invocation.forked': (b) => `from ${b.parent} at the end of epoch ${b.atEpoch} (seq ${b.parentSeq}, hash ${short(b.parentHash)}); re-pinned: ${b.repinned.join(', ') || 'nothing'}; ${b.state.effects.length} effect(s) carried`,
  'invocation.superseded': (b) => `by fork ${b.by} at epoch ${b.atEpoch}: ${b.reason}`,
  'invocation.cancelled': (b) => `by ${b.by}${b.reason ? `: ${b.reason}` : ''}; ${b.kept.length === 0 ? 'no effect stays done' : `stays done: ${b.kept.map((k) => `epoch ${k.epoch} #${k.step} ${k.actuator}`).join(', ')}`}`,
  'invocation.rekeyed': (b) => `the seal's key changes from ${short(b.from)} to ${short(b.to)} (an explicit re-key)`,
  'invocation.sealed': (b) => `${b.algorithm} fingerprint=${short(b.fingerprint)} key=${short(b.keyId)}`,
};

/** The one-line summary of a validated record's body. */
export function summarize(record: JournalRecord): string {
  const summary = summaries[record.kind] as (body: unknown) => string;
  return summary(record.body).replace(/[\u0000-\u001f\u007f]/g, ' ');
}

/** Cut `text` to `width` characters (code points), marking the cut with an ellipsis. */
export function clip(text: string, width: number): string {
  const chars = Array.from(text);
  if (chars.length <= width) return text;
  return chars.slice(0, Math.max(0, width - 1)).join('') + '…';
}

/**
 * The unhashed envelope, marked unverified, in the longest form that fits `room` columns: the full
 * wall time, then without milliseconds, then the time of day only; '' when nothing fits.
 */
function envelopeText(record: JournalRecord, room: number): string {
  const { at, writer } = record.meta ?? {};
  if (!at && !writer) return '';
  const times = at ? [at, at.replace(/\.\d+Z$/, 'Z'), at.replace(/^.*T(\d\d:\d\d:\d\d).*$/, '$1')] : [undefined];
  for (const time of times) {
    const text = `[unverified: ${[time, writer].filter(Boolean).join(' ')}]`;
    if (text.length <= room) return text;
  }
  return '';
}

interface Style {
  dim(s: string): string;
  bad(s: string): string;
}

const plain: Style = { dim: (s) => s, bad: (s) => s };
const ansi: Style = { dim: (s) => `\x1b[2m${s}\x1b[22m`, bad: (s) => `\x1b[31m${s}\x1b[39m` };

/** Summaries are cut to this many characters when there is no width to fit (output not a terminal). */
const SUMMARY_CHARS = 100;

/**
 * Render a journal file's bytes as log lines (without a trailing newline). `width` is the line
 * width to fit (a terminal's columns); Infinity cuts only the summaries, to SUMMARY_CHARS.
 */
export function renderLog(bytes: Uint8Array, options: { width: number; style?: Style; name?: string }): { lines: string[]; ok: boolean } {
  const style = options.style ?? plain;
  const width = Math.max(60, options.width);
  const report = readJournal(bytes, undefined);
  const lines: string[] = [];
  const head = report.invocation ? `invocation ${report.invocation}, tenant ${report.tenant}` : 'journal';
  lines.push(`${options.name ? `${options.name}: ` : ''}${head}`);
  lines.push(style.dim('(times and writers are unverified envelope fields)'));
  for (const record of report.records) {
    const prefix = `${String(record.seq).padStart(4)}  e${String(record.epoch).padEnd(3)} ${record.kind.padEnd(24)} `;
    const envelope = envelopeText(record, Infinity);
    let body: string;
    let shown = envelope;
    if (width === Infinity) {
      body = clip(summarize(record), SUMMARY_CHARS);
    } else {
      // Fit the width. The summary gets the room the envelope leaves, but at least 40 columns; the
      // envelope is then clipped to what is left, or left out when almost nothing is.
      body = clip(summarize(record), Math.max(40, width - prefix.length - (envelope ? envelope.length + 2 : 0)));
      shown = envelopeText(record, width - prefix.length - Array.from(body).length - 2);
    }
    lines.push(prefix + body + (shown ? `  ${style.dim(shown)}` : ''));
  }
  if (!report.ok && report.error) {
    const raw = splitJournalText(new TextDecoder().decode(bytes)); // shown as text, invalid bytes as U+FFFD
    const line = report.error.seq < raw.lines.length ? raw.lines[report.error.seq] : report.error.seq === raw.lines.length ? raw.torn : undefined;
    if (line !== undefined) {
      const raw = clip(line.replace(/[\u0000-\u001f\u007f]/g, ' '), width === Infinity ? SUMMARY_CHARS + 40 : width - 8);
      lines.push(style.bad(`${String(report.error.seq).padStart(4)}  ✗ ${raw}`));
    }
  }
  const status = statusLines(report, false);
  lines.push(...(report.ok ? status : status.map((s) => style.bad(s))));
  return { lines, ok: report.ok };
}

export async function run(argv: string[]): Promise<number> {
  let target: string;
  let width: number;
  let strings: Record<string, string | undefined>;
  let json: boolean;
  try {
    const args = parseCommandArgs(argv, { width: { type: 'string', short: 'w' }, help: { type: 'boolean', short: 'h' }, dir: { type: 'string' }, json: { type: 'boolean' }, ...storeOptions, ...tenantOption }, { min: 0, max: 1 });
    json = args.flags.json === true;
    if (args.flags.help) {
      process.stdout.write(`usage: weft ${usage}\n`);
      return 0;
    }
    if (args.positionals.length === 0) throw new UsageError('missing the journal file (or the invocation id)');
    target = args.positionals[0]!;
    strings = args.strings;
    const w = args.strings.width;
    if (w !== undefined && !/^\d+$/.test(w)) throw new UsageError(`--width must be a number of columns, got ${JSON.stringify(w)}`);
    width = w !== undefined ? Number(w) : process.stdout.isTTY && process.stdout.columns ? process.stdout.columns : Infinity;
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('log', usage, err);
    throw err;
  }
  let bytes: Uint8Array;
  let name: string;
  try {
    const source = await journalSource(target, strings);
    name = source.name;
    bytes = 'file' in source ? await readJournalFile(source.file) : source.bytes;
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('log', usage, err);
    // Not there (a file, an invocation) or unreadable: a command line to fix (cli/exit-codes.ts).
    const refused = refusalCode(err) === REFUSED.error ? 'unreadable' : refusalCode(err);
    printFailureLine((err as Error).message, refused, EXIT.usage);
    process.stderr.write(`weft log: ${(err as Error).message}\n`);
    return EXIT.usage;
  }
  if (looksLikeBundle(bytes)) {
    // A bundle (weft export): its journal's records, like a journal file's.
    try {
      const bundle = parseBundle(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
      bytes = new TextEncoder().encode(bundle.journal);
      name = `${name} (bundle of ${bundle.invocation})`;
    } catch (err) {
      const problem = `${name}: ${err instanceof BundleError ? err.message : 'invalid bundle: not valid UTF-8'}`;
      if (json) printFailureLine(problem, 'bundle.invalid', EXIT.failed);
      else process.stdout.write(`${problem}\n`);
      return EXIT.failed;
    }
  }
  if (json) {
    const view = logJson(bytes, name);
    printJsonLine(view);
    return view.ok ? EXIT.done : EXIT.failed;
  }
  const color = process.stdout.isTTY === true && !process.env.NO_COLOR;
  const { lines, ok } = renderLog(bytes, { width, style: color ? ansi : plain, name });
  process.stdout.write(lines.join('\n') + '\n');
  return ok ? EXIT.done : EXIT.failed;
}

/** `weft log --json`: the records the reader accepted, each with its summary, and where the journal breaks (see the header). */
export function logJson(bytes: Uint8Array, name: string): { journal: string; invocation: string | null; tenant: string | null; ok: boolean; problem: string | null; records: Array<{ seq: number; epoch: number; kind: string; summary: string }> } {
  const report = readJournal(bytes, undefined);
  return {
    journal: name,
    invocation: report.invocation ?? null,
    tenant: report.tenant ?? null,
    ok: report.ok,
    problem: report.ok ? null : (report.error?.message ?? 'not intact'),
    records: report.records.map((r) => ({ seq: r.seq, epoch: r.epoch, kind: r.kind, summary: summarize(r) })),
  };
}
