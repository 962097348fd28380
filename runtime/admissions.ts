/**
 * Which rule decided each admission of an invocation — what `weft policy explain <id>` shows: for
 * every `admission.decided` (authoring call, epoch, step at dispatch), its epoch, step, decision,
 * reason and rule, with what that rule says when the pinned pack is at hand, and the person's
 * decision that followed an approval asked for. A journal pinned before behaviour flag 7 records
 * no rule ("rule not recorded (pinned before flag 7)"); nor does one whose policy names no rules
 * (a policy in code, such as spend-approval@3).
 *
 * Under behaviour flag 9 every step's admission at dispatch is recorded, allow included, so each
 * dispatched (or shadowed) step has its own entry. A journal pinned before flag 9 recorded only a
 * step's refusal (and, under flag 1, an authored step's allow): its other steps were allowed at
 * dispatch with nothing written — their admission is implied by their dispatch. Those are listed
 * apart, as `implied` (the first attempt's `step.dispatched` or the `step.shadowed`), never mixed
 * with what the journal records.
 *
 * Each allow says which rule admitted it and why (`admitted`). Under behaviour flag 11 a plan from
 * the model is admitted by a named rule — the allowance, whose record says what the fragment spends
 * of it this run — and each of its steps by the same rule "with its fragment" (or the person who
 * approved it); `weft:default` is then left for library plans and the authoring call no rule
 * decided. Pure: over the records and the pack given.
 *
 * Under behaviour flag 12 each admission also lists the rules that warned beside its decision
 * (`warnings`), whichever rule decided.
 */
import type { JournalRecord } from '../journal/records.js';
import { FLAG_ADMISSION_RULE, FLAG_RUN_ALLOWANCE, FLAG_STEP_ADMISSIONS, hasFlag } from '../machines/flags.js';
import { describeRule } from '../policy/describe.js';
import { parsePackPolicyId } from '../policy/digest.js';
import { DEFAULT_RULE } from '../policy/rules.js';
import type { RulePack } from '../policy/schema.js';

export interface AdmissionExplained {
  seq: number;
  epoch: number;
  subject: 'authoring' | 'epoch' | 'step';
  step: number | null;
  decision: 'allow' | 'deny' | 'require_approval';
  reason: string | null;
  policy: string;
  /** The rule that decided, as recorded; null when the journal records none (see `why`). */
  rule: string | null;
  /** The rule's kind and what it says (from the pinned pack), or the runtime check a `weft:` id names. */
  kind: string | null;
  says: string | null;
  /** Why no rule is recorded, when none is. */
  why: string | null;
  /** The person's decision on an approval asked for, when the journal holds it. */
  approval: { decision: string; by: string; note: string | null } | null;
  /**
   * An allow: which rule admitted it, and why — the allowance's own words for a plan from the model
   * (flag 11), its fragment's admission for a step of one, `admitted by default` for what no rule
   * decided. Null for a deny or an approval asked, and when no rule is recorded.
   */
  admitted: string | null;
  /** The rules that warned (flag 12), whatever decided: each rule, its kind and what it says (from the pinned pack), and why it warned. */
  warnings: AdmissionWarningExplained[];
}

export interface AdmissionWarningExplained {
  rule: string;
  kind: string | null;
  says: string | null;
  reason: string;
}

/** A step allowed at dispatch with no `admission.decided` (pinned before flag 9): its dispatch implies it. */
export interface ImpliedStepAdmission {
  /** The record that implies it: the first attempt's `step.dispatched`, or the `step.shadowed`. */
  seq: number;
  epoch: number;
  step: number;
  actuator: string;
  by: 'step.dispatched' | 'step.shadowed';
}

export interface AdmissionsExplained {
  id: string;
  policy: string;
  /** Whether the pin has flag 7 (admissions name their rule). */
  rulesRecorded: boolean;
  /** Whether the pin has flag 9 (every step's admission at dispatch is recorded, allow included). */
  stepsRecorded: boolean;
  pack: { name: string; version: string; digest: string } | null;
  admissions: AdmissionExplained[];
  /** Before flag 9: the steps dispatched (or shadowed) with no admission recorded. Empty under flag 9. */
  implied: ImpliedStepAdmission[];
}

/** What the runtime's own rule ids mean. */
const RUNTIME_RULES: Record<string, string> = {
  [DEFAULT_RULE]: 'no rule of the pack objected',
  'weft:certify': 'certification: every step names a known actuator with args that fit its schema',
  'weft:task-constraints': "the method library's constraints on the goal task",
  'weft:authored-effects': 'world effects the model authored need a person (no authored-effects rule says otherwise)',
};

/** Under flag 11 `weft:default` is left for what no rule decided: library plans and the authoring call. */
const DEFAULT_SINCE_FLAG_11 = 'no rule of the pack decided: admitted by default';

function runtimeRule(rule: string, flag11: boolean): string | null {
  if (rule === DEFAULT_RULE && flag11) return DEFAULT_SINCE_FLAG_11;
  if (Object.hasOwn(RUNTIME_RULES, rule)) return RUNTIME_RULES[rule]!;
  if (rule.startsWith('weft:envelope.')) return `the contract envelope's ${rule.slice('weft:envelope.'.length)}`;
  return null;
}

/** Which rule admitted an allow, and why (see `AdmissionExplained.admitted`). */
function admittedBy(a: Omit<AdmissionExplained, 'admitted'>, flag11: boolean, fragment: AdmissionExplained | undefined, modelRule: boolean): string | null {
  if (a.decision !== 'allow' || a.rule === null) return null;
  if (a.rule === DEFAULT_RULE) {
    if (a.subject === 'authoring') return 'admitted by default: no rule of the pack decided the model authoring a fragment';
    return flag11 ? 'admitted by default: a plan of the pinned library that no rule of the pack decided' : 'admitted by default: no rule of the pack objected';
  }
  if (a.subject === 'step' && modelRule && fragment) {
    if (fragment.decision === 'allow') return `admitted by ${a.rule} with its fragment (the epoch's admission at seq ${fragment.seq})`;
    if (fragment.approval?.decision === 'approved') return `admitted by ${a.rule} with its fragment, which ${fragment.approval.by} approved (the epoch's admission at seq ${fragment.seq} asked for a person)`;
  }
  if (a.reason !== null) return `admitted by ${a.rule}: ${a.reason}`;
  return `admitted by ${a.rule}${a.says ? `: ${a.says}` : ''}`;
}

export function explainAdmissions(records: readonly JournalRecord[], pack?: RulePack): AdmissionsExplained {
  const first = records[0] as JournalRecord<'invocation.pinned'> | undefined;
  if (!first || first.kind !== 'invocation.pinned') throw new Error('the journal does not start with invocation.pinned');
  const pin = first.body.pin;
  const flag7 = hasFlag(pin, FLAG_ADMISSION_RULE);
  const flag9 = hasFlag(pin, FLAG_STEP_ADMISSIONS);
  const flag11 = hasFlag(pin, FLAG_RUN_ALLOWANCE);
  /** Each epoch's latest admission (what its steps were let through with). */
  const fragments = new Map<number, AdmissionExplained>();
  const implied: ImpliedStepAdmission[] = [];
  /** `epoch:step` of every step admission recorded (it comes before the step's dispatch). */
  const admittedSteps = new Set<string>();
  const packId = parsePackPolicyId(pin.policy);
  const rules = new Map((pack?.rules ?? []).map((r) => [r.id, r]));
  const admissions: AdmissionExplained[] = [];
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    if (!flag9 && (r.kind === 'step.dispatched' || r.kind === 'step.shadowed')) {
      const b = (r as JournalRecord<'step.dispatched'>).body;
      const first = r.kind === 'step.shadowed' || b.attempt === 1;
      if (first && !admittedSteps.has(`${r.epoch}:${b.step}`)) implied.push({ seq: r.seq, epoch: r.epoch, step: b.step, actuator: b.actuator, by: r.kind });
      continue;
    }
    if (r.kind !== 'admission.decided') continue;
    const body = (r as JournalRecord<'admission.decided'>).body;
    if (body.subject === 'step' && body.step !== undefined) admittedSteps.add(`${r.epoch}:${body.step}`);
    const rule = body.rule ?? null;
    const known = rule === null ? undefined : rules.get(rule);
    let approval: AdmissionExplained['approval'] = null;
    if (body.decision === 'require_approval') {
      const decided = records.slice(i + 1).find((x) => x.kind === 'approval.decided' && x.epoch === r.epoch) as JournalRecord<'approval.decided'> | undefined;
      if (decided) approval = { decision: decided.body.decision, by: decided.body.by, note: decided.body.note ?? null };
    }
    const entry = {
      seq: r.seq,
      epoch: r.epoch,
      subject: body.subject,
      step: body.step ?? null,
      decision: body.decision,
      reason: body.reason ?? null,
      policy: body.policy,
      rule,
      kind: known ? known.rule : rule?.startsWith('weft:') ? 'runtime' : null,
      says: known ? describeRule(known) : rule === null ? null : runtimeRule(rule, flag11),
      why: rule !== null ? null : !flag7 ? 'rule not recorded (pinned before flag 7)' : `rule not recorded (policy ${body.policy} names no rules: only policy packs do)`,
      approval,
      warnings: (body.warnings ?? []).map((w) => {
        const warned = rules.get(w.rule);
        return { rule: w.rule, kind: warned ? warned.rule : null, says: warned ? describeRule(warned) : null, reason: w.reason };
      }),
    };
    const modelRule = known?.rule === 'authored-effects' || rule === 'weft:authored-effects';
    const explained: AdmissionExplained = { ...entry, admitted: admittedBy(entry, flag11, fragments.get(r.epoch), modelRule) };
    if (body.subject === 'epoch') fragments.set(r.epoch, explained);
    admissions.push(explained);
  }
  return {
    id: first.body.invocation,
    policy: pin.policy,
    rulesRecorded: flag7,
    stepsRecorded: flag9,
    pack: packId ? { name: packId.name, version: packId.version, digest: packId.digest } : null,
    admissions,
    implied,
  };
}
