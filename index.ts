/**
 * Weft — a durable, replayable plan runtime for Node.js. The package's public face: the runtime (the
 * executor) and the client (client/: writes pins and inbox messages, runs nothing), the journal (canonical JSON, digests, records, chain, seal, reader, writer, stores), the
 * machine, actuators and dispatchers, the domain contract (defineDomain and the types an author
 * needs), the key helpers, zod, and the HTN engine and method mining as namespaces.
 */
export * from './journal/index.js';
export * from './stores/index.js';
export * from './runtime/index.js';
export * from './client/index.js';
export * from './actors/index.js';
export * from './queue/index.js';
export {
  invocationMachine,
  allowAll,
  spendApprovalPolicy,
  judgeParseReply,
  judgeAuthorReply,
  type AdmissionPolicy,
  type Admission,
  type EpochAdmissionRequest,
  type StepAdmissionRequest,
  type AuthoringAdmissionRequest,
  type ContractEnvelope,
  checkTaskConstraints,
  parseStrictJson,
  type EpochPlan,
  type EpochStep,
  type Goal,
} from './machines/index.js';
export * as htn from './htn/index.js';
/** Method mining (`weft mine`): methods learned from recorded gap-path runs. */
export * as mining from './mining/index.js';
/** Policy packs (`weft run --policy FILE`): admission as data, pinned by digest; policy predicates. */
export * as policy from './policy/index.js';
/**
 * zod, re-exported: a domain's actuator schemas are zod schemas, and this is the copy Weft itself
 * validates with — `import { z } from 'weft'` keeps a domain on the same version.
 */
export { z } from 'zod';
