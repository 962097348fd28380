/**
 * `weft show <id> [--dir D | --redis URL] [--json]` — one invocation in detail, for the person who
 * must decide on it: its status and why, its pin, each epoch with its goal, plan source, admission
 * and approval, and each step with its actuator, args, outcome, attempts and result or failure;
 * what it waits for (for an approval: the policy's reason and the steps asked for) and the
 * commands that act on it, with this command's location flags (cli/hints.ts). `--json` prints the description
 * itself (runtime/describe.ts documents every field). Needs no domain; reads only.
 *
 * Everything that came from a person, a model or an actuator is printed inert (terminal-text.ts):
 * an escape sequence in an intent shows as `\u001b…`, it never acts on the terminal — in `--json`
 * output too. Exit codes (cli/exit-codes.ts): 0 shown, 1 the store cannot be read, 2 usage or no such
 * invocation; with `--json` a refusal is one line too, `{ id, status: null, reason, refused: <code> }`.
 */
import { APPROVER, type EpochDescription, type InvocationDescription, type StepDescription } from '../../runtime/describe.js';
import { describeInvocation } from '../../runtime/describe-load.js';
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { openStore, storeChoice, storeOptions, storeUsage, type StoreChoice } from '../store-choice.js';
import { approverWord, flagsFor, locate, locationOf, type Location } from '../hints.js';
import { failureLine, printJsonLine } from '../json-line.js';
import { EXIT, exitCodeForRefusal, refusalCode } from '../exit-codes.js';
import { describeSpenders } from '../../machines/spenders.js';
import { inert, quoted } from '../terminal-text.js';
import { workspaceDir } from '../workspace.js';
import { isTenants, tenantOption } from '../tenant-scope.js';
import { InvocationNotFoundError } from '../../runtime/errors.js';

export const usage =
  `show <id> [--dir D] [--tenant T] ${storeUsage} [--json]\n` +
  '                                       one invocation in detail: status and why, pin, epochs and steps with their outcomes and\n' +
  '                                       attempts, what it waits for (an approval: the reason and the steps asked for), what to run next';

export async function run(argv: string[]): Promise<number> {
  let args;
  let choice: StoreChoice;
  try {
    args = parseCommandArgs(argv, { dir: { type: 'string' }, json: { type: 'boolean' }, ...storeOptions, ...tenantOption }, { min: 1, max: 1 });
    choice = storeChoice(workspaceDir(args.strings.dir), args.strings);
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('show', usage, err);
    throw err;
  }
  const id = args.positionals[0]!;
  let description: InvocationDescription;
  try {
    const store = await openStore(choice);
    // --tenant T: another tenant's invocation is answered as a missing one (cli/tenant-scope.ts).
    if (!(await isTenants(store, id, args.strings.tenant))) throw new InvocationNotFoundError(id, store.name, args.strings.tenant);
    description = await describeInvocation(store, id);
  } catch (err) {
    const message = locate(inert(err instanceof Error ? err.message : String(err)), id, locationOf(choice));
    const refused = refusalCode(err);
    const exitCode = exitCodeForRefusal(refused);
    // A script still gets its one line: what was refused and why.
    if (args.flags.json) printJsonLine(failureLine(message, refused, exitCode, { id }));
    if (refused === 'runtime.bad_invocation_id') return usageFailure('show', usage, new UsageError(message));
    process.stderr.write(`weft show: ${message}\n`);
    return exitCode;
  }
  if (args.flags.json) printJsonLine(description);
  else process.stdout.write(renderDescription(description, locationOf(choice)).join('\n') + '\n');
  return EXIT.done;
}

const LABEL = 12;
const line = (label: string, value: string) => `${label.padEnd(LABEL)}${value}`;
const short = (digest: string) => `${digest.slice(0, 12)}…`;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The text view of a description; `location` is added to every command, the listing's advice included. Pure. */
export function renderDescription(d: InvocationDescription, location: Location): string[] {
  const out: string[] = [];
  out.push(line('invocation', d.id));
  // A sealed run's reason is its ending's, shown on the `ended` line.
  out.push(line('status', `${d.status}${d.reason && !d.ending ? ` — ${inert(d.reason)}` : ''}`));
  if (d.problem) out.push(line('problem', inert(d.problem)));
  if (d.tenant !== null) out.push(line('tenant', quoted(d.tenant, 80)));
  if (d.intent !== null) out.push(line('intent', `${quoted(d.intent, 200)}${d.intentCut ? ` (a prefix: the intent was ${d.intentCut.chars} chars, sha256 ${short(d.intentCut.digest)})` : ''}`));
  if (d.pin) {
    const p = d.pin;
    out.push(line('pin', `library ${short(p.library)}  policy ${inert(p.policy)}  seed ${quoted(p.seed, 40)}  asOf ${inert(p.asOf)}`));
    out.push(line('', `model ${inert(p.model.id)}  flags ${p.flags.length ? p.flags.join(',') : 'none'}  runtime ${inert(p.runtime)}`));
    if (p.spenders) out.push(line('', `spends ${inert(describeSpenders(p.spenders))}`));
    const stepTimeoutMs = p.limits?.stepTimeoutMs;
    const bounds = [p.deadline !== null ? `deadline ${inert(p.deadline)}` : '', stepTimeoutMs !== undefined && stepTimeoutMs > 0 ? `step timeout ${stepTimeoutMs} ms` : ''].filter(Boolean);
    if (bounds.length) out.push(line('', bounds.join('  ')));
    if (p.shadow) out.push(line('', `SHADOW run: nothing reached the world (${p.shadow.results === 'actuators' ? 'its actuators gave shadow results' : 'no shadow results: it ends after its first shadowed epoch'})`));
  }
  if (d.lineage?.forkOf) out.push(line('fork of', `${inert(d.lineage.forkOf.parent)} at the end of epoch ${d.lineage.forkOf.atEpoch} (its record ${d.lineage.forkOf.parentSeq}, hash ${short(d.lineage.forkOf.parentHash)})`));
  if (d.lineage?.supersededBy) out.push(line('forked as', `${inert(d.lineage.supersededBy)} (the run that goes on from it)`));
  out.push(line('journal', `${plural(d.records, 'record')}, ${d.journal.verified ? 'chain and schemas verified' : `verified up to here; then: ${locate(inert(d.journal.problem ?? 'unreadable'), d.id, location)}`}`));
  if (d.ending) {
    const e = d.ending;
    out.push(line('ended', e.status === 'completed' ? `completed: ${quoted(e.summary ?? '', 200)}` : `${e.status}${e.code ? ` (${inert(e.code)}, ${inert(e.class ?? '?')})` : ''}: ${inert(e.reason ?? '')}`));
    // A cancel's effects that stay done (closed epochs, steps with no inverse): what a person may have to undo.
    if (e.kept) out.push(line('stays done', e.kept.length === 0 ? 'nothing' : e.kept.map((k) => `epoch ${k.epoch} #${k.step} ${inert(k.actuator)}`).join(', ')));
  }
  if (d.seal) out.push(line('sealed', `fingerprint ${d.seal.fingerprint}  key ${short(d.seal.keyId)}`));
  // The steps an approval asks for are listed once, under "waiting".
  const asked = d.waiting?.kind === 'approval' && d.waiting.steps ? d.epochs.at(-1) : undefined;
  for (const epoch of d.epochs) out.push('', ...renderEpoch(epoch, epoch === asked));
  const waiting = renderWaiting(d);
  if (waiting.length) out.push('', ...waiting);
  if (d.fix && (d.commands.length === 0 || d.status === 'suspended')) out.push('', line('next', `→ ${locate(inert(d.fix), d.id, location)}`));
  if (d.commands.length) {
    out.push('', 'next');
    // Each as it runs: this user's name for the approver, and the flags that find the invocation.
    for (const c of d.commands) {
      const verb = c.command.split(' ')[1] ?? '';
      const flags = flagsFor(verb, location);
      out.push(`  ${c.command.replaceAll(APPROVER, approverWord())}${flags ? ` ${flags}` : ''}`, `      ${c.does}`);
    }
  }
  return out;
}

function goalText(goal: EpochDescription['goal']): string {
  if (!goal) return 'no goal planned';
  return `${inert(goal.task)}(${goal.args.map((a) => quoted(a, 40)).join(', ')})`;
}

function renderEpoch(e: EpochDescription, stepsBelow: boolean): string[] {
  const plan = e.plan ? `${e.source ?? 'htn'} plan` : e.source === 'gap' ? 'gap path, no plan authored' : 'no plan';
  const out = [`epoch ${e.epoch}  ${goalText(e.goal)}  ${plan}, ${e.outcome === 'open' ? 'in progress' : e.outcome}`];
  // The gap path: why the planner had no method, from the journal (the authoring request's explanation).
  if (e.noMethod !== null) out.push(`  gap path: ${inert(e.noMethod)}`);
  if (e.admission && e.admission.decision !== 'allow') out.push(`  admission: ${e.admission.decision} (${inert(e.admission.policy)})${e.admission.reason ? `: ${inert(e.admission.reason)}` : ''}`);
  // A rule that warned (flag 12): the run went on; the warning is in the journal and the inbox's advisories.
  for (const w of e.warnings) out.push(`  warning: ${inert(w.rule)} on the ${w.subject === 'step' ? `step #${w.step ?? '?'}` : w.subject}: ${inert(w.reason)}`);
  if (e.approval) {
    out.push(
      e.approval.decision
        ? `  approval: ${e.approval.decision} by ${quoted(e.approval.by ?? '?', 60)}${e.approval.note ? `: ${quoted(e.approval.note, 120)}` : ''}`
        : '  approval: requested, not yet decided',
    );
  }
  if (stepsBelow && e.steps.every((s) => s.outcome === 'pending')) out.push(`  ${plural(e.steps.length, 'step')} planned, none dispatched: see below`);
  else for (const step of e.steps) out.push(...renderStep(step));
  if (e.truncated) out.push(`  truncated: removed ${e.truncated.removed.map((s) => `#${s}`).join(', ') || 'nothing'}: ${inert(e.truncated.reason)}`);
  return out;
}

function renderStep(s: StepDescription): string[] {
  const what = [s.operator === null ? null : inert(s.operator), s.actuator === null ? null : inert(s.actuator)].filter((x) => x !== null).join(' → ') || '?';
  const attempts = s.attempts > 0 ? `, ${plural(s.attempts, 'attempt')}` : '';
  const head = `  #${s.step}  ${what} ${quoted(s.args, 160)}  ${s.outcome}${attempts}`;
  const out = [head];
  if ((s.outcome === 'ok' || s.outcome === 'compensated') && s.result !== null) out.push(`      result ${quoted(s.result, 160)}`);
  if (s.outcome === 'shadowed' && s.result !== null) out.push(`      shadow result ${quoted(s.result, 160)}`);
  if (s.failure) out.push(`      ${inert(s.failure.class)} ${inert(s.failure.code)}: ${inert(s.failure.message)}`);
  if (s.refusals) out.push(`      refused ${plural(s.refusals.length, 'time')} (no attempt spent) by ${[...new Set(s.refusals.map((r) => `${inert(r.worker)} (${inert(r.code)})`))].join(', ')}`);
  if (s.compensation) {
    const c = s.compensation;
    out.push(`      undone by ${inert(c.actuator)}: ${c.outcome}, ${plural(c.attempts, 'attempt')}${c.failure ? ` — ${inert(c.failure.code)}: ${inert(c.failure.message)}` : ''}`);
  }
  return out;
}

function renderWaiting(d: InvocationDescription): string[] {
  const w = d.waiting;
  if (!w) return [];
  switch (w.kind) {
    case 'approval': {
      const out = [line('waiting', `for a person's approval${w.reason ? `: ${inert(w.reason)}` : ''}`)];
      if (w.decided) out.push(line('', `decided: ${inert(w.decided.decision)} by ${quoted(w.decided.by, 60)}${w.decided.note ? `: ${quoted(w.decided.note, 120)}` : ''} (in its inbox, not yet recorded)`));
      if (w.steps) {
        out.push(line('', `the steps asked for (plan ${w.plan ? short(w.plan) : '?'}):`));
        for (const s of w.steps) out.push(`    #${s.step}  ${inert(s.operator)} → ${s.actuator === null ? '?' : inert(s.actuator)} ${quoted(s.args, 160)}${s.readOnly ? '  (read-only)' : ''}`);
      } else {
        out.push(line('', 'the steps asked for are not in its snapshot (weft log on its journal shows what ran)'));
      }
      return out;
    }
    case 'timer':
      return [line('waiting', `for its timer${w.step === null ? '' : ` (step #${w.step})`}${w.until ? ` until ${inert(w.until)}` : ''}`)];
    case 'hibernated':
      return [line('waiting', 'hibernated at an epoch boundary, to be resumed')];
    case 'suspended':
      return [line('waiting', `suspended${w.class ? ` (${inert(w.class)}${w.code ? `, ${inert(w.code)}` : ''})` : ''}${w.state ? ` in ${inert(w.state)}` : ''}${w.reason ? `: ${inert(w.reason)}` : ''}`)];
  }
}
