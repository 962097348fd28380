/**
 * The invocation statechart and its pure companions — the public face of machines/: the machine,
 * its context and events, the named actors' contracts, reply judging, admission policies (with
 * their contract envelopes), task-constraint checks and the epoch helpers. Nothing here performs I/O.
 */
export { invocationMachine, restingStates, finalStates, type InvocationMachine } from './invocation-machine.js';
export * from './context.js';
export * from './actors.js';
export * from './policy.js';
export * from './envelope.js';
export * from './constraints.js';
export * from './reply.js';
export { parseStrictJson, type StrictJsonResult } from './strict-json.js';
export { FLAG_FAIL_CLOSED, FLAG_DECLARED_SPEND, FLAG_DENIED_STEP_COMPENSATED, FLAG_AUTHORING_APPROVAL, IMPLEMENTED_FLAGS } from './flags.js';
export { pinnedSpenders, pinnedSpendScope, spendDeclarationProblem, spendersOf, type PinnedSpender, type SpendingDeclaration } from './spenders.js';
export { SLEEP_ACTUATOR, sleepUntil } from './sleep.js';
export * from './epoch.js';
