/**
 * Weft — a durable, replayable plan runtime for Node.js. The package's public face: the journal
 * (canonical JSON, digests, records, chain, seal, reader, writer, stores) and the HTN engine.
 */
export * from './journal/index.js';
export * as htn from './htn/index.js';
