/**
 * `weft policy explain <id> [--dir D] [--tenant T] [--redis URL …] [--json]` — for one invocation,
 * each admission (authoring call, epoch, step at dispatch): its epoch, step, decision, reason and
 * the rule that decided it, with what the rule says when the pinned pack is in the store (its blob),
 * and the person's decision on an approval it asked for (runtime/admissions.ts). Needs no domain;
 * reads only. Journals pinned before flag 7 say "rule not recorded (pinned before flag 7)"; before
 * flag 9, the steps allowed at dispatch left no admission record: each is listed as implied by its
 * dispatch ("allow (implied)"), in journal order, and in --json apart, as `implied`. A rule that
 * warned (flag 12) is listed under the admission it warned on ("warning  <rule> (<kind>): <reason>").
 * Exit codes: 0 shown, 1 no such invocation or unreadable, 2 usage.
 */
import type { JournalStore } from '../../journal/store.js';
import { explainAdmissions, type AdmissionExplained, type AdmissionsExplained, type ImpliedStepAdmission } from '../../runtime/admissions.js';
import { InvocationNotFoundError } from '../../runtime/errors.js';
import type { RulePack } from '../../policy/schema.js';
import { readPinnedRulePack } from '../../runtime/pack-blob.js';
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { failureLine, printJsonLine } from '../json-line.js';
import { openStore, storeChoice, storeOptions, storeUsage, type StoreChoice } from '../store-choice.js';
import { isTenants, tenantOption } from '../tenant-scope.js';
import { inert } from '../terminal-text.js';
import { workspaceDir } from '../workspace.js';
import { EXIT, exitCodeForRefusal, refusalCode } from '../exit-codes.js';

export const usage =
  `policy explain <id> [--dir D] [--tenant T] ${storeUsage} [--json]\n` +
  '                                       each admission of an invocation (authoring, epoch, step) and the rule that decided it';

/** The pinned pack from the store's blob (checked against its digest), or undefined (none, or not that pack: the explanation says less, never fails). */
async function pinnedPack(store: JournalStore, policy: string): Promise<RulePack | undefined> {
  const read = await readPinnedRulePack(store, policy).catch(() => undefined);
  return read && 'pack' in read ? read.pack : undefined;
}

export async function run(argv: string[]): Promise<number> {
  let args;
  let choice: StoreChoice;
  try {
    args = parseCommandArgs(argv, { dir: { type: 'string' }, json: { type: 'boolean' }, ...storeOptions, ...tenantOption }, { min: 1, max: 1 });
    choice = storeChoice(workspaceDir(args.strings.dir), args.strings);
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('policy explain', usage, err);
    throw err;
  }
  const id = args.positionals[0]!;
  let explained: AdmissionsExplained;
  try {
    const store = await openStore(choice);
    const missing = () => new InvocationNotFoundError(id, store.name, args.strings.tenant);
    if (!(await isTenants(store, id, args.strings.tenant))) throw missing();
    const records = await store.read(id);
    if (records[0]?.kind !== 'invocation.pinned') throw missing();
    const policy = (records[0].body as { pin: { policy: string } }).pin.policy;
    explained = explainAdmissions(records, await pinnedPack(store, policy));
  } catch (err) {
    const message = inert(err instanceof Error ? err.message : String(err));
    const refused = refusalCode(err);
    if (args.flags.json) printJsonLine(failureLine(message, refused, exitCodeForRefusal(refused), { id }));
    if (refused === 'runtime.bad_invocation_id') return usageFailure('policy explain', usage, new UsageError(message));
    process.stderr.write(`weft policy explain: ${message}\n`);
    return exitCodeForRefusal(refused);
  }
  if (args.flags.json) printJsonLine(explained);
  else process.stdout.write(renderExplanation(explained).join('\n') + '\n');
  return EXIT.done;
}

function subjectOf(a: AdmissionExplained): string {
  return a.subject === 'step' ? `step ${a.step ?? '?'}` : a.subject;
}

/** The text view; everything recorded is printed inert. Pure. */
export function renderExplanation(e: AdmissionsExplained): string[] {
  const out = [
    `invocation  ${e.id}`,
    `policy      ${inert(e.policy)}${e.pack ? `  (policy pack ${inert(e.pack.name)}@${inert(e.pack.version)})` : ''}`,
    `rules       ${e.rulesRecorded ? 'recorded on each admission (flag 7)' : 'not recorded: pinned before flag 7'}`,
    `steps       ${e.stepsRecorded ? "each step's admission at dispatch recorded, allows included (flag 9)" : 'a step allowed at dispatch was not recorded (pinned before flag 9): implied by its dispatch'}`,
  ];
  if (e.admissions.length === 0) out.push('', 'no admission recorded yet');
  // Recorded admissions and implied ones, in journal order (seqs are distinct).
  const entries: Array<{ seq: number; recorded?: AdmissionExplained; implied?: ImpliedStepAdmission }> = [...e.admissions.map((a) => ({ seq: a.seq, recorded: a })), ...e.implied.map((i) => ({ seq: i.seq, implied: i }))].sort((x, y) => x.seq - y.seq);
  for (const { recorded: a, implied } of entries) {
    if (implied) {
      out.push('', `epoch ${implied.epoch}  ${`step ${implied.step}`.padEnd(9)} allow (implied)`);
      out.push(`  rule      not recorded (pinned before flag 9): implied by its ${implied.by} (${inert(implied.actuator)}), seq ${implied.seq}`);
      continue;
    }
    if (!a) continue;
    out.push('', `epoch ${a.epoch}  ${subjectOf(a).padEnd(9)} ${a.decision}`);
    if (a.reason !== null) out.push(`  reason    ${inert(a.reason)}`);
    if (a.rule !== null) out.push(`  rule      ${inert(a.rule)}${a.kind && a.kind !== 'runtime' ? ` (${inert(a.kind)})` : ''}${a.says ? `: ${inert(a.says)}` : ''}`);
    else out.push(`  rule      ${a.why}`);
    if (a.approval) out.push(`  approval  ${inert(a.approval.decision)} by ${inert(a.approval.by)}${a.approval.note ? `: ${inert(a.approval.note)}` : ''}`);
    if (a.admitted) out.push(`  admitted  ${inert(a.admitted)}`);
    // A rule that warned (flag 12): it stopped nothing; the decision above stands.
    for (const w of a.warnings) out.push(`  warning   ${inert(w.rule)}${w.kind ? ` (${inert(w.kind)})` : ''}: ${inert(w.reason)}${w.says ? ` — ${inert(w.says)}` : ''}`);
  }
  return out;
}
