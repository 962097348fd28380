/**
 * The client's public face (`weft/client`): start, approve, cancel, list and describe invocations
 * from any process, and wait for one to end — writing pins and inbox messages to the store that the
 * executors (`weft serve`, a runtime) act on. It never runs a machine. See client.ts.
 */
export { createClient, WeftClient, type CancelReceipt } from './client.js';
export { ClientHandle, type ResultOptions } from './handle.js';
export type { ClientOptions } from './options.js';
export { InvocationNotFoundError } from '../runtime/errors.js';
export type { InvocationResult } from '../runtime/handle.js';
export type { InvocationDescription } from '../runtime/describe.js';
export type { InvocationSummary, ListedStatus } from '../runtime/list.js';
export type { StartOptions } from '../runtime/start-options.js';
export type { ApprovalDecision } from '../runtime/approve.js';
