/**
 * The stores — where journals are kept: a folder on disk (FileStore, the embedded default), Redis
 * (RedisStore, the distributed mode) and memory (MemoryStore, for tests and embedding). Each
 * implements the JournalStore contract of journal/store.ts: appends under a fenced single-writer
 * lease, snapshots, metadata, listing.
 *
 * A room of its own above journal/ (which is the journal's pure format: records, canonical
 * encoding, chain, seal, verify, bundle) and below queue/ and runtime/; its Redis connection
 * policy comes from redis/, the floor under both it and the queue.
 */
export { MemoryStore } from './memory.js';
export { FileStore, type FileStoreOptions, type FlushMode } from './file.js';
export { RedisStore, checkRedisDurability, RedisDurabilityError, type RedisStoreOptions, type RedisOpenOptions, type RedisKeys, type DurabilityVerdict } from './redis.js';
