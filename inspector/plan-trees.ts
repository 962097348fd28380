/**
 * The plan tree of each epoch, re-derived on the server (`GET /api/invocations/<id>/plans`): the
 * HTN planner (htn/planner) run again over the pinned library — read from the store's blob area by
 * its digest (htn/library/stored.ts) — and the epoch's recorded observation (`state.observed`),
 * exactly as the decompose step did (runtime/epoch/plan-steps.ts), then checked against the plan
 * digest `epoch.derived` recorded. The page says "re-derived, digest matches" or names the mismatch.
 *
 * - Evaluable predicates are code: a library that pins any is re-derived only with their
 *   implementations (a built-in domain's, or the domain given to `weft inspect --domain`); without
 *   them the epoch says "not re-derived: domain not loaded". A library that pins none is data only
 *   and is always re-derived.
 * - The gap path: when the planner finds no method, the epoch shows why (htn/planner/explain.ts,
 *   through runtime/explain.ts, recomputed here), the model's authored fragment — the accepted
 *   `model.completed` reply of purpose `author`, certified again as runtime/epoch/model-steps.ts
 *   certifies it (the fragment as the one method of a one-off task, planned over the same state) —
 *   marked as authored, its rejected replies with their reasons, the goal task's declared
 *   constraints checked over the fragment (machines/constraints.ts), and the admission the journal
 *   recorded for it (the contract envelope's verdict is in that record's reason: machines/envelope.ts).
 *
 * Pure given its inputs (library, evaluables, records): `derivePlanTrees` reads nothing and writes
 * nothing; `loadPlanTrees` is the store-reading half the server calls.
 *
 * Redaction: a tree gives each step's args BY POSITION (its operator's params), where marks by arg
 * name (journal/redaction.ts) cannot find them. Given the invocation's marks, each marked arg is
 * traced to the param its operator's template takes it from and that arg is `[redacted]` in every
 * primitive node — dispatched or not — and the values removed are then taken out of the whole view
 * (the goal's and the compound tasks' args, the gap path's explanations) by redactValue's rules.
 */
import { libraryDigest } from '../htn/library/digest.js';
import type { EvaluableRegistry, Value } from '../htn/library/evaluables.js';
import { WorldStateSchema, type Goal, type Library } from '../htn/library/schema.js';
import { plan as runPlanner } from '../htn/planner/plan.js';
import { planDigest, type PlanResult, type TaskFailure } from '../htn/planner/result.js';
import { checkTaskConstraints } from '../machines/constraints.js';
import type { EpochStep, InvocationLimits } from '../machines/context.js';
import { FLAG_FAIL_CLOSED, hasFlag } from '../machines/flags.js';
import { judgeAuthorReply, judgeParseReply, type ReplyRules } from '../machines/reply.js';
import type { JournalRecord } from '../journal/records.js';
import { positionalMarks, redactPositions, scrubValue, type OperatorShape, type RedactionMarks, type Secret } from '../journal/redaction.js';
import type { JournalStore } from '../journal/store.js';
import { AUTHORED_TASK } from '../runtime/epoch/services.js';
import { explainNoMethod } from '../runtime/explain.js';
import { readLibraryBlob } from '../htn/library/stored.js';
import { inputFromPinned } from '../runtime/limits.js';

/** One node of a plan tree: a compound task with the method chosen for it, or a step of the plan. */
export interface PlanNodeView {
  task: string;
  args: Value[];
  /** The method that decomposed it (compound tasks). */
  method?: string;
  /** Its index in the plan (primitive tasks), with the actuator it dispatches. */
  step?: number;
  actuator?: string;
  readOnly?: boolean;
  /** The one-off task of a model-authored fragment (the gap path). */
  authored?: boolean;
  children: PlanNodeView[];
}

export type PlanVerdict =
  | { kind: 'matches'; digest: string }
  | { kind: 'mismatch'; expected: string; got: string | null; reason: string }
  | { kind: 'not-derived'; reason: string };

export interface AuthoredView {
  /** The seq of the accepted reply (`model.completed`, purpose author). */
  seq: number;
  attempt: number;
  /** The goal's declared constraints over the fragment: null when they hold (or none is declared). */
  constraints: string | null;
  /** What the journal recorded for the fragment's admission (subject `epoch`; the envelope's reason is in it). */
  admission: { seq: number; decision: string; policy: string; reason: string | null } | null;
}

export interface EpochPlanView {
  epoch: number;
  goal: { task: string; args: unknown[] } | null;
  /** From `epoch.derived`: htn or authored; null when the epoch derived no plan. */
  source: 'htn' | 'authored' | null;
  /** The last record this view rests on: a page showing the journal up to seq k shows it once k reaches this. */
  seq: number;
  /** The digest recorded in `epoch.derived`, with its seq. */
  derived: { seq: number; plan: string } | null;
  verdict: PlanVerdict;
  tree: PlanNodeView | null;
  /** The gap path: why no method applied (re-derived), and what the model was told then. */
  noMethod: { seq: number; explanation: string; recorded: string | null; goal: TaskFailure } | null;
  authored: AuthoredView | null;
  /** Rejected replies of this epoch (any purpose), prominently: their reasons. */
  rejected: Array<{ seq: number; attempt: number; reason: string }>;
}

export interface PlansView {
  version: 1;
  library: { digest: string; name: string | null };
  /** Why nothing could be re-derived for this invocation (library blob missing, domain not loaded), if so. */
  problem: string | null;
  epochs: EpochPlanView[];
}

/** The evaluables for a library, or why there are none: `loaded: false` names what is missing. */
export type EvaluablesFor = (library: Library) => Promise<{ loaded: true; evaluables: EvaluableRegistry | undefined } | { loaded: false; reason: string }>;

export const NOT_LOADED = 'domain not loaded';

/** Read the pinned library from the store and re-derive every epoch's plan tree. */
export async function loadPlanTrees(store: Pick<JournalStore, 'getBlob'>, records: readonly JournalRecord[], evaluablesFor: EvaluablesFor, redact?: RedactionMarks): Promise<PlansView> {
  const pinned = records[0]?.kind === 'invocation.pinned' ? (records[0] as JournalRecord<'invocation.pinned'>) : undefined;
  if (!pinned) return { version: 1, library: { digest: '', name: null }, problem: 'the journal does not start with invocation.pinned', epochs: [] };
  const digest = pinned.body.pin.library;
  const marks = redact ? { redact } : {};
  let library: Library | undefined;
  try {
    library = await readLibraryBlob(store, digest);
  } catch (err) {
    return derivePlanTrees(records, { library: undefined, digest, problem: `the library blob cannot be read: ${(err as Error).message}`, ...marks });
  }
  if (!library) return derivePlanTrees(records, { library: undefined, digest, problem: `the store has no blob of the pinned library ${digest}`, ...marks });
  const found = await evaluablesFor(library);
  if (!found.loaded) return derivePlanTrees(records, { library, digest, problem: found.reason, ...marks });
  return derivePlanTrees(records, { library, digest, evaluables: found.evaluables, ...marks });
}

export interface DeriveInput {
  /** The pinned library; undefined when it could not be read (then `problem` says why). */
  library: Library | undefined;
  /** The pinned digest (the library is checked against it). */
  digest: string;
  evaluables?: EvaluableRegistry | undefined;
  /** Why the plans cannot be re-derived at all (e.g. "domain not loaded"): every epoch says it. */
  problem?: string;
  /** The invocation's redaction marks: the trees' marked positional args are redacted (redactPlanView). */
  redact?: RedactionMarks | undefined;
}

/** Each epoch's plan tree, re-derived from `records` (a journal, or a prefix of one) and checked. Pure. */
export function derivePlanTrees(records: readonly JournalRecord[], input: DeriveInput): PlansView {
  const pinned = records[0] as JournalRecord<'invocation.pinned'>;
  const { pin } = pinned.body;
  const limits = inputFromPinned(pinned).limits;
  const rules: ReplyRules | undefined = hasFlag(pin, FLAG_FAIL_CLOSED) ? { maxArgChars: limits.maxArgChars, maxSummaryChars: limits.maxSummaryChars } : undefined;
  let problem = input.problem ?? null;
  if (!problem && input.library && libraryDigest(input.library) !== input.digest) problem = `the library given has digest ${libraryDigest(input.library)}, not the pinned ${input.digest}`;
  const byEpoch = new Map<number, JournalRecord[]>();
  for (const r of records) {
    if (r.epoch < 1) continue;
    const list = byEpoch.get(r.epoch) ?? [];
    list.push(r);
    byEpoch.set(r.epoch, list);
  }
  const epochs: EpochPlanView[] = [];
  for (const [epoch, list] of [...byEpoch].sort((a, b) => a[0] - b[0])) {
    const view = epochView(epoch, list, input.library, input.evaluables, limits, rules, problem);
    if (view) epochs.push(view);
  }
  const view: PlansView = { version: 1, library: { digest: input.digest, name: input.library?.name ?? null }, problem, epochs };
  return input.redact && input.library ? redactPlanView(view, input.library, input.redact) : view;
}

/**
 * The view with every primitive node's marked positional args redacted (journal/redaction.ts
 * positionalMarks: the operator params the marked actuator args come from), and the values removed
 * taken out of the rest of the view — a goal's or a compound task's args equal to one, by whole
 * leaf; a long one out of any text. Pure.
 */
export function redactPlanView(view: PlansView, library: { operators: readonly OperatorShape[] }, marks: RedactionMarks): PlansView {
  const positions = positionalMarks(marks, library);
  if (positions.size === 0) return view;
  const secrets = new Set<Secret>();
  // A task that is an operator (a step, or a goal that is one) has its params as args.
  const args = <T>(task: string, list: readonly T[]): T[] => {
    const at = positions.get(task);
    return at ? (redactPositions(list, at, secrets) as T[]) : [...list];
  };
  const node = (n: PlanNodeView): PlanNodeView => ({ ...n, args: args(n.task, n.args), children: n.children.map(node) });
  const epochs = view.epochs.map((e) => ({
    ...e,
    goal: e.goal ? { ...e.goal, args: args(e.goal.task, e.goal.args) } : null,
    tree: e.tree ? node(e.tree) : null,
    noMethod: e.noMethod ? { ...e.noMethod, goal: { ...e.noMethod.goal, args: args(e.noMethod.goal.task, e.noMethod.goal.args) } } : null,
  }));
  return scrubValue({ ...view, epochs }, secrets) as PlansView;
}

function epochView(epoch: number, list: readonly JournalRecord[], library: Library | undefined, evaluables: EvaluableRegistry | undefined, limits: InvocationLimits, rules: ReplyRules | undefined, problem: string | null): EpochPlanView | undefined {
  const derived = list.find((r) => r.kind === 'epoch.derived') as JournalRecord<'epoch.derived'> | undefined;
  const observed = [...list].reverse().find((r) => r.kind === 'state.observed' && !(r as JournalRecord<'state.observed'>).body.failure) as JournalRecord<'state.observed'> | undefined;
  const rejected = list.filter((r) => r.kind === 'model.rejected').map((r) => ({ seq: r.seq, attempt: (r as JournalRecord<'model.rejected'>).body.attempt, reason: (r as JournalRecord<'model.rejected'>).body.reason }));
  const authorRequest = list.find((r) => r.kind === 'model.requested' && (r as JournalRecord<'model.requested'>).body.purpose === 'author') as JournalRecord<'model.requested'> | undefined;
  const requested = authorRequest?.body.request as { goal?: Goal; explanation?: string } | undefined;
  const goal: Goal | null = (derived?.body.goal as Goal | undefined) ?? (requested?.goal as Goal | undefined) ?? (library ? parsedGoal(list, library, rules) : null);
  if (!observed && !derived) {
    // An epoch that never got to planning (parse only, or the observation failed): nothing to show but rejections.
    if (rejected.length === 0) return undefined;
    return { epoch, goal, source: null, seq: rejected.at(-1)!.seq, derived: null, verdict: { kind: 'not-derived', reason: 'the epoch did not get to planning' }, tree: null, noMethod: null, authored: null, rejected };
  }
  const base = {
    epoch,
    goal: goal ? { task: goal.task, args: goal.args as unknown[] } : null,
    source: derived?.body.source ?? null,
    seq: derived?.seq ?? observed!.seq,
    derived: derived ? { seq: derived.seq, plan: derived.body.plan } : null,
    rejected,
  };
  const notDerived = (reason: string): EpochPlanView => ({ ...base, verdict: { kind: 'not-derived', reason }, tree: null, noMethod: null, authored: null });
  if (problem) return notDerived(problem);
  if (!library) return notDerived('the pinned library is not available');
  if (!observed) return notDerived('the epoch has no recorded observation');
  if (!goal) return notDerived('the goal of the epoch cannot be found in the journal');
  const world = WorldStateSchema.safeParse(observed.body.state);
  if (!world.success) return notDerived(`the recorded observation does not match {objects, facts}: ${world.error.issues[0]?.message}`);
  const options = { maxNodes: limits.maxNodes, maxDepth: limits.maxDepth, evaluables };
  let result: PlanResult;
  try {
    result = runPlanner(library, world.data, goal, { ...options, trustedLibrary: true });
  } catch (err) {
    return notDerived(`the planner refused the goal: ${(err as Error).message}`);
  }
  if (result.kind === 'plan') {
    const got = planDigest(result);
    const tree = treeOf(result);
    if (!derived) return { ...base, verdict: { kind: 'not-derived', reason: 'the journal records no plan for this epoch yet' }, tree, noMethod: null, authored: null };
    if (derived.body.source !== 'htn') return { ...base, verdict: { kind: 'mismatch', expected: derived.body.plan, got, reason: `the journal says the plan was ${derived.body.source}, but a method covers the goal` }, tree, noMethod: null, authored: null };
    return { ...base, verdict: verdictOf(derived.body.plan, got), tree, noMethod: null, authored: null };
  }
  if (result.kind === 'limit') return notDerived(`the planner hit its ${result.limit} limit while expanding ${result.task}`);
  const noMethod = { seq: observed.seq, explanation: explainNoMethod(result), recorded: typeof requested?.explanation === 'string' ? requested.explanation : null, goal: result.explanation.goal };
  // The gap path: the fragment the model authored, certified again.
  const accepted = acceptedAuthorReply(list);
  if (!accepted) {
    const reason = derived ? 'the journal records an authored plan but no accepted authoring reply' : 'no plan to check: no method applied, and no fragment authored by the model was accepted';
    return { ...base, verdict: derived ? { kind: 'mismatch', expected: derived.body.plan, got: null, reason } : { kind: 'not-derived', reason }, tree: null, noMethod, authored: null };
  }
  const text = typeof accepted.body.reply === 'string' ? accepted.body.reply : JSON.stringify(accepted.body.reply);
  const reply = judgeAuthorReply(text, library, rules);
  const admissionRecord = list.find((r) => r.kind === 'admission.decided' && (r as JournalRecord<'admission.decided'>).body.subject === 'epoch' && r.seq > accepted.seq) as JournalRecord<'admission.decided'> | undefined;
  const admission = admissionRecord ? { seq: admissionRecord.seq, decision: admissionRecord.body.decision, policy: admissionRecord.body.policy, reason: admissionRecord.body.reason ?? null } : null;
  if (reply.kind === 'rejected') {
    return { ...base, verdict: { kind: 'mismatch', expected: derived?.body.plan ?? '', got: null, reason: `the accepted reply is rejected when judged again: ${reply.reason}` }, tree: null, noMethod, authored: { seq: accepted.seq, attempt: accepted.body.attempt, constraints: null, admission } };
  }
  const authoredLibrary: Library = {
    ...library,
    tasks: [...library.tasks, { name: AUTHORED_TASK, params: [] }],
    methods: [{ name: 'authored-fragment', task: { task: AUTHORED_TASK, args: [] }, params: [], precondition: { op: 'true' }, subtasks: reply.steps }, ...library.methods],
  };
  let fragment: PlanResult;
  try {
    fragment = runPlanner(authoredLibrary, world.data, { task: AUTHORED_TASK, args: [] }, options);
  } catch (err) {
    return notDerived(`the planner refused the authored fragment: ${(err as Error).message}`);
  }
  if (fragment.kind !== 'plan') {
    const reason = fragment.kind === 'no-method' ? explainNoMethod(fragment) : `the ${fragment.limit} limit was hit`;
    return { ...base, verdict: { kind: 'mismatch', expected: derived?.body.plan ?? '', got: null, reason: `the fragment does not apply in the observed state: ${reason}` }, tree: null, noMethod, authored: { seq: accepted.seq, attempt: accepted.body.attempt, constraints: null, admission } };
  }
  const got = planDigest(fragment);
  const tree = treeOf(fragment);
  const steps = fragment.steps as unknown as EpochStep[];
  const authored: AuthoredView = { seq: accepted.seq, attempt: accepted.body.attempt, constraints: checkTaskConstraints(library, goal as { task: string; args: Array<string | number> }, steps) ?? null, admission };
  // The goal above the fragment: goal → authored fragment → steps.
  const root: PlanNodeView = { task: goal.task, args: goal.args as Value[], children: tree ? [tree] : [] };
  const verdict: PlanVerdict = derived ? verdictOf(derived.body.plan, got) : { kind: 'not-derived', reason: 'the journal records no plan for this epoch yet' };
  return { ...base, seq: Math.max(base.seq, accepted.seq), verdict, tree: root, noMethod, authored };
}

function verdictOf(expected: string, got: string): PlanVerdict {
  return expected === got ? { kind: 'matches', digest: got } : { kind: 'mismatch', expected, got, reason: 'the re-derived plan has another digest' };
}

/** The last `model.completed` author reply of the epoch that no `model.rejected` follows. */
function acceptedAuthorReply(list: readonly JournalRecord[]): JournalRecord<'model.completed'> | undefined {
  for (let i = list.length - 1; i >= 0; i--) {
    const r = list[i]!;
    if (r.kind !== 'model.completed' || (r as JournalRecord<'model.completed'>).body.purpose !== 'author') continue;
    return list[i + 1]?.kind === 'model.rejected' ? undefined : (r as JournalRecord<'model.completed'>);
  }
  return undefined;
}

/** The goal from the epoch's accepted parse reply (when no later record names it). */
function parsedGoal(list: readonly JournalRecord[], library: Library, rules: ReplyRules | undefined): Goal | null {
  for (let i = list.length - 1; i >= 0; i--) {
    const r = list[i]!;
    if (r.kind !== 'model.completed' || (r as JournalRecord<'model.completed'>).body.purpose !== 'parse' || list[i + 1]?.kind === 'model.rejected') continue;
    const body = (r as JournalRecord<'model.completed'>).body;
    const verdict = judgeParseReply(typeof body.reply === 'string' ? body.reply : JSON.stringify(body.reply), library, rules);
    return verdict.kind === 'goal' ? (verdict.goal as Goal) : null;
  }
  return null;
}

/** The planner's flat pre-order tree as nested nodes (a plan's tree has one root: the goal, or the authored task). */
function treeOf(result: Extract<PlanResult, { kind: 'plan' }>): PlanNodeView | null {
  const { nodes, roots } = result.tree;
  const build = (id: number): PlanNodeView => {
    const node = nodes[id]!;
    if ('step' in node) {
      const step = result.steps[node.step];
      return { task: node.task, args: [...node.args], step: node.step, ...(step?.actuator ? { actuator: step.actuator } : {}), readOnly: step?.readOnly ?? false, children: [] };
    }
    return { task: node.task, args: [...node.args], method: node.method, ...(node.task === AUTHORED_TASK ? { authored: true } : {}), children: node.children.map(build) };
  };
  if (roots.length === 1) return build(roots[0]!);
  if (roots.length === 0) return null;
  return { task: '(plan)', args: [], children: roots.map(build) };
}

/**
 * Where the server finds a library's evaluables: none needed (the library pins none); the domain
 * `weft inspect --domain` loaded, when it has a library of that name; a built-in domain
 * (examples/registry.ts) with a library of that name; else "domain not loaded".
 */
export function evaluablesFrom(domain: { libraries: readonly Library[]; evaluables: EvaluableRegistry | undefined } | undefined): EvaluablesFor {
  return async (library) => {
    if (library.evaluables.length === 0) return { loaded: true, evaluables: undefined };
    if (domain?.libraries.some((l) => l.name === library.name)) return { loaded: true, evaluables: domain.evaluables };
    const { builtinDomainForLibrary } = await import('../examples/registry.js');
    const builtin = await builtinDomainForLibrary(library.name);
    if (builtin) return { loaded: true, evaluables: builtin.evaluables };
    return { loaded: false, reason: NOT_LOADED };
  };
}
