/**
 * The invocation statechart (XState v5). Its states are the epoch boundaries:
 *
 *   parse ─► decompose ─► admit ─► execute ─► boundary ─► parse … ─► finishing ─► completed
 *              │ no method   │ approval          │ step failed
 *              ▼             ▼                   ▼
 *            author      awaitingApproval     compensate ─► truncate ─► boundary ─► parse (re-plan) | failing
 *            (gap path)  (hibernates)
 *
 * Every state that touches the world invokes a named actor (see actors.ts) whose real logic the
 * runtime provides; guards and actions are named too, and context is plain JSON — so the persisted
 * snapshot is the hibernation image. Nothing here uses `after`: delays that must survive
 * hibernation are actuator jobs, not machine timers. Pure: no I/O, no clock.
 */
import { assign, setup } from 'xstate';
import { placeholderActors, type AdmitOutput, type ApprovalOutput, type AuthorOutput, type CloseOutput, type CompensateOutput, type DecomposeOutput, type ExecuteOutput, type FinishOutput, type ParseOutput } from './actors.js';
import type { InvocationContext, InvocationEvent, InvocationInput, Position } from './context.js';
import { compactOutcomes } from './epoch.js';

type Done<T> = { output: T };
const at = (p: Position) => ({ seq: p.seq, tail: p.tail });

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
    planFound: (_, o: { kind: string }) => o.kind === 'plan',
    noMethod: (_, o: { kind: string }) => o.kind === 'no-method',
    admitted: (_, o: AdmitOutput) => o.decision === 'allow',
    needsApproval: (_, o: AdmitOutput) => o.decision === 'require_approval',
    approved: (_, o: ApprovalOutput) => o.approved,
    epochSucceeded: (_, o: ExecuteOutput) => o.failure === null,
    failedByPolicy: (_, o: ExecuteOutput) => o.failure?.class === 'policy',
    compensated: (_, o: CompensateOutput) => o.kind === 'compensated',
    hibernateRequested: ({ context }) => context.hibernateRequested,
    replansExhausted: ({ context }) => context.replans > context.limits.maxReplans,
    epochsExhausted: ({ context }) => context.epoch >= context.limits.maxEpochs,
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
    setExecution: assign((_, o: ExecuteOutput) => ({ ...at(o), done: o.done, failure: o.failure })),
    closeEpoch: assign(({ context }, o: CloseOutput) => ({
      ...at(o),
      outcomes: compactOutcomes([...context.outcomes, o.outcome], context.limits.outcomeWindow),
      replans: o.outcome.outcome === 'completed' ? context.replans : context.replans + 1,
      epoch: context.epoch + 1,
      goal: null,
      plan: null,
      gap: null,
      done: [],
      failure: o.outcome.outcome === 'completed' ? null : context.failure,
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
    setFingerprint: assign((_, o: FinishOutput) => ({ ...at(o), fingerprint: o.fingerprint })),
    requestHibernation: assign({ hibernateRequested: true }),
    clearHibernation: assign({ hibernateRequested: false }),
  },
}).createMachine({
  id: 'invocation',
  context: ({ input }) => ({
    ...input,
    epoch: 1,
    outcomes: [],
    goal: null,
    plan: null,
    gap: null,
    done: [],
    failure: null,
    replans: 0,
    summary: null,
    fingerprint: null,
    hibernateRequested: false,
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
          { target: 'handingOff', actions: { type: 'setHandoff', params: ({ event }) => event.output } },
        ],
      },
    },
    decompose: {
      invoke: {
        src: 'decompose',
        input: ({ context }) => context,
        onDone: [
          { guard: { type: 'planFound', params: ({ event }: { event: Done<DecomposeOutput> }) => event.output }, target: 'admit', actions: { type: 'setPlan', params: ({ event }) => event.output } },
          { guard: { type: 'noMethod', params: ({ event }: { event: Done<DecomposeOutput> }) => event.output }, target: 'author', actions: { type: 'setGap', params: ({ event }) => event.output } },
          { target: 'handingOff', actions: { type: 'setHandoff', params: ({ event }) => event.output } },
        ],
      },
    },
    author: {
      invoke: {
        src: 'author',
        input: ({ context }) => context,
        onDone: [
          { guard: { type: 'planFound', params: ({ event }: { event: Done<AuthorOutput> }) => event.output }, target: 'admit', actions: { type: 'setPlan', params: ({ event }) => event.output } },
          { target: 'handingOff', actions: { type: 'setHandoff', params: ({ event }) => event.output } },
        ],
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
      },
    },
    awaitingApproval: {
      on: { 'approval.decided': { target: 'approving' } },
    },
    approving: {
      invoke: {
        src: 'recordApproval',
        input: ({ context, event }) => {
          const e = event as Extract<InvocationEvent, { type: 'approval.decided' }>;
          return { context, decision: e.decision, by: e.by, ...(e.note === undefined ? {} : { note: e.note }) };
        },
        onDone: [
          { guard: { type: 'approved', params: ({ event }: { event: Done<ApprovalOutput> }) => event.output }, target: 'execute', actions: { type: 'moveTo', params: ({ event }) => event.output } },
          { target: 'boundary', actions: { type: 'setDenied', params: ({ event }) => event.output } },
        ],
      },
    },
    execute: {
      invoke: {
        src: 'execute',
        input: ({ context }) => context,
        onDone: [
          { guard: { type: 'epochSucceeded', params: ({ event }: { event: Done<ExecuteOutput> }) => event.output }, target: 'boundary', actions: { type: 'setExecution', params: ({ event }) => event.output } },
          { guard: { type: 'failedByPolicy', params: ({ event }: { event: Done<ExecuteOutput> }) => event.output }, target: 'failing', actions: { type: 'setExecution', params: ({ event }) => event.output } },
          { target: 'compensate', actions: { type: 'setExecution', params: ({ event }) => event.output } },
        ],
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
      },
    },
    truncate: {
      invoke: {
        src: 'truncate',
        input: ({ context }) => context,
        onDone: { target: 'boundary', actions: { type: 'moveTo', params: ({ event }) => event.output } },
      },
    },
    boundary: {
      invoke: {
        src: 'closeEpoch',
        input: ({ context }) => context,
        onDone: { target: 'nextEpoch', actions: { type: 'closeEpoch', params: ({ event }) => event.output } },
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
      on: { resume: { target: 'parse', actions: 'clearHibernation' } },
    },
    finishing: {
      invoke: {
        src: 'finish',
        input: ({ context }) => ({ context, ending: 'completed' as const }),
        onDone: { target: 'completed', actions: { type: 'setFingerprint', params: ({ event }) => event.output } },
      },
    },
    failing: {
      invoke: {
        src: 'finish',
        input: ({ context }) => ({ context, ending: 'failed' as const }),
        onDone: { target: 'failed', actions: { type: 'setFingerprint', params: ({ event }) => event.output } },
      },
    },
    handingOff: {
      invoke: {
        src: 'finish',
        input: ({ context }) => ({ context, ending: 'handed_off' as const }),
        onDone: { target: 'handedOff', actions: { type: 'setFingerprint', params: ({ event }) => event.output } },
      },
    },
    completed: { type: 'final' },
    failed: { type: 'final' },
    handedOff: { type: 'final' },
  },
});

export type InvocationMachine = typeof invocationMachine;

/** States in which the machine waits for the outside world with no actor running. */
export const restingStates = ['awaitingApproval', 'hibernated'] as const;
export const finalStates = ['completed', 'failed', 'handedOff'] as const;
