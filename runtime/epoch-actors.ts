/**
 * The real logic behind the invocation machine's named actors. Each one is a recorded step over
 * the journal through the Recorder: it derives the records it can compute (requests, plan digests,
 * dispatches, admissions) and obtains the ones it cannot (model replies, observations, actuator
 * completions) — live from the world, or, on resume and replay, read back from the journal.
 *
 * Write-ahead order (invariant 1): `model.requested` / `step.dispatched` /
 * `compensation.dispatched` are durable before the call; the completion is durable before the
 * actor returns and the machine moves on.
 */
import { fromPromise } from 'xstate';
import { idempotencyKey } from '../actors/actuator.js';
import type { Model, ModelRequest } from '../actors/model/model.js';
import { createRandom } from '../actors/random.js';
import { WeftError } from '../journal/errors.js';
import type { JournalRecord } from '../journal/records.js';
import type { SigningKey } from '../journal/seal.js';
import { signFingerprint } from '../journal/seal.js';
import type { EvaluableRegistry } from '../htn/library/evaluables.js';
import { WorldStateSchema, type Library } from '../htn/library/schema.js';
import { plan as runPlanner } from '../htn/planner/plan.js';
import { planDigest, type PlanResult } from '../htn/planner/result.js';
import type { ApprovalInput, FinishInput, InvocationActors } from '../machines/actors.js';
import type { EpochPlan, EpochStep, Goal, InvocationContext, Json, StepResult } from '../machines/context.js';
import { backoffMs, epochOutcome, taskCatalogue } from '../machines/epoch.js';
import type { AdmissionPolicy } from '../machines/policy.js';
import { judgeAuthorReply, judgeParseReply } from '../machines/reply.js';
import type { Dispatcher, Job, JobOutcome } from '../queue/dispatcher.js';
import { explainNoMethod } from './explain.js';
import type { Recorder } from './recorder.js';

export interface EpochServices {
  /** The recorder of the invocation this machine runs (swapped on resume). */
  recorder(): Recorder;
  library: Library;
  libraryDigest: string;
  policy: AdmissionPolicy;
  /** The read-only `state` actuator observed at the start of every epoch. */
  observe: string;
  evaluables?: EvaluableRegistry;
  /** Live only (replay never calls out). */
  model?: Model;
  dispatcher?: Dispatcher;
  signingKey?: SigningKey;
  sleep(ms: number): Promise<void>;
}

/** The name of the one-off task the gap path certifies an authored fragment under. */
export const AUTHORED_TASK = 'weft:authored';

export function epochActors(s: EpochServices): Partial<InvocationActors> {
  return {
    parseGoal: fromPromise(async ({ input }: { input: InvocationContext }) => parseGoal(s, input)),
    decompose: fromPromise(async ({ input }: { input: InvocationContext }) => decompose(s, input)),
    author: fromPromise(async ({ input }: { input: InvocationContext }) => author(s, input)),
    admit: fromPromise(async ({ input }: { input: InvocationContext }) => admit(s, input)),
    recordApproval: fromPromise(async ({ input }: { input: ApprovalInput }) => recordApproval(s, input)),
    execute: fromPromise(async ({ input }: { input: InvocationContext }) => execute(s, input)),
    compensate: fromPromise(async ({ input }: { input: InvocationContext }) => compensate(s, input)),
    truncate: fromPromise(async ({ input }: { input: InvocationContext }) => truncate(s, input)),
    closeEpoch: fromPromise(async ({ input }: { input: InvocationContext }) => closeEpoch(s, input)),
    finish: fromPromise(async ({ input }: { input: FinishInput }) => finish(s, input)),
  } as Partial<InvocationActors>;
}

// ── the model ────────────────────────────────────────────────────────────────────────────────

/** One model exchange: request (write-ahead), reply (recorded), then the pure verdict. */
async function askModel<V extends { kind: string }>(
  s: EpochServices,
  ctx: InvocationContext,
  purpose: 'parse' | 'author',
  extra: Record<string, Json>,
  judge: (text: string) => V | { kind: 'rejected'; reason: string },
): Promise<V | { kind: 'exhausted'; reason: string }> {
  const rec = s.recorder();
  let feedback: string | undefined;
  const attempts = ctx.limits.maxReprompts + 1;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const request: ModelRequest = {
      purpose,
      intent: ctx.intent,
      epoch: ctx.epoch,
      outcomes: ctx.outcomes,
      tasks: taskCatalogue(s.library),
      ...(feedback === undefined ? {} : { feedback }),
    };
    const recorded: Record<string, Json> = { epoch: ctx.epoch, outcomes: ctx.outcomes as unknown as Json, ...extra };
    if (feedback !== undefined) recorded.feedback = feedback;
    await rec.derive({ kind: 'model.requested', epoch: ctx.epoch, body: { purpose, attempt, request: recorded } });
    const completion = await rec.complete(
      {
        kinds: ['model.completed'] as const,
        epoch: ctx.epoch,
        describe: `the model's reply to ${purpose} attempt ${attempt}`,
        accepts: (r) => r.body.purpose === purpose && r.body.attempt === attempt,
      },
      async () => {
        if (!s.model) throw new WeftError('runtime.no_model', 'permanent', 'this runtime has no model to ask');
        const reply = await s.model.complete(purpose === 'author' ? { ...request, ...extra } as ModelRequest : request);
        return { kind: 'model.completed', epoch: ctx.epoch, body: { purpose, attempt, reply: reply.text } };
      },
    );
    const text = typeof completion.body.reply === 'string' ? completion.body.reply : JSON.stringify(completion.body.reply);
    const verdict = judge(text);
    if (verdict.kind !== 'rejected') return verdict as V;
    const reason = (verdict as { reason: string }).reason;
    await rec.derive({ kind: 'model.rejected', epoch: ctx.epoch, body: { attempt, reason } });
    feedback = reason;
  }
  return { kind: 'exhausted', reason: `the model's ${purpose} reply was rejected ${attempts} time(s); last reason: ${feedback}` };
}

async function parseGoal(s: EpochServices, ctx: InvocationContext) {
  const verdict = await askModel(s, ctx, 'parse', {}, (text) => judgeParseReply(text, s.library));
  const at = s.recorder().at();
  if (verdict.kind === 'goal') return { ...at, kind: 'goal' as const, goal: verdict.goal };
  if (verdict.kind === 'done') return { ...at, kind: 'done' as const, summary: verdict.summary };
  return { ...at, kind: 'handoff' as const, reason: verdict.kind === 'exhausted' ? verdict.reason : 'unexpected verdict' };
}

// ── observation and decomposition ────────────────────────────────────────────────────────────

async function observe(s: EpochServices, ctx: InvocationContext, goal: Goal): Promise<JournalRecord<'state.observed'>> {
  const key = idempotencyKey(ctx.invocation, ctx.epoch, 0, 'observe');
  return s.recorder().complete(
    {
      kinds: ['state.observed'] as const,
      epoch: ctx.epoch,
      describe: `the observation ${s.observe} for epoch ${ctx.epoch}`,
      accepts: (r) => r.body.actuator === s.observe && r.body.key === key,
    },
    async () => {
      const outcome = await dispatch(s, job(ctx, { op: 'run', actuator: s.observe, args: { goal }, key, attempt: 1, step: 0 }));
      if (!outcome.ok) {
        throw new WeftError('observation.failed', outcome.failure.class, `observing the world with ${s.observe} failed: ${outcome.failure.message}; resume the invocation to try again`);
      }
      return { kind: 'state.observed', epoch: ctx.epoch, body: { actuator: s.observe, key, state: outcome.result as Json } };
    },
  );
}

function planEpoch(s: EpochServices, library: Library, state: unknown, goal: Goal, ctx: InvocationContext): PlanResult | { kind: 'error'; reason: string } {
  const world = WorldStateSchema.safeParse(state);
  if (!world.success) return { kind: 'error', reason: `the observed state does not match {objects, facts}: ${world.error.issues[0]?.message}` };
  try {
    return runPlanner(library, world.data, goal, { maxNodes: ctx.limits.maxNodes, maxDepth: ctx.limits.maxDepth, evaluables: s.evaluables, trustedLibrary: library === s.library });
  } catch (err) {
    return { kind: 'error', reason: `the goal cannot be planned: ${(err as Error).message}` };
  }
}

function toEpochPlan(result: Extract<PlanResult, { kind: 'plan' }>, source: EpochPlan['source']): EpochPlan {
  return { source, digest: planDigest(result), steps: JSON.parse(JSON.stringify(result.steps)) as EpochStep[] };
}

async function decompose(s: EpochServices, ctx: InvocationContext) {
  const goal = ctx.goal!;
  const observed = await observe(s, ctx, goal);
  const result = planEpoch(s, s.library, observed.body.state, goal, ctx);
  const rec = s.recorder();
  if (result.kind === 'error') return { ...rec.at(), kind: 'handoff' as const, reason: result.reason };
  if (result.kind === 'no-method') {
    return { ...rec.at(), kind: 'no-method' as const, explanation: explainNoMethod(result), state: observed.body.state as Json };
  }
  if (result.kind === 'limit') {
    return { ...rec.at(), kind: 'handoff' as const, reason: `the planner hit its ${result.limit} limit${result.budget ? ` (${result.budget})` : ''} while expanding ${result.task}` };
  }
  const epochPlan = toEpochPlan(result, 'htn');
  await rec.derive({ kind: 'epoch.derived', epoch: ctx.epoch, body: { source: 'htn', goal, library: s.libraryDigest, plan: epochPlan.digest, steps: epochPlan.steps.length } });
  return { ...rec.at(), kind: 'plan' as const, plan: epochPlan };
}

/** The gap path: the model authors a fragment of library operators; the planner certifies it. */
async function author(s: EpochServices, ctx: InvocationContext) {
  const goal = ctx.goal!;
  const gap = ctx.gap!;
  let certified: EpochPlan | undefined;
  const verdict = await askModel(s, ctx, 'author', { goal: goal as unknown as Json, explanation: gap.explanation }, (text) => {
    const reply = judgeAuthorReply(text, s.library);
    if (reply.kind === 'rejected') return reply;
    const library: Library = {
      ...s.library,
      tasks: [...s.library.tasks, { name: AUTHORED_TASK, params: [] }],
      methods: [{ name: 'authored-fragment', task: { task: AUTHORED_TASK, args: [] }, params: [], precondition: { op: 'true' }, subtasks: reply.steps }, ...s.library.methods],
    };
    const result = planEpoch(s, library, gap.state, { task: AUTHORED_TASK, args: [] }, ctx);
    if (result.kind === 'plan') {
      certified = toEpochPlan(result, 'authored');
      return { kind: 'fragment' as const };
    }
    const why = result.kind === 'no-method' ? explainNoMethod(result) : result.kind === 'error' ? result.reason : `the ${result.limit} limit was hit`;
    return { kind: 'rejected' as const, reason: `the fragment does not apply in the observed state: ${why}` };
  });
  const rec = s.recorder();
  if (verdict.kind !== 'fragment' || !certified) return { ...rec.at(), kind: 'handoff' as const, reason: verdict.kind === 'exhausted' ? verdict.reason : 'no fragment' };
  await rec.derive({ kind: 'epoch.derived', epoch: ctx.epoch, body: { source: 'authored', goal, library: s.libraryDigest, plan: certified.digest, steps: certified.steps.length } });
  return { ...rec.at(), kind: 'plan' as const, plan: certified };
}

// ── admission ────────────────────────────────────────────────────────────────────────────────

/** Certification before anything runs: every step names a known actuator with args that fit. */
function certify(s: EpochServices, plan: EpochPlan): string | undefined {
  for (let i = 0; i < plan.steps.length; i++) {
    const step = plan.steps[i]!;
    if (!step.actuator) return `step ${i} (${step.operator}) has no actuator binding in the library`;
    if (!s.dispatcher) continue; // replay without actuators: the recorded decision is compared instead
    if (!s.dispatcher.knows(step.actuator)) return `step ${i} (${step.operator}) names the unknown actuator ${step.actuator}`;
    const bad = s.dispatcher.checkArgs(step.actuator, step.actuatorArgs ?? {});
    if (bad) return `step ${i} (${step.operator}): ${bad}`;
  }
  return undefined;
}

async function admit(s: EpochServices, ctx: InvocationContext) {
  const rec = s.recorder();
  const plan = ctx.plan!;
  const refusal = certify(s, plan);
  const admission = refusal ? { decision: 'deny' as const, reason: refusal } : s.policy.admitEpoch({ tenant: ctx.tenant, epoch: ctx.epoch, goal: ctx.goal!, plan });
  const reason = admission.decision === 'allow' ? undefined : admission.reason;
  await rec.derive({
    kind: 'admission.decided',
    epoch: ctx.epoch,
    body: { subject: 'epoch', decision: admission.decision, policy: s.policy.id, ...(reason === undefined ? {} : { reason }) },
  });
  if (admission.decision === 'allow') await rec.derive({ kind: 'epoch.certified', epoch: ctx.epoch, body: { plan: plan.digest, policy: s.policy.id } });
  if (admission.decision === 'require_approval') await rec.derive({ kind: 'approval.requested', epoch: ctx.epoch, body: { plan: plan.digest, reason: admission.reason } });
  return { ...rec.at(), decision: admission.decision, ...(reason === undefined ? {} : { reason }) };
}

async function recordApproval(s: EpochServices, input: ApprovalInput) {
  const { context: ctx, decision, by, note } = input;
  const rec = s.recorder();
  await rec.derive({ kind: 'approval.decided', epoch: ctx.epoch, body: { decision, by, ...(note === undefined ? {} : { note }) } });
  if (decision === 'approved') await rec.derive({ kind: 'epoch.certified', epoch: ctx.epoch, body: { plan: ctx.plan!.digest, policy: s.policy.id } });
  return { ...rec.at(), approved: decision === 'approved', reason: decision === 'approved' ? 'approved' : `rejected by ${by}${note ? `: ${note}` : ''}` };
}

// ── execution and compensation ───────────────────────────────────────────────────────────────

function job(ctx: InvocationContext, j: Pick<Job, 'op' | 'actuator' | 'args' | 'key' | 'attempt' | 'step'> & { result?: unknown }): Job {
  return { ...j, invocation: ctx.invocation, tenant: ctx.tenant, epoch: ctx.epoch, asOf: ctx.pin.asOf, seed: ctx.pin.seed };
}

async function dispatch(s: EpochServices, j: Job): Promise<JobOutcome> {
  if (!s.dispatcher) throw new WeftError('runtime.no_dispatcher', 'permanent', 'this runtime has no dispatcher to run actuators');
  return s.dispatcher.dispatch(j);
}

async function pause(s: EpochServices, ctx: InvocationContext, key: string, attempt: number): Promise<void> {
  if (s.recorder().replaying || !s.recorder().live) return; // the journal already holds what came next
  const unit = createRandom(ctx.pin.seed, key).stream(`backoff.${attempt}`).next();
  await s.sleep(backoffMs(attempt, unit));
}

async function execute(s: EpochServices, ctx: InvocationContext) {
  const rec = s.recorder();
  const plan = ctx.plan!;
  const done: StepResult[] = [];
  for (let i = 0; i < plan.steps.length; i++) {
    const step = plan.steps[i]!;
    const admission = s.policy.admitStep?.({ tenant: ctx.tenant, epoch: ctx.epoch, index: i, step }) ?? { decision: 'allow' as const };
    if (admission.decision !== 'allow') {
      await rec.derive({ kind: 'admission.decided', epoch: ctx.epoch, body: { subject: 'step', step: i, decision: admission.decision, policy: s.policy.id, reason: admission.reason } });
      return { ...rec.at(), done, failure: { step: i, class: 'policy' as const, code: 'step.denied', message: admission.reason } };
    }
    const key = idempotencyKey(ctx.invocation, ctx.epoch, i);
    const args = (step.actuatorArgs ?? {}) as Json;
    for (let attempt = 1; ; attempt++) {
      await rec.derive({ kind: 'step.dispatched', epoch: ctx.epoch, body: { step: i, actuator: step.actuator!, args, key, attempt } });
      const completion = await rec.complete(
        {
          kinds: ['step.completed', 'step.failed'] as const,
          epoch: ctx.epoch,
          describe: `the completion of step ${i} attempt ${attempt}`,
          accepts: (r) => r.body.step === i && r.body.attempt === attempt && r.body.key === key,
        },
        async () => {
          const outcome = await dispatch(s, job(ctx, { op: 'run', actuator: step.actuator!, args, key, attempt, step: i }));
          return outcome.ok
            ? { kind: 'step.completed' as const, epoch: ctx.epoch, body: { step: i, key, attempt, result: outcome.result as Json } }
            : { kind: 'step.failed' as const, epoch: ctx.epoch, body: { step: i, key, attempt, ...outcome.failure } };
        },
      );
      if (completion.kind === 'step.completed') {
        done.push({ step: i, operator: step.operator, result: (completion.body as { result: Json }).result });
        break;
      }
      const failed = completion.body as JournalRecord<'step.failed'>['body'];
      if (failed.class === 'transient' && attempt < ctx.limits.maxAttempts) {
        await pause(s, ctx, key, attempt);
        continue;
      }
      return { ...rec.at(), done, failure: { step: i, class: failed.class, code: failed.code, message: failed.message } };
    }
  }
  return { ...rec.at(), done, failure: null };
}

async function compensate(s: EpochServices, ctx: InvocationContext) {
  const rec = s.recorder();
  const plan = ctx.plan!;
  for (const done of [...ctx.done].reverse()) {
    const step = plan.steps[done.step]!;
    if (step.readOnly) continue;
    const declared = step.compensate;
    const own = !declared && step.actuator !== undefined && (s.dispatcher ? s.dispatcher.canCompensate(step.actuator) : true);
    if (!declared && !own) continue;
    const actuator = declared ? declared.actuator : step.actuator!;
    const args = (declared ? declared.args : step.actuatorArgs ?? {}) as Json;
    const key = idempotencyKey(ctx.invocation, ctx.epoch, done.step, 'undo');
    for (let attempt = 1; ; attempt++) {
      await rec.derive({ kind: 'compensation.dispatched', epoch: ctx.epoch, body: { step: done.step, actuator, args, key, attempt } });
      const completion = await rec.complete(
        {
          kinds: ['compensation.completed'] as const,
          epoch: ctx.epoch,
          describe: `the compensation of step ${done.step} attempt ${attempt}`,
          accepts: (r) => r.body.step === done.step && r.body.attempt === attempt && r.body.key === key,
        },
        async () => {
          const outcome = await dispatch(s, job(ctx, { op: declared ? 'run' : 'compensate', actuator, args, result: done.result, key, attempt, step: done.step }));
          return {
            kind: 'compensation.completed' as const,
            epoch: ctx.epoch,
            body: outcome.ok ? { step: done.step, key, attempt, result: outcome.result as Json } : { step: done.step, key, attempt, result: null, failure: outcome.failure },
          };
        },
      );
      const failure = completion.body.failure;
      if (!failure) break;
      if (failure.class === 'transient' && attempt < ctx.limits.maxAttempts) {
        await pause(s, ctx, key, attempt);
        continue;
      }
      return { ...rec.at(), kind: 'handoff' as const, reason: `compensating step ${done.step} (${step.operator}) failed: ${failure.message}; a person must undo it` };
    }
  }
  return { ...rec.at(), kind: 'compensated' as const };
}

async function truncate(s: EpochServices, ctx: InvocationContext) {
  const rec = s.recorder();
  const removed = ctx.plan ? ctx.plan.steps.map((_, i) => i) : [];
  await rec.derive({ kind: 'frontier.truncated', epoch: ctx.epoch, body: { epoch: ctx.epoch, removed, reason: ctx.failure?.message ?? 'epoch failed' } });
  return rec.at();
}

async function closeEpoch(s: EpochServices, ctx: InvocationContext) {
  const rec = s.recorder();
  const outcome = epochOutcome(ctx);
  await rec.derive({ kind: 'epoch.closed', epoch: ctx.epoch, body: { outcome: outcome.outcome, steps: ctx.done.length } });
  return { ...rec.at(), outcome };
}

// ── the end ──────────────────────────────────────────────────────────────────────────────────

async function finish(s: EpochServices, input: FinishInput) {
  const { context: ctx, ending } = input;
  const rec = s.recorder();
  if (ending === 'completed') {
    await rec.derive({ kind: 'invocation.completed', epoch: ctx.epoch, body: { summary: ctx.summary ?? '' } });
  } else if (ending === 'failed') {
    const f = ctx.failure ?? { class: 'permanent' as const, code: 'invocation.failed', message: 'failed' };
    await rec.derive({ kind: 'invocation.failed', epoch: ctx.epoch, body: { code: f.code, class: f.class, reason: f.message } });
  } else {
    await rec.derive({ kind: 'invocation.handed_off', epoch: ctx.epoch, body: { reason: ctx.failure?.message ?? 'handed off' } });
  }
  const fingerprint = rec.tail;
  await rec.complete(
    {
      kinds: ['invocation.sealed'] as const,
      epoch: ctx.epoch,
      describe: `the seal over fingerprint ${fingerprint}`,
      accepts: (r) => r.body.fingerprint === fingerprint,
    },
    async () => {
      if (!s.signingKey) throw new WeftError('runtime.no_signing_key', 'permanent', 'this runtime has no signing key to seal the journal');
      return {
        kind: 'invocation.sealed',
        epoch: ctx.epoch,
        body: { algorithm: 'ed25519', fingerprint, keyId: s.signingKey.keyId, signature: signFingerprint(s.signingKey, fingerprint) },
      };
    },
  );
  return { ...rec.at(), fingerprint };
}
