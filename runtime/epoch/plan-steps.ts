/**
 * Observation and decomposition: the epoch's planning state comes from a recorded observation (the
 * read-only `state` actuator), and the HTN engine decomposes the goal over it and the pinned
 * library — a pure function of recorded inputs, so replay re-derives the same plan digest.
 */
import { idempotencyKey } from '../../actors/actuator.js';
import type { JournalRecord } from '../../journal/records.js';
import { WorldStateSchema, type Library } from '../../htn/library/schema.js';
import { plan as runPlanner } from '../../htn/planner/plan.js';
import { planDigest, type PlanResult } from '../../htn/planner/result.js';
import type { EpochPlan, EpochStep, Goal, InvocationContext, Json } from '../../machines/context.js';
import { explainNoMethod } from '../explain.js';
import { dispatch, job } from './execute-steps.js';
import type { EpochServices } from './services.js';
import { completeRefusable } from './refusals.js';

async function observe(s: EpochServices, ctx: InvocationContext, goal: Goal): Promise<JournalRecord<'state.observed'>> {
  const key = idempotencyKey(ctx.invocation, ctx.epoch, 0, 'observe');
  // Under flag 13 a worker's refusal of the observation is recorded (step.refused) and the
  // observation asked again, up to the bounded wait for a capable worker (refusals.ts).
  return completeRefusable(s, ctx, {
    what: { step: 0, key, attempt: 1, actuator: s.observe, label: `the observation of epoch ${ctx.epoch}` },
    expected: {
      kinds: ['state.observed'] as const,
      describe: `the observation ${s.observe} for epoch ${ctx.epoch}`,
      accepts: (r) => r.body.key === key && (r.kind === 'step.refused' || (r.body as { actuator?: string }).actuator === s.observe),
    },
    fresh: false,
    send: (again) => dispatch(s, job(ctx, { op: 'run', actuator: s.observe, args: { goal }, key, attempt: 1, step: 0, readOnly: true, ...again, fresh: undefined })),
    record: (outcome) => {
      const by = outcome.worker === undefined ? {} : { worker: outcome.worker }; // the unhashed envelope's meta.worker
      if (!outcome.ok) return { kind: 'state.observed' as const, epoch: ctx.epoch, body: { actuator: s.observe, key, state: null, failure: outcome.failure }, ...by };
      return { kind: 'state.observed' as const, epoch: ctx.epoch, body: { actuator: s.observe, key, state: outcome.result as Json }, ...by };
    },
  });
}

export function planEpoch(s: EpochServices, library: Library, state: unknown, goal: Goal, ctx: InvocationContext): PlanResult | { kind: 'error'; reason: string } {
  const world = WorldStateSchema.safeParse(state);
  if (!world.success) return { kind: 'error', reason: `the observed state does not match {objects, facts}: ${world.error.issues[0]?.message}` };
  try {
    return runPlanner(library, world.data, goal, { maxNodes: ctx.limits.maxNodes, maxDepth: ctx.limits.maxDepth, evaluables: s.evaluables, trustedLibrary: library === s.library });
  } catch (err) {
    return { kind: 'error', reason: `the goal cannot be planned: ${(err as Error).message}` };
  }
}

export function toEpochPlan(result: Extract<PlanResult, { kind: 'plan' }>, source: EpochPlan['source'], library?: Library): EpochPlan {
  const mined = library ? minedMethodsUsed(result, library) : [];
  return { source, digest: planDigest(result), steps: JSON.parse(JSON.stringify(result.steps)) as EpochStep[], ...(mined.length > 0 ? { mined } : {}) };
}

/** The mined methods (their names, sorted) that a decomposition used. */
function minedMethodsUsed(result: Extract<PlanResult, { kind: 'plan' }>, library: Library): string[] {
  const mined = new Set(library.methods.filter((m) => m.origin === 'mined').map((m) => m.name));
  if (mined.size === 0) return [];
  const used = new Set<string>();
  for (const node of result.tree.nodes) if ('method' in node && mined.has(node.method)) used.add(node.method);
  return [...used].sort();
}

export async function decompose(s: EpochServices, ctx: InvocationContext) {
  const goal = ctx.goal!;
  const observed = await observe(s, ctx, goal);
  const rec = s.recorder();
  const failure = observed.body.failure;
  if (failure?.class === 'transient') {
    // The world could not be seen now: rest, resumable; resuming observes again.
    return { ...rec.at(), kind: 'suspended' as const, suspension: { state: 'decompose' as const, class: 'transient' as const, code: failure.code, message: `observing the world with ${s.observe} failed: ${failure.message}` } };
  }
  if (failure) return { ...rec.at(), kind: 'handoff' as const, reason: `observing the world with ${s.observe} failed (${failure.code}): ${failure.message}` };
  const result = planEpoch(s, s.library, observed.body.state, goal, ctx);
  if (result.kind === 'error') return { ...rec.at(), kind: 'handoff' as const, reason: result.reason };
  if (result.kind === 'no-method') {
    return { ...rec.at(), kind: 'no-method' as const, explanation: explainNoMethod(result), state: observed.body.state as Json };
  }
  if (result.kind === 'limit') {
    return { ...rec.at(), kind: 'handoff' as const, reason: `the planner hit its ${result.limit} limit${result.budget ? ` (${result.budget})` : ''} while expanding ${result.task}` };
  }
  const epochPlan = toEpochPlan(result, 'htn', s.library);
  await rec.derive({ kind: 'epoch.derived', epoch: ctx.epoch, body: { source: 'htn', goal, library: s.libraryDigest, plan: epochPlan.digest, steps: epochPlan.steps.length } });
  return { ...rec.at(), kind: 'plan' as const, plan: epochPlan };
}

/** The gap path: the model authors a fragment of library operators; the planner certifies it. */
