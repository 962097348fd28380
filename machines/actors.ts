/**
 * The named actors of the invocation machine — their input and output types, and placeholder
 * logic. The machine (invocation-machine.ts) refers to them by name only; the runtime provides the
 * real implementations with `machine.provide({ actors })`, where each one is a recorded step over
 * the journal (live: write ahead, act, record; replay/resume: read the recorded records back).
 *
 * Keeping the definitions here, pure, is what lets a persisted snapshot name its running actor
 * and lets a test drive the machine with fakes.
 */
import { fromPromise, type PromiseActorLogic } from 'xstate';
import type { AuthoredEffect, EpochOutcome, EpochPlan, Goal, InvocationContext, Json, KeptEffect, Position, StepResult, Stop, Suspension } from './context.js';

export type Failure = NonNullable<InvocationContext['failure']>;

/** A model exchange or an observation that cannot go on now: rest, resumable, with the reason. */
type Suspended = { kind: 'suspended'; suspension: Suspension };
/** A recorded failure that no retry can fix (a configuration the pin makes permanent, a bad intent). */
type Failed = { kind: 'failed'; failure: Failure };

export type ParseOutput = Position & ({ kind: 'goal'; goal: Goal } | { kind: 'done'; summary: string } | { kind: 'handoff'; reason: string } | Suspended | Failed);
export type DecomposeOutput = Position & ({ kind: 'plan'; plan: EpochPlan } | { kind: 'no-method'; explanation: string; state: Json } | { kind: 'handoff'; reason: string } | Suspended);
/** `approval`: the policy wants a person to decide on the authoring call (flag 5); the run rests awaiting approval. */
export type AuthorOutput = Position & ({ kind: 'plan'; plan: EpochPlan } | { kind: 'approval' } | { kind: 'handoff'; reason: string } | Suspended | Failed);
export type AdmitOutput = Position & { decision: 'allow' | 'deny' | 'require_approval'; reason?: string };
export type ApprovalOutput = Position & { approved: boolean; reason: string };
/**
 * `waiting`: the epoch reached a durable sleep step whose time has not come (see awaitingTimer).
 * `stop`: a cancel or the deadline was seen (and recorded) before a step: the run stops (cancelling).
 */
export type ExecuteOutput = Position & { done: StepResult[]; failure: Failure | null; waiting?: { step: number; until: string; dispatches: number }; stop?: Stop };
export type CompensateOutput = Position & { kind: 'compensated' } | (Position & { kind: 'handoff'; reason: string });
/** `spent`: what the closed epoch spent under the policy's contract envelope (flag 1). */
export type CloseOutput = Position & { outcome: EpochOutcome; spent?: number; kept?: KeptEffect[]; authored?: AuthoredEffect[]; stop?: Stop };
/** The current epoch's effects compensated (`kept`: those with no inverse), or a compensation that failed for good (handoff). */
export type StopOutput = (Position & { kind: 'compensated'; kept: KeptEffect[] }) | (Position & { kind: 'handoff'; reason: string });
export type FinishOutput = Position & { fingerprint: string };

export interface ApprovalInput {
  context: InvocationContext;
  decision: 'approved' | 'rejected';
  by: string;
  note?: string;
}

export interface FinishInput {
  context: InvocationContext;
  ending: 'completed' | 'failed' | 'handed_off' | 'cancelled' | 'superseded';
}

function notProvided<I, O>(name: string): PromiseActorLogic<O, I> {
  return fromPromise<O, I>(async () => {
    throw new Error(`the invocation machine's "${name}" actor was not provided: create the machine through createRuntime()`);
  });
}

export const placeholderActors = {
  parseGoal: notProvided<InvocationContext, ParseOutput>('parseGoal'),
  decompose: notProvided<InvocationContext, DecomposeOutput>('decompose'),
  author: notProvided<InvocationContext, AuthorOutput>('author'),
  admit: notProvided<InvocationContext, AdmitOutput>('admit'),
  recordApproval: notProvided<ApprovalInput, ApprovalOutput>('recordApproval'),
  execute: notProvided<InvocationContext, ExecuteOutput>('execute'),
  compensate: notProvided<InvocationContext, CompensateOutput>('compensate'),
  truncate: notProvided<InvocationContext, Position>('truncate'),
  closeEpoch: notProvided<InvocationContext, CloseOutput>('closeEpoch'),
  finish: notProvided<FinishInput, FinishOutput>('finish'),
  stopEpoch: notProvided<InvocationContext, StopOutput>('stopEpoch'),
};

export type InvocationActors = typeof placeholderActors;
