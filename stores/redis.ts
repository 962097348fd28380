/**
 * RedisStore — journals in Redis (ioredis), for runtimes on several hosts sharing one store.
 *
 * Key layout (`<prefix>` defaults to `weft`; the invocation id is the Cluster hash tag, so all of
 * one invocation's keys live in one slot and every script touches one slot):
 *
 *   <prefix>:{<id>}:journal    LIST of record lines — canonical JSON, exactly the bytes the file
 *                              store writes per line (recordLine), without the newline
 *   <prefix>:{<id>}:lease      HASH { writer, token, expiresAt, released: '0' | '1', attempt, appended };
 *                              never deleted, so the fencing token strictly increases per
 *                              invocation forever (attempt/appended: see "Resends" in redis-scripts.ts)
 *   <prefix>:{<id>}:snapshot   STRING canonical JSON { data, hash, seq }
 *   <prefix>:{<id>}:status     STRING canonical JSON of the runtime's status note (no lease needed)
 *   <prefix>:{<id>}:meta       STRING canonical JSON of its metadata { domain?, library, sealKey?, redact? } (no lease needed;
 *                              data only: whoever can write it cannot make a reader load code)
 *   <prefix>:blob:<sha256>     STRING the blob's bytes (content-addressed)
 *   <prefix>:invocations       ZSET (all scores 0) — the invocation registry behind list()
 *
 * Invariants:
 * - Every change to a lease, journal or snapshot is ONE Lua script (redis-scripts.ts): fence,
 *   expected seq, linkage, anchor and the write happen atomically, so an append writes all its
 *   records or none, and two writers racing under one token cannot both append at one seq. Status
 *   notes and blobs are single atomic commands (SET / DEL). There are no torn tails: a record line
 *   is one list element, pushed whole, so `quarantineTornTail` has nothing to do.
 * - Lease time is the client's clock (`now`, default Date.now), passed to the scripts as an
 *   argument, like the memory store — never the server's TIME. Hosts sharing a store need clocks
 *   in step to within a fraction of the TTL.
 * - The store checks linkage, not hashes (the reader's job). A stored line that does not parse
 *   reads as JournalIntegrityError naming its seq.
 * - Registry: list() reads the `<prefix>:invocations` ZSET instead of scanning the keyspace. It
 *   lives in another slot, so it cannot be updated inside the append script. An id is added
 *   (ZADD, idempotent) BEFORE this handle first appends to, or snapshots, an invocation — sent
 *   ahead of the write on the same connection, which runs commands in order, so it costs no round
 *   trip of its own (a refused ZADD fails the write's call, after the write) — so the registry is a superset of the invocations that exist: a crash between
 *   the ZADD and the write leaves an entry with no journal, never a journal with no entry. list() keeps only the
 *   entries whose journal or snapshot key exists. Should the registry still lose an entry (it was
 *   deleted, restored from an older backup, or keys were written by other tools),
 *   `rebuildIndex()` re-adds every invocation found by SCAN over `<prefix>:{*}:journal` and
 *   `<prefix>:{*}:snapshot` (standalone Redis: SCAN walks one server). It only adds: removing an
 *   entry could race a writer that registered and is about to write.
 * - Deployment: the key layout is Cluster-ready (one slot per invocation), but list() (a pipeline
 *   of EXISTS over many invocations) and rebuildIndex() (SCAN) assume one standalone server (or a
 *   primary with replicas); the store takes an ioredis `Redis` client, not a `Cluster`.
 * - Durability is the server's: `RedisStore.open` checks appendonly / appendfsync /
 *   maxmemory-policy (redis-durability.ts) and refuses a server that would lose acknowledged
 *   appends unless `durability: 'relaxed'`.
 * - ioredis is loaded on first use when the store is given a URL, so importing weft/journal does
 *   not load it. A client the store created is closed by close(); one passed in is left alone.
 * - A command whose reply a dropped connection lost is resent by ioredis after it reconnects;
 *   every script is safe to run twice (see "Resends" in redis-scripts.ts), so an append is never
 *   written twice and a resent acquire does not lock out its own writer.
 * - A connection that gives up (`giveUpAfterMs`) ends every operation waiting on it at once
 *   (`guard`), in the store's words, never ioredis': an append it had been handed fails with
 *   AppendOutcomeUnknownError (sent or not, it may have run: only the journal can tell, and a
 *   resume reads it), one it never sent and any other operation with StoreUnreachableError.
 *
 * Over 400 lines on purpose: one class, the JournalStore interface's methods over one connection;
 * what stands apart already lives apart (redis-scripts.ts, redis-index.ts, redis-durability.ts,
 * redis-nudge.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { canonicalize } from '../journal/canonical.js';
import { sha256Hex } from '../journal/digest.js';
import { recordLine } from '../journal/encode.js';
import { AppendOutcomeUnknownError, BlobError, InvalidNameError, JournalIntegrityError, StoreUnreachableError } from '../journal/errors.js';
import type { JournalRecord } from '../journal/records.js';
import { endingOf, isStatusNote, isValidInvocationId, normalizeInvocationMetadata, normalizeStatusNote, parseInvocationMetadata, type InvocationMetadata, SEALED_STATUSES, type AcquireOptions, type JournalStore, type Lease, type Snapshot, type StatusNote, type InboxMessage } from '../journal/store.js';
import { advisoryKey, assertAdvisoryMessage, MAX_ADVISORIES, orderedAdvisories, parseAdvisory, type AdvisoryMessage } from '../journal/advisory.js';
import { assertBlobDigest, assertInboxMessage, assertInvocationId, checkAppend, parseInboxMessage, checkFence, checkSnapshotAnchor, leaseExcludes, type StoredLease } from './checks.js';
import { HOST, processAlive } from './file-io.js';
import { checkRedisDurability, durabilityRefusal, relaxedDurabilityWarning } from './redis-durability.js';
import { answerWithin, DEFAULT_REDIS_GIVE_UP_MS, isConnectionLoss, reconnectStrategy, redisServerName } from '../redis/index.js';
import { connectRefusal, isConnectRefusal } from './access-refused.js';
import { appendPatch, indexIntent, mergeScript, parseEntry, snapshotStatus, type IndexEntry } from './redis-index.js';
import { encodeNudge, nudgeChannel } from './redis-nudge.js';
import { forkOfFact, supersededByFact } from '../journal/lineage.js';
import { Code, refusal, scripts, type RefusalContext, type Verdict } from './redis-scripts.js';

export { checkRedisDurability, RedisDurabilityError, type DurabilityVerdict } from './redis-durability.js';

export interface RedisStoreOptions {
  /** A Redis URL (`redis://host:port/db`, `rediss://…`) — the store creates and owns the client — or an ioredis client, left open by close(). */
  redis: string | Redis;
  /** Key prefix (letters, digits, `.`, `_`, `-`, `:`, `/`; no braces). Default `weft`. */
  prefix?: string;
  /** Wall clock in ms since the epoch, for lease expiry. Default Date.now. */
  now?: () => number;
  /**
   * For a client the store creates from a URL: stop reconnecting once the server has been
   * unreachable this long, so every waiting operation fails instead of hanging (redis/reconnect.ts).
   * Default: reconnect for ever, as a long-lived process should.
   */
  giveUpAfterMs?: number;
}

export interface RedisOpenOptions extends RedisStoreOptions {
  /**
   * `'strict'` (default): refuse a server that could lose acknowledged appends (RedisDurabilityError).
   * `'relaxed'`: accept the risk; `warn` is called once with what could be lost.
   */
  durability?: 'strict' | 'relaxed';
  warn?: (message: string) => void;
  /** How long the first PING may wait (default: `giveUpAfterMs`, else DEFAULT_REDIS_GIVE_UP_MS): a long-lived process that reconnects for ever still bounds its start. */
  reachWithinMs?: number;
}

export interface RedisKeys {
  journal: string;
  lease: string;
  snapshot: string;
  status: string;
}

const PREFIX = /^[A-Za-z0-9._:/-]{1,100}$/;
const SCAN_COUNT = 1000;
const PIPELINE_CHUNK = 1000;

/** The operations that talk to the server, each run under `guard` (append guards itself: a reply lost there means more). */
const GUARDED = [
  'acquire', 'renew', 'release', 'read', 'length', 'tail', 'list', 'rebuildIndex', 'quarantineTornTail', 'putSnapshot', 'getSnapshot',
  'putStatus', 'getStatus', 'clearStatus', 'putMetadata', 'getMetadata', 'putInbox', 'peekInbox', 'clearInbox', 'putAdvisory', 'advisories', 'holder', 'putBlob', 'getBlob', 'indexed', 'openIndexed', 'reindex',
] as const satisfies ReadonlyArray<keyof RedisStore>;

/** Every asynchronous JournalStore operation but append (guards itself) and close: a new one left out of GUARDED fails to compile here. */
type MustGuard = Exclude<{ [K in keyof JournalStore]: JournalStore[K] extends (...args: never[]) => Promise<unknown> ? K : never }[keyof JournalStore], 'append' | 'close'>;
const everyOperationGuarded: ReadonlyArray<(typeof GUARDED)[number]> = [] as MustGuard[];
void everyOperationGuarded;

export class RedisStore implements JournalStore {
  readonly name: string;
  readonly prefix: string;
  private readonly client: Promise<Redis>;
  private readonly owned: boolean;
  private readonly now: () => number;
  /** Invocations this handle has put in the registry (see the header). */
  private readonly registered = new Set<string>();
  private closed: Promise<void> | undefined;
  /** How long the client this store created waits for an unreachable server (undefined: for ever, or a client passed in). */
  private readonly giveUpAfterMs: number | undefined;
  /** The operations waiting on the connection: each is told when the client ends (see `guard`). */
  private readonly waiting = new Set<(cause: Error) => void>();
  /** The 'end' listener put on the client (taken off a client passed in when this store closes). */
  private readonly onEnd = () => this.ended();

  /** Connect to `options.redis` without checking the server's durability settings (see `open`). */
  constructor(options: RedisStoreOptions) {
    const prefix = options.prefix ?? 'weft';
    if (typeof prefix !== 'string' || !PREFIX.test(prefix)) {
      throw new InvalidNameError('Redis key prefix', String(prefix), 'use 1–100 letters, digits, ".", "_", "-", ":" or "/" (no braces: the invocation id is the hash tag)');
    }
    this.prefix = prefix;
    this.now = options.now ?? Date.now;
    this.giveUpAfterMs = typeof options.redis === 'string' ? options.giveUpAfterMs : undefined;
    const { redis } = options;
    if (typeof redis === 'string') {
      this.name = redisServerName(redis);
      this.owned = true;
      this.client = import('ioredis').then(({ Redis: Client }) => {
        // With a budget, a command waits for the reconnect (no per-command retry limit) until the
        // connection gives up; without one, ioredis' limit of 20 reconnects per command stands.
        const bounded = options.giveUpAfterMs === undefined ? {} : { maxRetriesPerRequest: null };
        const client = new Client(redis, { retryStrategy: reconnectStrategy(options.giveUpAfterMs), ...bounded });
        // Command failures reach their callers; without a listener ioredis logs every reconnect error.
        client.on('error', () => undefined);
        client.on('end', this.onEnd);
        return client;
      });
      this.client.catch(() => undefined); // reported by the first operation
    } else {
      this.name = nameOfClient(redis);
      this.owned = false;
      this.client = Promise.resolve(redis);
      redis.on('end', this.onEnd);
    }
  }

  /**
   * Run one operation so that a lost connection ends it: when the client stops reconnecting, every
   * operation still waiting is rejected at once — ioredis itself leaves a command it had sent
   * unsettled for ever if a reconnect got as far as a socket before failing — and a connection loss
   * is reported by `lost` (default: StoreUnreachableError naming the server), never as ioredis' text.
   */
  private async guard<T>(op: () => Promise<T>, lost: (cause: unknown) => Error = (cause) => this.unreachable(undefined, cause)): Promise<T> {
    let leave!: (cause: Error) => void;
    const ended = new Promise<never>((_, reject) => (leave = reject));
    this.waiting.add(leave);
    const running = op();
    running.catch(() => undefined); // when the connection ends first, its later rejection is expected
    try {
      return await Promise.race([running, ended]);
    } catch (err) {
      throw isConnectionLoss(err) ? lost(err) : err;
    } finally {
      this.waiting.delete(leave);
    }
  }

  /**
   * Tell `listener` each time the connection to the server closes (the client reconnects by itself);
   * returns what stops telling. For `weft serve`, whose outage starts there (journal/store.ts
   * watchConnectionClosed), not when a command gives up after its reconnects.
   */
  onConnectionClosed(listener: () => void): () => void {
    let off = false;
    let client: Redis | undefined;
    const tell = () => {
      if (!off) listener();
    };
    void this.client.then(
      (c) => {
        if (off) return;
        client = c;
        c.on('close', tell);
      },
      () => undefined,
    );
    return () => {
      off = true;
      client?.off('close', tell);
    };
  }

  /** The client has stopped for good (gave up reconnecting, or was closed): nothing waiting on it will be answered. */
  private ended(): void {
    const cause = new Error('Connection is closed.');
    for (const leave of [...this.waiting]) leave(cause);
    this.waiting.clear();
  }

  /** The error for a server that cannot be reached now (`next`: what was not done and what to do). */
  private unreachable(next?: string, cause?: unknown): StoreUnreachableError {
    return new StoreUnreachableError(this.name, this.outage(cause), next);
  }

  /** How the connection was lost, for an error: the budget it waited, the reconnects a command outlived, or that it was closed. */
  private outage(cause?: unknown): string {
    if (this.giveUpAfterMs !== undefined) return `no connection for ${this.giveUpAfterMs} ms`;
    return (cause as Error | undefined)?.name === 'MaxRetriesPerRequestError' ? 'still no connection after repeated reconnects' : 'its connection was closed';
  }

  /**
   * Connect and check that the server keeps what it acknowledges (checkRedisDurability): strict
   * (default) throws RedisDurabilityError listing what to set; relaxed calls `warn` once and goes on.
   */
  static async open(options: RedisOpenOptions): Promise<RedisStore> {
    const durability = options.durability ?? 'strict';
    if (durability !== 'strict' && durability !== 'relaxed') throw new TypeError(`durability must be 'strict' or 'relaxed', not ${JSON.stringify(durability)}`);
    const store = new RedisStore(options);
    try {
      await store.reachable(options.reachWithinMs);
      const verdict = await checkRedisDurability(await store.client);
      if (!verdict.ok) {
        if (durability === 'strict') throw durabilityRefusal(store.name, verdict);
        options.warn?.(relaxedDurabilityWarning(store.name, verdict.problems));
      }
    } catch (err) {
      await store.close();
      throw err;
    }
    return store;
  }

  /**
   * Throws StoreUnreachableError (`store.unreachable`, transient) when the server does not answer a
   * PING within `timeoutMs` (default: the give-up budget, else DEFAULT_REDIS_GIVE_UP_MS) — so a
   * command against a Redis that is down fails in that time, saying so, instead of waiting out the
   * client's retries and being mistaken for a durability problem — and StoreAuthRefusedError
   * (`store.auth_refused`) when the server answers that this client may not in (a wrong password or
   * user, none given, an ACL without PING): never "unreachable". The clock starts once the client
   * library is loaded and the client made (redis/reconnect.ts).
   */
  async reachable(timeoutMs?: number): Promise<void> {
    const client = await this.client; // loading ioredis is not the server's time
    const waitMs = timeoutMs ?? this.giveUpAfterMs ?? DEFAULT_REDIS_GIVE_UP_MS;
    try {
      await answerWithin(
        this.guard(() => client.ping(), () => this.unreachable()),
        waitMs,
        () => new StoreUnreachableError(this.name, `no answer to PING within ${waitMs} ms`),
      );
    } catch (err) {
      if (err instanceof StoreUnreachableError) throw err;
      if (isConnectRefusal(err)) throw connectRefusal(this.name, err, 'ping');
      throw new StoreUnreachableError(this.name, (err as Error).message);
    }
  }

  /** The ioredis client (connected lazily): for durability checks and tools, not for the store's keys. */
  connection(): Promise<Redis> {
    return this.client;
  }

  /** The keys of one invocation (for tools and tests; the store owns their contents). */
  keys(invocation: string): RedisKeys {
    const base = this.keyBase(invocation);
    return { journal: `${base}journal`, lease: `${base}lease`, snapshot: `${base}snapshot`, status: `${base}status` };
  }

  /** `<prefix>:{<id>}:`, the start of every key of one invocation (its hash tag); validates the id. */
  private keyBase(invocation: string): string {
    assertInvocationId(invocation);
    return `${this.prefix}:{${invocation}}:`;
  }

  /** The key of an invocation's inbox (a person's decision waiting to be recorded); validates the id. */
  private inboxKey(invocation: string): string {
    return `${this.keyBase(invocation)}inbox`;
  }

  /** The key of a blob. */
  blobKey(digest: string): string {
    assertBlobDigest(digest);
    return `${this.prefix}:blob:${digest}`;
  }

  /** The invocation registry behind list(). */
  get registryKey(): string {
    return `${this.prefix}:invocations`;
  }

  /** The status index (redis-index.ts): invocation id → { tenant, intent, status, epoch, records, updated, reason? }. */
  get indexKey(): string {
    return `${this.prefix}:index`;
  }

  /** The ids whose index entry has not ended (redis-index.ts): what `weft serve` looks at each poll. */
  get openKey(): string {
    return `${this.prefix}:open`;
  }


  async acquire(invocation: string, options: AcquireOptions): Promise<Lease> {
    const keys = this.keys(invocation);
    if (!Number.isFinite(options.ttlMs)) throw new TypeError(`ttlMs must be a finite number of milliseconds, not ${String(options.ttlMs)}`);
    const now = this.now();
    const expiresAt = now + options.ttlMs;
    const redis = await this.redis();
    let reply = await scripts.acquire.run(redis, [keys.lease], [String(options.writer), String(now), String(expiresAt), randomUUID()]);
    // A live-looking lease whose holder is a dead process on this host (a crash, a kill) is taken
    // over at once, as the file store does — only if it is still that holder's token.
    if (reply[0] === Code.LEASE_HELD && deadOnThisHost(String(reply[1]))) {
      reply = await scripts.acquire.run(redis, [keys.lease], [String(options.writer), String(now), String(expiresAt), randomUUID(), String(reply[2])]);
    }
    if (reply[0] !== Code.OK) throw refusal(reply, { invocation, now });
    return { invocation, writer: options.writer, token: Number(reply[1]), expiresAt };
  }

  async renew(lease: Lease, ttlMs: number): Promise<Lease> {
    const keys = this.keys(lease.invocation);
    if (!Number.isFinite(ttlMs)) throw new TypeError(`ttlMs must be a finite number of milliseconds, not ${String(ttlMs)}`);
    const expiresAt = this.now() + ttlMs;
    const redis = await this.redis();
    const reply = await scripts.renew.run(redis, [keys.lease], [String(lease.token), String(expiresAt)]);
    if (reply[0] !== Code.OK) throw refusal(reply, { invocation: lease.invocation, lease });
    return { invocation: lease.invocation, writer: String(reply[1]), token: lease.token, expiresAt };
  }

  async release(lease: Lease): Promise<void> {
    const keys = this.keys(lease.invocation);
    const redis = await this.redis();
    await scripts.release.run(redis, [keys.lease], [String(lease.token), String(this.now())]);
  }

  async append(lease: Lease, expectedSeq: number, records: readonly JournalRecord[]): Promise<void> {
    const { invocation } = lease;
    const keys = this.keys(invocation);
    // The client's own checks, now (synchronously, while the writer's composed lines are fresh);
    // the script decides which error comes first (see redis-scripts.ts, "verdict").
    const countable = Number.isSafeInteger(expectedSeq) && expectedSeq >= 0;
    let verdict: Verdict = 'ok';
    let refused: unknown;
    let lines: string[] = [];
    if (countable) {
      try {
        checkAppend(invocation, expectedSeq, { length: expectedSeq, tailHash: undefined }, records);
        lines = records.map(recordLine);
      } catch (err) {
        refused = err;
        verdict = err instanceof JournalIntegrityError && err.seq === expectedSeq ? 'head' : 'rest';
        lines = [];
      }
    }
    const firstPrev = countable && verdict !== 'head' && records.length > 0 ? String(records[0]!.prev) : '';
    const writes = countable && verdict === 'ok' && records.length > 0;
    // Handed to a client that has not given up, the script may run although its reply never comes.
    let handed = false;
    const lost = (cause: unknown) =>
      handed && writes
        ? new AppendOutcomeUnknownError(invocation, { first: expectedSeq, last: expectedSeq + records.length - 1 }, this.name, this.outage(cause))
        : this.unreachable(`the append to ${invocation} was not sent, nothing was written; once Redis is back, resume it`, cause);
    await this.guard(async () => {
      const redis = await this.redis();
      handed = redis.status !== 'end';
      // Registered before the append on the same connection (commands run in order), without waiting
      // for the reply in between (see register).
      const registering = writes ? this.register(redis, invocation) : undefined;
      registering?.catch(() => undefined); // awaited below; handled now so a refusal is never unhandled meanwhile
      const reply = await scripts.append.run(redis, [keys.lease, keys.journal], [String(lease.token), countable ? String(expectedSeq) : '-1', verdict, firstPrev, randomUUID(), ...lines]);
      if (reply[0] !== Code.OK) throw refusal(reply, { invocation, lease, expectedSeq, records, refused, journalKey: keys.journal });
      // The records are durable: nudge listeners (a hint to read, never the data; a lost one costs nothing).
      if (writes) redis.publish(nudgeChannel(this.prefix), encodeNudge({ id: invocation, length: expectedSeq + records.length })).catch(() => undefined);
      await registering?.catch((err: unknown) => {
        throw new Error(`the records of ${invocation} are appended, but the invocation could not be put in the registry ${this.registryKey} (${(err as Error)?.message ?? String(err)}); weft ls --rebuild-index repairs it`);
      });
      // The index follows status changes (a genesis, a sealed ending) and epoch boundaries (putSnapshot) — not every step.
      if (records.length > 0 && (records[0]!.seq === 0 || endingOf(records.map((r) => r.kind)) !== undefined)) this.indexPatch(redis, invocation, appendPatch(records, this.now()));
    }, lost);
  }

  async read(invocation: string, from = 0, to?: number): Promise<JournalRecord[]> {
    const keys = this.keys(invocation);
    const start = Number.isNaN(from) ? 0 : Math.max(0, Math.trunc(from));
    if (!Number.isFinite(start)) return [];
    let stop = -1;
    if (to !== undefined && !Number.isNaN(to) && to !== Infinity) {
      stop = Math.trunc(to) - 1;
      if (stop < start) return [];
    }
    const lines = await (await this.redis()).lrange(keys.journal, start, stop);
    return lines.map((line, i) => this.parse(keys.journal, line, start + i));
  }

  /**
   * The journal's stored lines from seq `from` on, as Redis holds them (each a record's canonical
   * JSON, the bytes a journal file holds per line): what a viewer's follower with nothing to redact
   * sends, neither parsed nor encoded again. A line that is not a record is given as it is (the page
   * that verifies it names its seq).
   */
  async readLines(invocation: string, from = 0): Promise<string[]> {
    const keys = this.keys(invocation);
    return (await this.redis()).lrange(keys.journal, Math.max(0, Math.trunc(from)), -1);
  }

  async length(invocation: string): Promise<number> {
    const keys = this.keys(invocation);
    return (await this.redis()).llen(keys.journal);
  }

  async tail(invocation: string): Promise<JournalRecord | undefined> {
    const keys = this.keys(invocation);
    const redis = await this.redis();
    const last = await redis.lindex(keys.journal, -1);
    if (last === null) return undefined;
    try {
      return JSON.parse(last) as JournalRecord;
    } catch {
      return this.parse(keys.journal, last, (await redis.llen(keys.journal)) - 1);
    }
  }

  /** Registry entries whose journal or snapshot exists, sorted (see the header: the registry is a superset). */
  async list(): Promise<string[]> {
    const redis = await this.redis();
    const ids = (await redis.zrange(this.registryKey, '0', '-1')).filter(isValidInvocationId);
    const out: string[] = [];
    for (let i = 0; i < ids.length; i += PIPELINE_CHUNK) {
      const chunk = ids.slice(i, i + PIPELINE_CHUNK);
      const pipeline = redis.pipeline();
      for (const id of chunk) {
        const keys = this.keys(id);
        pipeline.exists(keys.journal, keys.snapshot);
      }
      const replies = (await pipeline.exec()) ?? [];
      chunk.forEach((id, j) => {
        const [err, count] = replies[j] ?? [new Error('no reply'), 0];
        if (err) throw err;
        if (Number(count) > 0) out.push(id);
      });
    }
    return out.sort();
  }

  /**
   * Re-add to the registry every invocation that has a journal or a snapshot under this prefix,
   * found by SCAN (O(keyspace); for repair, not for every listing). Returns the ids that were missing.
   */
  async rebuildIndex(): Promise<{ added: string[]; reindexed: string[] }> {
    const redis = await this.redis();
    const found = new Set<string>();
    const head = `${this.prefix}:{`;
    for (const kind of ['journal', 'snapshot'] as const) {
      const tail = `}:${kind}`;
      const pattern = `${escapeGlob(this.prefix)}:{*${tail}`;
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
        cursor = next;
        for (const key of keys) {
          if (!key.startsWith(head) || !key.endsWith(tail)) continue;
          const id = key.slice(head.length, key.length - tail.length);
          if (isValidInvocationId(id)) found.add(id);
        }
      } while (cursor !== '0');
    }
    const ids = [...found].sort();
    const added: string[] = [];
    for (let i = 0; i < ids.length; i += PIPELINE_CHUNK) {
      const chunk = ids.slice(i, i + PIPELINE_CHUNK);
      const pipeline = redis.pipeline();
      for (const id of chunk) pipeline.zadd(this.registryKey, 'NX', '0', id);
      const replies = (await pipeline.exec()) ?? [];
      chunk.forEach((id, j) => {
        const [err, count] = replies[j] ?? [new Error('no reply'), 0];
        if (err) throw err;
        if (Number(count) > 0) added.push(id);
        this.registered.add(id);
      });
    }
    return { added, reindexed: await this.reindex() };
  }

  /** A Redis journal cannot be torn: a record is one list element, and an append pushes all of them in one script. */
  async quarantineTornTail(lease: Lease): Promise<{ seq: number; keptAt: string } | undefined> {
    checkFence(lease, await this.storedLease(lease.invocation));
    return undefined;
  }

  async putSnapshot(lease: Lease, snapshot: Snapshot): Promise<void> {
    const { invocation } = lease;
    const keys = this.keys(invocation);
    let verdict: Verdict = 'ok';
    let refused: unknown;
    let text = '';
    try {
      // Only the shape checks here (seq is a count, hash a digest): the journal is the script's.
      checkSnapshotAnchor(snapshot, Number.MAX_SAFE_INTEGER, { hash: snapshot?.hash } as JournalRecord);
    } catch (err) {
      verdict = 'head';
      refused = err;
    }
    if (verdict === 'ok') {
      try {
        text = canonicalize({ seq: snapshot.seq, hash: snapshot.hash, data: snapshot.data });
      } catch (err) {
        verdict = 'rest';
        refused = err;
      }
    }
    const redis = await this.redis();
    const registering = verdict === 'ok' ? this.register(redis, invocation) : undefined;
    registering?.catch(() => undefined); // awaited below (see register)
    const args = [String(lease.token), verdict, verdict === 'head' ? '0' : String(snapshot.seq), verdict === 'head' ? '' : String(snapshot.hash), text];
    const reply = await scripts.putSnapshot.run(redis, [keys.lease, keys.journal, keys.snapshot], args);
    if (reply[0] !== Code.OK) throw refusal(reply, { invocation, lease, snapshot, refused, journalKey: keys.journal } satisfies RefusalContext);
    await registering?.catch((err: unknown) => {
      throw new Error(`the snapshot of ${invocation} is saved, but the invocation could not be put in the registry ${this.registryKey} (${(err as Error)?.message ?? String(err)}); weft ls --rebuild-index repairs it`);
    });
    const data = snapshot.data as { value?: unknown; context?: { epoch?: unknown } } | null;
    const epoch = typeof data?.context?.epoch === 'number' ? { epoch: data.context.epoch } : {};
    this.indexPatch(redis, invocation, { status: snapshotStatus(data?.value), records: snapshot.seq, ...epoch, updated: this.now() });
  }

  async getSnapshot(invocation: string): Promise<Snapshot | undefined> {
    const keys = this.keys(invocation);
    const text = await (await this.redis()).get(keys.snapshot);
    if (text === null) return undefined;
    let stored: Snapshot;
    try {
      stored = JSON.parse(text) as Snapshot;
    } catch (err) {
      throw new JournalIntegrityError(0, `the snapshot at ${keys.snapshot} is not valid JSON (${(err as Error).message}); it is written only whole, so something else wrote it`);
    }
    return { seq: stored.seq, hash: stored.hash, data: stored.data };
  }

  async putStatus(invocation: string, note: StatusNote): Promise<void> {
    const keys = this.keys(invocation);
    const normal = normalizeStatusNote(note);
    const text = canonicalize(normal);
    const redis = await this.redis();
    await redis.set(keys.status, text);
    if (normal.status === 'suspended') this.indexPatch(redis, invocation, { status: 'suspended', updated: this.now(), ...(normal.reason === undefined ? {} : { reason: normal.reason }) });
  }

  async getStatus(invocation: string): Promise<StatusNote | undefined> {
    const keys = this.keys(invocation);
    const text = await (await this.redis()).get(keys.status);
    if (text === null) return undefined;
    let note: unknown;
    try {
      note = JSON.parse(text);
    } catch {
      return undefined; // observability only: a garbled note is no note
    }
    return isStatusNote(note) ? normalizeStatusNote(note) : undefined;
  }

  async clearStatus(invocation: string): Promise<void> {
    const keys = this.keys(invocation);
    await (await this.redis()).del(keys.status);
  }

  async putMetadata(invocation: string, meta: InvocationMetadata): Promise<void> {
    const key = `${this.keyBase(invocation)}meta`;
    const text = canonicalize(normalizeInvocationMetadata(meta));
    await (await this.redis()).set(key, text);
  }

  async getMetadata(invocation: string): Promise<InvocationMetadata | undefined> {
    const text = await (await this.redis()).get(`${this.keyBase(invocation)}meta`);
    return text === null ? undefined : parseInvocationMetadata(text, invocation);
  }

  async putInbox(invocation: string, message: InboxMessage): Promise<void> {
    const key = this.inboxKey(invocation);
    assertInboxMessage(message);
    await (await this.redis()).set(key, JSON.stringify(message));
  }

  async peekInbox(invocation: string): Promise<InboxMessage | undefined> {
    const text = await (await this.redis()).get(this.inboxKey(invocation));
    return text === null ? undefined : parseInboxMessage(text);
  }

  async clearInbox(invocation: string): Promise<void> {
    await (await this.redis()).del(this.inboxKey(invocation));
  }

  /** The inbox's advisories (journal/advisory.ts), a hash apart from the command slot: field `seq.index`, value the advisory's JSON. */
  async putAdvisory(invocation: string, message: AdvisoryMessage): Promise<void> {
    const key = `${this.keyBase(invocation)}advisories`;
    assertAdvisoryMessage(message);
    const redis = await this.redis();
    if ((await redis.hlen(key)) >= MAX_ADVISORIES) return;
    await redis.hsetnx(key, advisoryKey(message), JSON.stringify(message));
  }

  async advisories(invocation: string): Promise<AdvisoryMessage[]> {
    const values = await (await this.redis()).hvals(`${this.keyBase(invocation)}advisories`);
    return orderedAdvisories(values.map((text) => parseAdvisory(text)));
  }

  async holder(invocation: string): Promise<{ writer: string; expiresAt: number; live: boolean } | undefined> {
    const lease = await this.storedLease(invocation);
    if (!lease || lease.released) return undefined;
    return { writer: lease.writer, expiresAt: lease.expiresAt, live: leaseExcludes(lease, this.now(), (l) => !deadOnThisHost(l.writer)) };
  }

  async putBlob(bytes: Uint8Array): Promise<string> {
    const digest = sha256Hex(bytes);
    // Content-addressed: writing the same bytes again is harmless, and repairs a corrupted blob.
    await (await this.redis()).set(this.blobKey(digest), Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    return digest;
  }

  async getBlob(digest: string): Promise<Uint8Array | undefined> {
    const key = this.blobKey(digest);
    const bytes = await (await this.redis()).getBuffer(key);
    if (bytes === null) return undefined;
    if (sha256Hex(bytes) !== digest) throw new BlobError(digest, `the bytes at ${key} do not match their digest (corrupt); put the original bytes again`);
    return new Uint8Array(bytes);
  }

  /**
   * The status index, every entry (redis-index.ts), repaired first for any invocation the registry
   * has and the index lacks; filtered by tenant and status when asked.
   */
  async indexed(filter: { tenant?: string; status?: string } = {}): Promise<IndexEntry[]> {
    const redis = await this.redis();
    const stored = await redis.hgetall(this.indexKey);
    const ids = await this.list();
    const missing = ids.filter((id) => stored[id] === undefined || parseEntry(id, stored[id]!) === undefined);
    if (missing.length > 0) await this.reindex(missing);
    const fresh = missing.length > 0 ? await redis.hgetall(this.indexKey) : stored;
    const entries = ids.map((id) => parseEntry(id, fresh[id] ?? '')).filter((e): e is IndexEntry => e !== undefined);
    await this.dateEntries(redis, entries.filter((e) => e.startedAt === undefined && e.records > 0));
    return entries.filter((e) => (filter.tenant === undefined || e.tenant === filter.tenant) && (filter.status === undefined || e.status === filter.status));
  }

  /**
   * Give entries written before the index kept `startedAt` their start (the genesis's envelope time,
   * one LINDEX each, pipelined) and keep it in the index, so it is read once. In place; best effort.
   */
  private async dateEntries(redis: Redis, undated: IndexEntry[]): Promise<void> {
    for (let i = 0; i < undated.length; i += PIPELINE_CHUNK) {
      const chunk = undated.slice(i, i + PIPELINE_CHUNK);
      const pipeline = redis.pipeline();
      for (const e of chunk) pipeline.lindex(this.keys(e.id).journal, 0);
      const replies = (await pipeline.exec().catch(() => null)) ?? [];
      chunk.forEach((e, j) => {
        const [err, line] = replies[j] ?? [new Error('no reply'), null];
        if (err || typeof line !== 'string') return;
        try {
          const at = (JSON.parse(line) as { meta?: { at?: unknown } }).meta?.at;
          if (typeof at !== 'string') return;
          e.startedAt = at;
          this.indexPatch(redis, e.id, { startedAt: at });
        } catch {
          /* a genesis that does not parse: its listing says why (it is read in full) */
        }
      });
    }
  }

  /**
   * The index entries of the invocations that have not ended, read from the open set (redis-index.ts)
   * — what `weft serve` needs each poll, at a cost that does not grow with the ended ones. With
   * `repair`, the whole index is read first (and repaired for any invocation it lacks, as `indexed`
   * does) and the open set brought in line with it: a process's first look, then now and then.
   */
  async openIndexed(options: { repair?: boolean } = {}): Promise<IndexEntry[]> {
    const redis = await this.redis();
    if (options.repair) {
      const all = await this.indexed();
      const open = all.filter((e) => !SEALED_STATUSES.has(e.status)).map((e) => e.id);
      const ended = all.filter((e) => SEALED_STATUSES.has(e.status)).map((e) => e.id);
      // Members no listed invocation accounts for: dropped once neither journal nor snapshot exists
      // (deleted or moved aside; checked now, so one created since the listing is kept).
      const known = new Set(all.map((e) => e.id));
      const unknown = (await redis.smembers(this.openKey)).filter((id) => !known.has(id) && isValidInvocationId(id));
      const gone: string[] = [];
      for (let i = 0; i < unknown.length; i += PIPELINE_CHUNK) {
        const chunk = unknown.slice(i, i + PIPELINE_CHUNK);
        const pipeline = redis.pipeline();
        for (const id of chunk) pipeline.exists(this.keys(id).journal, this.keys(id).snapshot);
        const replies = (await pipeline.exec()) ?? [];
        chunk.forEach((id, j) => {
          const [err, count] = replies[j] ?? [new Error('no reply'), 1];
          if (!err && Number(count) === 0) gone.push(id);
        });
      }
      for (let i = 0; i < open.length; i += PIPELINE_CHUNK) await redis.sadd(this.openKey, ...open.slice(i, i + PIPELINE_CHUNK));
      const dropped = [...ended, ...gone];
      for (let i = 0; i < dropped.length; i += PIPELINE_CHUNK) await redis.srem(this.openKey, ...dropped.slice(i, i + PIPELINE_CHUNK));
    }
    const ids = (await redis.smembers(this.openKey)).filter(isValidInvocationId).sort();
    const out: IndexEntry[] = [];
    for (let i = 0; i < ids.length; i += PIPELINE_CHUNK) {
      const chunk = ids.slice(i, i + PIPELINE_CHUNK);
      const texts = await redis.hmget(this.indexKey, ...chunk);
      chunk.forEach((id, j) => {
        const entry = texts[j] == null ? undefined : parseEntry(id, texts[j]!);
        if (entry && !SEALED_STATUSES.has(entry.status)) out.push(entry);
      });
    }
    return out;
  }

  /**
   * Recompute index entries from the journals, snapshots and status notes (all listed invocations
   * when `ids` is absent), and the open set. Returns the ids recomputed.
   */
  async reindex(ids?: readonly string[]): Promise<string[]> {
    const redis = await this.redis();
    const targets = ids ?? (await this.list());
    for (const id of targets) {
      const length = await this.length(id);
      const first = length > 0 ? (await this.read(id, 0, 1).catch(() => []))[0] : undefined;
      const tail = length > 0 ? await this.read(id, Math.max(0, length - 2)).catch(() => []) : [];
      const snapshot = await this.getSnapshot(id).catch(() => undefined);
      const note = await this.getStatus(id);
      const ending = endingOf(tail.map((r) => r.kind));
      const resting = snapshotStatus((snapshot?.data as { value?: unknown } | undefined)?.value);
      const status = ending ?? (note?.status === 'suspended' ? 'suspended' : resting);
      const body = first?.kind === 'invocation.pinned' ? (first.body as { tenant: string; intent: string }) : undefined;
      const entry = {
        tenant: body?.tenant ?? '?',
        intent: body ? indexIntent(body.intent) : '?',
        status,
        epoch: tail.at(-1)?.epoch ?? 0,
        records: length,
        updated: this.now(),
        ...(tail.at(-1) === undefined ? {} : { lastKind: tail.at(-1)!.kind }),
        ...(tail.at(-1)?.meta?.at === undefined ? {} : { lastAt: tail.at(-1)!.meta!.at }),
        ...(first?.meta?.at === undefined ? {} : { startedAt: first.meta.at }),
        ...(status === 'suspended' && note?.reason !== undefined ? { reason: note.reason } : {}),
        ...(typeof (first?.body as { pin?: { shadow?: { results?: unknown } } } | undefined)?.pin?.shadow?.results === 'string' ? { shadow: (first!.body as { pin: { shadow: { results: string } } }).pin.shadow.results } : {}),
        ...(first?.kind === 'invocation.pinned' && forkOfFact(first.body) ? { forkOf: forkOfFact(first.body)! } : {}),
        ...(supersededByFact(tail) ? { supersededBy: supersededByFact(tail)! } : {}),
      };
      await redis.hset(this.indexKey, id, JSON.stringify(entry));
      if (SEALED_STATUSES.has(status)) await redis.srem(this.openKey, id);
      else await redis.sadd(this.openKey, id);
    }
    return [...targets];
  }

  /** An index update after the change it describes: in order on the connection, not waited for (see redis-index.ts). */
  private indexPatch(redis: Redis, invocation: string, patch: Record<string, unknown>): void {
    this.after(mergeScript.run(redis, [this.indexKey, this.openKey], [invocation, JSON.stringify(patch)]));
  }

  /** A follow-up command whose failure only leaves the index to be repaired. */
  private after(command: Promise<unknown>): void {
    command.catch(() => undefined);
  }

  /** Quit the client this store created (waiting for replies in flight); a client passed in stays open. */
  async close(): Promise<void> {
    this.closed ??= (async () => {
      if (!this.owned) {
        (await this.client).off('end', this.onEnd); // the caller's client outlives this store
        return;
      }
      let client: Redis;
      try {
        client = await this.client;
      } catch {
        return;
      }
      // QUIT waits for a connection; a client that has none (the server is down) is just dropped.
      if (client.status !== 'ready') {
        client.disconnect();
        return;
      }
      try {
        await client.quit();
      } catch {
        client.disconnect();
      }
    })();
    return this.closed;
  }

  private async redis(): Promise<Redis> {
    if (this.closed) throw new Error(`the Redis store ${this.name} is closed`);
    return this.client;
  }

  /**
   * Put `invocation` in the registry before its first write through this handle (idempotent). The
   * ZADD is sent at once, ahead of any command issued after this call; the caller awaits it after
   * its write, so a refused registration is reported (and retried by the next write).
   */
  private async register(redis: Redis, invocation: string): Promise<void> {
    if (this.registered.has(invocation)) return;
    await redis.zadd(this.registryKey, 'NX', '0', invocation);
    this.registered.add(invocation);
  }

  private async storedLease(invocation: string): Promise<StoredLease | undefined> {
    const keys = this.keys(invocation);
    const [writer, token, expiresAt, released] = await (await this.redis()).hmget(keys.lease, 'writer', 'token', 'expiresAt', 'released');
    if (token === null || token === undefined) return undefined;
    const stored: StoredLease = { writer: writer ?? '', token: Number(token), expiresAt: Number(expiresAt) };
    if (released === '1') stored.released = true;
    return stored;
  }

  /** Every operation in GUARDED runs under `guard`, wrapped here once (the methods above read as plain code). */
  static {
    for (const name of GUARDED) {
      const op = RedisStore.prototype[name] as (this: RedisStore, ...args: unknown[]) => Promise<unknown>;
      Object.defineProperty(RedisStore.prototype, name, {
        value: function guarded(this: RedisStore, ...args: unknown[]) {
          return this.guard(() => op.apply(this, args));
        },
        writable: true,
        configurable: true,
      });
    }
  }

  private parse(journalKey: string, line: string, seq: number): JournalRecord {
    try {
      return JSON.parse(line) as JournalRecord;
    } catch (err) {
      throw new JournalIntegrityError(seq, `the record at index ${seq} of ${journalKey} on ${this.name} is not valid JSON (${(err as Error).message}); verify the journal with weft verify`);
    }
  }
}

/** `redis://host:port/db` for a client (its options). */
function nameOfClient(client: Redis): string {
  const options = (client as { options?: { host?: string; port?: number; db?: number; path?: string; tls?: unknown } }).options ?? {};
  if (options.path) return `redis+unix://${options.path}`;
  return `${options.tls ? 'rediss' : 'redis'}://${options.host ?? 'localhost'}:${options.port ?? 6379}/${options.db ?? 0}`;
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/** A writer id `<host>:<pid>` (the runtime's) naming a process on this host that no longer runs. */
function deadOnThisHost(writer: string): boolean {
  const match = /^(.*):(\d+)$/.exec(writer);
  if (!match || match[1] !== HOST) return false;
  return !processAlive(Number(match[2]));
}
