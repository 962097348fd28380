/**
 * The runtime's public face: createRuntime and its options, invocation handles, replay, the
 * recorder, and runtime errors.
 */
export { createRuntime, Runtime, RUNTIME_VERSION, BEHAVIOUR_FLAGS, type RuntimeOptions, type StartOptions, type InvocationSummary } from './runtime.js';
export { DEFAULT_LIMITS } from './limits.js';
export { InvocationHandle, type InvocationResult, type InvocationStatus } from './handle.js';
export { replayJournal, type ReplayResult, type ReplayDeps } from './replay.js';
export { Recorder } from './recorder.js';
export { ReplayDivergenceError, ReplayEndedError, RuntimeUsageError } from './errors.js';
export type { WeftApp } from './app.js';
