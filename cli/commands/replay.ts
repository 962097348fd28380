/**
 * `weft replay <id | journal.jsonl | bundle.json> [--dir D] [--domain D] [--json]` — re-run an
 * invocation over its journal without calling the model or any actuator, re-deriving every
 * decomposition over the pinned library. Exit 0 when the replay reproduces the journal (same
 * records, same fingerprint); exit 1 with the divergence, naming the record, or with the refusal;
 * exit 2 for a file, a domain or an invocation that is not there (cli/exit-codes.ts).
 *
 * Where the parts come from: the library from the domain, the store's blob area beside the journal,
 * or the bundle (`weft export`: a fork's carries its parents' journals, checked, which its replay
 * checks the fork against); the policy and evaluables (code) from the domain — found by itself
 * for a built-in (by the pinned library's name) or for a journal in a workspace that recorded its
 * module, otherwise named with `--domain`. All of it is checked against the pin first, naming
 * each differing field; a journal filed under another invocation's id is refused.
 */
import { canonicalBytes } from '../../journal/canonical.js';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { looksLikeBundle, parseBundle } from '../../journal/bundle.js';
import { isWeftError, WeftError } from '../../journal/errors.js';
import { bundleLineage } from '../../journal/bundle-lineage.js';
import type { JournalRecord } from '../../journal/records.js';
import { MemoryStore } from '../../stores/memory.js';
import { FileStore } from '../../stores/file.js';
import { readJournalBytes } from '../../journal/verify-bytes.js';
import type { Library } from '../../htn/library/schema.js';
import { validateLibrary } from '../../htn/library/validate.js';
import { ForeignJournalError, RuntimeUsageError } from '../../runtime/errors.js';
import { createRuntime } from '../../runtime/runtime.js';
import type { ReplayResult } from '../../runtime/replay.js';
import type { JournalStore } from '../../journal/store.js';
import type { Workspace } from '../workspace.js';
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { DomainLoadError, loadDomain, type LoadedDomain } from '../domain-loader.js';
import { openWorkspace, workspaceDir } from '../workspace.js';
import { readInvocationMeta } from '../invocation-meta.js';
import { domainForInvocation, domainForLibrary } from '../domain-map.js';
import { pinnedRecord } from '../../runtime/open.js';
import { openStore, storeChoice, storeOptions, storeUsage, type StoreChoice } from '../store-choice.js';
import { locate, locationOf } from '../hints.js';
import { printFailureLine, printJsonLine } from '../json-line.js';
import { tenantOfFile, tenantOption } from '../tenant-scope.js';
import { EXIT, exitCodeForRefusal, MissingPathError, refusalCode } from '../exit-codes.js';

export const usage =
  `replay <id | journal.jsonl | bundle.json> [--dir D] [--domain D] [--tenant T] ${storeUsage} [--json]\n` +
  '                                       replay a run from its journal or an exported bundle, calling nothing; report any divergence';

export async function run(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseCommandArgs(argv, { dir: { type: 'string' }, domain: { type: 'string' }, json: { type: 'boolean' }, ...storeOptions, ...tenantOption }, { min: 1, max: 1 });
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('replay', usage, err);
    throw err;
  }
  const json = args.flags.json === true;
  const target = args.positionals[0]!;
  let choice: StoreChoice;
  try {
    choice = storeChoice(workspaceDir(args.strings.dir), args.strings);
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('replay', usage, err);
    throw err;
  }
  try {
    // With --tenant, another tenant's file is answered as a missing one (tenant-scope.ts).
    const tenant = args.strings.tenant;
    const isFile = existsSync(target) && !existsSync(path.join(workspaceDir(args.strings.dir), 'invocations', target)) && (tenant === undefined || tenantOfFile(target) === tenant);
    // A path (a slash, a .jsonl or .json name) that is not there is a missing file, not a bad id.
    if (!isFile && looksLikePath(target)) throw new MissingPathError(`no journal or bundle file ${target}: give the path of a journal.jsonl or a bundle from weft export, or an invocation id`);
    if (isFile) {
      const bytes = readFileSync(target);
      if (looksLikeBundle(bytes)) return await replayBundle(path.resolve(target), bytes, args.strings.domain, json);
      return await replayJournalFile(path.resolve(target), bytes, args.strings.dir, args.strings.domain, json);
    }
    return await replayById(target, args.strings.dir, args.strings.domain, json, choice, args.strings.tenant);
  } catch (err) {
    // A file, a domain or an invocation that is not there: the command line names something to fix (exit 2, cli/exit-codes.ts).
    if (err instanceof DomainLoadError || err instanceof MissingPathError || isWeftError(err)) {
      const refused = refusalCode(err);
      return fail(json, locate(err.message, target, locationOf(choice)), refused, exitCodeForRefusal(refused));
    }
    throw err;
  }
}

/** An invocation in a workspace, by id. */
async function replayById(id: string, dirOption: string | undefined, domainFlag: string | undefined, json: boolean, choice: StoreChoice, tenant: string | undefined): Promise<number> {
  const { ws } = await openForReplay(id, { dir: dirOption, domain: domainFlag, choice, tenant });
  const result = await ws.runtime.replay(id);
  return report(json, result, ws.runtime.journalPath(id) ?? null, ws.publicKeyFile);
}

/**
 * The workspace `weft replay <id>` replays in: the store chosen, and the domain the pin names (the
 * flag, else the workspace's record of it, else the store's metadata, a built-in or a domains.json
 * mapping: cli/domain-map.ts domainForInvocation). The pin only says where to find the domain; the
 * runtime checks the genesis (a foreign journal) and the pin. The caller closes the runtime (and a
 * Redis store); tests replay in their own process through this very path (test/support/runs-here.ts).
 */
export async function openForReplay(id: string, options: { dir?: string | undefined; domain?: string | undefined; choice: StoreChoice; tenant?: string | undefined; signingKeyFile?: string; generateKey?: false }): Promise<{ ws: Workspace; store: JournalStore }> {
  const dir = workspaceDir(options.dir);
  const store = await openStore(options.choice);
  try {
    const { pin } = (await pinnedRecord(store, id, options.tenant)).body; // --tenant T: another tenant's is not there
    const ws = await openWorkspace({
      dir,
      store,
      redis: options.choice.redis,
      domain: await domainForInvocation(store, id, pin, options.domain, { meta: readInvocationMeta(dir, id), dir }),
      ...(options.signingKeyFile ? { signingKeyFile: options.signingKeyFile } : {}),
      ...(options.generateKey === false ? { generateKey: false } : {}),
    });
    return { ws, store };
  } catch (err) {
    if (options.choice.redis) await store.close().catch(() => undefined);
    throw err;
  }
}

/** A journal file: in a workspace (`<dir>/invocations/<id>/journal.jsonl`) or anywhere with --domain. */
async function replayJournalFile(file: string, bytes: Uint8Array, dirOption: string | undefined, domainFlag: string | undefined, json: boolean): Promise<number> {
  const { records, first } = journalOf(bytes, file);
  const filedAs = path.basename(path.dirname(file));
  const inWorkspace = path.basename(path.dirname(path.dirname(file))) === 'invocations';
  if (inWorkspace && filedAs !== first.body.invocation) throw new ForeignJournalError(filedAs, first.body.invocation);
  const dir = dirOption ? path.resolve(dirOption) : inWorkspace ? path.resolve(path.dirname(file), '..', '..') : undefined;
  if (dir) {
    const store = new FileStore(dir);
    const ws = await openWorkspace({ dir, domain: await domainForInvocation(store, first.body.invocation, first.body.pin, domainFlag) });
    const result = await ws.runtime.replay({ records });
    return report(json, result, file, ws.publicKeyFile);
  }
  if (!domainFlag) return fail(json, `${file} is not in a workspace: pass --domain <name | path | package> (the domain whose library, policy and evaluables it pinned), or replay an exported bundle`, 'usage', 2);
  return report(json, await replayDetached(await loadDomain(domainFlag), records, []), file, null);
}

/** An exported bundle: journal, pinned libraries and key in one file; replays anywhere. */
async function replayBundle(file: string, bytes: Uint8Array, domainFlag: string | undefined, json: boolean): Promise<number> {
  const bundle = parseBundle(new TextDecoder().decode(bytes));
  const { records, first } = journalOf(new TextEncoder().encode(bundle.journal), `the bundle ${file}`);
  if (first.body.invocation !== bundle.invocation) throw new ForeignJournalError(bundle.invocation, first.body.invocation);
  // Each carried library validated once, by its digest in the bundle.
  const validated = new Map(Object.entries(bundle.libraries).map(([digest, l]) => [digest, validateLibrary(l)] as const));
  const libraries: Library[] = [...validated.values()];
  const pinnedName = validated.get(first.body.pin.library)?.name;
  const loaded = domainFlag ? await loadDomain(domainFlag) : await domainForLibrary(pinnedName, first.body.pin.library, bundle.invocation);
  // A fork is proven by its parents: the bundle must carry their journals up to the boundaries (bundle-lineage.ts).
  const lineage = bundleLineage(bundle, records);
  if ('problem' in lineage) throw new WeftError('bundle.lineage', 'permanent', `the bundle ${file}: ${lineage.problem}`);
  const result = await replayDetached(loaded, records, libraries, Object.values(bundle.packs ?? {}), lineage.parents);
  return report(json, result, file, null, bundle.publicKey?.keyId ?? null);
}

/** A journal's records, verified, and its first record; throws (a WeftError) what is wrong with them. */
function journalOf(bytes: Uint8Array, where: string): { records: JournalRecord[]; first: JournalRecord<'invocation.pinned'> } {
  const read = readJournalBytes(bytes);
  if (!read.ok) throw read.error!;
  const first = read.records[0] as JournalRecord<'invocation.pinned'> | undefined;
  if (!first) throw new RuntimeUsageError('replay.empty_journal', `${where} holds an empty journal: a journal starts with invocation.pinned`);
  return { records: read.records, first };
}

/** Replay with no workspace: a memory store, the domain's code, the given libraries. Writes nothing. */
async function replayDetached(loaded: LoadedDomain, records: JournalRecord[], libraries: Library[], packs: readonly unknown[] = [], parents: ReadonlyArray<{ invocation: string; records: readonly JournalRecord[] }> = []): Promise<ReplayResult> {
  const store = new MemoryStore();
  // A bundle's policy pack, filed as a start files it: the runtime reads it back and checks it against the pin (runtime/pack-blob.ts).
  for (const pack of packs) await store.putBlob(canonicalBytes(pack));
  // A fork's parents, as far as the bundle carries them, where its replay looks for them (with the libraries they pinned).
  if (parents.length > 0) for (const library of libraries) await store.putBlob(canonicalBytes(library));
  for (const parent of parents) {
    const lease = await store.acquire(parent.invocation, { writer: 'weft replay', ttlMs: 60_000 });
    await store.append(lease, 0, parent.records);
    await store.release(lease);
  }
  const runtime = createRuntime({ store, domain: loaded.domain, stateDir: path.join(tmpdir(), 'weft-replay-state', loaded.domain.name) });
  return runtime.replay({ records, libraries });
}

function report(json: boolean, result: ReplayResult, journal: string | null, publicKey: string | null, keyId?: string | null): number {
  const out = { id: result.id, status: result.status, reason: null, journal, fingerprint: result.fingerprint, publicKey, ...(keyId === undefined ? {} : { keyId }), records: result.records, identical: true };
  if (json) printJsonLine(out);
  else process.stdout.write(`replayed ${result.records} records of ${result.id} without calling anything: identical to the journal\nstatus      ${result.status}\nfingerprint ${result.fingerprint}\n`);
  return EXIT.done;
}

/** A path, not an id: a slash, or a .jsonl / .json name (ids may hold dots, never slashes). */
function looksLikePath(target: string): boolean {
  return /[\\/]|\.jsonl?$/.test(target);
}

/** A replay that could not be done or diverged: the message on stderr (with --json, the line of json-line.ts too). Exit 1, or 2 for a command line to fix. */
function fail(json: boolean, message: string, refused: string, exitCode: number = EXIT.failed): number {
  if (json) printFailureLine(message, refused, exitCode);
  process.stderr.write(`weft replay: ${message}\n`);
  return exitCode;
}
