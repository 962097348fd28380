/**
 * The independent IPC plan verifier's public face. Deliberately shares no code with the planner
 * or the method library: it reads the HDDL AST (htn/hddl) and a parsed IPC plan (htn/ipc-plan.ts).
 */
export { verifyPlan, type VerifyResult } from './verify.js';
export { TOP_TASK, TOP_METHOD } from './tree.js';
