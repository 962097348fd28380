/**
 * What `weft mine` reads: the journals to learn from, and the corpus they must not change — every
 * journal of every store involved (cli/commands/mine.ts).
 *
 * Sources, each `--from X` (repeatable) or a positional:
 * - a journal file (`…/journal.jsonl`): read and verified (hash chain) first — a journal that does
 *   not verify is refused, never mined; one inside a workspace (`<dir>/invocations/<id>/`) brings
 *   that workspace's store into the corpus;
 * - a bundle (`weft export`): its journal, and its pinned libraries (for `--library <digest>`);
 * - a folder: a workspace — every journal in it.
 * And the store flags: `--dir D` (a workspace) or `--redis URL`: every journal in that store is
 * mined and in the corpus.
 *
 * Journals are keyed by invocation id, so the same journal reached twice (a file and its
 * workspace) is read once. Reading is in sorted order; mining sorts again anyway.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { looksLikeBundle, parseBundle } from '../journal/bundle.js';
import type { JournalRecord } from '../journal/records.js';
import type { JournalStore } from '../journal/store.js';
import { FileStore } from '../journal/stores/file.js';
import { readJournalBytes } from '../journal/verify-bytes.js';
import type { Library } from '../htn/library/schema.js';
import { validateLibrary } from '../htn/library/validate.js';
import { UsageError } from './args.js';

export interface MiningInputs {
  /** The journals to mine, by invocation id. */
  mined: Map<string, JournalRecord[]>;
  /** Every journal of the stores involved, and the mined ones, by invocation id. */
  corpus: Map<string, JournalRecord[]>;
  /** The stores involved (where `--apply` files the new version, and `--library <digest>` is looked up). */
  stores: JournalStore[];
  /** Libraries carried by bundles, by digest. */
  libraries: Map<string, Library>;
}

export type Progress = (line: string) => void;

/** A journal given to mine cannot be trusted (it does not verify, or is not a journal): nothing is mined (exit 1). */
export class UnreadableJournalError extends Error {
  override readonly name = 'UnreadableJournalError';
}

function verified(bytes: Uint8Array, where: string): JournalRecord[] {
  const read = readJournalBytes(bytes);
  if (!read.ok) throw new UnreadableJournalError(`${where} does not verify (${read.error?.message ?? 'broken journal'}): mining learns only from intact journals`);
  const first = read.records[0];
  if (first?.kind !== 'invocation.pinned') throw new UnreadableJournalError(`${where} is not a journal (it does not start with invocation.pinned)`);
  return read.records;
}

const idOf = (records: JournalRecord[]) => (records[0] as JournalRecord<'invocation.pinned'>).body.invocation;

/** Every journal of a store, by id, reporting progress on long ones. */
export async function readStore(store: JournalStore, into: Map<string, JournalRecord[]>, progress?: Progress): Promise<string[]> {
  const ids = (await store.list()).sort();
  for (const [i, id] of ids.entries()) {
    if (!into.has(id)) into.set(id, await store.read(id));
    if (progress && ids.length >= 20 && (i + 1) % 20 === 0) progress(`read ${i + 1}/${ids.length} journals of ${store.name}`);
  }
  return ids;
}

/** The workspace folder holding a journal file, if it is `<dir>/invocations/<id>/journal.jsonl`. */
function workspaceOf(file: string): string | undefined {
  const abs = path.resolve(file);
  return path.basename(path.dirname(path.dirname(abs))) === 'invocations' ? path.resolve(path.dirname(abs), '..', '..') : undefined;
}

export async function readMiningInputs(sources: readonly string[], store: JournalStore | undefined, progress?: Progress): Promise<MiningInputs> {
  const mined = new Map<string, JournalRecord[]>();
  const corpus = new Map<string, JournalRecord[]>();
  const libraries = new Map<string, Library>();
  const stores: JournalStore[] = [];
  const workspaces = new Map<string, FileStore>();
  const workspace = (dir: string) => {
    let s = workspaces.get(dir);
    if (!s) workspaces.set(dir, (s = new FileStore(dir)));
    return s;
  };
  for (const source of sources) {
    if (!existsSync(source)) throw new UsageError(`--from ${source}: no such file or folder (give journal files, bundles, or a workspace folder)`);
    if (statSync(source).isDirectory()) {
      if (!existsSync(path.join(source, 'invocations'))) throw new UsageError(`--from ${source}: a folder is read as a workspace, and it has no invocations/ (pass --dir D or journal files)`);
      const ws = workspace(path.resolve(source));
      const ids = await readStore(ws, corpus, progress);
      for (const id of ids) mined.set(id, corpus.get(id)!);
      continue;
    }
    const bytes = readFileSync(source);
    let records: JournalRecord[];
    if (looksLikeBundle(bytes)) {
      let bundle;
      try {
        bundle = parseBundle(new TextDecoder().decode(bytes));
      } catch (err) {
        throw new UsageError(`--from ${source}: not a readable bundle (${(err as Error).message})`);
      }
      records = verified(new TextEncoder().encode(bundle.journal), `the bundle ${source}`);
      for (const [digest, data] of Object.entries(bundle.libraries)) libraries.set(digest, validateLibrary(data));
    } else {
      records = verified(bytes, source);
      const dir = workspaceOf(source);
      if (dir) await readStore(workspace(dir), corpus, progress);
    }
    mined.set(idOf(records), records);
    corpus.set(idOf(records), records);
  }
  stores.push(...[...workspaces.keys()].sort().map((d) => workspaces.get(d)!));
  if (store) {
    const ids = await readStore(store, corpus, progress);
    if (sources.length === 0) for (const id of ids) mined.set(id, corpus.get(id)!);
    stores.push(store);
  }
  return { mined, corpus, stores, libraries };
}
