/**
 * `weft export <id> [--dir D]` — print one portable bundle (journal/bundle.ts) on stdout: the
 * invocation's journal file, byte for byte, the method library it pinned, and the workspace's
 * public key when it sealed the journal. Someone holding only the bundle runs `weft verify` on it.
 *
 * Refuses (exit 1, nothing printed on stdout) what would make a bundle that misleads: an unknown
 * id; a journal that does not pass the reader (the reader's first problem is printed); a journal
 * whose first record names another invocation (a copied file); a pinned library missing from the
 * blob area; a sealed journal whose seal neither the workspace key (<dir>/keys/weft.pub) nor the
 * key the store holds under the seal's key id (put there by the runtime that sealed it) made.
 * A fork's bundle also carries its lineage (journal/bundle-lineage.ts): each parent's journal up to
 * the record its child names, and what each pinned, so the fork replays from the bundle alone; a
 * parent missing from the store, or not what its child names, refuses the export.
 * `--redis URL` exports from a Redis store: its journal is written out line by line, the same bytes.
 * An unsealed journal (still running, waiting for approval) is exported with `publicKey: null`.
 *
 * Exit codes (cli/exit-codes.ts): 0 bundle printed, 1 refused, 2 usage error (an id that cannot name
 * an invocation included) or no such invocation — as every command that takes an id answers it.
 */
import { parsePackPolicyId } from '../../policy/digest.js';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { BundleError, buildBundle, type Bundle } from '../../journal/bundle.js';
import { InvalidNameError, WeftError } from '../../journal/errors.js';
import { FileStore } from '../../stores/file.js';
import { isTenants, tenantOption } from '../tenant-scope.js';
import { sealKeyProblem } from '../../journal/reader.js';
import type { JournalRecord, Pin } from '../../journal/records.js';
import { bundleLineage, parentOf, type LineageEntry } from '../../journal/bundle-lineage.js';
import { readJournalBytes } from '../../journal/verify-bytes.js';
import type { Library } from '../../htn/library/schema.js';
import { readLibraryBlob } from '../../htn/library/stored.js';
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { KeyFileError, loadPublicKey, PUBLIC_FILE, PUBLIC_FORMAT, publicKeyFromStore } from '../../runtime/keys.js';
import { workspaceDir } from '../workspace.js';
import { openStore, storeChoice, storeOptions, storeUsage } from '../store-choice.js';
import type { JournalStore } from '../../journal/store.js';
import { recordLine } from '../../journal/encode.js';
import { locate, locationOf } from '../hints.js';
import { EXIT, exitCodeOf, REFUSED } from '../exit-codes.js';

export const usage = `export <id> [--dir D] [--tenant T] ${storeUsage}\n                                       print a portable bundle (journal, pinned library, public key) to verify elsewhere`;

/** A reason to refuse the export: printed as one line, exit 1. */
class Refused extends Error {}

/** No such invocation in the store (or another tenant's): exit 2, as every command answers it (cli/exit-codes.ts). */
class NotFound extends Refused {
  readonly code = REFUSED.notFound;
}

const strictDecoder = new TextDecoder('utf-8', { fatal: true });

/** Build the bundle of invocation `id` in the FileStore at `dir`. Throws Refused, or a WeftError from the store. */
export async function exportBundle(dir: string, id: string, from?: JournalStore): Promise<Bundle> {
  const store = from ?? new FileStore(dir);
  const journalPath = store instanceof FileStore ? store.journalPath(id) : `${store.name} ${id}`; // throws InvalidNameError for an id that cannot be one
  let bytes: Uint8Array;
  if (store instanceof FileStore) {
    try {
      bytes = await fs.readFile(journalPath);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFound(`no invocation ${id} in ${dir} (weft ls lists them)`);
      throw new Refused(`cannot read the journal of ${id} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  } else {
    const records = await store.read(id);
    if (records.length === 0) throw new NotFound(`no invocation ${id} in ${store.name} (weft ls lists them)`);
    bytes = new TextEncoder().encode(records.map((r) => `${recordLine(r)}\n`).join(''));
  }

  const report = readJournalBytes(bytes);
  if (!report.ok) throw new Refused(`the journal of ${id} does not verify, refusing to export it: ${report.error!.message} (${journalPath})`);
  if (report.records.length === 0) throw new Refused(`the journal of ${id} is empty (no invocation.pinned record), refusing to export it (${journalPath})`);
  if (report.invocation !== id) {
    throw new Refused(`the journal filed under ${id} is the journal of invocation ${report.invocation} (copied from elsewhere?), refusing to export it (${journalPath})`);
  }
  let journal: string;
  try {
    journal = strictDecoder.decode(bytes);
  } catch {
    throw new Refused(`the journal of ${id} is not valid UTF-8 (${journalPath})`);
  }

  const where = store instanceof FileStore ? path.join(store.dir, 'blobs') : store.name;
  const libraries: Record<string, unknown> = {};
  const packs: Record<string, unknown> = {};
  await addPinned(store, id, report.pin!, where, libraries, packs);

  let publicKey: Bundle['publicKey'] = null;
  if (report.sealed) {
    const keyFile = path.join(dir, 'keys', PUBLIC_FILE);
    let key;
    try {
      key = await loadPublicKey(keyFile);
    } catch (err) {
      if (!(err instanceof KeyFileError)) throw err;
      key = undefined;
    }
    // The key the sealing runtime left in the store, under its id, when the workspace's is another.
    if (key?.keyId !== report.keyId) key = (await publicKeyFromStore(store, report.keyId!)) ?? key;
    if (key === undefined) throw new Refused(`the journal of ${id} is sealed by key ${report.keyId}, which neither this workspace (${keyFile}) nor the store holds`);
    if (key.keyId !== report.keyId) {
      throw new Refused(
        `the journal of ${id} is sealed by key ${report.keyId}, not by this workspace's key ${key.keyId} (${keyFile}): ` +
          `export it from the workspace that sealed it, or verify the journal file with that key (weft verify --public-key)`,
      );
    }
    // The chain was verified above; only the seal's signature needs the key.
    const problem = sealKeyProblem(report.records.at(-1) as JournalRecord<'invocation.sealed'>, key);
    if (problem !== undefined) throw new Refused(`the seal of ${id} does not verify with the workspace key ${keyFile}: ${problem}`);
    publicKey = { format: PUBLIC_FORMAT, publicKey: key.publicKey, keyId: key.keyId };
  }

  // A fork carries its lineage: each parent's journal up to the record its child names, with what it pinned.
  const lineage: LineageEntry[] = [];
  let child = report.records;
  let childId = id;
  for (let ref = parentOf(child); ref !== undefined && !lineage.some((e) => e.invocation === ref!.parent); ref = parentOf(child)) {
    const records = await store.read(ref.parent, 0, ref.parentSeq + 1).catch(() => []);
    if (records.length !== ref.parentSeq + 1 || records[0]?.kind !== 'invocation.pinned') {
      throw new Refused(`${childId} is a fork of ${ref.parent}, whose journal is not in ${store.name} as far as seq ${ref.parentSeq} (it has ${records.length} records there): a fork's bundle carries its parent's journal, and could not be replayed without it — export it from the store that holds both`);
    }
    lineage.push({ invocation: ref.parent, journal: records.map((r) => `${recordLine(r)}\n`).join('') });
    await addPinned(store, ref.parent, (records[0] as JournalRecord<'invocation.pinned'>).body.pin, where, libraries, packs);
    child = records;
    childId = ref.parent;
  }
  const bundle = buildBundle({ invocation: id, journal, libraries, publicKey, packs, lineage });
  // Each parent's journal checked as replay and verify will check it: chain, identity, the hash its child names.
  const checked = bundleLineage(bundle, report.records);
  if ('problem' in checked) throw new Refused(`refusing to export ${id}: ${checked.problem}`);
  return bundle;
}

/** The library (and policy pack) `pin` pinned, read from the store's blob area into `libraries` (and `packs`), by digest. */
async function addPinned(store: JournalStore, id: string, pin: Pin, where: string, libraries: Record<string, unknown>, packs: Record<string, unknown>): Promise<void> {
  const digest = pin.library;
  let library: Library | undefined;
  try {
    library = await readLibraryBlob(store, digest);
  } catch (err) {
    throw new Refused(`the blob of the pinned library ${digest} is not that library (${(err as Error).message})`);
  }
  if (library === undefined) throw new Refused(`the pinned library ${digest} of ${id} is not in ${where}: the bundle could not be replayed without it`);
  libraries[digest] = library;
  // A policy pack the journal pinned goes with it (by digest), so the bundle replays with no store.
  const pack = parsePackPolicyId(pin.policy);
  if (pack) {
    const bytes = await store.getBlob(pack.digest).catch(() => undefined);
    if (bytes === undefined) throw new Refused(`the pinned policy pack ${pin.policy} of ${id} is not in ${where}: the bundle could not be replayed without it`);
    packs[pack.digest] = JSON.parse(new TextDecoder().decode(bytes)) as unknown;
  }
}

export async function run(argv: string[]): Promise<number> {
  let id: string;
  let dir: string;
  let tenant: string | undefined;
  let choice;
  try {
    const args = parseCommandArgs(argv, { dir: { type: 'string' }, ...storeOptions, ...tenantOption }, { min: 0, max: 1 });
    tenant = args.strings.tenant;
    if (args.positionals.length === 0) throw new UsageError('missing the invocation id');
    id = args.positionals[0]!;
    dir = workspaceDir(args.strings.dir);
    choice = storeChoice(dir, args.strings);
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('export', usage, err);
    throw err;
  }
  let bundle: Bundle;
  try {
    const store = choice.redis ? await openStore(choice) : undefined;
    // --tenant T: another tenant's invocation is answered as a missing one (cli/tenant-scope.ts).
    if (!(await isTenants(store ?? new FileStore(dir), id, tenant))) throw new NotFound(`no invocation ${id} in ${store ? store.name : dir} (weft ls lists them)`);
    bundle = await exportBundle(dir, id, store);
  } catch (err) {
    if (err instanceof InvalidNameError) return usageFailure('export', usage, new UsageError(err.message));
    if (err instanceof Refused || err instanceof BundleError || err instanceof WeftError) {
      process.stderr.write(`weft export: ${locate(err.message, id, locationOf(choice))}\n`);
      return exitCodeOf(err);
    }
    throw err;
  }
  process.stdout.write(JSON.stringify(bundle) + '\n');
  return EXIT.done;
}
