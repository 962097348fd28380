/**
 * The journal — Weft's spine. Public face of journal/: canonical JSON, digests, record kinds and
 * schemas, the hash chain, the seal, the reader (offline verification), the portable bundle, the writer, and the stores.
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
export { MemoryStore } from './stores/memory.js';
export { FileStore, type FileStoreOptions, type FlushMode } from './stores/file.js';
export { DEFAULT_REDIS_GIVE_UP_MS, reconnectStrategy } from '../redis/index.js';
export { RedisStore, checkRedisDurability, RedisDurabilityError, type RedisStoreOptions, type RedisOpenOptions, type RedisKeys, type DurabilityVerdict } from './stores/redis.js';
