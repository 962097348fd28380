/**
 * The invocation statechart (XState v5). Its states are the epoch boundaries:
 *
 *   parse ─► decompose ─► admit ─► execute ─► boundary ─► parse … ─► finishing ─► completed
 *              │ no method   │ approval          │ step failed
 *              ▼             ▼                   ▼
 *            author      awaitingApproval     compensate ─► truncate ─► boundary ─► parse (re-plan) | failing
 *            (gap path)  (hibernates)
 *
 *   author ─► awaitingApproval ─(approved)─► author ─► admit …   (flag 5: the authoring call needs a
 *                               ─(rejected)─► boundary             person; rejected, the epoch closes denied)
 *
 *   execute ─► awaitingTimer ─(resume, when due)─► execute
 *     a durable sleep step (`weft.sleep`): the invocation rests with no actor in memory; resuming
 *     it re-enters execute at the sleep step, which fires the timer only once its time has come —
 *     early, it rests again.
 *
 *   awaitingApproval | awaitingTimer | hibernated | suspended ─(supersede)─► superseding ─► superseded
 *     a fork (runtime/fork.ts) takes over from a resting invocation: it ends superseded, sealed,
 *     naming the fork. Replay drives it from the recorded `invocation.superseded`.
 *
 *   a shadow run (pin.shadow) whose epoch shadowed a world effect with no shadow result notes it at
 *   the boundary (`shadowEnded`); its next parse then answers done without asking the model
 *   (runtime/epoch/shadow-step.ts), so it ends completed, its summary saying so: the world it would
 *   observe next has not changed, so nothing after it could be planned on what it did.
 *
 *   hibernated | awaitingApproval | awaitingTimer | suspended ─(cancel | deadline)─► cancelling
 *   execute ─(a cancel or the deadline seen before a step)─► cancelling
 *   boundary ─(… seen as the epoch closes)─► cancelling
 *   cancelling ─► closingCancelled ─► cancelled      a cancel: `cancel.requested`, the current epoch's
 *              ─► failing                          effects compensated in reverse order, then
 *              ─► handingOff                       `invocation.cancelled` listing what stays done;
 *     the deadline: `deadline.passed`, compensated, then failed (policy, invocation.deadline_passed);
 *     a compensation that fails for good hands off with the trail. A suspended invocation whose
 *     epoch was executing (or compensating, or closing) goes back there instead: that actor sees
 *     the cancel in the inbox (or the clock) before its next step, with the epoch's steps in hand.
 *
 *   any state ─► suspended ─(resume)─► the same state
 *     a recorded model or observation failure that a person or a later attempt can fix (a
 *     transient error after the pinned attempts, bad credentials, a moved endpoint), or a
 *     runtime-side error (the store down, a bug): the invocation rests, resumable, with its reason.
 *
 * Every state that touches the world invokes a named actor (see actors.ts) whose real logic the
 * runtime provides; guards and actions are named too, and context is plain JSON — so the persisted
 * snapshot is the hibernation image. Nothing here uses `after`: delays that must survive
 * hibernation are actuator jobs, not machine timers. Pure: no I/O, no clock.
 *
 * Over 400 lines on purpose: the statechart is one XState definition, read whole; its actors and
 * guards live in their own files.
 */
import { assign, setup } from 'xstate';
import { placeholderActors, type AdmitOutput, type ApprovalOutput, type AuthorOutput, type CloseOutput, type CompensateOutput, type DecomposeOutput, type ExecuteOutput, type FinishOutput, type ParseOutput, type StopOutput } from './actors.js';
import type { InvocationContext, InvocationEvent, InvocationInput, KeptEffect, Position, Stop, SuspendableState, Suspension } from './context.js';
import { compactOutcomes } from './epoch.js';
import { FLAG_DENIED_STEP_COMPENSATED, hasFlag } from './flags.js';
import { bounded } from './untrusted-text.js';

type Done<T> = { output: T };
type Suspending = Position & { kind: 'suspended'; suspension: Suspension };
type Failing = Position & { kind: 'failed'; failure: NonNullable<InvocationContext['failure']> };

/** What a runtime-side error says, for the suspension (the error itself stays with the runtime). */
function errorSuspension(state: SuspendableState, error: unknown): Suspension {
  const code = typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : 'runtime.error';
  const text = error instanceof Error ? error.message : String(error);
  return { state, class: 'runtime', code, message: bounded(text, 500) };
}

/** Every invoking state rests in `suspended` when its actor throws, and resumes there. */
const suspendOnError = (state: SuspendableState) => ({
  target: 'suspended' as const,
  actions: { type: 'suspendOnError' as const, params: ({ event }: { event: { error: unknown } }) => ({ state, error: event.error }) },
});
const at = (p: Position) => ({ seq: p.seq, tail: p.tail });

type StopEvent = Extract<InvocationEvent, { type: 'cancel' | 'deadline' }>;
/** The stop a resting state's event brings; its record is written by the stopping actor. */
function stopOf(event: StopEvent): Stop {
  return event.type === 'cancel'
    ? { kind: 'cancel', by: event.by, reason: event.reason, at: event.at, recorded: false }
    : { kind: 'deadline', deadline: event.deadline, at: event.at, recorded: false };
}
/** A resting state's answer to a cancel or a passed deadline: stop, compensating the epoch's effects so far. */
const stopOnEvent = { target: 'cancelling' as const, actions: { type: 'noteStop' as const, params: ({ event }: { event: StopEvent }) => event } };
/** Suspended in these states, a cancel or a deadline resumes it there: the state's actor sees the stop before its next step (or ends the run anyway). */
const RESUMED_TO_STOP: readonly SuspendableState[] = ['execute', 'compensate', 'truncate', 'boundary', 'finishing', 'failing', 'handingOff', 'cancelling', 'closingCancelled', 'superseding'];
const SUSPENDABLE: readonly SuspendableState[] = ['parse', 'decompose', 'author', 'admit', 'awaitingApproval', 'execute', 'compensate', 'truncate', 'boundary', 'finishing', 'failing', 'handingOff', 'cancelling', 'closingCancelled', 'superseding'];
/**
 * A suspended invocation's answer to a cancel or a passed deadline: back to the state it suspended
 * in (see resumedToStop) — or, suspended on a recorded outcome (a model or observation failure the
 * journal holds) or awaiting approval, straight to cancelling.
 */
const stopWhileSuspended = [
  ...SUSPENDABLE.map((state) => ({ guard: { type: 'resumedToStop' as const, params: state }, target: state, actions: 'leaveSuspension' as const })),
  { target: 'cancelling' as const, actions: ['leaveSuspension' as const, { type: 'noteStop' as const, params: ({ event }: { event: StopEvent }) => event }] },
];

export const invocationMachine = setup({
  types: {
    context: {} as InvocationContext,
    input: {} as InvocationInput,
    events: {} as InvocationEvent,
  },
  actors: placeholderActors,
  guards: {
    replyIsGoal: (_, o: ParseOutput) => o.kind === 'goal',
    replyIsDone: (_, o: ParseOutput) => o.kind === 'done',
    suspends: (_, o: { kind: string }) => o.kind === 'suspended',
    fails: (_, o: { kind: string }) => o.kind === 'failed',
    suspendedIn: ({ context }, state: SuspendableState) => context.suspension?.state === state,
    /**
     * A stop goes back to the suspended state when that state's actor holds the epoch's steps
     * (execute, compensation, the ends), or when the suspension is runtime-side: the journal does
     * not say it stopped, so its actor must finish what it recorded before the stop is recorded.
     */
    resumedToStop: ({ context }, state: SuspendableState) =>
      context.suspension?.state === state && state !== 'awaitingApproval' && (context.suspension.class === 'runtime' || RESUMED_TO_STOP.includes(state)),
    planFound: (_, o: { kind: string }) => o.kind === 'plan',
    noMethod: (_, o: { kind: string }) => o.kind === 'no-method',
    admitted: (_, o: AdmitOutput) => o.decision === 'allow',
    needsApproval: (_, o: AdmitOutput) => o.decision === 'require_approval',
    authoringNeedsApproval: (_, o: AuthorOutput) => o.kind === 'approval',
    /** Awaiting approval with no plan yet: the approval was of the authoring call (flag 5). */
    authoringApproved: ({ context }, o: ApprovalOutput) => o.approved && context.plan === null && context.gap !== null,
    approved: (_, o: ApprovalOutput) => o.approved,
    waitsForTimer: (_, o: ExecuteOutput) => o.waiting !== undefined,
    epochSucceeded: (_, o: ExecuteOutput) => o.failure === null && o.stop === undefined,
    // Under flag 4 a step denied at dispatch is compensated like a failed epoch (compensate, truncate, re-plan).
    failedByPolicy: ({ context }, o: ExecuteOutput) => o.failure?.class === 'policy' && !(o.failure.code === 'step.denied' && hasFlag(context.pin, FLAG_DENIED_STEP_COMPENSATED)),
    compensated: (_, o: CompensateOutput) => o.kind === 'compensated',
    hibernateRequested: ({ context }) => context.hibernateRequested,
    replansExhausted: ({ context }) => context.replans > context.limits.maxReplans,
    epochsExhausted: ({ context }) => context.epoch >= context.limits.maxEpochs,
    stopsBeforeStep: (_, o: ExecuteOutput) => o.stop !== undefined,
    closesWithoutStop: (_, o: CloseOutput) => o.stop === undefined,
    stopCompensated: (_, o: StopOutput) => o.kind === 'compensated',
    stopIsCancel: ({ context }) => context.stop?.kind === 'cancel',
  },
  actions: {
    moveTo: assign((_, p: Position) => at(p)),
    setGoal: assign((_, o: ParseOutput) => ({ ...at(o), goal: o.kind === 'goal' ? o.goal : null })),
    setSummary: assign((_, o: ParseOutput) => ({ ...at(o), summary: o.kind === 'done' ? o.summary : null })),
    setPlan: assign((_, o: DecomposeOutput | AuthorOutput) => ({ ...at(o), plan: o.kind === 'plan' ? o.plan : null })),
    setGap: assign((_, o: DecomposeOutput) => ({ ...at(o), gap: o.kind === 'no-method' ? { state: o.state, explanation: o.explanation } : null })),
    setHandoff: assign((_, o: Position & { kind: string; reason?: string }) => ({
      ...at(o),
      failure: { class: 'policy' as const, code: 'invocation.handed_off', message: o.reason ?? 'handed off' },
    })),
    setDenied: assign((_, o: Position & { reason?: string }) => ({
      ...at(o),
      failure: { class: 'policy' as const, code: 'epoch.denied', message: o.reason ?? 'denied by policy' },
    })),
    approveAuthoring: assign(({ context }, o: Position) => ({ ...at(o), gap: context.gap === null ? null : { ...context.gap, approved: true } })),
    setExecution: assign((_, o: ExecuteOutput) => ({ ...at(o), done: o.done, failure: o.failure, timer: null })),
    // Waking re-enters execute at the sleep step, with the steps done so far and the position after `timer.set`.
    setTimer: assign((_, o: ExecuteOutput) => ({ ...at(o), done: o.done, timer: o.waiting ?? null })),
    closeEpoch: assign(({ context }, o: CloseOutput) => ({
      ...at(o),
      ...(o.spent === undefined ? {} : { spent: (context.spent ?? 0) + o.spent }),
      outcomes: compactOutcomes([...context.outcomes, o.outcome], context.limits.outcomeWindow),
      replans: o.outcome.outcome === 'completed' ? context.replans : context.replans + 1,
      ...(context.pin.shadow !== undefined && context.done.some((d) => d.shadowed === 'none') ? { shadowEnded: context.epoch } : {}),
      epoch: context.epoch + 1,
      goal: null,
      plan: null,
      gap: null,
      done: [],
      failure: o.outcome.outcome === 'completed' ? null : context.failure,
      ...(o.kept?.length ? { kept: [...(context.kept ?? []), ...o.kept] } : {}),
      ...(o.authored?.length ? { authored: [...(context.authored ?? []), ...o.authored] } : {}),
      ...(o.stop ? { stop: o.stop } : {}),
    })),
    giveUpReplanning: assign(({ context }) => ({
      failure: {
        class: 'permanent' as const,
        code: 'invocation.replans_exhausted',
        message: `gave up after ${context.limits.maxReplans} re-plans; last failure: ${context.failure?.message ?? 'unknown'}`,
      },
    })),
    giveUpEpochs: assign(({ context }) => ({
      failure: { class: 'policy' as const, code: 'invocation.epochs_exhausted', message: `the intent was not done after ${context.limits.maxEpochs} epochs` },
    })),
    setSuspension: assign((_, o: Suspending) => ({ ...at(o), suspension: o.suspension })),
    suspendOnError: assign((_, p: { state: SuspendableState; error: unknown }) => ({ suspension: errorSuspension(p.state, p.error) })),
    setFailure: assign((_, o: Failing) => ({ ...at(o), failure: o.failure })),
    /** Resuming: the suspension is over; a model exchange picks up where it stopped. */
    leaveSuspension: assign(({ context }) => ({ suspension: null, exchange: context.suspension?.exchange ?? null })),
    setFingerprint: assign((_, o: FinishOutput) => ({ ...at(o), fingerprint: o.fingerprint })),
    setSupersession: assign((_, p: { by: string; atEpoch: number; reason: string }) => ({ supersede: { by: p.by, atEpoch: p.atEpoch, reason: p.reason } })),
    noteStop: assign((_, e: StopEvent) => ({ stop: stopOf(e) })),
    setStop: assign((_, o: ExecuteOutput) => ({ ...at(o), done: o.done, timer: null, stop: o.stop ?? null })),
    keep: assign(({ context }, o: Position & { kept?: KeptEffect[] }) => ({ ...at(o), ...(o.kept?.length ? { kept: [...(context.kept ?? []), ...o.kept] } : {}) })),
    failOnDeadline: assign(({ context }) => ({
      failure: {
        class: 'policy' as const,
        code: 'invocation.deadline_passed',
        message: context.stop?.kind === 'deadline' ? `the deadline ${context.stop.deadline} passed (seen at ${context.stop.at}); the current epoch's effects were compensated` : 'the deadline passed',
      },
    })),
    requestHibernation: assign({ hibernateRequested: true }),
    clearHibernation: assign({ hibernateRequested: false }),
  },
}).createMachine({
  id: 'invocation',
  // A fork starts from its parent's state at the epoch boundary (`input.from`); any other invocation at epoch 1.
  context: ({ input: { from, ...input } }) => ({
    ...input,
    epoch: from?.epoch ?? 1,
    outcomes: from?.outcomes ?? [],
    goal: null,
    plan: null,
    gap: null,
    done: [],
    failure: null,
    replans: from?.replans ?? 0,
    summary: null,
    fingerprint: null,
    hibernateRequested: false,
    suspension: null,
    exchange: null,
    spent: from?.spent ?? 0,
    ...(from?.kept?.length ? { kept: from.kept } : {}),
    ...(from?.authored?.length ? { authored: from.authored } : {}),
  }),
  initial: 'parse',
  on: { hibernate: { actions: 'requestHibernation' } },
  states: {
    parse: {
      invoke: {
        src: 'parseGoal',
        input: ({ context }) => context,
        onDone: [
          { guard: { type: 'replyIsGoal', params: ({ event }: { event: Done<ParseOutput> }) => event.output }, target: 'decompose', actions: { type: 'setGoal', params: ({ event }) => event.output } },
          { guard: { type: 'replyIsDone', params: ({ event }: { event: Done<ParseOutput> }) => event.output }, target: 'finishing', actions: { type: 'setSummary', params: ({ event }) => event.output } },
          { guard: { type: 'suspends', params: ({ event }: { event: Done<ParseOutput> }) => event.output }, target: 'suspended', actions: { type: 'setSuspension', params: ({ event }) => event.output as Suspending } },
          { guard: { type: 'fails', params: ({ event }: { event: Done<ParseOutput> }) => event.output }, target: 'failing', actions: { type: 'setFailure', params: ({ event }) => event.output as Failing } },
          { target: 'handingOff', actions: { type: 'setHandoff', params: ({ event }) => event.output } },
        ],
        onError: suspendOnError('parse'),
      },
    },
    decompose: {
      invoke: {
        src: 'decompose',
        input: ({ context }) => context,
        onDone: [
          { guard: { type: 'planFound', params: ({ event }: { event: Done<DecomposeOutput> }) => event.output }, target: 'admit', actions: { type: 'setPlan', params: ({ event }) => event.output } },
          { guard: { type: 'noMethod', params: ({ event }: { event: Done<DecomposeOutput> }) => event.output }, target: 'author', actions: { type: 'setGap', params: ({ event }) => event.output } },
          { guard: { type: 'suspends', params: ({ event }: { event: Done<DecomposeOutput> }) => event.output }, target: 'suspended', actions: { type: 'setSuspension', params: ({ event }) => event.output as Suspending } },
          { target: 'handingOff', actions: { type: 'setHandoff', params: ({ event }) => event.output } },
        ],
        onError: suspendOnError('decompose'),
      },
    },
    author: {
      invoke: {
        src: 'author',
        input: ({ context }) => context,
        onDone: [
          { guard: { type: 'planFound', params: ({ event }: { event: Done<AuthorOutput> }) => event.output }, target: 'admit', actions: { type: 'setPlan', params: ({ event }) => event.output } },
          { guard: { type: 'authoringNeedsApproval', params: ({ event }: { event: Done<AuthorOutput> }) => event.output }, target: 'awaitingApproval', actions: { type: 'moveTo', params: ({ event }) => event.output } },
          { guard: { type: 'suspends', params: ({ event }: { event: Done<AuthorOutput> }) => event.output }, target: 'suspended', actions: { type: 'setSuspension', params: ({ event }) => event.output as Suspending } },
          { guard: { type: 'fails', params: ({ event }: { event: Done<AuthorOutput> }) => event.output }, target: 'failing', actions: { type: 'setFailure', params: ({ event }) => event.output as Failing } },
          { target: 'handingOff', actions: { type: 'setHandoff', params: ({ event }) => event.output } },
        ],
        onError: suspendOnError('author'),
      },
    },
    admit: {
      invoke: {
        src: 'admit',
        input: ({ context }) => context,
        onDone: [
          { guard: { type: 'admitted', params: ({ event }: { event: Done<AdmitOutput> }) => event.output }, target: 'execute', actions: { type: 'moveTo', params: ({ event }) => event.output } },
          { guard: { type: 'needsApproval', params: ({ event }: { event: Done<AdmitOutput> }) => event.output }, target: 'awaitingApproval', actions: { type: 'moveTo', params: ({ event }) => event.output } },
          { target: 'boundary', actions: { type: 'setDenied', params: ({ event }) => event.output } },
        ],
        onError: suspendOnError('admit'),
      },
    },
    awaitingApproval: {
      on: { 'approval.decided': { target: 'approving' }, cancel: stopOnEvent, deadline: stopOnEvent, supersede: { target: 'superseding', actions: { type: 'setSupersession', params: ({ event }: { event: Extract<InvocationEvent, { type: 'supersede' }> }) => event } } },
    },
    approving: {
      invoke: {
        src: 'recordApproval',
        input: ({ context, event }) => {
          const e = event as Extract<InvocationEvent, { type: 'approval.decided' }>;
          return { context, decision: e.decision, by: e.by, ...(e.note === undefined ? {} : { note: e.note }) };
        },
        onDone: [
          { guard: { type: 'authoringApproved', params: ({ event }: { event: Done<ApprovalOutput> }) => event.output }, target: 'author', actions: { type: 'approveAuthoring', params: ({ event }) => event.output } },
          { guard: { type: 'approved', params: ({ event }: { event: Done<ApprovalOutput> }) => event.output }, target: 'execute', actions: { type: 'moveTo', params: ({ event }) => event.output } },
          { target: 'boundary', actions: { type: 'setDenied', params: ({ event }) => event.output } },
        ],
        onError: suspendOnError('awaitingApproval'),
      },
    },
    execute: {
      invoke: {
        src: 'execute',
        input: ({ context }) => context,
        onDone: [
          { guard: { type: 'waitsForTimer', params: ({ event }: { event: Done<ExecuteOutput> }) => event.output }, target: 'awaitingTimer', actions: { type: 'setTimer', params: ({ event }) => event.output } },
          { guard: { type: 'epochSucceeded', params: ({ event }: { event: Done<ExecuteOutput> }) => event.output }, target: 'boundary', actions: { type: 'setExecution', params: ({ event }) => event.output } },
          { guard: { type: 'failedByPolicy', params: ({ event }: { event: Done<ExecuteOutput> }) => event.output }, target: 'failing', actions: { type: 'setExecution', params: ({ event }) => event.output } },
          { guard: { type: 'stopsBeforeStep', params: ({ event }: { event: Done<ExecuteOutput> }) => event.output }, target: 'cancelling', actions: { type: 'setStop', params: ({ event }) => event.output } },
          { target: 'compensate', actions: { type: 'setExecution', params: ({ event }) => event.output } },
        ],
        onError: suspendOnError('execute'),
      },
    },
    compensate: {
      invoke: {
        src: 'compensate',
        input: ({ context }) => context,
        onDone: [
          { guard: { type: 'compensated', params: ({ event }: { event: Done<CompensateOutput> }) => event.output }, target: 'truncate', actions: { type: 'moveTo', params: ({ event }) => event.output } },
          { target: 'handingOff', actions: { type: 'setHandoff', params: ({ event }) => event.output } },
        ],
        onError: suspendOnError('compensate'),
      },
    },
    truncate: {
      invoke: {
        src: 'truncate',
        input: ({ context }) => context,
        onDone: { target: 'boundary', actions: { type: 'moveTo', params: ({ event }) => event.output } },
        onError: suspendOnError('truncate'),
      },
    },
    boundary: {
      invoke: {
        src: 'closeEpoch',
        input: ({ context }) => context,
        onDone: [
          { guard: { type: 'closesWithoutStop', params: ({ event }: { event: Done<CloseOutput> }) => event.output }, target: 'nextEpoch', actions: { type: 'closeEpoch', params: ({ event }) => event.output } },
          { target: 'cancelling', actions: { type: 'closeEpoch', params: ({ event }) => event.output } },
        ],
        onError: suspendOnError('boundary'),
      },
    },
    nextEpoch: {
      always: [
        { guard: 'replansExhausted', target: 'failing', actions: 'giveUpReplanning' },
        { guard: 'epochsExhausted', target: 'handingOff', actions: 'giveUpEpochs' },
        { guard: 'hibernateRequested', target: 'hibernated' },
        { target: 'parse' },
      ],
    },
    hibernated: {
      on: { resume: { target: 'parse', actions: 'clearHibernation' }, cancel: stopOnEvent, deadline: stopOnEvent, supersede: { target: 'superseding', actions: { type: 'setSupersession', params: ({ event }: { event: Extract<InvocationEvent, { type: 'supersede' }> }) => event } } },
    },
    awaitingTimer: {
      on: { resume: { target: 'execute' }, cancel: stopOnEvent, deadline: stopOnEvent, supersede: { target: 'superseding', actions: { type: 'setSupersession', params: ({ event }: { event: Extract<InvocationEvent, { type: 'supersede' }> }) => event } } },
    },
    suspended: {
      on: {
        supersede: { target: 'superseding', actions: { type: 'setSupersession', params: ({ event }: { event: Extract<InvocationEvent, { type: 'supersede' }> }) => event } },
        resume: (['parse', 'decompose', 'author', 'admit', 'awaitingApproval', 'execute', 'compensate', 'truncate', 'boundary', 'finishing', 'failing', 'handingOff', 'superseding', 'cancelling', 'closingCancelled'] as const).map((state) => ({
          guard: { type: 'suspendedIn' as const, params: state },
          target: state,
          actions: 'leaveSuspension' as const,
        })),
        cancel: stopWhileSuspended,
        deadline: stopWhileSuspended,
      },
    },
    cancelling: {
      invoke: {
        src: 'stopEpoch',
        input: ({ context }) => context,
        onDone: [
          { guard: { type: 'stopCompensated', params: ({ event }: { event: Done<StopOutput> }) => event.output }, target: 'closingOnStop', actions: { type: 'keep', params: ({ event }) => event.output as Position & { kept: KeptEffect[] } } },
          { target: 'handingOff', actions: { type: 'setHandoff', params: ({ event }) => event.output } },
        ],
        onError: suspendOnError('cancelling'),
      },
    },
    closingOnStop: {
      always: [{ guard: 'stopIsCancel', target: 'closingCancelled' }, { target: 'failing', actions: 'failOnDeadline' }],
    },
    closingCancelled: {
      invoke: {
        src: 'finish',
        input: ({ context }) => ({ context, ending: 'cancelled' as const }),
        onDone: { target: 'cancelled', actions: { type: 'setFingerprint', params: ({ event }) => event.output } },
        onError: suspendOnError('closingCancelled'),
      },
    },
    finishing: {
      invoke: {
        src: 'finish',
        input: ({ context }) => ({ context, ending: 'completed' as const }),
        onDone: { target: 'completed', actions: { type: 'setFingerprint', params: ({ event }) => event.output } },
        onError: suspendOnError('finishing'),
      },
    },
    failing: {
      invoke: {
        src: 'finish',
        input: ({ context }) => ({ context, ending: 'failed' as const }),
        onDone: { target: 'failed', actions: { type: 'setFingerprint', params: ({ event }) => event.output } },
        onError: suspendOnError('failing'),
      },
    },
    handingOff: {
      invoke: {
        src: 'finish',
        input: ({ context }) => ({ context, ending: 'handed_off' as const }),
        onDone: { target: 'handedOff', actions: { type: 'setFingerprint', params: ({ event }) => event.output } },
        onError: suspendOnError('handingOff'),
      },
    },
    superseding: {
      invoke: {
        src: 'finish',
        input: ({ context }) => ({ context, ending: 'superseded' as const }),
        onDone: { target: 'superseded', actions: { type: 'setFingerprint', params: ({ event }) => event.output } },
        onError: suspendOnError('superseding'),
      },
    },
    completed: { type: 'final' },
    failed: { type: 'final' },
    handedOff: { type: 'final' },
    superseded: { type: 'final' },
    cancelled: { type: 'final' },
  },
});

export type InvocationMachine = typeof invocationMachine;

/** States in which the machine waits for the outside world with no actor running. */
export const restingStates = ['awaitingApproval', 'awaitingTimer', 'hibernated', 'suspended'] as const;
export const finalStates = ['completed', 'failed', 'handedOff', 'cancelled', 'superseded'] as const;
