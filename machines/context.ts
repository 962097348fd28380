/**
 * The invocation machine's context and events — plain JSON only, so `getPersistedSnapshot()` is
 * the hibernation image and survives `JSON.stringify`/`JSON.parse`.
 *
 * `seq`/`tail` is the journal position (next seq, last hash) at which the current state began:
 * a snapshot anchors there, and on resume the restarted state's actor re-reads its own records
 * from that seq on (they are compared, not re-written) before acting live again.
 */
import type { Pin } from '../journal/records.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface Goal {
  task: string;
  args: Array<string | number>;
}

/** One ground step of an epoch's closed sub-plan (the planner's PlanStep, as JSON). */
export interface EpochStep {
  operator: string;
  args: Array<string | number>;
  actuator?: string;
  actuatorArgs?: Record<string, string | number>;
  compensate?: { actuator: string; args: Record<string, string | number> };
  readOnly: boolean;
}

export interface EpochPlan {
  source: 'htn' | 'authored';
  digest: string;
  steps: EpochStep[];
  /** The mined methods (schema.ts `origin: 'mined'`) the decomposition used, when it used any. */
  mined?: string[];
}

/** What the model is told about an earlier epoch when it forms the next goal. */
export interface EpochOutcome {
  epoch: number;
  goal: Goal;
  outcome: 'completed' | 'compensated' | 'denied';
  /** Results of the steps that completed, in order (compensated epochs list what was undone). */
  results: Array<{ step: number; operator: string; result: Json }>;
  /** Why the epoch did not complete. */
  reason?: string;
  /** How many step results were left out to keep the model's view bounded (see compactOutcomes). */
  omitted?: number;
}

/** Limits that shape the journal: pinned, so replay follows the run's own limits. */
export interface InvocationLimits {
  /** Re-prompts after a rejected model reply, per request. */
  maxReprompts: number;
  /** Re-plans after a compensated or denied epoch, per invocation. */
  maxReplans: number;
  /** Attempts per step for transient failures (including the first). */
  maxAttempts: number;
  /** Epochs per invocation. */
  maxEpochs: number;
  maxNodes: number;
  maxDepth: number;
  /** Epochs whose step results the model still sees in full; older ones keep goal and outcome only. */
  outcomeWindow: number;
  /** Step results kept per epoch outcome. */
  resultsPerOutcome: number;
  /** Caps on untrusted text, enforced before it is recorded (UTF-16 code units). */
  maxIntentChars: number;
  maxReplyChars: number;
  maxArgChars: number;
  maxSummaryChars: number;
  /** Attempts per model request for transient failures (HTTP 5xx/429, network, time-out), then the invocation suspends. */
  modelAttempts: number;
  /** Time a model request may take before it counts as a transient failure. */
  modelTimeoutMs: number;
  /**
   * Time one attempt of a step may take before it counts as a transient failure (`step.timed_out`,
   * retried under its key). 0 or absent: no limit. Pinned only when set, so a run without one pins
   * what it pinned before.
   */
  stepTimeoutMs?: number;
}

export interface InvocationInput {
  invocation: string;
  tenant: string;
  intent: string;
  pin: Pin;
  limits: InvocationLimits;
  /** Present when the intent was over the pinned cap (`intent` is then a prefix). */
  intentCut?: { chars: number; digest: string };
  /** Journal position after `invocation.pinned` (after `invocation.forked`, for a fork). */
  seq: number;
  tail: string;
  /**
   * A fork (runtime/fork.ts): the state at its parent's epoch boundary, from its `invocation.forked`
   * record — the machine starts there instead of at epoch 1. Absent: an invocation of its own.
   */
  from?: ForkedFrom;
  /** A fork's world: the invocation whose world its actuators act in (ActuatorContext.world). Absent: its own. */
  world?: string;
}

/** Where a fork's machine starts: the parent's state after its epoch `epoch - 1` closed. */
export interface ForkedFrom {
  epoch: number;
  outcomes: EpochOutcome[];
  spent: number;
  replans: number;
  /** The parent's world effects of closed epochs that were not compensated: they stay done, and a cancel of the fork lists them. */
  kept?: KeptEffect[];
  /** Of those, the ones a plan from the model made, with their amounts (flag 11): the lineage's part of a run-wide allowance. */
  authored?: AuthoredEffect[];
}

/** Why an invocation resting in a state is superseded by a fork (the `supersede` event, recorded as `invocation.superseded`). */
export interface Supersession {
  by: string;
  atEpoch: number;
  reason: string;
}

export interface StepResult {
  step: number;
  operator: string;
  result: Json;
  /**
   * A shadow run's world-effect step (`step.shadowed`): it did not happen, so nothing compensates
   * it. `actuator`: its result is the actuator's shadow result; `none`: it has none (null).
   */
  shadowed?: 'actuator' | 'none';
}

/** A world effect that stays done: a step that completed and was not (and will not be) compensated. */
export interface KeptEffect {
  epoch: number;
  step: number;
  actuator: string;
  key: string;
}

/** A world effect of a plan from the model (flag 11) that stays done, with what it spent under the envelope's spend arg. */
export interface AuthoredEffect extends KeptEffect {
  amount: number;
}

/**
 * Why the invocation is stopping before its end: a cancel someone asked for, or the pinned
 * deadline passing. `recorded`: its record (`cancel.requested` / `deadline.passed`) is already in
 * the journal (the execute or boundary actor wrote it); otherwise the stopping actor derives it
 * from the event that brought it (a resting state's `cancel` / `deadline`).
 */
export type Stop =
  | { kind: 'cancel'; by: string; reason: string; at: string; recorded: boolean }
  | { kind: 'deadline'; deadline: string; at: string; recorded: boolean };

export interface InvocationContext extends InvocationInput {
  epoch: number;
  outcomes: EpochOutcome[];
  goal: Goal | null;
  plan: EpochPlan | null;
  /** The gap path: no method covered the goal in this observed state (the author needs both). */
  gap: { state: Json; explanation: string; /** A person approved the authoring call (flag 5): it is not admitted again. */ approved?: boolean } | null;
  /** Completed steps of the current epoch (what compensation undoes). */
  done: StepResult[];
  /** The failure that sent the epoch to compensation, or that ends the invocation. */
  failure: { step?: number; class: 'transient' | 'permanent' | 'policy'; code: string; message: string } | null;
  /**
   * Why the invocation is suspended (resumable), and where it resumes: a recorded model or
   * observation failure, or a runtime-side error (class `runtime`: not in the journal). Absent in
   * snapshots written before suspensions existed.
   */
  suspension?: Suspension | null;
  /** Set on resuming a suspended model exchange: where it goes on (valid only at `exchange.seq`). */
  exchange?: Suspension['exchange'] | null;
  /** A durable sleep step the invocation waits on (awaitingTimer): its step and when it is due (ISO 8601). */
  timer?: { step: number; until: string; dispatches: number } | null;
  /** What completed epochs spent under the policy's contract envelope (flag 1). */
  spent?: number;
  /** World effects of closed epochs that stay done (what a cancel lists); absent: none (or a snapshot from before it was kept). */
  kept?: KeptEffect[];
  /**
   * Under flag 11: the world effects of completed epochs whose plan came from the model (authored,
   * or through a mined method), with their amounts — what a run-wide authored allowance has spent
   * so far, and what a handed-off run lists. For a fork, its lineage's come first. Absent: none.
   */
  authored?: AuthoredEffect[];
  /** A cancel or a passed deadline the invocation is stopping on (see Stop). */
  stop?: Stop | null;
  replans: number;
  /**
   * A shadow run (pin.shadow): the epoch after which it ends, because that epoch shadowed a world
   * effect with no shadow result — the world cannot show it, so no later epoch can be planned on it.
   */
  shadowEnded?: number;
  summary: string | null;
  fingerprint: string | null;
  hibernateRequested: boolean;
  /** Set when a fork supersedes the invocation (runtime/fork.ts): it ends `superseded`, naming the fork. */
  supersede?: Supersession | null;
}

export type SuspendableState = 'parse' | 'decompose' | 'author' | 'admit' | 'awaitingApproval' | 'execute' | 'compensate' | 'truncate' | 'boundary' | 'finishing' | 'failing' | 'handingOff' | 'superseding' | 'cancelling' | 'closingCancelled';

export interface Suspension {
  /** The state the invocation resumes in. */
  state: SuspendableState;
  class: 'transient' | 'credentials' | 'endpoint' | 'runtime';
  code: string;
  message: string;
  /** A model exchange resumes where it stopped: its attempt, rejections and last feedback. */
  exchange?: { seq: number; attempt: number; rejections: number; feedback?: string };
}

/** Every actor's output carries the journal position it left behind. */
export interface Position {
  seq: number;
  tail: string;
}

export type InvocationEvent =
  | { type: 'approval.decided'; decision: 'approved' | 'rejected'; by: string; note?: string }
  | { type: 'hibernate' }
  | { type: 'resume' }
  /** A fork takes over from a resting invocation: it ends superseded, sealed (runtime/fork.ts). */
  | ({ type: 'supersede' } & Supersession)
  /** Someone asked to cancel (accepted in resting states): `at` is the requester's clock, ISO 8601. */
  | { type: 'cancel'; by: string; reason: string; at: string }
  /** The pinned deadline has passed (accepted in resting states): `at` is when the runtime saw it, ISO 8601. */
  | { type: 'deadline'; deadline: string; at: string };
