/**
 * `weft verify <journal.jsonl> [--public-key FILE] [--json]` — check a journal file offline.
 *
 * Runs the journal reader's verify-only path (journal/reader.ts `verifyJournalText`, on worker
 * threads for large files: journal/verify-parallel.ts): every record's JSON, shape, position,
 * chain link, hash and body schema, and the seal — the verdict readJournalText gives, without
 * keeping the records. With --public-key the journal must be sealed by that key
 * (an unsealed journal fails: truncated or still running); without it the chain is checked and
 * the seal's key id is reported, its signature unchecked.
 *
 * Output: on success the fingerprint; on failure `seq N: <what is wrong>` for the FIRST bad
 * record. `--json` prints one object `{ ok, fingerprint, sealed, records, invocation, keyId?,
 * error? }` instead. Exit codes: 0 intact, 1 not intact, 2 usage error or unreadable file.
 */
import { promises as fs } from 'node:fs';
import { JournalIntegrityError } from '../../journal/errors.js';
import { readJournalText, type JournalReport, type JournalVerdict } from '../../journal/reader.js';
import { verifyJournalTextParallel } from '../../journal/verify-parallel.js';
import type { PublicKey } from '../../journal/seal.js';
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { KeyFileError, loadPublicKey } from '../keys.js';

export const usage = 'verify <journal.jsonl> [--public-key FILE] [--json]\n                                       check a journal offline (chain, schemas, seal)';

export interface VerifyJson {
  ok: boolean;
  fingerprint: string | null;
  sealed: boolean;
  records: number;
  invocation: string | null;
  keyId: string | null;
  signatureChecked: boolean;
  error?: { seq: number; problem: string; message: string };
}

/** Read a journal file as text; throws a one-line Error the command prints with exit code 2. */
export async function readJournalFile(file: string): Promise<string> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read journal ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/** Verify journal text, keeping its records (`weft log`). An empty text is not a journal: it has no invocation.pinned record. */
export function verifyText(text: string, publicKey: PublicKey | undefined): JournalReport {
  const report = readJournalText(text, publicKey ? { publicKey } : {});
  if (report.ok && report.records.length === 0) {
    return { ...report, ok: false, error: emptyJournalError() };
  }
  return report;
}

/** `verifyText`'s verdict without the records (streaming; worker threads for large texts). */
export async function verifyVerdict(text: string, publicKey: PublicKey | undefined): Promise<JournalVerdict> {
  const verdict = await verifyJournalTextParallel(text, publicKey ? { publicKey } : {});
  if (verdict.ok && verdict.count === 0) {
    return { ...verdict, ok: false, error: emptyJournalError() };
  }
  return verdict;
}

/** How many records passed: a report's records, or a verdict's count. */
function passedCount(report: JournalReport | JournalVerdict): number {
  return 'records' in report ? report.records.length : report.count;
}

function emptyJournalError(): JournalIntegrityError {
  return new JournalIntegrityError(0, 'empty journal (no records; the first record must be invocation.pinned)');
}

export function reportJson(report: JournalReport | JournalVerdict, keyChecked: boolean): VerifyJson {
  const out: VerifyJson = {
    ok: report.ok,
    fingerprint: report.fingerprint ?? null,
    sealed: report.sealed,
    records: passedCount(report),
    invocation: report.invocation ?? null,
    keyId: report.keyId ?? null,
    signatureChecked: keyChecked && report.ok,
  };
  if (report.error) out.error = { seq: report.error.seq, problem: report.error.problem, message: report.error.message };
  return out;
}

/** The human summary of a report, one or two lines, shared with `weft log`. */
export function statusLines(report: JournalReport | JournalVerdict, keyChecked: boolean): string[] {
  const n = passedCount(report);
  const plural = (k: number) => `${k} record${k === 1 ? '' : 's'}`;
  if (!report.ok) {
    const lines = [report.error!.message];
    lines.push(n > 0 ? `chain broken at seq ${report.error!.seq}: the ${plural(n)} before it are intact` : `chain broken at seq ${report.error!.seq}`);
    return lines;
  }
  const fingerprint = `fingerprint ${report.fingerprint}`;
  if (keyChecked) return [`verified: ${plural(n)}, invocation ${report.invocation}, sealed by key ${report.keyId} (signature valid)`, fingerprint];
  if (report.sealed) {
    return [`chain intact: ${plural(n)}, sealed by key ${report.keyId} (signature not checked: pass --public-key)`, fingerprint];
  }
  return [`chain intact: ${plural(n)}, NOT sealed: truncated or still running`, `tail ${report.fingerprint}`];
}

export async function run(argv: string[]): Promise<number> {
  let file: string;
  let keyFile: string | undefined;
  let json: boolean;
  try {
    const args = parseCommandArgs(
      argv,
      { 'public-key': { type: 'string', short: 'k' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      { min: 0, max: 1 },
    );
    if (args.flags.help) {
      process.stdout.write(`usage: weft ${usage}\n`);
      return 0;
    }
    if (args.positionals.length === 0) throw new UsageError('missing the journal file');
    file = args.positionals[0]!;
    keyFile = args.strings['public-key'];
    json = args.flags.json === true;
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('verify', usage, err);
    throw err;
  }

  let publicKey: PublicKey | undefined;
  let text: string;
  try {
    publicKey = keyFile === undefined ? undefined : await loadPublicKey(keyFile);
    text = await readJournalFile(file);
  } catch (err) {
    process.stderr.write(`weft verify: ${err instanceof KeyFileError ? err.message : (err as Error).message}\n`);
    return 2;
  }

  const report = await verifyVerdict(text, publicKey);
  if (json) process.stdout.write(JSON.stringify(reportJson(report, publicKey !== undefined)) + '\n');
  else process.stdout.write(statusLines(report, publicKey !== undefined).join('\n') + '\n');
  return report.ok ? 0 : 1;
}
