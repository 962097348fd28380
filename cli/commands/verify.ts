/**
 * `weft verify <journal.jsonl> [--public-key FILE] [--json]` — check a journal file offline.
 *
 * Streams the file's bytes through the byte verifier (journal/verify-bytes.ts), in bounded memory:
 * every record's encoding, shape, position, chain link, hash and body schema, and the seal — the
 * verdict the journal reader gives, without keeping the records. A line that is not valid UTF-8 is
 * refused (decoding it would hide what the bytes are). With --public-key the journal must be sealed by that key
 * (an unsealed journal fails: truncated or still running); without it the chain is checked and
 * the seal's key id is reported, its signature unchecked.
 *
 * Output: on success the fingerprint; on failure `seq N: <what is wrong>` for the FIRST bad
 * record. `--json` prints one object `{ ok, fingerprint, sealed, records, invocation, keyId?,
 * error? }` instead. Exit codes: 0 intact, 1 not intact, 2 usage error or unreadable file.
 */
import { createReadStream, promises as fs } from 'node:fs';
import { JournalIntegrityError } from '../../journal/errors.js';
import type { JournalReport, JournalVerdict } from '../../journal/reader.js';
import { JournalByteVerifier, readJournalBytes } from '../../journal/verify-bytes.js';
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

function unreadable(file: string, err: unknown): Error {
  return new Error(`cannot read journal ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
}

/** Read a journal file's bytes; throws a one-line Error the command prints with exit code 2. */
export async function readJournalFile(file: string): Promise<Uint8Array> {
  try {
    return await fs.readFile(file);
  } catch (err) {
    throw unreadable(file, err);
  }
}

/** A journal file's report, keeping its records (`weft log`, `weft replay`). An empty file is not a journal: it has no invocation.pinned record. */
export function readJournal(bytes: Uint8Array, publicKey: PublicKey | undefined): JournalReport {
  const report = readJournalBytes(bytes, publicKey ? { publicKey } : {});
  if (report.ok && report.records.length === 0) {
    return { ...report, ok: false, error: emptyJournalError() };
  }
  return report;
}

/** A journal file's verdict without its records: its bytes streamed through the byte verifier, a megabyte at a time. */
export async function verifyJournalFile(file: string, publicKey: PublicKey | undefined): Promise<JournalVerdict> {
  const verifier = new JournalByteVerifier(publicKey ? { publicKey } : {});
  try {
    for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) verifier.push(chunk as Buffer);
  } catch (err) {
    throw unreadable(file, err);
  }
  const verdict = verifier.end();
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
  let report: JournalVerdict;
  try {
    publicKey = keyFile === undefined ? undefined : await loadPublicKey(keyFile);
    report = await verifyJournalFile(file, publicKey);
  } catch (err) {
    process.stderr.write(`weft verify: ${err instanceof KeyFileError ? err.message : (err as Error).message}\n`);
    return 2;
  }

  if (json) process.stdout.write(JSON.stringify(reportJson(report, publicKey !== undefined)) + '\n');
  else process.stdout.write(statusLines(report, publicKey !== undefined).join('\n') + '\n');
  return report.ok ? 0 : 1;
}
