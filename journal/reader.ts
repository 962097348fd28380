/**
 * The journal reader: validates every record — its JSON, its shape, its position, its link to the
 * previous record, its hash, its body's schema, the seal — and reports the FIRST bad record by
 * seq. A journal is judged by its content alone plus, optionally, the public key that should have
 * sealed it; this is the code `weft verify` runs offline.
 *
 * Positions are authoritative: the record at line i must say `seq: i`, so a dropped, duplicated or
 * reordered record is reported at the first position where the journal stops being the one that
 * was written. A final line without its newline is a torn write (the writer died mid-append) and
 * is reported as such — never silently dropped.
 *
 * Pure: takes text or parsed values, never touches the file system.
 */
import { canonicalLineHashMatches, genesisHash, recordHash } from './chain.js';
import { JournalIntegrityError } from './errors.js';
import { checkBody, isRecordKind, recordShapeSchema, type JournalRecord, type Pin } from './records.js';
import { keyIdOf, verifySeal, type PublicKey } from './seal.js';
import { fastBodyOk, fastShapeOk } from './validate-fast.js';

export interface ReadOptions {
  /** Require a seal by this key. Without it the chain is still checked, and `sealed` says whether it is sealed. */
  publicKey?: PublicKey;
}

export interface JournalReport {
  ok: boolean;
  /** The records that passed, in order (all of them when ok). */
  records: JournalRecord[];
  invocation?: string;
  tenant?: string;
  pin?: Pin;
  sealed: boolean;
  /** The hash of the last record before the seal (sealed), or of the last record (unsealed). */
  fingerprint?: string;
  /** The key id recorded in the seal. */
  keyId?: string;
  /** The first problem found. */
  error?: JournalIntegrityError;
}

/** Split JSONL text into lines; reports a torn final line (no trailing newline) as an error line. */
export function splitJournalText(text: string): { lines: string[]; torn?: string } {
  if (text.length === 0) return { lines: [] };
  const lines = text.split('\n');
  const last = lines.pop()!;
  return last.length === 0 ? { lines } : { lines, torn: last };
}

/** Validate a JSONL journal text. */
export function readJournalText(text: string, options: ReadOptions = {}): JournalReport {
  const { lines, torn } = splitJournalText(text);
  const values: unknown[] = [];
  for (let i = 0; i < lines.length; i++) {
    try {
      values.push(JSON.parse(lines[i]!));
    } catch (err) {
      // The records before the bad line may already hold an earlier problem: report the first one.
      const prefix = verifyRecords(values, { ...options, publicKey: undefined });
      return prefix.ok ? finish(prefix, fail(i, `not valid JSON (${(err as Error).message})`)) : prefix;
    }
  }
  const report = verify(values, lines, torn === undefined ? options : { ...options, publicKey: undefined });
  if (!report.ok || torn === undefined) return report;
  return finish(report, fail(lines.length, `torn final record (${new TextEncoder().encode(torn).length} bytes without a newline: the writer crashed mid-append)`));
}

/** Validate parsed records (from any store). */
export function verifyRecords(values: readonly unknown[], options: ReadOptions = {}): JournalReport {
  return verify(values, undefined, options);
}

/** `lines[i]`, when given, is the text `values[i]` was parsed from: it enables the fast path. */
function verify(values: readonly unknown[], lines: readonly string[] | undefined, options: ReadOptions): JournalReport {
  const report: JournalReport = { ok: true, records: [], sealed: false };
  let expectedPrev = '';
  for (let i = 0; i < values.length; i++) {
    let problem: string | undefined;
    try {
      const value = values[i];
      const line = lines?.[i];
      problem =
        line !== undefined && isCanonicalValidLine(value, line)
          ? checkCanonicalRecord(value as JournalRecord, line, i, expectedPrev, report, options)
          : checkRecord(value, i, expectedPrev, report, options);
    } catch (err) {
      // Parsed JSON can hold what no writer produces (a lone surrogate escape that canonical JSON
      // refuses, absurd nesting): report it at its seq instead of throwing.
      problem = `record cannot be checked: ${(err as Error).message}`;
    }
    if (problem) return finish(report, fail(i, problem));
    const record = values[i] as JournalRecord;
    report.records.push(record);
    expectedPrev = record.hash;
  }
  if (!report.sealed) report.fingerprint = report.records.at(-1)?.hash;
  if (options.publicKey && !report.sealed) {
    return finish(report, fail(values.length, 'not sealed: truncated or still running'));
  }
  return report;
}

/**
 * The fast path's admission test. True only when the line is exactly the canonical JSON of the
 * record it parsed to AND the record passes the shape and body schemas — then nothing the slow
 * path checks can depend on re-canonicalizing it, and its hashed text can be cut from the line.
 *
 * Canonical: `JSON.stringify(value) === line` fixes everything but key order and lone surrogates
 * (no whitespace, no duplicate key, numbers in ECMAScript shortest form — RFC 8785's — strings
 * escaped as JSON.stringify does, no -0: it would print as 0, which parses back as +0); the fast
 * validators in sorted mode check every object's keys are strictly increasing; and a lone
 * surrogate can only appear as a `\ud…` escape (JSON.stringify writes it so), which sends the
 * line to the slow path. Then canonicalize(value) — which is JSON.stringify for such data — is
 * the line. Any doubt (false) means the complete slow path, with its exact verdict and message.
 */
function isCanonicalValidLine(value: unknown, line: string): boolean {
  if (!fastShapeOk(value)) return false;
  const record = value as JournalRecord;
  return isRecordKind(record.kind) && fastBodyOk(record.kind, record.body, true, true) && line.indexOf('\\ud') < 0 && JSON.stringify(value) === line;
}

/**
 * checkRecord for a record that passed isCanonicalValidLine: the same checks in the same order,
 * minus the schema checks it already passed, with the hash taken over the line's own text.
 */
function checkCanonicalRecord(record: JournalRecord, line: string, i: number, expectedPrev: string, report: JournalReport, options: ReadOptions): string | undefined {
  if (report.sealed) return 'record after the seal (invocation.sealed must be the last record)';
  return checkPosition(record, i, expectedPrev, report, options, line);
}

function checkRecord(value: unknown, i: number, expectedPrev: string, report: JournalReport, options: ReadOptions): string | undefined {
  if (report.sealed) return 'record after the seal (invocation.sealed must be the last record)';
  if (!fastShapeOk(value, false)) {
    const shape = recordShapeSchema.safeParse(value);
    if (!shape.success) {
      const issue = shape.error.issues[0]!;
      return `malformed record: ${issue.path.join('.') || 'record'}: ${issue.message}`;
    }
  }
  const record = value as JournalRecord;
  return checkPosition(record, i, expectedPrev, report, options, undefined);
}

/**
 * Everything after the shape check. `canonicalLine`: the record's line, given when it passed
 * isCanonicalValidLine — the body schemas are then already satisfied and the hash is cut from it.
 */
function checkPosition(
  record: JournalRecord,
  i: number,
  expectedPrev: string,
  report: JournalReport,
  options: ReadOptions,
  canonicalLine: string | undefined,
): string | undefined {
  const bodies = canonicalLine === undefined;
  if (record.seq !== i) {
    return `expected seq ${i}, found seq ${record.seq} (a record is missing, duplicated or out of order)`;
  }
  if (!isRecordKind(record.kind)) return `unknown record kind ${JSON.stringify(record.kind)}`;
  if (i === 0) {
    if (record.kind !== 'invocation.pinned') return `the first record must be invocation.pinned, found ${record.kind}`;
    if (bodies) {
      const body = checkBody(record.kind, record.body);
      if (!body.ok) return body.reason;
    }
    const pinned = record.body as JournalRecord<'invocation.pinned'>['body'];
    expectedPrev = genesisHash(pinned.invocation, pinned.pin);
    report.invocation = pinned.invocation;
    report.tenant = pinned.tenant;
    report.pin = pinned.pin;
  } else if (record.kind === 'invocation.pinned') {
    return 'invocation.pinned may only be the first record';
  }
  if (record.prev !== expectedPrev) {
    return i === 0
      ? 'prev is not the genesis hash of this invocation id and pin'
      : `prev does not match the hash of seq ${i - 1} (the chain is broken)`;
  }
  const hashMatches = canonicalLine === undefined ? recordHash(record.prev, record) === record.hash : canonicalLineHashMatches(record, canonicalLine);
  if (!hashMatches) return 'hash mismatch: the record content was altered';
  if (bodies) {
    const body = checkBody(record.kind, record.body);
    if (!body.ok) return body.reason;
  }
  if (record.kind === 'invocation.sealed') return checkSeal(record as JournalRecord<'invocation.sealed'>, report, options);
  return undefined;
}

function checkSeal(record: JournalRecord<'invocation.sealed'>, report: JournalReport, options: ReadOptions): string | undefined {
  const seal = record.body;
  if (seal.fingerprint !== record.prev) return 'seal fingerprint is not the hash of the record before it';
  report.sealed = true;
  report.fingerprint = seal.fingerprint;
  report.keyId = seal.keyId;
  const key = options.publicKey;
  if (!key) return undefined;
  if (keyIdOf(key.publicKey) !== key.keyId) return 'the public key file is inconsistent (its keyId is not the digest of its key)';
  if (seal.keyId !== key.keyId) return `sealed by another key (key id ${seal.keyId.slice(0, 16)}…, expected ${key.keyId.slice(0, 16)}…)`;
  if (!verifySeal(key, seal.fingerprint, seal.signature)) return 'bad signature: the seal was not made by this key over this fingerprint';
  return undefined;
}

function fail(seq: number, problem: string): JournalIntegrityError {
  return new JournalIntegrityError(seq, problem);
}

function finish(report: JournalReport, error: JournalIntegrityError): JournalReport {
  return { ...report, ok: false, error };
}
