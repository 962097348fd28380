/**
 * The runtime's public face: createRuntime and its options, invocation handles, listing and
 * describing invocations, replay, the recorder, and runtime errors.
 */
export { createRuntime, Runtime, RUNTIME_VERSION, BEHAVIOUR_FLAGS, pinnedModelParams, type RuntimeOptions, type ResolvedOptions, type StartOptions, type ResumeOptions, type CancelOptions } from './runtime.js';
export { defineDomain, isDomain, DOMAIN_BRAND, type Domain, type DomainDefinition, type DomainContext, type OrFactory } from './domain.js';
export { listInvocations, invocationStatus, type InvocationSummary, type ListedStatus } from './list.js';
export { invocationDescription, DESCRIPTION_VERSION, type InvocationDescription, type EpochDescription, type StepDescription, type Waiting, type CommandDescription, type DescribeInput } from './describe.js';
export { describeInvocation } from './describe-load.js';
export type { AskedStep } from './approval-request.js';
export { UNPINNED_MODEL_PARAMS, type PinMismatch } from './pin-check.js';
export { DEFAULT_LIMITS } from './limits.js';
export { InvocationHandle, type InvocationResult, type InvocationStatus } from './handle.js';
export { replayJournal, type ReplayResult, type ReplayDeps } from './replay.js';
export { Recorder } from './recorder.js';
export { serve, servable, type ServeOptions, type ServeEvent } from './serve.js';
export { ForkRefusedError, ForkParentError, type ForkOptions, type ForkState, type WorldEffect } from './fork.js';
export { ReplayDivergenceError, ReplayEndedError, RuntimeUsageError, InvocationNotFoundError, PinMismatchError, ForeignJournalError, SealKeyMismatchError } from './errors.js';
export { generateSigningKey, loadSigningKey, loadPublicKey, writeKeyPair, KeyFileError, SECRET_FILE, PUBLIC_FILE } from './keys.js';
export { openInvocation, pinnedRecord, type OpenedInvocation, type OpenResolvers, type StoredInvocation } from './open.js';
