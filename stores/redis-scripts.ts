/**
 * The Redis store's Lua scripts — every change to an invocation's lease, journal or snapshot is ONE
 * script, run atomically by Redis (no other command interleaves), so a check and the write it
 * guards can never be split by another writer. Each script touches the keys of one invocation
 * only, all of which carry the invocation id as their Cluster hash tag (`<prefix>:{<id>}:…`), so
 * every script runs in one slot.
 *
 * Conventions (all scripts):
 * - A reply is an array whose first element is the code: 1 = done, a negative number = refused
 *   (nothing was written). `refusal()` below is the one place a refusal becomes an error, and it
 *   reuses the shared checks (checks.ts), so Redis refuses with exactly the memory and file
 *   stores' errors and messages.
 * - Time is the client's: the caller passes `now` (ms since the epoch) as an argument, like the
 *   memory store's injected clock; the server's clock is never read. Expiry instants are computed
 *   by the client and stored as the decimal text it sent.
 * - The lease is a hash { writer, token, expiresAt, released ('0' | '1'), attempt, appended }. It
 *   is never deleted: `token` only ever grows (HINCRBY), across releases and takeovers, so fencing
 *   tokens strictly increase per invocation for as long as the data lives.
 * - Resends: ioredis resends a command whose reply was lost when the connection dropped (the
 *   alternative, not resending, leaves the caller's promise unsettled forever). Every script is
 *   therefore safe to run twice: renew, release and putSnapshot are idempotent; acquire and append
 *   carry a unique attempt id (`attempt` = the acquire that took the lease, `appended` = the last
 *   append under it), and a resend of the call that already took effect is answered as a success
 *   instead of LeaseHeldError / SeqConflictError. Only the last append is remembered: of two
 *   pipelined appends both lost and resent, the first reports SeqConflictError (it was written).
 * - "Verdict" arguments carry the outcome of the checks the client can make alone (record shapes,
 *   in-batch linkage, canonical encoding). The script still runs its own checks first and in the
 *   shared checks' order (fence, expected seq, …), so the error a caller sees is the one the
 *   memory store would raise first; a bad batch is never sent at all.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { JournalIntegrityError, LeaseHeldError, SeqConflictError } from '../journal/errors.js';
import type { JournalRecord } from '../journal/records.js';
import type { Lease, Snapshot } from '../journal/store.js';
import { checkAppend, checkFence, checkSnapshotAnchor, heldDetail, type StoredLease } from './checks.js';

/** Script reply codes. */
export const Code = {
  OK: 1,
  /** {-1, currentToken}: the caller's token is not the current one (taken over). */
  FENCED: -1,
  /** {-2}: no lease was ever taken for this invocation. */
  NO_LEASE: -2,
  /** {-3, token}: the caller's lease was released. */
  RELEASED: -3,
  /** {-4, writer, token, expiresAt}: another live lease excludes the caller. */
  LEASE_HELD: -4,
  /** {-5, length}: the expected seq is not the journal's length. */
  SEQ_CONFLICT: -5,
  /** {-6, length, tailHash}: the batch's first `prev` is not the journal's tail hash. */
  BROKEN_LINK: -6,
  /** {-7, seq}: a stored line the script had to read (tail, snapshot anchor) is not valid JSON. */
  UNREADABLE: -7,
  /** {-8}: the client's own verdict refused the request (it holds the error). */
  REFUSED: -8,
  /** {-9, length}: the snapshot covers more records than the journal has. */
  PAST_END: -9,
  /** {-10, length, anchorHash}: the snapshot's hash is not the hash of record seq-1. */
  ANCHOR_MISMATCH: -10,
} as const;

/** The verdict of the client's own checks, passed to append and putSnapshot. */
export type Verdict =
  /** Everything the client can check passed. */
  | 'ok'
  /** A check that comes before the journal's own (the first record's shape, the snapshot's seq/hash) failed. */
  | 'head'
  /** A check that comes after them (later records, encoding) failed. */
  | 'rest';

/** Fencing, shared by every script that writes under a lease (Lua 5.1, prepended to them). */
const FENCE = `
local function fence(leaseKey, token)
  local stored = redis.call('HGET', leaseKey, 'token')
  if not stored then return {-2} end
  if stored ~= token then return {-1, tonumber(stored)} end
  if redis.call('HGET', leaseKey, 'released') == '1' then return {-3, tonumber(stored)} end
  return nil
end
`;

/** Reads the hash of a stored record line (nil when it does not parse). */
const HASH_OF = `
local function hashOf(line)
  local ok, record = pcall(cjson.decode, line)
  if not ok or type(record) ~= 'table' or type(record.hash) ~= 'string' then return nil end
  return record.hash
end
`;

export const ACQUIRE_LUA = `--[[
  Take an invocation's lease: refused while a live (unreleased, unexpired) lease is recorded;
  otherwise the token is bumped (HINCRBY: it never goes back, even after a release or a takeover)
  and the lease is recorded for the caller. An expired or released lease is taken over at once, and
  its holder's later writes are fenced by the new token. The caller's attempt id makes a resent
  acquire (the client resends a command whose reply a dropped connection lost) return the lease it
  already took, instead of refusing its own writer.

    Input:
      KEYS[1] lease key     <prefix>:{<id>}:lease   (hash: writer, token, expiresAt, released, attempt, appended)

      ARGV[1] writer        the caller's writer id
      ARGV[2] now           the caller's clock, ms since the epoch
      ARGV[3] expiresAt     now + ttl, ms since the epoch (decimal text, stored as given)
      ARGV[4] attempt       a unique id of this acquire call
      ARGV[5] deadToken     optional: the token of a live-looking lease whose holder the caller saw
                            dead (same host, no such process); taken over only if still that token

    Output:
       {1, token}                          taken (or taken by this very call already); token is the fencing token
      {-4, writer, token, expiresAt}       refused: that writer's lease is live until expiresAt
]]
local lease = redis.call('HMGET', KEYS[1], 'writer', 'token', 'expiresAt', 'released', 'attempt')
local expiresAt = tonumber(lease[3])
if lease[2] and lease[4] ~= '1' and expiresAt and tonumber(ARGV[2]) < expiresAt then
  if lease[5] == ARGV[4] then return {1, tonumber(lease[2])} end
  if not (ARGV[5] and ARGV[5] ~= '' and ARGV[5] == lease[2]) then
    return {-4, lease[1] or '', lease[2], lease[3]}
  end
end
local token = redis.call('HINCRBY', KEYS[1], 'token', 1)
redis.call('HSET', KEYS[1], 'writer', ARGV[1], 'expiresAt', ARGV[3], 'released', '0', 'attempt', ARGV[4])
redis.call('HDEL', KEYS[1], 'appended')
return {1, token}
`;

export const RENEW_LUA = `--[[
  Extend the caller's lease. Only the current, unreleased token may renew (a renewal racing a
  takeover must not write the old holder back).

    Input:
      KEYS[1] lease key     <prefix>:{<id>}:lease

      ARGV[1] token         the caller's fencing token
      ARGV[2] expiresAt     the new expiry, ms since the epoch (decimal text)

    Output:
       {1, writer}          renewed; writer is the lease's recorded writer
      {-1, currentToken}    fenced: the lease was taken over
      {-2}                  no lease was ever taken
      {-3, token}           the lease was released
]]
${FENCE}
local refused = fence(KEYS[1], ARGV[1])
if refused then return refused end
redis.call('HSET', KEYS[1], 'expiresAt', ARGV[2])
return {1, redis.call('HGET', KEYS[1], 'writer')}
`;

export const RELEASE_LUA = `--[[
  Release the caller's lease: marked released and expired now, so the next writer takes over at
  once. The hash (and its token) stays, so the next token is still higher. Releasing a lease that
  was taken over changes nothing (it must not disturb the new holder).

    Input:
      KEYS[1] lease key     <prefix>:{<id>}:lease

      ARGV[1] token         the caller's fencing token
      ARGV[2] now           the caller's clock, ms since the epoch

    Output:
      {1}   released (or already released by the same token)
      {0}   nothing to release: no lease, or another token holds it now
]]
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return {0} end
redis.call('HSET', KEYS[1], 'released', '1', 'expiresAt', ARGV[2])
return {1}
`;

export const APPEND_LUA = `--[[
  Append records to an invocation's journal, all or none: the caller's token must be the current
  unreleased one, the journal must hold exactly expectedSeq records, and the first record's prev
  must be the hash of the journal's tail. Only then are all lines pushed (one atomic script, so no
  other writer's command interleaves). Linkage only: hashes are not recomputed (the reader does).
  The lease remembers the attempt id of its last append, so a resent append (the client resends a
  command whose reply a dropped connection lost) that already happened is acknowledged, not
  refused and never written twice.

    Input:
      KEYS[1] lease key     <prefix>:{<id>}:lease
      KEYS[2] journal key   <prefix>:{<id>}:journal  (list of canonical record lines, no newline)

      ARGV[1] token         the caller's fencing token
      ARGV[2] expectedSeq   the journal length the caller expects (-1 when it is not a count)
      ARGV[3] verdict       'ok' | 'head' | 'rest': the client's own checks of the batch
      ARGV[4] firstPrev     prev of the first record ('' when the batch is empty or its verdict is 'head')
      ARGV[5] attempt       a unique id of this append call
      ARGV[6..] lines       the records' canonical JSON lines, in seq order (none unless verdict is 'ok')

    Output:
       {1, length}                  appended (or appended by this very call already); length is the journal's length
      {-1, currentToken}            fenced: the lease was taken over
      {-2}                          no lease was ever taken
      {-3, token}                   the lease was released
      {-5, length}                  expectedSeq is not the journal's length
      {-6, length, tailHash}        firstPrev is not the tail's hash
      {-7, seq}                     the tail line (record seq) is not valid JSON
      {-8}                          the client's verdict refused the batch
]]
${FENCE}
${HASH_OF}
local refused = fence(KEYS[1], ARGV[1])
if refused then return refused end
local length = redis.call('LLEN', KEYS[2])
if tonumber(ARGV[2]) ~= length then
  if #ARGV > 5 and redis.call('HGET', KEYS[1], 'appended') == ARGV[5] then return {1, length} end
  return {-5, length}
end
if ARGV[3] == 'head' then return {-8} end
if length > 0 and ARGV[4] ~= '' then
  local tailHash = hashOf(redis.call('LINDEX', KEYS[2], -1))
  if not tailHash then return {-7, length - 1} end
  if tailHash ~= ARGV[4] then return {-6, length, tailHash} end
end
if ARGV[3] ~= 'ok' then return {-8} end
if #ARGV == 5 then return {1, length} end
-- unpack() is bounded by Lua's C stack: push in chunks (still one atomic script).
local i = 6
while i <= #ARGV do
  local j = math.min(i + 999, #ARGV)
  redis.call('RPUSH', KEYS[2], unpack(ARGV, i, j))
  i = j + 1
end
redis.call('HSET', KEYS[1], 'appended', ARGV[5])
return {1, length + #ARGV - 5}
`;

export const PUT_SNAPSHOT_LUA = `--[[
  Replace an invocation's snapshot, fenced and anchored: the caller's token must be the current
  unreleased one, the snapshot may cover no more records than the journal has, and (seq > 0) its
  hash must be the hash of record seq-1. The snapshot is replaced whole (SET).

    Input:
      KEYS[1] lease key      <prefix>:{<id>}:lease
      KEYS[2] journal key    <prefix>:{<id>}:journal
      KEYS[3] snapshot key   <prefix>:{<id>}:snapshot  (string: canonical JSON {data, hash, seq})

      ARGV[1] token          the caller's fencing token
      ARGV[2] verdict        'ok' | 'head' | 'rest': the client's own checks (seq/hash shape, encoding)
      ARGV[3] seq            records covered (a safe non-negative integer when verdict is not 'head')
      ARGV[4] hash           hash of record seq-1
      ARGV[5] text           the snapshot's canonical JSON ('' unless verdict is 'ok')

    Output:
       {1}                            stored
      {-1, currentToken}              fenced: the lease was taken over
      {-2}                            no lease was ever taken
      {-3, token}                     the lease was released
      {-7, seq}                       the anchor line (record seq) is not valid JSON
      {-8}                            the client's verdict refused the snapshot
      {-9, length}                    seq is past the journal's end
      {-10, length, anchorHash}       hash is not the hash of record seq-1
]]
${FENCE}
${HASH_OF}
local refused = fence(KEYS[1], ARGV[1])
if refused then return refused end
if ARGV[2] == 'head' then return {-8} end
local length = redis.call('LLEN', KEYS[2])
local seq = tonumber(ARGV[3])
if seq > length then return {-9, length} end
if seq > 0 then
  local anchor = hashOf(redis.call('LINDEX', KEYS[2], seq - 1))
  if not anchor then return {-7, seq - 1} end
  if anchor ~= ARGV[4] then return {-10, length, anchor} end
end
if ARGV[2] ~= 'ok' then return {-8} end
redis.call('SET', KEYS[3], ARGV[5])
return {1}
`;

/** A script run by its SHA-1 (EVALSHA), loaded on first use or after a server restart (NOSCRIPT → EVAL). */
export class RedisScript {
  readonly sha: string;
  constructor(
    readonly name: string,
    readonly lua: string,
  ) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  async run(client: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown[]> {
    let reply: unknown;
    try {
      reply = await client.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!String((err as Error)?.message).startsWith('NOSCRIPT')) throw err;
      reply = await client.eval(this.lua, keys.length, ...keys, ...args);
    }
    if (!Array.isArray(reply) || typeof reply[0] !== 'number') {
      throw new Error(`Redis script ${this.name} replied ${JSON.stringify(reply)}, not a coded array: is this a Redis server?`);
    }
    return reply;
  }
}

export const scripts = {
  acquire: new RedisScript('acquire', ACQUIRE_LUA),
  renew: new RedisScript('renew', RENEW_LUA),
  release: new RedisScript('release', RELEASE_LUA),
  append: new RedisScript('append', APPEND_LUA),
  putSnapshot: new RedisScript('putSnapshot', PUT_SNAPSHOT_LUA),
};

/** What the caller was doing, for the error a refusal becomes. */
export interface RefusalContext {
  lease?: Lease;
  invocation: string;
  /** The caller's clock when it asked (lease-held detail). */
  now?: number;
  expectedSeq?: number;
  records?: readonly JournalRecord[];
  snapshot?: Snapshot;
  /** The error behind a REFUSED verdict. */
  refused?: unknown;
  /** Where the stored line lives (UNREADABLE). */
  journalKey?: string;
}

/**
 * The one place a script's negative code becomes an error — the same class and message the memory
 * and file stores raise, built by the same shared checks.
 */
export function refusal(reply: readonly unknown[], context: RefusalContext): Error {
  const code = reply[0] as number;
  const { invocation, lease } = context;
  const fenced = (stored: StoredLease | undefined): Error => {
    try {
      checkFence(lease!, stored);
    } catch (err) {
      return err as Error;
    }
    return unexpected();
  };
  const unexpected = () => new Error(`Redis store: unexpected script reply ${JSON.stringify(reply)} for invocation ${invocation}`);
  switch (code) {
    case Code.FENCED:
      return fenced({ writer: '', token: Number(reply[1]), expiresAt: 0 });
    case Code.NO_LEASE:
      return fenced(undefined);
    case Code.RELEASED:
      return fenced({ writer: '', token: Number(reply[1]), expiresAt: 0, released: true });
    case Code.LEASE_HELD: {
      const stored: StoredLease = { writer: String(reply[1]), token: Number(reply[2]), expiresAt: Number(reply[3]) };
      return new LeaseHeldError(invocation, stored.writer, heldDetail(stored, context.now ?? 0));
    }
    case Code.SEQ_CONFLICT:
      return new SeqConflictError(invocation, context.expectedSeq ?? Number.NaN, Number(reply[1]));
    case Code.BROKEN_LINK:
      try {
        checkAppend(invocation, context.expectedSeq!, { length: Number(reply[1]), tailHash: String(reply[2]) }, context.records ?? []);
      } catch (err) {
        return err as Error;
      }
      return unexpected();
    case Code.UNREADABLE: {
      const seq = Number(reply[1]);
      const where = context.journalKey === undefined ? '' : ` (index ${seq} of ${context.journalKey})`;
      return new JournalIntegrityError(seq, `the stored record${where} is not valid JSON; nothing was written — verify the journal with weft verify`);
    }
    case Code.REFUSED:
      return context.refused instanceof Error ? context.refused : unexpected();
    case Code.PAST_END:
    case Code.ANCHOR_MISMATCH:
      try {
        const anchor = code === Code.ANCHOR_MISMATCH ? ({ hash: String(reply[2]) } as JournalRecord) : undefined;
        checkSnapshotAnchor(context.snapshot!, Number(reply[1]), anchor);
      } catch (err) {
        return err as Error;
      }
      return unexpected();
    default:
      return unexpected();
  }
}
