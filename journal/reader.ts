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
 * `readJournalText` returns the records; `verifyJournalText` gives the same verdict in one
 * streaming pass that keeps no record; verify-bytes.ts gives it again straight from a file's bytes
 * (`weft verify`, `weft log`, `weft replay`). All of them share `checkLine` / `checkRecordAt`.
 *
 * Pure: takes text or parsed values, never touches the file system.
 */
import { JournalIntegrityError } from './errors.js';
import { checkRecordAt, sealKeyProblem, type ChainState } from './record-check.js';
import type { JournalRecord } from './records.js';
import type { PublicKey } from './seal.js';

type SealBody = JournalRecord<'invocation.sealed'>['body'];
export { checkRecordAt, sealKeyProblem } from './record-check.js';

export interface ReadOptions {
  /** Require a seal by this key. Without it the chain is still checked, and `sealed` says whether it is sealed. */
  publicKey?: PublicKey;
}

export type { ChainState } from './record-check.js';

export interface JournalReport extends ChainState {
  ok: boolean;
  /** The records that passed, in order (all of them when ok). */
  records: JournalRecord[];
  /** The first problem found. */
  error?: JournalIntegrityError;
  /** See JournalVerdict.sealMismatch. */
  sealMismatch?: true;
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
  return finish(report, fail(lines.length, tornProblem(utf8Length(torn))));
}

function utf8Length(text: string): number {
  return new TextEncoder().encode(text).length;
}

function tornProblem(bytes: number): string {
  return `torn final record (${bytes} bytes without a newline: the writer crashed mid-append)`;
}

// ---- verification without the records -----------------------------------------------------------

/** readJournalText's verdict without the records: `count` is how many passed (records.length). */
export interface JournalVerdict extends ChainState {
  ok: boolean;
  count: number;
  error?: JournalIntegrityError;
  /**
   * Set (with ok false) when the ONLY problem is the seal's key check (`sealKeyProblem`: sealed by
   * another key, or a bad signature): every record, the seal included, passed its keyless checks
   * and nothing follows the seal — the chain is intact, the seal is not the given key's. A seal
   * that fails its key check with another problem after it does not set it (the chain is not
   * intact). `weft verify` exits 3 for it instead of 1.
   */
  sealMismatch?: true;
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

/** What `walkLines` found. */
interface LineWalk {
  /** Lines that passed. */
  passed: number;
  problem?: WalkProblem;
  /** Text offset just after the last line looked at (the problem's line included). */
  end: number;
  /** The hash of the last record that passed. */
  lastHash?: string;
  seal?: SealInfo;
}

/**
 * The keyless chain walk over the newline-terminated lines of `text` before `to` (just after a
 * newline); it stops at the first problem and retains no record.
 */
function walkLines(text: string, to: number, state: ChainState): LineWalk {
  let expectedPrev = '';
  let pos = 0;
  let i = 0;
  const walk: LineWalk = { passed: 0, end: 0 };
  while (pos < to) {
    let nl = text.indexOf('\n', pos);
    if (nl < 0 || nl >= to) nl = to;
    const checked = checkLine(text.slice(pos, nl), i, expectedPrev, state);
    pos = nl + 1;
    if ('problem' in checked) {
      walk.problem = checked.problem;
      break;
    }
    if (checked.seal !== undefined) walk.seal = checked.seal;
    expectedPrev = walk.lastHash = checked.record.hash;
    i++;
  }
  walk.passed = i;
  walk.end = Math.min(pos, to);
  return walk;
}

/**
 * One line's keyless check — its JSON, then every record check (`checkRecordAt`) — the step the
 * chain walk takes per line, and the byte verifier's for every line its fast path doubts. A record
 * that passed is returned with its seal's fields when it is the seal.
 */
export function checkLine(
  line: string,
  i: number,
  expectedPrev: string,
  state: ChainState,
): { problem: WalkProblem } | { record: JournalRecord; seal?: SealInfo } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return { problem: { seq: i, problem: `not valid JSON (${(err as Error).message})`, parse: true } };
  }
  const problem = checkRecordAt(value, line, i, expectedPrev, state);
  if (problem !== undefined) return { problem: { seq: i, problem, parse: false } };
  const record = value as JournalRecord;
  return record.kind === 'invocation.sealed' ? { record, seal: { ...(record.body as SealBody), seq: i } } : { record };
}

/** True when every newline-terminated line of `text` in [from, to) is JSON. */
function linesParse(text: string, from: number, to: number): boolean {
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

/** A whole journal's keyless walk, however it was done (from text, or from bytes). */
export interface JournalWalk {
  /** Lines that passed (all of them when no problem). */
  passed: number;
  problem?: WalkProblem;
  lastHash?: string;
  seal?: SealInfo;
  /** The byte length of the torn final line, if any. */
  tornBytes?: number;
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
  const keyProblem = key && walk.seal && walk.tornBytes === undefined ? sealKeyProblem({ body: walk.seal }, key, state.rekeyedTo) : undefined;
  if (keyProblem !== undefined && (walk.problem === undefined || (!walk.problem.parse && walk.restParses()))) {
    const failed = failVerdict(verdict, walk.seal!.seq, keyProblem);
    if (walk.problem === undefined) failed.sealMismatch = true;
    return failed;
  }
  const problem = walk.problem;
  if (problem !== undefined) {
    // A line that is not JSON: readJournalText verified the lines before it, to their end.
    if (problem.parse && !verdict.sealed) verdict.fingerprint = walk.lastHash;
    return failVerdict(verdict, problem.seq, problem.problem);
  }
  if (!verdict.sealed) verdict.fingerprint = walk.lastHash;
  verdict.count = walk.passed;
  if (walk.tornBytes !== undefined) return failVerdict(verdict, walk.passed, tornProblem(walk.tornBytes));
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
function journalBodyEnd(text: string): number {
  return text.lastIndexOf('\n') + 1;
}

/**
 * readJournalText's verdict — ok, the first bad seq and its message, fingerprint, sealed, key id,
 * invocation, tenant, pin — without keeping the records: one streaming pass that holds only what
 * the chain needs (the previous hash, the pinned fields, the seal). `count` is records.length.
 * The reference the byte verifier (verify-bytes.ts, what `weft verify` runs) is tested against;
 * readJournalText is for callers that need the records.
 */
export function verifyJournalText(text: string, options: ReadOptions = {}): JournalVerdict {
  const bodyEnd = journalBodyEnd(text);
  const state: ChainState = { sealed: false };
  const walk = walkLines(text, bodyEnd, state);
  return settleVerdict(
    {
      passed: walk.passed,
      problem: walk.problem,
      lastHash: walk.lastHash,
      seal: walk.seal,
      tornBytes: bodyEnd < text.length ? utf8Length(text.slice(bodyEnd)) : undefined,
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
    if (!problem && options.publicKey && record.kind === 'invocation.sealed') {
      problem = sealKeyProblem(record as JournalRecord<'invocation.sealed'>, options.publicKey, report.rekeyedTo);
      // The seal is last when nothing follows it: then its key check is the journal's only problem.
      if (problem && i === values.length - 1) return { ...finish(report, fail(i, problem)), sealMismatch: true };
    }
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

function fail(seq: number, problem: string): JournalIntegrityError {
  return new JournalIntegrityError(seq, problem);
}

function finish(report: JournalReport, error: JournalIntegrityError): JournalReport {
  return { ...report, ok: false, error };
}
