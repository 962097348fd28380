/**
 * The viewer's side of redaction (journal/redaction.ts): every payload about an invocation whose
 * store metadata carries redaction marks passes through here before it is sent — the description,
 * the journal's lines, the live records and rows, the approval steps — so a marked field's value
 * reaches no page, whichever route or socket asks.
 *
 * The marks come from the store (`getMetadata(id).redact`), never from `--domain`: a viewer without
 * the domain's code applies them. The secrets a payload is scrubbed of are the values the marks
 * remove from the invocation's whole journal (and from the payload itself), so a value that also
 * travels unmarked — in an observation's facts, a model's request, a message's text — is cut there too.
 *
 * A redacted journal no longer verifies against its hashes, so the page cannot check it: the server
 * verifies the stored bytes (journal/verify-bytes.ts, against the trusted key if any) and sends its
 * verdict (`serverVerdict`), which the page shows as the server's, saying why.
 *
 * Redaction fails CLOSED: an invocation with no metadata (or metadata without marks) has nothing
 * marked, but metadata the store could not read — or a journal or snapshot the secrets must be
 * learnt from — throws RedactionUnavailableError, and the caller sends nothing about the invocation
 * (HTTP 503; a WebSocket is closed with the reason): the page asks again later.
 */
import { recordLine } from '../journal/encode.js';
import type { JournalRecord } from '../journal/records.js';
import { JournalRedactor, marksAnything, REDACTED, redactRecords, redactValue, secretsIn, type RedactionMarks, type Secret } from '../journal/redaction.js';
import type { PublicKey } from '../journal/seal.js';
import type { JournalStore } from '../journal/store.js';
import { verifyJournalBytes } from '../journal/verify-bytes.js';
import { snapshotPlan } from '../runtime/approval-request.js';

/** The server's verdict on a journal it redacted: the shape of the page's own (page/verify.ts Verdict). */
export type ServerVerdict =
  | { kind: 'verified'; fingerprint: string; keyId: string; records: number; key: { publicKey: string; keyId: string; label: string } }
  | { kind: 'chain-only'; fingerprint: string | null; sealed: boolean; keyId: string | null; records: number }
  | { kind: 'failed'; seq: number; problem: string; sealMismatch: boolean };

/** The response header that tells the page a journal was redacted (then it asks `/verdict`). */
export const REDACTED_HEADER = 'x-weft-redacted';

/** What a payload about an invocation meets when its marks (or what they remove) could not be read: nothing is sent. */
export class RedactionUnavailableError extends Error {
  /** The HTTP status the viewer answers with (503: the store may answer next time). */
  readonly status = 503;
  constructor(
    readonly invocation: string,
    what: string,
    cause: unknown,
  ) {
    super(`weft inspect: the redaction marks of invocation ${invocation} could not be read (${what}: ${cause instanceof Error ? cause.message : String(cause)}), so nothing about it is sent until they can be — try again`);
    this.name = 'RedactionUnavailableError';
  }
}

/** The reason a WebSocket is closed with (at most 123 bytes, as a close frame allows). */
export const REDACTION_UNAVAILABLE_CLOSE = 'the redaction marks could not be read; nothing is sent until they can be: try again';

/** `read()`, or RedactionUnavailableError naming `what` when it throws. */
async function mustRead<T>(id: string, what: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    throw new RedactionUnavailableError(id, what, err);
  }
}

/**
 * The marks of invocation `id`, or undefined when nothing of it is redacted (no metadata, or none
 * marked). Metadata the store could not read is not "no marks": RedactionUnavailableError.
 */
export async function marksOf(store: JournalStore, id: string): Promise<RedactionMarks | undefined> {
  const meta = await mustRead(id, 'its metadata', () => store.getMetadata(id));
  return marksAnything(meta?.redact) ? meta.redact : undefined;
}

/** What the marks remove from the invocation's journal (its readable records) and from the plan its snapshot holds (steps not dispatched yet: an approval's). */
async function secretsOf(store: JournalStore, id: string, marks: RedactionMarks): Promise<Set<Secret>> {
  let records: JournalRecord[] = [];
  try {
    records = await store.read(id);
  } catch {
    records = await readablePrefix(store, id);
  }
  return new Set([...redactRecords(records, marks).secrets, ...(await planSecrets(store, id, marks))]);
}

/** What the marks remove from the plan the invocation's snapshot holds (a snapshot that cannot be read: RedactionUnavailableError). */
async function planSecrets(store: JournalStore, id: string, marks: RedactionMarks): Promise<Set<Secret>> {
  const snapshot = await mustRead(id, 'its snapshot', () => store.getSnapshot(id));
  return secretsIn(snapshotPlan(snapshot)?.steps ?? [], marks);
}

/** The records before the first that cannot be read (a torn tail); a journal whose length cannot be read: RedactionUnavailableError. */
async function readablePrefix(store: JournalStore, id: string): Promise<JournalRecord[]> {
  const out: JournalRecord[] = [];
  const length = await mustRead(id, 'its journal', () => store.length(id));
  for (let seq = 0; seq < length; seq++) {
    try {
      const [record] = await store.read(id, seq, seq + 1);
      if (!record) break;
      out.push(record);
    } catch {
      break;
    }
  }
  return out;
}

/** Any JSON about invocation `id` (its description, its listing row), redacted when it has marks. */
export async function redactedFor<T>(store: JournalStore, id: string, value: T): Promise<T> {
  const marks = await marksOf(store, id);
  if (!marks) return value;
  return redactValue(value, marks, await secretsOf(store, id, marks));
}

/**
 * Listing rows, each redacted by its invocation's marks. Only a row that carries steps or text from
 * the run (why it stopped, what is wrong) can hold a marked value, and only those are looked at: a
 * store of 10,000 ended invocations is listed without reading 10,000 metadata records.
 */
export async function redactedRows<T extends { id: string; approvalSteps?: unknown; reason?: unknown; problem?: unknown }>(store: JournalStore, rows: readonly T[]): Promise<T[]> {
  return Promise.all(rows.map((row) => (row.approvalSteps === undefined && row.reason === undefined && row.problem === undefined ? row : redactedFor(store, row.id, row))));
}

/**
 * A journal's bytes as the page gets them: unchanged when nothing is marked; else each line
 * redacted, and a line that is not a record (a torn tail) replaced by NOT_A_RECORD — a marked
 * number or short string in it could not be found in its text; `redacted` says the page cannot
 * verify them (it asks `/verdict`, serverVerdict, instead).
 */
export const NOT_A_RECORD = `${REDACTED} (a line that is not a record, withheld from a journal with redaction marks)`;

export async function redactedJournal(store: JournalStore, id: string, bytes: Uint8Array): Promise<{ bytes: Uint8Array; redacted: boolean }> {
  const marks = await marksOf(store, id);
  if (!marks) return { bytes, redacted: false };
  const text = new TextDecoder().decode(bytes);
  const lines = text.split('\n');
  const last = lines.pop()!; // '' after a final newline, else a torn line
  const parsed: Array<JournalRecord | string> = lines.map((line) => {
    try {
      const value: unknown = JSON.parse(line);
      return typeof value === 'object' && value !== null && !Array.isArray(value) && 'body' in value ? (value as JournalRecord) : line;
    } catch {
      return line;
    }
  });
  const records = parsed.filter((p): p is JournalRecord => typeof p !== 'string');
  const { records: redacted } = redactRecords(records, marks, await planSecrets(store, id, marks));
  let i = 0;
  const out = parsed.map((p) => (typeof p === 'string' ? NOT_A_RECORD : recordLine(redacted[i++]!)));
  const body = out.map((line) => `${line}\n`).join('') + (last === '' ? '' : NOT_A_RECORD);
  return { bytes: new TextEncoder().encode(body), redacted: true };
}

/** Lines of records from a live follower, redacted by the marks (knowing the records before them). */
export class LiveRedactor {
  private constructor(
    private readonly redactor: JournalRedactor | undefined,
    private readonly plan: () => Promise<Set<Secret>>,
  ) {}

  /** A redactor for `id`, primed with its records before `from`. */
  static async for(store: JournalStore, id: string, from: number): Promise<LiveRedactor> {
    const marks = await marksOf(store, id);
    if (!marks) return new LiveRedactor(undefined, async () => new Set());
    const redactor = new JournalRedactor(marks);
    if (from > 0) redactor.structural(await mustRead(id, 'its journal', () => store.read(id, 0, from)));
    return new LiveRedactor(redactor, () => planSecrets(store, id, marks));
  }

  /** Whether the invocation has no marks: its journal lines are sent as they are. */
  get passesThrough(): boolean {
    return this.redactor === undefined;
  }

  /** The records' journal lines, redacted when the invocation has marks. */
  async lines(records: readonly JournalRecord[]): Promise<string[]> {
    if (!this.redactor) return records.map((r) => recordLine(r));
    this.redactor.know(await this.plan());
    return this.redactor.next(records).map((r) => recordLine(r));
  }
}

/** The server's verdict for the page: a failed one's `problem` (it may quote a bit of a line) redacted like any payload about the invocation. */
export async function redactedVerdict(store: JournalStore, id: string, verdict: ServerVerdict): Promise<ServerVerdict> {
  return verdict.kind === 'failed' ? { ...verdict, problem: await redactedFor(store, id, verdict.problem) } : verdict;
}

/** The server's verdict on the journal's stored bytes (what the page would say had it the bytes). */
export function serverVerdict(bytes: Uint8Array, trusted: { key: PublicKey; label: string } | undefined): ServerVerdict {
  const chain = verifyJournalBytes(bytes);
  if (!chain.ok) return { kind: 'failed', seq: chain.error?.seq ?? chain.count, problem: chain.error?.problem ?? 'the journal does not verify', sealMismatch: false };
  if (!trusted || !chain.sealed) return { kind: 'chain-only', fingerprint: chain.fingerprint ?? null, sealed: chain.sealed, keyId: chain.keyId ?? null, records: chain.count };
  const sealed = verifyJournalBytes(bytes, { publicKey: trusted.key });
  if (!sealed.ok) return { kind: 'failed', seq: sealed.error?.seq ?? sealed.count, problem: sealed.error?.problem ?? 'the journal does not verify', sealMismatch: sealed.sealMismatch === true };
  return { kind: 'verified', fingerprint: sealed.fingerprint!, keyId: sealed.keyId!, records: sealed.count, key: { publicKey: trusted.key.publicKey, keyId: trusted.key.keyId, label: trusted.label } };
}
