/**
 * The store interface every journal backend implements (memory, file, Redis), and that one
 * conformance suite (test/store-conformance.ts) checks for each.
 *
 * A store holds, per invocation: the journal (append-only records), a lease (one writer at a time,
 * with a fencing token), and a snapshot (the latest hibernation image, anchored at a seq and
 * hash); and, shared, a content-addressed blob area (method-library versions by digest, so an
 * exported journal can be replayed wherever its store goes).
 *
 * Contract:
 * - `append(lease, expectedSeq, records)` writes all records or none, durably, and only if the
 *   journal currently has exactly `expectedSeq` records, `records[i].seq === expectedSeq + i`,
 *   the first record's `prev` is the current tail hash, and `lease.token` is the current token.
 *   Otherwise it throws SeqConflictError / FencedError / JournalIntegrityError and writes nothing.
 * - `acquire` refuses with LeaseHeldError while a live holder has an unexpired lease; it takes a
 *   lease whose holder is dead (TTL expired; in the file store, a dead process) and bumps the token,
 *   so the old holder's later appends are fenced.
 * - Reading a journal whose final record is torn throws TornTailError naming the seq; the store
 *   never drops or rewrites it on its own. `quarantineTornTail` does, explicitly, keeping the bytes.
 * - The store checks linkage, not hashes: full validation is the reader's job (journal/reader.ts).
 * - `list()` names every invocation that has a journal (even an empty one: a crash before its first
 *   record was written) or a snapshot, sorted: a listing never drops an invocation it could show.
 *   A lease or a status note alone is not an invocation.
 * - The status index (`putStatus`/`getStatus`/`clearStatus`) is a side channel beside the journal:
 *   one unhashed, never-verified note per invocation, overwritten whole (atomically) and taken
 *   without the lease, so a runtime whose journal write just failed can still say why it stopped.
 *   A note that cannot be read back (corrupt) reads as no note.
 * - Invocation metadata (`putMetadata`/`getMetadata`) is another unhashed, never-verified record per
 *   invocation, written by the runtime when the invocation starts: the NAME of its domain and the
 *   digest of the library it pinned — so any process over any store (serve, a worker, replay,
 *   resume) learns which domain an invocation belongs to. It is data, never code: it holds no module
 *   path, and a reader resolves a domain name only to code it has locally (cli/domain-map.ts). A
 *   malformed record is refused on write (TypeError) and reads as none. It also holds the domain's
 *   redaction marks (`redact`, journal/redaction.ts): the fields no viewer or trace is sent.
 * - The metadata also holds `sealKey`, the id of the key the invocation was started with (replaced
 *   by an explicit re-key), so that a resume or approval with another key is refused before it
 *   writes anything. It is a guard against accidents — resuming on a host that holds another key —
 *   not a security boundary: it is unhashed and anyone who can write the store can change it. The
 *   proof remains `verify` with the auditor's public key. Being outside the hash chain, the key id
 *   leaves the journal — and its fingerprint — the same whichever key seals it.
 */
import type { AdvisoryMessage } from './advisory.js';
import type { JournalRecord } from './records.js';
import { marksAnything, normalizeMarks, redactionMarksSchema, type RedactionMarks } from './redaction.js';

export interface Lease {
  invocation: string;
  writer: string;
  /** Fencing token: strictly increases every time the lease changes hands. */
  token: number;
  /** Wall-clock expiry (ms since epoch) — observability and takeover only; never hashed. */
  expiresAt: number;
}

export interface AcquireOptions {
  /** Identifies this writer in errors and record envelopes. */
  writer: string;
  /** Lease time-to-live; the holder renews before it runs out. */
  ttlMs: number;
}

/** A person's decision on an epoch awaiting approval, waiting in the invocation's inbox. */
export interface ApprovalMessage {
  type: 'approval';
  decision: 'approved' | 'rejected';
  by: string;
  note?: string;
  /** ms since the epoch, the writer's clock (observability). */
  at: number;
}

/**
 * A request to cancel the invocation (`runtime.cancel`, `weft cancel`), waiting in its inbox: the
 * runtime that holds the invocation sees it between steps, or the one that takes it up next.
 * Recorded as `cancel.requested` (with `at` as ISO 8601) before anything acts on it.
 */
export interface CancelMessage {
  type: 'cancel';
  by: string;
  reason: string;
  /** ms since the epoch, the requester's clock (recorded in `cancel.requested`). */
  at: number;
}

/**
 * A request to come to rest at the next epoch boundary (hibernate), from a process that cannot take
 * the invocation while another holds it — `weft fork` asks its parent's holder this way, then forks
 * once the parent rests. Its holder sees it before each step and as each epoch closes; it is never
 * recorded (a hibernation is not a journal input).
 */
export interface RestMessage {
  type: 'rest';
  by: string;
  reason: string;
  at: number;
}

/**
 * A request to go on with a resting invocation (hibernated, or suspended for something a person has
 * since fixed), from a process that leaves the running to `weft serve` — the viewer's Resume
 * (inspector/page-actions.ts). Serve takes it up (runtime/serve.ts, why `resume`) as `weft resume`
 * would; the resume clears it. Never recorded in the journal (a resume is not a journal input): the
 * inbox names who asked until it is carried out.
 */
export interface ResumeMessage {
  type: 'resume';
  by: string;
  reason: string;
  at: number;
}

/** What waits in an invocation's inbox: a decision, a cancel (which no decision replaces), a request to rest, or one to resume. */
export type InboxMessage = ApprovalMessage | CancelMessage | RestMessage | ResumeMessage;

export function isInboxMessage(value: unknown): value is InboxMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  if (typeof m.by !== 'string' || m.by.length === 0 || typeof m.at !== 'number' || !Number.isFinite(m.at)) return false;
  if (m.type === 'cancel' || m.type === 'rest' || m.type === 'resume') return typeof m.reason === 'string';
  return m.type === 'approval' && (m.decision === 'approved' || m.decision === 'rejected') && (m.note === undefined || typeof m.note === 'string');
}

export interface Snapshot {
  /** Number of journal records the snapshot covers (the next seq to append). */
  seq: number;
  /** Hash of record seq-1: resume verifies only the tail after it. */
  hash: string;
  /** The hibernation image (plain JSON). */
  data: unknown;
}

/** Runtime-side notes about an invocation that cannot be hashed into its journal (a crash, a store that was down, a wait that timed out): observability, never verified. */
export interface StatusNote {
  status: 'running' | 'suspended';
  reason?: string;
  class?: string;
  code?: string;
  /** The command a user runs next, e.g. `weft resume <id>`. */
  fix?: string;
  /** ms since epoch */
  at: number;
  writer?: string;
}

const NOTE_STRINGS = ['reason', 'class', 'code', 'fix', 'writer'] as const;

/** Whether `value` has the shape of a StatusNote (a store reads a note that does not as no note). */
export function isStatusNote(value: unknown): value is StatusNote {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const note = value as Record<string, unknown>;
  if (note.status !== 'running' && note.status !== 'suspended') return false;
  if (typeof note.at !== 'number' || !Number.isFinite(note.at)) return false;
  return NOTE_STRINGS.every((key) => note[key] === undefined || typeof note[key] === 'string');
}

/** The note as a store keeps it: its known fields only, undefined ones left out; throws TypeError on a malformed note. */
export function normalizeStatusNote(note: StatusNote): StatusNote {
  if (!isStatusNote(note)) {
    throw new TypeError(`a status note needs status 'running' or 'suspended', a finite \`at\` (ms since epoch) and string reason/class/code/fix/writer; got ${JSON.stringify(note)}`);
  }
  const out: StatusNote = { status: note.status, at: note.at };
  for (const key of NOTE_STRINGS) if (note[key] !== undefined) out[key] = note[key];
  return out;
}

/** What a store keeps about an invocation beside its journal (see the header): unhashed, never verified. */
export interface InvocationMetadata {
  /** The name of the domain that started it (defineDomain's name); absent for a runtime made without a domain. */
  domain?: string;
  /** The digest of the method library it pinned (the pin's `library`). */
  library: string;
  /**
   * The key id (full SHA-256 hex of the ed25519 public key) that seals it: the key it was started
   * with, or the one an explicit re-key changed it to. Absent for invocations started before the
   * store kept it, or by a runtime without a signing key: then any key may resume them.
   */
  sealKey?: string;
  /**
   * The fields its domain marks as never shown to a viewer, an inspector or a trace (redaction.ts),
   * as the domain declared them at start: data that travels with the invocation, so a viewer without
   * the domain's code applies them. Absent: nothing is redacted.
   */
  redact?: RedactionMarks;
}

/** A domain's name: 1–100 letters, digits, '.', '_' and '-', not starting with a punctuation mark — the one rule defineDomain and the store's metadata check both apply. */
export const DOMAIN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const DIGEST = /^[0-9a-f]{64}$/;

/** Whether `value` has the shape of InvocationMetadata: a domain NAME (never a path) and full SHA-256 hex digests. */
export function isInvocationMetadata(value: unknown): value is InvocationMetadata {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const meta = value as Record<string, unknown>;
  if (typeof meta.library !== 'string' || !DIGEST.test(meta.library)) return false;
  if (meta.sealKey !== undefined && (typeof meta.sealKey !== 'string' || !DIGEST.test(meta.sealKey))) return false;
  if (meta.redact !== undefined && !redactionMarksSchema.safeParse(meta.redact).success) return false;
  return meta.domain === undefined || (typeof meta.domain === 'string' && DOMAIN_NAME.test(meta.domain));
}

/** The metadata as a store keeps it: its known fields only; throws TypeError on a malformed record. */
export function normalizeInvocationMetadata(meta: InvocationMetadata): InvocationMetadata {
  if (!isInvocationMetadata(meta)) {
    throw new TypeError(
      `invocation metadata needs \`library\` (a SHA-256 hex digest) and, optionally, \`domain\` (a domain name: letters, digits, '.', '_', '-') ` +
        `\`sealKey\` (a key id: a SHA-256 hex digest) and \`redact\` (redaction marks: { args?, results?, observations? }); got ${JSON.stringify(meta)?.slice(0, 200)}`,
    );
  }
  return {
    ...(meta.domain === undefined ? {} : { domain: meta.domain }),
    library: meta.library,
    ...(meta.sealKey === undefined ? {} : { sealKey: meta.sealKey }),
    ...(marksAnything(meta.redact) ? { redact: normalizeMarks(meta.redact) } : {}),
  };
}

/**
 * The metadata of an invocation is there but cannot be read: not JSON, or not metadata. It is not
 * "no metadata": that would lose its seal key (any key could resume it) and its redaction marks
 * (a viewer would show what they hide), so whoever needs it stops and says what to do.
 */
export class DamagedMetadataError extends Error {
  readonly code = 'store.metadata_damaged';
  constructor(
    readonly invocation: string,
    readonly problem: string,
  ) {
    super(
      `the store metadata of ${invocation} is damaged (${problem}): restore it from a backup, or move it aside — ` +
        "without it the invocation's seal key and redaction marks are unknown, so nothing that needs them proceeds until then",
    );
    this.name = 'DamagedMetadataError';
  }
}

/** The metadata stored as `text` for `invocation`; throws DamagedMetadataError when it is not valid metadata. */
export function parseInvocationMetadata(text: string, invocation: string): InvocationMetadata {
  let meta: unknown;
  try {
    meta = JSON.parse(text);
  } catch {
    throw new DamagedMetadataError(invocation, 'not JSON');
  }
  if (!isInvocationMetadata(meta)) throw new DamagedMetadataError(invocation, 'not the shape of invocation metadata');
  return normalizeInvocationMetadata(meta);
}

/** The statuses of a sealed journal: completed, failed, handed off, cancelled, or superseded by a fork (runtime/fork.ts). */
export type SealedStatus = 'completed' | 'failed' | 'handed_off' | 'cancelled' | 'superseded';
export const SEALED_STATUSES: ReadonlySet<string> = new Set<SealedStatus>(['completed', 'failed', 'handed_off', 'cancelled', 'superseded']);

/** The sealed ending a run of record kinds (a journal's last ones) holds, if any. */
export function endingOf(kinds: readonly string[]): SealedStatus | undefined {
  if (kinds.includes('invocation.completed')) return 'completed';
  if (kinds.includes('invocation.failed')) return 'failed';
  if (kinds.includes('invocation.handed_off')) return 'handed_off';
  if (kinds.includes('invocation.superseded')) return 'superseded';
  if (kinds.includes('invocation.cancelled')) return 'cancelled';
  return undefined;
}

export interface JournalStore {
  /** A short name for diagnostics ("memory", "file:/path/.weft", "redis://…"). */
  readonly name: string;

  acquire(invocation: string, options: AcquireOptions): Promise<Lease>;
  renew(lease: Lease, ttlMs: number): Promise<Lease>;
  release(lease: Lease): Promise<void>;

  append(lease: Lease, expectedSeq: number, records: readonly JournalRecord[]): Promise<void>;
  /** Records [from, to) — `to` defaults to the end. */
  read(invocation: string, from?: number, to?: number): Promise<JournalRecord[]>;
  /** Number of records. 0 for an unknown invocation. */
  length(invocation: string): Promise<number>;
  /** The last record, if any. */
  tail(invocation: string): Promise<JournalRecord | undefined>;
  /** Every invocation id that has a journal (even an empty one) or a snapshot, sorted. */
  list(): Promise<string[]>;
  /** Move a torn final record aside (kept, not deleted); returns its seq and where its bytes went. */
  quarantineTornTail(lease: Lease): Promise<{ seq: number; keptAt: string } | undefined>;

  putSnapshot(lease: Lease, snapshot: Snapshot): Promise<void>;
  getSnapshot(invocation: string): Promise<Snapshot | undefined>;

  /** Record the runtime's note about `invocation`, replacing any earlier one. Atomic, idempotent; needs no lease. */
  putStatus(invocation: string, note: StatusNote): Promise<void>;
  /** The latest note, or undefined (none, or one that cannot be read). */
  getStatus(invocation: string): Promise<StatusNote | undefined>;
  /** Remove the note, if any. */
  clearStatus(invocation: string): Promise<void>;
  /**
   * Who holds the invocation's lease, for listing only (never for a decision to write): `live` is
   * false when the lease expired, or its holder's process is gone (file store, same host). None:
   * never taken, or released.
   */
  holder(invocation: string): Promise<{ writer: string; expiresAt: number; live: boolean } | undefined>;

  /**
   * The invocation's inbox: a person's decision on an epoch awaiting approval, written by any
   * process (`weft approve`), consumed by whichever runtime resumes it — which records it in the
   * journal as `approval.decided` — or a cancel (`weft cancel`), which the runtime holding the
   * invocation sees between steps and records as `cancel.requested`. One message; a later one
   * replaces it (the runtime never lets an approval replace a cancel). Needs no lease.
   */
  putInbox(invocation: string, message: InboxMessage): Promise<void>;
  /** The message, if any, without consuming it. */
  peekInbox(invocation: string): Promise<InboxMessage | undefined>;
  /** Remove the message (after its decision was recorded). */
  clearInbox(invocation: string): Promise<void>;
  /**
   * The inbox's advisories (advisory.ts): a warning a rule raised, for a person — kept apart from the
   * message above, never returned by peekInbox, never acted on. Idempotent by (seq, index); at most
   * MAX_ADVISORIES kept. Needs no lease.
   */
  putAdvisory(invocation: string, message: AdvisoryMessage): Promise<void>;
  /** The invocation's advisories in journal order (none: empty). */
  advisories(invocation: string): Promise<AdvisoryMessage[]>;

  /** Record which domain, library, sealing key and redaction marks `invocation` has, replacing any earlier record. Atomic, idempotent; needs no lease. Throws TypeError on malformed metadata. */
  putMetadata(invocation: string, meta: InvocationMetadata): Promise<void>;
  /** The invocation's metadata, or undefined when there is none; throws DamagedMetadataError when there is one that cannot be read. */
  getMetadata(invocation: string): Promise<InvocationMetadata | undefined>;

  /** Store bytes under their SHA-256 digest; returns the digest. Idempotent. */
  putBlob(bytes: Uint8Array): Promise<string>;
  /** The bytes stored under `digest` (checked against it), or undefined. */
  getBlob(digest: string): Promise<Uint8Array | undefined>;

  close(): Promise<void>;
}

/** Where a store keeps an invocation's journal as a file, when it does (a file store); else undefined. */
export function journalFileOf(store: JournalStore, invocation: string): string | undefined {
  const file = (store as { journalPath?: (id: string) => string }).journalPath;
  return typeof file === 'function' ? file.call(store, invocation) : undefined;
}

/**
 * Tell `closed` each time the store's connection to its server closes (a Redis store: it reconnects
 * by itself), for a long-lived process that reports an outage as it starts rather than when a command
 * gives up; returns what stops telling. A store with no connection (memory, file) never tells.
 */
export function watchConnectionClosed(store: JournalStore, closed: () => void): () => void {
  const watch = (store as { onConnectionClosed?: (listener: () => void) => () => void }).onConnectionClosed;
  return typeof watch === 'function' ? watch.call(store, closed) : () => undefined;
}

const INVOCATION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/** Invocation ids become file names and Redis keys: letters, digits, `.`, `_`, `-`; ≤ 200 chars. */
export function isValidInvocationId(id: string): boolean {
  return INVOCATION_ID.test(id) && !id.includes('..');
}
