/**
 * The model's steps of an epoch: parse (the next goal, or done) and author (the gap path: a
 * fragment of library operators, certified by the planner before it is accepted). Each exchange
 * writes `model.requested` ahead and records what came back before acting on it:
 *
 * - a reply: `model.completed`, verbatim — or, when it is over the pinned size cap or not
 *   well-formed Unicode (flag 1), a bounded well-formed prefix with the raw reply's length and
 *   digest, which the verdict then rejects. The verdict is pure; a rejection is recorded with its
 *   reason (`model.rejected`) and the model is re-prompted, at most `maxReprompts` times.
 * - a failure of the call itself: `model.failed` with its class. Transient failures (5xx, 429,
 *   network, time-out) are retried with derived backoff up to the pinned `modelAttempts`, then the
 *   invocation suspends; bad credentials or a moved endpoint suspend at once (fix, then resume);
 *   a configuration the pin makes permanent (an unknown model before any reply, a transcript with
 *   no reply) fails the invocation, sealed.
 *
 * Under flag 1 an intent that is empty or over the pinned cap fails the invocation before any model
 * call, and the authoring call is itself admitted by the policy (`admission.decided`, subject
 * `authoring`) — which never pre-authorizes the fragment's steps: each is admitted at dispatch.
 * Under flag 5 a `require_approval` there asks a person (`approval.requested`, subject
 * `authoring`); once approved, the call is made without admitting it again.
 */
import { classifyModelFailure, type ModelRequest, type OperatorSignature } from '../../actors/model/model.js';
import { createRandom } from '../../actors/random.js';
import { WeftError } from '../../journal/errors.js';
import type { JournalRecord } from '../../journal/records.js';
import type { Library } from '../../htn/library/schema.js';
import type { EpochPlan, InvocationContext, Json, Suspension } from '../../machines/context.js';
import { backoffMs, taskCatalogue } from '../../machines/epoch.js';
import { FLAG_AUTHORING_APPROVAL, FLAG_FAIL_CLOSED, hasFlag } from '../../machines/flags.js';
import { judgeAuthorReply, judgeParseReply, type ReplyRules } from '../../machines/reply.js';
import { keepable, refusalReason } from '../../machines/untrusted-text.js';
import { explainNoMethod } from '../explain.js';
import { planEpoch, toEpochPlan } from './plan-steps.js';
import { recordedRule } from './admission-rule.js';
import { recordedWarnings } from './admission-warnings.js';
import { AUTHORED_TASK, type EpochServices } from './services.js';
import { shadowEnding } from './shadow-step.js';

type Purpose = 'parse' | 'author';
type Rejected = { kind: 'rejected'; reason: string };
type Stopped = { kind: 'exhausted'; reason: string } | { kind: 'suspended'; suspension: Suspension } | { kind: 'failed'; failure: { class: 'permanent'; code: string; message: string } };

/** The caps a judge applies, when the invocation pinned flag 1. */
export function replyRules(ctx: InvocationContext): ReplyRules | undefined {
  return hasFlag(ctx.pin, FLAG_FAIL_CLOSED) ? { maxArgChars: ctx.limits.maxArgChars, maxSummaryChars: ctx.limits.maxSummaryChars } : undefined;
}

/** One model exchange: request (write-ahead), reply or failure (recorded), then the pure verdict. */
async function askModel<V extends { kind: string }>(
  s: EpochServices,
  ctx: InvocationContext,
  purpose: Purpose,
  extra: Record<string, Json>,
  live: Partial<ModelRequest>,
  judge: (text: string) => V | Rejected,
): Promise<V | Stopped> {
  const rec = s.recorder();
  const capped = hasFlag(ctx.pin, FLAG_FAIL_CLOSED);
  // Resuming a suspended exchange: go on from its attempt, rejections and feedback.
  const resumed = ctx.exchange && ctx.exchange.seq === ctx.seq ? ctx.exchange : undefined;
  let attempt = resumed?.attempt ?? 0;
  let rejections = resumed?.rejections ?? 0;
  let feedback = resumed?.feedback;
  let failures = 0;
  for (;;) {
    attempt++;
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
        kinds: ['model.completed', 'model.failed'] as const,
        epoch: ctx.epoch,
        describe: `the model's reply to ${purpose} attempt ${attempt}`,
        accepts: (r) => r.body.purpose === purpose && r.body.attempt === attempt,
      },
      async () => {
        if (!s.model) throw new WeftError('runtime.no_model', 'permanent', 'this runtime has no model to ask');
        let text: string;
        try {
          const signal = AbortSignal.timeout(ctx.limits.modelTimeoutMs);
          text = (await s.model.complete({ ...request, ...live, ...(extra as object) } as ModelRequest, { signal })).text;
          if (typeof text !== 'string') throw new WeftError('model.bad_reply', 'permanent', `model ${s.model.id} returned ${typeof text} where reply text was expected`);
        } catch (err) {
          const beforeAnyReply = ctx.epoch === 1 && purpose === 'parse' && rejections === 0;
          return { kind: 'model.failed' as const, epoch: ctx.epoch, body: { purpose, attempt, ...classifyModelFailure(err, beforeAnyReply, ctx.limits.modelTimeoutMs) } };
        }
        const kept = capped ? keepable(text, ctx.limits.maxReplyChars) : ({ ok: true, text } as const);
        return { kind: 'model.completed' as const, epoch: ctx.epoch, body: { purpose, attempt, reply: kept.text, ...(kept.ok ? {} : { refused: kept.refused }) } };
      },
    );
    if (completion.kind === 'model.failed') {
      const failed = (completion as JournalRecord<'model.failed'>).body;
      if (failed.class === 'permanent') return { kind: 'failed', failure: { class: 'permanent', code: failed.code, message: `the model could not be asked: ${failed.message}` } };
      if (failed.class === 'transient' && ++failures < ctx.limits.modelAttempts) {
        await pause(s, ctx, purpose, attempt, failures);
        continue;
      }
      const after = failed.class === 'transient' ? ` (after ${failures} attempt(s))` : '';
      return {
        kind: 'suspended',
        suspension: {
          state: purpose,
          class: failed.class,
          code: failed.code,
          message: `the model's ${purpose} request failed${after}: ${failed.message}`,
          exchange: { seq: rec.seq, attempt, rejections, ...(feedback === undefined ? {} : { feedback }) },
        },
      };
    }
    failures = 0;
    const body = (completion as JournalRecord<'model.completed'>).body;
    const text = typeof body.reply === 'string' ? body.reply : JSON.stringify(body.reply);
    const verdict = body.refused ? ({ kind: 'rejected', reason: refusalReason(body.refused, ctx.limits.maxReplyChars) } as Rejected) : judge(text);
    if (verdict.kind !== 'rejected') return verdict as V;
    const reason = (verdict as Rejected).reason;
    await rec.derive({ kind: 'model.rejected', epoch: ctx.epoch, body: { attempt, reason } });
    feedback = reason;
    if (++rejections > ctx.limits.maxReprompts) {
      return { kind: 'exhausted', reason: `the model's ${purpose} reply was rejected ${rejections} time(s); last reason: ${feedback}` };
    }
  }
}

/** Backoff before retrying a transient model failure: live only, derived from the seed. */
async function pause(s: EpochServices, ctx: InvocationContext, purpose: Purpose, attempt: number, failures: number): Promise<void> {
  const rec = s.recorder();
  if (rec.replaying || !rec.live) return;
  const unit = createRandom(ctx.pin.seed, `${ctx.invocation}:${ctx.epoch}:model:${purpose}`).stream(`backoff.${attempt}`).next();
  await s.sleep(backoffMs(failures, unit, 500));
}

/** Under flag 1, an intent that cannot be parsed at all fails before any model call. */
function intentProblem(ctx: InvocationContext): { code: string; message: string } | undefined {
  if (!hasFlag(ctx.pin, FLAG_FAIL_CLOSED)) return undefined;
  if (ctx.intentCut && ctx.intentCut.chars <= ctx.limits.maxIntentChars) {
    return { code: 'intent.not_well_formed', message: 'the intent is not well-formed Unicode (it holds a lone UTF-16 surrogate); start a new run with plain text' };
  }
  if (ctx.intentCut) {
    return { code: 'intent.too_large', message: `the intent is ${ctx.intentCut.chars} characters, over the pinned cap of ${ctx.limits.maxIntentChars}; start a new run with a shorter intent` };
  }
  if (ctx.intent.trim() === '') return { code: 'intent.empty', message: 'the intent is empty; start a new run that says what you want done' };
  return undefined;
}

/** What a stopped exchange means for the machine. */
function stopped(at: { seq: number; tail: string }, verdict: Stopped | { kind: string }) {
  if (verdict.kind === 'suspended') return { ...at, kind: 'suspended' as const, suspension: (verdict as Extract<Stopped, { kind: 'suspended' }>).suspension };
  if (verdict.kind === 'failed') return { ...at, kind: 'failed' as const, failure: (verdict as Extract<Stopped, { kind: 'failed' }>).failure };
  return { ...at, kind: 'handoff' as const, reason: verdict.kind === 'exhausted' ? (verdict as { reason: string }).reason : 'unexpected verdict' };
}

export async function parseGoal(s: EpochServices, ctx: InvocationContext) {
  // A shadow run whose last epoch shadowed what the world cannot show ends here, without a model call.
  const shadowEnd = shadowEnding(ctx);
  if (shadowEnd !== undefined) return { ...s.recorder().at(), kind: 'done' as const, summary: shadowEnd };
  const problem = intentProblem(ctx);
  if (problem) return { ...s.recorder().at(), kind: 'failed' as const, failure: { class: 'permanent' as const, ...problem } };
  const rules = replyRules(ctx);
  const verdict = await askModel(s, ctx, 'parse', {}, {}, (text) => judgeParseReply(text, s.library, rules));
  const at = s.recorder().at();
  if (verdict.kind === 'goal') return { ...at, kind: 'goal' as const, goal: (verdict as { goal: NonNullable<InvocationContext['goal']> }).goal };
  if (verdict.kind === 'done') return { ...at, kind: 'done' as const, summary: (verdict as { summary: string }).summary };
  return stopped(at, verdict);
}

/** The operators an authored fragment may use, with the actuator each dispatches. */
export function operatorCatalogue(library: Library): OperatorSignature[] {
  return library.operators.map((o) => ({
    name: o.name,
    params: o.params.map((p) => ({ name: p.name, type: p.type })),
    ...(o.actuator ? { actuator: { name: o.actuator.actuator, args: o.actuator.args } } : {}),
    readOnly: o.readOnly,
  }));
}

export async function author(s: EpochServices, ctx: InvocationContext) {
  const goal = ctx.goal!;
  const gap = ctx.gap!;
  const rec = s.recorder();
  if (hasFlag(ctx.pin, FLAG_FAIL_CLOSED) && !gap.approved) {
    // The authoring call is admitted like anything else that acts on the policy's behalf.
    const admission = s.policy.admitAuthoring?.({ tenant: ctx.tenant, epoch: ctx.epoch, goal }) ?? { decision: 'allow' as const };
    const reason = admission.decision === 'allow' ? undefined : admission.reason;
    const rule = recordedRule(s, ctx, admission);
    await rec.derive({ kind: 'admission.decided', epoch: ctx.epoch, body: { subject: 'authoring', decision: admission.decision, policy: s.policy.id, ...(reason === undefined ? {} : { reason }), ...(rule === undefined ? {} : { rule }), ...recordedWarnings(ctx, admission) } });
    if (admission.decision === 'require_approval' && hasFlag(ctx.pin, FLAG_AUTHORING_APPROVAL)) {
      await rec.derive({ kind: 'approval.requested', epoch: ctx.epoch, body: { subject: 'authoring', reason: admission.reason } });
      return { ...rec.at(), kind: 'approval' as const };
    }
    if (admission.decision !== 'allow') {
      const why = admission.decision === 'deny' ? `the policy does not let the model author a fragment for ${goal.task}: ${reason}` : `authoring a fragment for ${goal.task} needs a person (${reason}); the gap path does not ask, so a person takes over`;
      return { ...rec.at(), kind: 'handoff' as const, reason: why };
    }
  }
  const rules = replyRules(ctx);
  let certified: EpochPlan | undefined;
  const live: Partial<ModelRequest> = { operators: operatorCatalogue(s.library), state: gap.state };
  const verdict = await askModel(s, ctx, 'author', { goal: goal as unknown as Json, explanation: gap.explanation }, live, (text) => {
    const reply = judgeAuthorReply(text, s.library, rules);
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
  if (verdict.kind !== 'fragment' || !certified) return stopped(rec.at(), verdict);
  await rec.derive({ kind: 'epoch.derived', epoch: ctx.epoch, body: { source: 'authored', goal, library: s.libraryDigest, plan: certified.digest, steps: certified.steps.length } });
  return { ...rec.at(), kind: 'plan' as const, plan: certified };
}
