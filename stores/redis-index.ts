/**
 * The Redis store's status index: one hash `<prefix>:index` (invocation id → JSON entry { tenant,
 * intent (a short prefix), status, epoch, records, updated, reason?, lastKind?, lastAt?, startedAt?, shadow?, forkOf?, supersededBy? }), so that `weft ls --redis
 * URL [--tenant T] [--status S]` needs no scan of every journal, and one set `<prefix>:open` of the
 * ids whose entry has not ended, kept by the same merge script: `weft serve` reads it (and only
 * those entries) on every poll instead of the whole index, and repairs it with the index now and
 * then (`RedisStore.openIndexed({ repair: true })`).
 *
 * The index follows status changes — a genesis, a sealed ending, a snapshot (every epoch boundary
 * after the first, every resting state), a suspension note — not every step, so a step costs no
 * extra write; its `records` and `epoch` are as of the last of those.
 *
 * None of them is the truth — the journals, snapshots and status notes are. They live outside the
 * invocations' hash slots, so they are updated by separate commands after the change they describe
 * succeeded (sent on the same connection, so in order, and not waited for); a lost update is
 * repaired by `RedisStore.reindex()`, which recomputes entries from the journals, and which listing
 * runs by itself for any invocation the registry has and the index lacks (`weft ls --rebuild-index`
 * recomputes all of them).
 *
 * An entry is merged, never replaced blindly: the merge script keeps a sealed ending (completed,
 * failed, handed off, cancelled) against any later, stale update.
 */
import type { JournalRecord } from '../journal/records.js';
import { endingOf } from '../journal/store.js';
import { RedisScript } from './redis-scripts.js';
import { forkOfFact, supersededByFact, type ForkOfFact } from '../journal/lineage.js';

export interface IndexEntry {
  id: string;
  tenant: string;
  intent: string;
  status: string;
  epoch: number;
  records: number;
  /** ms since the epoch, the writer's clock. */
  updated: number;
  reason?: string;
  /** The kind of the last record as of the entry's update, and its envelope time (ISO 8601), when known. */
  lastKind?: string;
  lastAt?: string;
  /** The first record's envelope time (ISO 8601): when it started (from the genesis). */
  startedAt?: string;
  /** A shadow run's pinned `shadow.results` (from the genesis); absent on a real run. */
  shadow?: string;
  /** A fork's parent and epoch (the genesis's `forkOf`, journal/lineage.ts); absent otherwise. */
  forkOf?: ForkOfFact;
  /** The fork that superseded it (its `invocation.superseded`'s `by`); absent otherwise. */
  supersededBy?: string;
}

const INTENT_CHARS = 120;

/** The intent as the index keeps it: at most INTENT_CHARS characters. */
export function indexIntent(intent: string): string {
  return intent.length > INTENT_CHARS ? `${intent.slice(0, INTENT_CHARS - 1)}…` : intent;
}

/**
 * MERGE — KEYS[1] the index hash, KEYS[2] the open set; ARGV[1] the invocation id, ARGV[2] a JSON
 * patch. Merges the patch into the stored entry; a stored sealed status (completed / failed /
 * handed_off / cancelled / superseded) is kept. The id is in the open set while its entry's status is not a sealed one.
 * Returns {1}.
 */
const MERGE_LUA = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
local entry = {}
if current then entry = cjson.decode(current) end
local patch = cjson.decode(ARGV[2])
local ended = entry.status == 'completed' or entry.status == 'failed' or entry.status == 'handed_off' or entry.status == 'cancelled' or entry.status == 'superseded'
for k, v in pairs(patch) do
  if not (k == 'status' and ended) and not (k == 'reason' and ended) then entry[k] = v end
end
if patch.status and not ended and patch.status ~= 'suspended' then entry.reason = nil end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(entry))
if entry.status == 'completed' or entry.status == 'failed' or entry.status == 'handed_off' or entry.status == 'cancelled' or entry.status == 'superseded' then
  redis.call('SREM', KEYS[2], ARGV[1])
else
  redis.call('SADD', KEYS[2], ARGV[1])
end
return {1}
`;

export const mergeScript = new RedisScript('indexMerge', MERGE_LUA);

/** The patch an append implies: tenant and intent from the genesis, status from an ending record. */
export function appendPatch(records: readonly JournalRecord[], now: number): Record<string, unknown> {
  const patch: Record<string, unknown> = { updated: now };
  const last = records.at(-1);
  if (!last) return patch;
  patch.records = last.seq + 1;
  patch.epoch = last.epoch;
  patch.lastKind = last.kind;
  if (last.meta?.at !== undefined) patch.lastAt = last.meta.at;
  const first = records[0]!;
  if (first.seq === 0 && first.kind === 'invocation.pinned') {
    const body = first.body as { tenant: string; intent: string };
    patch.tenant = body.tenant;
    patch.intent = indexIntent(body.intent);
    if (first.meta?.at !== undefined) patch.startedAt = first.meta.at;
    const shadow = (first.body as { pin?: { shadow?: { results?: unknown } } }).pin?.shadow?.results;
    if (typeof shadow === 'string') patch.shadow = shadow;
    const forkOf = forkOfFact(first.body);
    if (forkOf) patch.forkOf = forkOf;
  }
  const supersededBy = supersededByFact(records);
  if (supersededBy) patch.supersededBy = supersededBy;
  const status = endingOf(records.map((r) => r.kind));
  patch.status = status ?? 'running';
  return patch;
}


/** The status a snapshot's machine state says the invocation rests in. */
export function snapshotStatus(value: unknown): string {
  if (value === 'awaitingApproval') return 'awaiting_approval';
  if (value === 'hibernated') return 'hibernated';
  if (value === 'awaitingTimer') return 'waiting_timer';
  if (value === 'suspended') return 'suspended';
  if (value === 'completed' || value === 'failed') return value;
  if (value === 'handedOff') return 'handed_off';
  if (value === 'superseded') return 'superseded';
  if (value === 'cancelled') return 'cancelled';
  return 'running';
}


/** Parse a stored entry (undefined when it is not one). */
export function parseEntry(id: string, text: string): IndexEntry | undefined {
  try {
    const e = JSON.parse(text) as Partial<IndexEntry>;
    if (typeof e.status !== 'string') return undefined;
    return {
      id,
      tenant: typeof e.tenant === 'string' ? e.tenant : '?',
      intent: typeof e.intent === 'string' ? e.intent : '?',
      status: e.status,
      epoch: typeof e.epoch === 'number' ? e.epoch : 0,
      records: typeof e.records === 'number' ? e.records : 0,
      updated: typeof e.updated === 'number' ? e.updated : 0,
      ...(typeof e.reason === 'string' ? { reason: e.reason } : {}),
      ...(typeof e.lastKind === 'string' ? { lastKind: e.lastKind } : {}),
      ...(typeof e.lastAt === 'string' ? { lastAt: e.lastAt } : {}),
      ...(typeof e.startedAt === 'string' ? { startedAt: e.startedAt } : {}),
      ...(typeof e.shadow === 'string' ? { shadow: e.shadow } : {}),
      ...(forkOfFact(e.forkOf) ? { forkOf: forkOfFact(e.forkOf)! } : {}),
      ...(typeof e.supersededBy === 'string' ? { supersededBy: e.supersededBy } : {}),
    };
  } catch {
    return undefined;
  }
}
