/**
 * `weft verify <journal.jsonl | bundle | id> [--public-key FILE | --no-signature] [--dir D | --redis URL] [--json]`
 * — check a journal file, a bundle written by `weft export`, or an invocation's journal in a store
 * by its id (the workspace, or Redis: cli/journal-source.ts), offline.
 *
 * A journal file's bytes are streamed through the byte verifier (journal/verify-bytes.ts), in
 * bounded memory: every record's encoding, shape, position, chain link, hash and body schema, and
 * the seal — the verdict the journal reader gives, without keeping the records. A line that is not
 * valid UTF-8 is refused (decoding it would hide what the bytes are). A bundle (journal/bundle.ts)
 * is parsed and checked (its libraries' digests, its key's id), then its journal text is verified
 * the same way, against the bundle's own key unless --public-key names another; its journal must
 * be the bundle's invocation's and pin a library the bundle carries.
 *
 * The seal is checked against a key: --public-key FILE, or the key a bundle carries. With a key the
 * journal must be sealed by it. Without one the chain is checked but the seal's signature is not,
 * and the exit code says so (4) unless --no-signature asks for the chain alone.
 *
 * Exit codes:
 *   0  verified: the chain is intact and the seal's signature is valid for the key (or, with
 *      --no-signature, the chain is intact, sealed or not)
 *   1  not intact: a bad record, a broken chain, a torn tail, an empty journal, an inconsistent
 *      bundle; with a key, also a journal that is not sealed
 *   2  usage error, or a file (journal, bundle, key) that cannot be read or is not a valid key
 *   3  the seal does not match the key (sealed by another key, or a bad signature) — the chain
 *      itself is intact
 *   4  the chain is intact but the seal's signature was NOT checked: no key was given (pass
 *      --public-key FILE, or --no-signature to check only the chain)
 *
 * Output: on success the fingerprint; on failure `seq N: <what is wrong>` for the FIRST bad
 * record. `--json` prints one object instead (VerifyJson), whose `ok` is `exitCode === 0`.
 */
import { createReadStream, promises as fs } from 'node:fs';
import { chainCount, checkBytes, nonEmpty, passedCount, plural, statusLines, type BytesChecked, type SignatureCheck, type VerifyContext } from '../../journal/bundle-check.js';
import type { JournalReport, JournalVerdict } from '../../journal/reader.js';
import { JournalByteVerifier } from '../../journal/verify-bytes.js';
import type { PublicKey } from '../../journal/seal.js';
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { KeyFileError, loadPublicKey } from '../../runtime/keys.js';
import { journalSource, readJournalFile, unreadableJournal } from '../journal-source.js';
import { tenantOption } from '../tenant-scope.js';
import { printFailureLine, printJsonLine } from '../json-line.js';
import { storeOptions, storeUsage } from '../store-choice.js';
import { EXIT as CODES, REFUSED, refusalCode } from '../exit-codes.js';

export const usage =
  `verify <journal.jsonl | bundle | id> [--public-key FILE | --no-signature] [--dir D] [--tenant T] ${storeUsage} [--json]\n` +
  '                                       check a journal, an exported bundle, or an invocation in the workspace (--dir) or\n' +
  '                                       in Redis (--redis URL) by id (chain, schemas, seal);\n' +
  '                                       exit 0 verified, 1 not intact, 2 usage, 3 seal not by the key, 4 seal not checked';

/** The exit codes (see the header): verify's names for the rows of the one table (cli/exit-codes.ts). */
export const EXIT = { verified: CODES.done, notIntact: CODES.failed, usage: CODES.usage, sealMismatch: CODES.sealMismatch, unchecked: CODES.sealUnchecked } as const;

/** How the seal was checked, and what a verdict is judged with besides itself (journal/bundle-check.ts). */
export type { SignatureCheck, VerifyContext };

export interface VerifyJson {
  /** exitCode === 0. */
  ok: boolean;
  exitCode: number;
  input: 'journal' | 'bundle';
  /** Every record passed its keyless checks (true on a seal mismatch, exit 3). */
  chainIntact: boolean;
  fingerprint: string | null;
  sealed: boolean;
  /** Records that passed the chain checks (all of them, the seal included, on a seal mismatch). */
  records: number;
  invocation: string | null;
  /** The key id recorded in the seal. */
  keyId: string | null;
  /** The seal's signature was checked against a key and is valid. */
  signatureChecked: boolean;
  /** The seal was not made by the key (another key, or a bad signature): exit 3. */
  sealMismatch: boolean;
  /** Where the key came from: --public-key, the bundle, or none. */
  keySource: 'file' | 'bundle' | null;
  error?: { seq: number; problem: string; message: string };
  bundleError?: string;
}

/** A journal file's verdict without its records: its bytes streamed through the byte verifier, a megabyte at a time. */
export async function verifyJournalFile(file: string, publicKey: PublicKey | undefined): Promise<JournalVerdict> {
  const verifier = new JournalByteVerifier(publicKey ? { publicKey } : {});
  try {
    for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) verifier.push(chunk as Buffer);
  } catch (err) {
    throw unreadableJournal(file, err);
  }
  return nonEmpty(verifier.end());
}

/** The exit code of a verdict (see the header). */
export function verifyExitCode(report: JournalReport | JournalVerdict, context: VerifyContext): number {
  if (context.bundleProblem !== undefined) return EXIT.notIntact;
  if (!report.ok) return report.sealMismatch ? EXIT.sealMismatch : EXIT.notIntact;
  if (context.signature.by !== 'none' || context.signature.skipped) return EXIT.verified;
  return EXIT.unchecked;
}

export function reportJson(report: JournalReport | JournalVerdict, context: VerifyContext): VerifyJson {
  const exitCode = verifyExitCode(report, context);
  const out: VerifyJson = {
    ok: exitCode === EXIT.verified,
    exitCode,
    input: context.input,
    chainIntact: report.ok || report.sealMismatch === true,
    fingerprint: report.fingerprint ?? null,
    sealed: report.sealed,
    records: chainCount(report),
    invocation: report.invocation ?? null,
    keyId: report.keyId ?? null,
    signatureChecked: context.signature.by !== 'none' && report.ok,
    sealMismatch: report.sealMismatch === true,
    keySource: context.signature.by === 'none' ? null : context.signature.by,
  };
  if (report.error) out.error = { seq: report.error.seq, problem: report.error.problem, message: report.error.message };
  if (context.bundleProblem !== undefined) out.bundleError = context.bundleProblem;
  return out;
}

/** The JSON of a bundle that could not be parsed (nothing was verified). */
function invalidBundleJson(problem: string, keyFile: boolean): VerifyJson {
  return {
    ok: false, exitCode: EXIT.notIntact, input: 'bundle', chainIntact: false, fingerprint: null, sealed: false, records: 0, invocation: null,
    keyId: null, signatureChecked: false, sealMismatch: false, keySource: keyFile ? 'file' : null, bundleError: problem,
  };
}

const id16 = (keyId: string | undefined) => `${(keyId ?? '?').slice(0, 16)}…`;

/** What `weft verify` prints: the status lines, with what the seal check found and what to do next. */
export function verifyLines(report: JournalReport | JournalVerdict, context: VerifyContext): string[] {
  const signature = context.signature;
  if (context.bundleProblem !== undefined) {
    const lines = [`bundle inconsistent: ${context.bundleProblem}`];
    return report.ok || report.sealMismatch ? lines : [...lines, ...statusLines(report, false)];
  }
  if (report.sealMismatch && signature.by !== 'none') {
    const seq = report.error!.seq;
    const trusted = signature.by === 'file' ? `the key in ${signature.file}` : 'the key carried in the bundle';
    const what =
      report.keyId !== signature.key.keyId
        ? `the seal at seq ${seq} was made by key ${id16(report.keyId)}, not by ${trusted} (${id16(signature.key.keyId)})` +
          (report.rekeyedTo !== undefined && report.rekeyedTo === report.keyId ? `; the journal was re-keyed to key ${id16(report.keyId)} (invocation.rekeyed): verify with that key` : '')
        : `the seal at seq ${seq} names ${trusted} (${id16(signature.key.keyId)}) but its signature does not verify: the seal was forged or altered`;
    return [
      `seal mismatch: ${what}`,
      `chain intact: ${plural(chainCount(report))}, invocation ${report.invocation}; NOT verified: the seal does not match the key`,
      `fingerprint ${report.fingerprint}`,
    ];
  }
  if (!report.ok) return statusLines(report, signature.by !== 'none');
  const n = passedCount(report);
  if (signature.by === 'file') return statusLines(report, true);
  if (signature.by === 'bundle') {
    const [verified, fingerprint] = statusLines(report, true);
    return [verified!, `sealed by key ${report.keyId} — the key carried in the bundle; compare it with the key you trust, or pass --public-key`, fingerprint!];
  }
  if (signature.skipped) {
    return report.sealed
      ? [`chain intact: ${plural(n)}, invocation ${report.invocation}, sealed by key ${report.keyId}; signature not checked (--no-signature)`, `fingerprint ${report.fingerprint}`]
      : [`chain intact: ${plural(n)}, invocation ${report.invocation}, NOT sealed: truncated or still running; signature not checked (--no-signature)`, `tail ${report.fingerprint}`];
  }
  const source = context.input === 'bundle' ? 'the bundle carries no key and none was given' : 'no key was given';
  const next = report.sealed
    ? `seal NOT checked: ${source} — pass --public-key FILE to check its signature, or --no-signature to check only the chain`
    : `seal NOT checked: the journal is not sealed and ${source} — pass --public-key FILE to require a seal by that key, or --no-signature to check only the chain`;
  return [...statusLines(report, false), next];
}

/** The first bytes of a file (a journal written by Weft starts `{"body":`). */
async function readHead(file: string, length: number): Promise<Uint8Array> {
  const handle = await fs.open(file, 'r');
  try {
    const buf = new Uint8Array(length);
    const { bytesRead } = await handle.read(buf, 0, length, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

const JOURNAL_START = '{"body":';
const decoder = new TextDecoder();

/**
 * Verify `file`: a journal (streamed when it starts like one; read whole otherwise, to see whether
 * it is a bundle) or a bundle. Throws a one-line Error for an unreadable file (exit 2).
 */
async function check(file: string, keyFile: { file: string; key: PublicKey } | undefined, skipped: boolean): Promise<BytesChecked> {
  let head: Uint8Array;
  try {
    head = await readHead(file, JOURNAL_START.length);
  } catch (err) {
    throw unreadableJournal(file, err);
  }
  const fileSignature: SignatureCheck = keyFile ? { by: 'file', ...keyFile } : { by: 'none', skipped };
  if (decoder.decode(head) === JOURNAL_START) {
    return { report: await verifyJournalFile(file, keyFile?.key), context: { signature: fileSignature, input: 'journal' } };
  }
  return checkBytes(await readJournalFile(file), keyFile, skipped);
}

export async function run(argv: string[]): Promise<number> {
  let target: string;
  let keyFile: string | undefined;
  let skipped: boolean;
  let json: boolean;
  let strings: Record<string, string | undefined>;
  try {
    const args = parseCommandArgs(
      argv,
      {
        'public-key': { type: 'string', short: 'k' },
        'no-signature': { type: 'boolean' },
        json: { type: 'boolean' },
        dir: { type: 'string' },
        ...storeOptions,
        ...tenantOption,
      },
      { min: 0, max: 1 },
    );
    if (args.positionals.length === 0) throw new UsageError('missing the journal file (or the invocation id)');
    target = args.positionals[0]!;
    keyFile = args.strings['public-key'];
    skipped = args.flags['no-signature'] === true;
    json = args.flags.json === true;
    strings = args.strings;
    if (keyFile !== undefined && skipped) throw new UsageError('--public-key checks the seal and --no-signature skips it: pass one of them');
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('verify', usage, err);
    throw err;
  }

  let checked: BytesChecked;
  try {
    const key = keyFile === undefined ? undefined : { file: keyFile, key: await loadPublicKey(keyFile) };
    const source = await journalSource(target, strings);
    checked = 'file' in source ? await check(source.file, key, skipped) : checkBytes(source.bytes, key, skipped);
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('verify', usage, err);
    const message = err instanceof KeyFileError ? err.message : (err as Error).message;
    const refused = refusalCode(err);
    printFailureLine(message, refused === REFUSED.error ? 'unreadable' : refused, EXIT.usage);
    process.stderr.write(`weft verify: ${message}\n`);
    return EXIT.usage;
  }

  if ('invalidBundle' in checked) {
    if (json) printJsonLine(invalidBundleJson(checked.invalidBundle, keyFile !== undefined));
    else process.stdout.write(`${checked.invalidBundle}\n`);
    return EXIT.notIntact;
  }
  const { report, context } = checked;
  if (json) printJsonLine(reportJson(report, context));
  else process.stdout.write(verifyLines(report, context).join('\n') + '\n');
  return verifyExitCode(report, context);
}
