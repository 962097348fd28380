/**
 * Weft — a durable, replayable plan runtime for Node.js. The package's public face: the runtime,
 * the journal (canonical JSON, digests, records, chain, seal, reader, writer, stores), the
 * machine, actuators and dispatchers, and the HTN engine as a namespace.
 */
export * from './journal/index.js';
export * from './runtime/index.js';
export * from './actors/index.js';
export * from './queue/index.js';
export { invocationMachine, allowAll, spendApprovalPolicy, judgeParseReply, judgeAuthorReply, type AdmissionPolicy, type Admission } from './machines/index.js';
export * as htn from './htn/index.js';
