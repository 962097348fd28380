/**
 * The model's steps of an epoch: parse (the next goal, or done) and author (the gap path: a
 * fragment of library operators, certified by the planner before it is accepted). Each exchange
 * writes `model.requested` ahead, records the reply verbatim, judges it purely, and records a
 * rejection with its reason before re-prompting — at most `maxReprompts` times.
 */
import type { ModelRequest } from '../../actors/model/model.js';
import { WeftError } from '../../journal/errors.js';
import type { Library } from '../../htn/library/schema.js';
import type { EpochPlan, InvocationContext, Json } from '../../machines/context.js';
import { taskCatalogue } from '../../machines/epoch.js';
import { judgeAuthorReply, judgeParseReply } from '../../machines/reply.js';
import { explainNoMethod } from '../explain.js';
import { planEpoch, toEpochPlan } from './plan-steps.js';
import { AUTHORED_TASK, type EpochServices } from './services.js';

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

export async function parseGoal(s: EpochServices, ctx: InvocationContext) {
  const verdict = await askModel(s, ctx, 'parse', {}, (text) => judgeParseReply(text, s.library));
  const at = s.recorder().at();
  if (verdict.kind === 'goal') return { ...at, kind: 'goal' as const, goal: verdict.goal };
  if (verdict.kind === 'done') return { ...at, kind: 'done' as const, summary: verdict.summary };
  return { ...at, kind: 'handoff' as const, reason: verdict.kind === 'exhausted' ? verdict.reason : 'unexpected verdict' };
}


export async function author(s: EpochServices, ctx: InvocationContext) {
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
