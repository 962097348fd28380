/**
 * A journal or a bundle held in memory, checked: the verdict `weft verify` gives bytes it holds
 * whole (a bundle, a stored journal, a file that does not start like a journal), and the pieces of
 * it `weft log` shares (a journal's report with its records, the human summary of a verdict).
 *
 * - A journal is verified by the byte verifier (./verify-bytes.ts); an empty one is not intact (it
 *   has no invocation.pinned record).
 * - A bundle (./bundle.ts) is parsed (a malformed one, or one that is not valid UTF-8, is
 *   `invalidBundle`: nothing was verified), its journal verified against the key given, else the key
 *   the bundle carries (unless the seal check is skipped), then checked for consistency
 *   (`bundleProblem`): the journal is the bundle's invocation's, pins a library the bundle carries,
 *   and — once its chain has passed — a fork's lineage verifies (./bundle-lineage.ts).
 *
 * Pure: bytes and a key in, a verdict and its context out; reading files is the caller's
 * (cli/journal-source.ts), and so is what the verdict's exit code and printed lines are
 * (cli/commands/verify.ts).
 */
import { BundleError, looksLikeBundle, parseBundle, type Bundle } from './bundle.js';
import { bundleLineage } from './bundle-lineage.js';
import { JournalIntegrityError } from './errors.js';
import type { JournalReport, JournalVerdict } from './reader.js';
import type { JournalRecord } from './records.js';
import type { PublicKey } from './seal.js';
import { readJournalBytes, verifyJournalBytes } from './verify-bytes.js';

/** How the seal was checked: against a key file, against the key a bundle carries, or not at all (`skipped`: --no-signature). */
export type SignatureCheck = { by: 'file'; file: string; key: PublicKey } | { by: 'bundle'; key: PublicKey } | { by: 'none'; skipped: boolean };

/** What a verdict is judged with besides itself. */
export interface VerifyContext {
  signature: SignatureCheck;
  input: 'journal' | 'bundle';
  /** A bundle whose journal is intact but not the bundle's (another invocation, a library it does not carry). */
  bundleProblem?: string;
}

/** What bytes checked in memory come to: a verdict and what it is judged with, or a bundle that could not be parsed. */
export type BytesChecked = { report: JournalVerdict; context: VerifyContext } | { invalidBundle: string };

/** A journal's report, keeping its records (`weft log`, `weft replay`). An empty journal is not a journal: it has no invocation.pinned record. */
export function readJournal(bytes: Uint8Array, publicKey: PublicKey | undefined): JournalReport {
  const report = readJournalBytes(bytes, publicKey ? { publicKey } : {});
  if (report.ok && report.records.length === 0) {
    return { ...report, ok: false, error: emptyJournalError() };
  }
  return report;
}

/** The verdict of a journal held in memory (a bundle's, or a file read whole). */
export function verifyJournalInMemory(bytes: Uint8Array, publicKey: PublicKey | undefined): JournalVerdict {
  return nonEmpty(verifyJournalBytes(bytes, publicKey ? { publicKey } : {}));
}

/** An intact verdict of no records is not intact (see readJournal). */
export function nonEmpty(verdict: JournalVerdict): JournalVerdict {
  return verdict.ok && verdict.count === 0 ? { ...verdict, ok: false, error: emptyJournalError() } : verdict;
}

function emptyJournalError(): JournalIntegrityError {
  return new JournalIntegrityError(0, 'empty journal (no records; the first record must be invocation.pinned)');
}

/** How many records passed: a report's records, or a verdict's count. */
export function passedCount(report: JournalReport | JournalVerdict): number {
  return 'records' in report ? report.records.length : report.count;
}

/** Records that passed the chain checks: on a seal mismatch, the seal too. */
export function chainCount(report: JournalReport | JournalVerdict): number {
  return passedCount(report) + (report.sealMismatch ? 1 : 0);
}

/** `1 record`, `2 records`. */
export const plural = (k: number) => `${k} record${k === 1 ? '' : 's'}`;

/** The human summary of a report, one or two lines, shared by `weft verify` and `weft log` (which never passes a key). */
export function statusLines(report: JournalReport | JournalVerdict, keyChecked: boolean): string[] {
  const n = passedCount(report);
  if (report.sealMismatch) {
    return [report.error!.message, `chain intact: ${plural(chainCount(report))}, but the seal does not match the key`];
  }
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

/** A bundle's journal must be the bundle's invocation's and pin a library the bundle carries (and a fork's lineage must verify). */
export function bundleProblem(bundle: Bundle, report: JournalVerdict): string | undefined {
  if (report.invocation !== undefined && report.invocation !== bundle.invocation) {
    return `the bundle is for invocation ${bundle.invocation}, but its journal is the journal of ${report.invocation}`;
  }
  const library = report.pin?.library;
  if (library !== undefined && !Object.hasOwn(bundle.libraries, library)) {
    const carried = Object.keys(bundle.libraries);
    return `the journal pins library ${library}, which the bundle does not carry (it carries ${carried.length > 0 ? carried.join(', ') : 'none'})`;
  }
  // A fork's bundle carries its parents' journals up to the boundaries it names, each verified (bundle-lineage.ts).
  // Its own first two records say whether it is a fork, and of what — read only once the chain has
  // passed them (a journal that does not verify is not intact, whatever its lineage).
  if (!report.ok) return undefined;
  let head: JournalRecord[];
  try {
    head = bundle.journal.split('\n', 2).filter((line) => line !== '').map((line) => JSON.parse(line) as JournalRecord);
  } catch {
    return undefined;
  }
  const lineage = bundleLineage(bundle, head);
  if ('problem' in lineage) return lineage.problem;
  return undefined;
}

const strictDecoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Check bytes held in memory (see the header): a journal (a file that does not start like one, or a
 * stored journal) or a bundle. `keyFile`: the key given (--public-key); `skipped`: --no-signature.
 */
export function checkBytes(bytes: Uint8Array, keyFile: { file: string; key: PublicKey } | undefined, skipped: boolean): BytesChecked {
  const fileSignature: SignatureCheck = keyFile ? { by: 'file', ...keyFile } : { by: 'none', skipped };
  if (!looksLikeBundle(bytes)) {
    return { report: verifyJournalInMemory(bytes, keyFile?.key), context: { signature: fileSignature, input: 'journal' } };
  }
  let bundle: Bundle;
  try {
    bundle = parseBundle(strictDecoder.decode(bytes));
  } catch (err) {
    if (err instanceof BundleError) return { invalidBundle: err.message };
    if (err instanceof TypeError) return { invalidBundle: 'invalid bundle: not valid UTF-8' };
    throw err;
  }
  const carried = bundle.publicKey === null ? undefined : { publicKey: bundle.publicKey.publicKey, keyId: bundle.publicKey.keyId };
  const signature: SignatureCheck = keyFile || skipped || carried === undefined ? fileSignature : { by: 'bundle', key: carried };
  const key = signature.by === 'none' ? undefined : signature.key;
  const report = verifyJournalInMemory(new TextEncoder().encode(bundle.journal), key);
  const problem = bundleProblem(bundle, report);
  return { report, context: { signature, input: 'bundle', ...(problem !== undefined ? { bundleProblem: problem } : {}) } };
}
