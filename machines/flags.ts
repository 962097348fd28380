/**
 * Behaviour flags: numbered changes of what the runtime records, pinned in `invocation.pinned`
 * (`pin.flags`) so that an invocation resumes and replays under the behaviour it started with.
 * A journal pinned without a flag replays exactly as before the flag existed; new invocations pin
 * every flag the runtime implements.
 *
 * 1 — fail closed: pinned caps on intents, replies, args and summaries; strict JSON replies (no
 *     duplicate names, bounded depth, well-formed Unicode); task constraints and the policy's
 *     contract envelope checked on every epoch and step; the authoring call admitted, authored
 *     world effects approved, every authored step's admission recorded.
 * 2 — spend counted only on the actuators that spend: the envelope's spending cap sums its arg
 *     over the steps whose actuator declares `spends` (machines/spenders.ts), not over every world
 *     effect that happens to pass an arg of that name. Which actuators those are is pinned
 *     (`pin.spenders`, sorted; empty when the domain declares none, which keeps the rule before).
 * 3 — withdrawn, never shipped: never reuse the number. It put the sealing key's id in the pin,
 *     which made the fingerprint depend on the key; the key id is now kept in the store's
 *     unhashed invocation metadata instead (journal/store.ts), which changes no journal.
 * 4 — a step denied at dispatch is compensated: the epoch's completed effects are undone in
 *     reverse order (`compensation.dispatched` / `compensation.completed`), its frontier truncated
 *     and the epoch closed `compensated` with the denial as its reason, then the run re-plans as
 *     after any failed epoch (bounded by `maxReplans`). Without it, the invocation failed at once
 *     (`step.denied`) and left those effects applied.
 * 5 — approval before authoring: a policy whose `admitAuthoring` answers `require_approval` gets a
 *     person's decision, as an epoch does: `approval.requested` {subject: 'authoring'}, the run
 *     rests awaiting approval; approved, the model is asked to author (the authoring call is not
 *     admitted again); rejected, the epoch closes denied and the model is asked for another goal.
 *     Without it, the run was handed off.
 * 6 — reserved (cancel and deadlines).
 * 7 — admissions name the rule that decided: under a policy that names its rules (a policy pack,
 *     policy/), each `admission.decided` records `rule` — the pack's rule id, or the runtime's own
 *     check (`weft:certify`, `weft:task-constraints`, `weft:default` when no rule objected).
 *     Without it (or under a policy that names no rules) the record has no `rule`, as before.
 * 8 — pivots: compensation stops at a pivot (a world-effect step that declares no inverse and whose
 *     actuator has no `compensate`) once it has run, and at a compensation that failed permanently:
 *     a `compensation.halted` record names what ran, what was undone and what was not, and the run
 *     hands off (runtime/epoch/execute-steps.ts compensate). Without it, a step with no inverse was
 *     passed over and the steps before it undone anyway.
 * 9 — every step's admission at dispatch is recorded: `admission.decided` {subject: 'step', step,
 *     decision, policy, reason?, rule?} before the step's first attempt (dispatched or, on a shadow
 *     run, shadowed), allows included, for planned and authored steps alike — so `weft policy
 *     explain` names the rule that admitted each step. Retries are not admitted again, and a sleep
 *     step is not admitted at all (it is no world effect and no policy is asked), so neither records
 *     one. Without it, a step allowed at dispatch left no record (only a refusal, and under flag 1
 *     an authored step's allow, were written); its admission is implied by its dispatch.
 * 10 — a fork's recorded state (`invocation.forked` state.effects and obligations) lists every world
 *     effect its lineage left done: what its parent inherited (the parent's own `invocation.forked`),
 *     then the parent's own. A run-wide count (`{ count, atMost, per: 'run' }`,
 *     machines/constraints.ts) and a cancel's `kept` list read it, so a fork of a fork still counts
 *     its grandparent's booking. (A fork pins its parent's flags.) Without it a fork listed only its
 *     parent's own effects. The bindings and run-wide counts themselves need no flag: they act only
 *     through library data no library pinned before them can hold (schema.ts).
 * 11 — authored allowances hold per run, and every allow names its rule: an `authored-effects`
 *     allowance scoped to the run (`admit: {actuators, spendAtMost, per: 'run'}`) sums what the
 *     model-authored world effects that stay done in this invocation (and, for a fork, its lineage:
 *     `invocation.forked` state `authored`) spent, plus this fragment's — over it, a person approves
 *     (without the flag, or without `per: 'run'`, each fragment is held to it alone). An allowed
 *     epoch or step of a plan from the model (authored, or using a mined method) names the rule
 *     that let its fragment through — the pack's `authored-effects` rule, else
 *     `weft:authored-effects` — and the epoch's allow records why (what it spends of the allowance);
 *     `weft:default` is left for library plans no rule decided. A run that ends `handed_off`
 *     lists, in its reason, the model-authored world effects that stay applied (actuator, key,
 *     amount), in cancel's wording (machines/kept-effects.ts).
 * 12 — warnings recorded: a policy pack's rule may state its verdict (`block`, `approval` or `warn`,
 *     policy/verdict.ts); a rule that warns stops nothing, and each `admission.decided` records the
 *     warnings beside its decision (`warnings: [{rule, reason}]`, whichever rule decided), from which
 *     the runtime raises an advisory in the invocation's inbox (journal/store.ts `putAdvisory`).
 *     No journal pinned before it can hold a warning — a pack pinned then has no `verdict` (the
 *     schema refused one) and decides exactly as it did — so the flag changes no old journal; it
 *     makes a journal with warnings one an older weft refuses by name ("flag 12 comes from a newer
 *     weft") rather than as a malformed record, and keeps a pin without it recording none.
 * 13 — a refusal is not an attempt: a worker that will not run a step's job (another domain's, a
 *     library the store lacks, an actuator its build lacks, args its schema rejects) refuses it;
 *     the runtime records `step.refused` {step, key, attempt, code, reason, worker} and puts the job
 *     back on the queue under the same attempt (runtime/epoch/refusals.ts), and after a bounded wait
 *     with no capable worker the invocation rests suspended, naming the refusing workers. Without
 *     it, each refusal was recorded as a transient `step.failed` and spent one of the step's attempts.
 */
import type { Pin } from '../journal/records.js';

export const FLAG_FAIL_CLOSED = 1;
export const FLAG_DECLARED_SPEND = 2;
export const FLAG_DENIED_STEP_COMPENSATED = 4;
export const FLAG_AUTHORING_APPROVAL = 5;
export const FLAG_ADMISSION_RULE = 7;
export const FLAG_PIVOTS = 8;
export const FLAG_STEP_ADMISSIONS = 9;
export const FLAG_LINEAGE_EFFECTS = 10;
export const FLAG_RUN_ALLOWANCE = 11;
export const FLAG_WARNINGS = 12;
export const FLAG_REFUSALS = 13;

/** Every flag this version implements (what a new invocation pins). */
export const IMPLEMENTED_FLAGS: readonly number[] = [FLAG_FAIL_CLOSED, FLAG_DECLARED_SPEND, FLAG_DENIED_STEP_COMPENSATED, FLAG_AUTHORING_APPROVAL, FLAG_ADMISSION_RULE, FLAG_PIVOTS, FLAG_STEP_ADMISSIONS, FLAG_LINEAGE_EFFECTS, FLAG_RUN_ALLOWANCE, FLAG_WARNINGS, FLAG_REFUSALS];

export function hasFlag(pin: Pick<Pin, 'flags'>, flag: number): boolean {
  return pin.flags.includes(flag);
}
