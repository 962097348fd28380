/**
 * The journal — Weft's spine. Public face of journal/: canonical JSON, digests, record kinds and
 * schemas, the hash chain, the seal, the reader (offline verification), the portable bundle and the writer. The stores
 * that keep journals (file, Redis, memory) are a room of their own above it: stores/ (`weft/stores`).
 *
 * Importing this module on Node installs the node:crypto SHA-256 fast path (same bytes as the
 * @noble/hashes reference). Browser code imports the pure modules directly.
 */
import './sha256-node.js';
import './ed25519-node.js';

export * from './canonical.js';
export * from './digest.js';
export * from './errors.js';
export * from './records.js';
export { checkBody } from './record-check.js';
export * from './chain.js';
export * from './seal.js';
export * from './reader.js';
export * from './verify-bytes.js';
export * from './bundle.js';
export * from './store.js';
export { REDACTED, redactionMarksSchema, redactRecord, redactRecords, redactValue, type RedactionMarks } from './redaction.js';
export * from './writer.js';
export { DEFAULT_REDIS_GIVE_UP_MS, reconnectStrategy } from '../redis/index.js';
