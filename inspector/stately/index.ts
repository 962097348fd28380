/**
 * The Stately relay's public face (`weft/inspector/stately`): start a relay, tap a runtime into it.
 * See relay.ts for what it promises (loopback, token for browsers, clients only receive, bounded
 * queues), protocol.ts for what a client receives, runtime-tap.ts for how a runtime feeds it.
 */
export { StatelyRelay, type RelayOptions, type RelayStats } from './relay.js';
export { statelyTap, machineDefinition, type StatelyTap } from './runtime-tap.js';
export { MAX_SNAPSHOT_BYTES, PROTOCOL_VERSION, boundedSnapshot, type BoundedSnapshot, type InspectorMessage } from './protocol.js';
export { recordEvent, type SynthesizedEvent } from './record-events.js';
