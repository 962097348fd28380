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
 * `readJournalText` returns the records (replay, log); `verifyJournalText` gives the same verdict
 * in one streaming pass that keeps no record (`weft verify`; verify-parallel.ts runs the same
 * per-line walk on worker threads and links the chunks). All three share `checkRecordAt`.
 *
 * Pure: takes text or parsed values, never touches the file system.
 */
import { genesisHash, hashedPrefixMatches, recordHash } from './chain.js';
import { isDigest } from './digest.js';
import { JournalIntegrityError } from './errors.js';
import { checkBody, isRecordKind, recordShapeSchema, type JournalRecord, type Pin } from './records.js';
import { keyIdOf, verifySeal, type PublicKey } from './seal.js';

type SealBody = JournalRecord<'invocation.sealed'>['body'];
import { fastBodyOk, fastShapeOk } from './validate-fast.js';

export interface ReadOptions {
  /** Require a seal by this key. Without it the chain is still checked, and `sealed` says whether it is sealed. */
  publicKey?: PublicKey;
}

/** What the chain walk keeps besides the previous hash: a JournalReport's verdict fields. */
export interface ChainState {
  invocation?: string;
  tenant?: string;
  pin?: Pin;
  sealed: boolean;
  /** The hash of the last record before the seal (sealed), or of the last record (unsealed). */
  fingerprint?: string;
  /** The key id recorded in the seal. */
  keyId?: string;
}

export interface JournalReport extends ChainState {
  ok: boolean;
  /** The records that passed, in order (all of them when ok). */
  records: JournalRecord[];
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
  return finish(report, fail(lines.length, tornProblem(torn)));
}

function tornProblem(torn: string): string {
  return `torn final record (${new TextEncoder().encode(torn).length} bytes without a newline: the writer crashed mid-append)`;
}

// ---- verification without the records -----------------------------------------------------------

/** readJournalText's verdict without the records: `count` is how many passed (records.length). */
export interface JournalVerdict extends ChainState {
  ok: boolean;
  count: number;
  error?: JournalIntegrityError;
}

/** The first problem of a keyless walk; `parse`: the line is not JSON. */
export interface WalkProblem {
  seq: number;
  problem: string;
  parse: boolean;
}

/** A seal that passed its keyless checks: what the key check needs. */
export interface SealInfo extends SealBody {
  seq: number;
}

/** What `walkLines` found over its range of lines. */
export interface LineWalk {
  /** Lines that passed. */
  passed: number;
  problem?: WalkProblem;
  /** Text offset just after the last line looked at (the problem's line included). */
  end: number;
  /** The head's prev as met at its link check (a head after seq 0 only; undefined: it failed before). */
  headPrev?: string;
  /** The hash of the last record that passed. */
  lastHash?: string;
  seal?: SealInfo;
}

/**
 * The keyless chain walk over the newline-terminated lines of `text` in [from, to) (`to` just after
 * a newline), the first being seq `firstSeq`; it stops at the first problem and retains no record.
 * A head after seq 0 is checked without a previous hash (its prev is returned as `headPrev`).
 */
export function walkLines(text: string, from: number, to: number, firstSeq: number, state: ChainState): LineWalk {
  let expectedPrev: string | undefined = firstSeq === 0 ? '' : undefined;
  let pos = from;
  let i = firstSeq;
  const walk: LineWalk = { passed: 0, end: from };
  while (pos < to) {
    let nl = text.indexOf('\n', pos);
    if (nl < 0 || nl >= to) nl = to;
    const line = text.slice(pos, nl);
    pos = nl + 1;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      walk.problem = { seq: i, problem: `not valid JSON (${(err as Error).message})`, parse: true };
      break;
    }
    const problem = checkRecordAt(value, line, i, expectedPrev, state);
    if (i === firstSeq && firstSeq > 0) walk.headPrev = linkedPrev;
    if (problem !== undefined) {
      walk.problem = { seq: i, problem, parse: false };
      break;
    }
    const record = value as JournalRecord;
    if (record.kind === 'invocation.sealed') walk.seal = { ...(record.body as SealBody), seq: i };
    expectedPrev = walk.lastHash = record.hash;
    i++;
  }
  walk.passed = i - firstSeq;
  walk.end = Math.min(pos, to);
  return walk;
}

/** True when every newline-terminated line of `text` in [from, to) is JSON. */
export function linesParse(text: string, from: number, to: number): boolean {
  let pos = from;
  while (pos < to) {
    let nl = text.indexOf('\n', pos);
    if (nl < 0 || nl >= to) nl = to;
    try {
      JSON.parse(text.slice(pos, nl));
    } catch {
      return false;
    }
    pos = nl + 1;
  }
  return true;
}

/** A whole journal's keyless walk, however it was done (one pass, or chunks linked together). */
export interface JournalWalk {
  /** Lines that passed (all of them when no problem). */
  passed: number;
  problem?: WalkProblem;
  lastHash?: string;
  seal?: SealInfo;
  /** The torn final line, if any. */
  torn?: string;
  /** Whether every line after the problem's parses (asked only when a seal's key check would decide). */
  restParses: () => boolean;
}

/**
 * The verdict readJournalText gives, from a keyless walk. readJournalText checks the key only when
 * every line is JSON and none is torn, so a seal that fails its key check decides only then (and
 * comes first: the only problem that can follow a seal is the record after it).
 */
export function settleVerdict(walk: JournalWalk, state: ChainState, options: ReadOptions): JournalVerdict {
  const verdict: JournalVerdict = { ok: true, count: 0, ...state };
  const key = options.publicKey;
  const keyProblem = key && walk.seal && walk.torn === undefined ? sealKeyProblem({ body: walk.seal }, key) : undefined;
  if (keyProblem !== undefined && (walk.problem === undefined || (!walk.problem.parse && walk.restParses()))) {
    return failVerdict(verdict, walk.seal!.seq, keyProblem);
  }
  const problem = walk.problem;
  if (problem !== undefined) {
    // A line that is not JSON: readJournalText verified the lines before it, to their end.
    if (problem.parse && !verdict.sealed) verdict.fingerprint = walk.lastHash;
    return failVerdict(verdict, problem.seq, problem.problem);
  }
  if (!verdict.sealed) verdict.fingerprint = walk.lastHash;
  verdict.count = walk.passed;
  if (walk.torn !== undefined) return failVerdict(verdict, walk.passed, tornProblem(walk.torn));
  if (key && !verdict.sealed) return failVerdict(verdict, walk.passed, 'not sealed: truncated or still running');
  return verdict;
}

function failVerdict(verdict: JournalVerdict, seq: number, problem: string): JournalVerdict {
  verdict.ok = false;
  verdict.count = seq; // positions are authoritative: the records before it passed
  verdict.error = fail(seq, problem);
  return verdict;
}

/** The newline-terminated part of `text` ends here; after it, a torn final line (if any). */
export function journalBodyEnd(text: string): number {
  return text.lastIndexOf('\n') + 1;
}

/**
 * readJournalText's verdict — ok, the first bad seq and its message, fingerprint, sealed, key id,
 * invocation, tenant, pin — without keeping the records: one streaming pass that holds only what
 * the chain needs (the previous hash, the pinned fields, the seal). `count` is records.length.
 * What `weft verify` runs; readJournalText is for callers that need the records.
 */
export function verifyJournalText(text: string, options: ReadOptions = {}): JournalVerdict {
  const bodyEnd = journalBodyEnd(text);
  const state: ChainState = { sealed: false };
  const walk = walkLines(text, 0, bodyEnd, 0, state);
  return settleVerdict(
    {
      passed: walk.passed,
      problem: walk.problem,
      lastHash: walk.lastHash,
      seal: walk.seal,
      torn: bodyEnd < text.length ? text.slice(bodyEnd) : undefined,
      restParses: () => linesParse(text, walk.end, bodyEnd),
    },
    state,
    options,
  );
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
    let problem = checkRecordAt(values[i], lines?.[i], i, expectedPrev, report);
    const record = values[i] as JournalRecord;
    if (!problem && options.publicKey && record.kind === 'invocation.sealed') problem = sealKeyProblem(record as JournalRecord<'invocation.sealed'>, options.publicKey);
    if (problem) return finish(report, fail(i, problem));
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
 * The prev the last `checkRecordAt` compared at its link check, or undefined when the record
 * failed before it. A chunk's head is checked without a previous hash (`expectedPrev` undefined):
 * the caller then links it with this, in the check's own order (verify-parallel.ts).
 */
let linkedPrev: string | undefined;

/** See `linkedPrev`. */
export function lastLinkedPrev(): string | undefined {
  return linkedPrev;
}

/**
 * Every keyless check of record `i` — the one per-record step of the reader, the streaming
 * verifier and the parallel workers. `line`, when given, is the text `value` was parsed from (the
 * fast path). `expectedPrev` is the previous record's hash ('' at seq 0); undefined accepts any
 * prev (a chunk head). Updates `state` (pinned fields at seq 0, the seal's). The key-dependent
 * seal checks are `sealKeyProblem`'s. Returns the problem, or undefined when the record is good.
 */
export function checkRecordAt(value: unknown, line: string | undefined, i: number, expectedPrev: string | undefined, state: ChainState): string | undefined {
  linkedPrev = undefined;
  try {
    const prefixEnd = line === undefined ? -1 : canonicalPrefixEnd(value, line);
    if (prefixEnd < 0) return checkRecord(value, i, expectedPrev, state);
    const record = value as JournalRecord;
    let problem: string | undefined;
    try {
      problem = checkCanonicalRecord(record, line!, prefixEnd, i, expectedPrev, state);
    } catch (err) {
      problem = `record cannot be checked: ${(err as Error).message}`;
    }
    // The admission test took prev and hash on their length: a pass proves them digests (the hash
    // check decoded prev as lowercase hex and matched hash with a hex digest). A problem with one
    // that is not a digest gets the slow path's verdict (its shape check speaks first), from the
    // state the record found.
    if (problem === undefined || (isDigest(record.prev) && isDigest(record.hash))) return problem;
    linkedPrev = undefined;
    if (i === 0) {
      delete state.invocation;
      delete state.tenant;
      delete state.pin;
    }
    return checkRecord(value, i, expectedPrev, state);
  } catch (err) {
    // Parsed JSON can hold what no writer produces (a lone surrogate escape that canonical JSON
    // refuses, absurd nesting): report it at its seq instead of throwing.
    return `record cannot be checked: ${(err as Error).message}`;
  }
}
/**
 * The fast path's admission test. Returns the length of the line's prefix that is exactly the
 * start of the record's hashed text — `{"body":B,"epoch":E` with B and E canonical — when the record
 * passes the shape and body schemas; -1 (the complete slow path, with its exact verdict and
 * message) on any doubt. Then nothing the slow path checks can depend on re-canonicalizing the
 * record, and the hash is taken over that prefix of the line followed by `,"kind":"K","seq":S}`.
 *
 * Canonical: for a body the fast validators accept in sorted mode (every object's keys strictly
 * increasing, finite numbers, JSON values only), canonicalize(body) is JSON.stringify(body) —
 * numbers in ECMAScript shortest form (RFC 8785's; -0 prints as 0 in both), strings escaped alike —
 * except for a lone surrogate, which canonical JSON refuses and JSON.stringify writes as a `\ud…`
 * escape: such a body text goes to the slow path. An epoch that passed is a safe integer (its
 * String is canonical). The line must then START with exactly `{"body":` + that text + `,"epoch":`
 * + E + `,` — the rest of the line (hash, kind, meta, prev, seq) is not hashed, and the slow path
 * never reads the line's text, only the parsed values, so its spelling cannot change a verdict.
 * (prev and hash are only checked to be 64-character strings here; checkRecordAt proves them
 * digests by the hash check, or defers to the slow path.)
 */
function canonicalPrefixEnd(value: unknown, line: string): number {
  if (!fastShapeOk(value, true, false)) return -1;
  const record = value as JournalRecord;
  if (!isRecordKind(record.kind) || !fastBodyOk(record.kind, record.body, true, true)) return -1;
  const bodyText = JSON.stringify(record.body);
  if (bodyText.indexOf('\\ud') >= 0 || !line.startsWith('{"body":') || !line.startsWith(bodyText, 8)) return -1;
  const epochAt = 8 + bodyText.length;
  if (!line.startsWith(',"epoch":', epochAt)) return -1;
  const epochText = String(record.epoch);
  if (!line.startsWith(epochText, epochAt + 9)) return -1;
  const end = epochAt + 9 + epochText.length;
  return line.charCodeAt(end) === 44 /* , */ ? end : -1;
}

/**
 * checkRecord for a record that passed canonicalPrefixEnd: the same checks in the same order,
 * minus the schema checks it already passed, with the hash taken over the line's own text.
 */
function checkCanonicalRecord(record: JournalRecord, line: string, prefixEnd: number, i: number, expectedPrev: string | undefined, state: ChainState): string | undefined {
  if (state.sealed) return 'record after the seal (invocation.sealed must be the last record)';
  return checkPosition(record, i, expectedPrev, state, line, prefixEnd);
}

function checkRecord(value: unknown, i: number, expectedPrev: string | undefined, state: ChainState): string | undefined {
  if (state.sealed) return 'record after the seal (invocation.sealed must be the last record)';
  if (!fastShapeOk(value, false)) {
    const shape = recordShapeSchema.safeParse(value);
    if (!shape.success) {
      const issue = shape.error.issues[0]!;
      return `malformed record: ${issue.path.join('.') || 'record'}: ${issue.message}`;
    }
  }
  const record = value as JournalRecord;
  return checkPosition(record, i, expectedPrev, state, undefined, -1);
}

/**
 * Everything after the shape check. `canonicalLine`: the record's line, given when it passed
 * canonicalPrefixEnd (= `prefixEnd`) — the body schemas are then already satisfied and the hash is
 * taken over the line's first `prefixEnd` characters and the kind and seq.
 */
function checkPosition(
  record: JournalRecord,
  i: number,
  expectedPrev: string | undefined,
  state: ChainState,
  canonicalLine: string | undefined,
  prefixEnd: number,
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
    state.invocation = pinned.invocation;
    state.tenant = pinned.tenant;
    state.pin = pinned.pin;
  } else if (record.kind === 'invocation.pinned') {
    return 'invocation.pinned may only be the first record';
  }
  linkedPrev = record.prev;
  if (expectedPrev !== undefined && record.prev !== expectedPrev) {
    return i === 0
      ? 'prev is not the genesis hash of this invocation id and pin'
      : `prev does not match the hash of seq ${i - 1} (the chain is broken)`;
  }
  const hashMatches = canonicalLine === undefined ? recordHash(record.prev, record) === record.hash : hashedPrefixMatches(record, canonicalLine, prefixEnd);
  if (!hashMatches) return 'hash mismatch: the record content was altered';
  if (bodies) {
    const body = checkBody(record.kind, record.body);
    if (!body.ok) return body.reason;
  }
  if (record.kind === 'invocation.sealed') return checkSeal(record as JournalRecord<'invocation.sealed'>, state);
  return undefined;
}

/** The seal's keyless checks; a good seal marks the state sealed. */
function checkSeal(record: JournalRecord<'invocation.sealed'>, state: ChainState): string | undefined {
  const seal = record.body;
  if (seal.fingerprint !== record.prev) return 'seal fingerprint is not the hash of the record before it';
  state.sealed = true;
  state.fingerprint = seal.fingerprint;
  state.keyId = seal.keyId;
  return undefined;
}

/** The seal's checks against a public key, for a seal that passed `checkRecordAt`. */
export function sealKeyProblem(record: { body: SealBody }, key: PublicKey): string | undefined {
  const seal = record.body;
  try {
    if (keyIdOf(key.publicKey) !== key.keyId) return 'the public key file is inconsistent (its keyId is not the digest of its key)';
    if (seal.keyId !== key.keyId) return `sealed by another key (key id ${seal.keyId.slice(0, 16)}…, expected ${key.keyId.slice(0, 16)}…)`;
    if (!verifySeal(key, seal.fingerprint, seal.signature)) return 'bad signature: the seal was not made by this key over this fingerprint';
    return undefined;
  } catch (err) {
    return `record cannot be checked: ${(err as Error).message}`;
  }
}

function fail(seq: number, problem: string): JournalIntegrityError {
  return new JournalIntegrityError(seq, problem);
}

function finish(report: JournalReport, error: JournalIntegrityError): JournalReport {
  return { ...report, ok: false, error };
}
