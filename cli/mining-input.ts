/**
 * What `weft mine` reads: the journals to learn from, and the corpus they must not change — every
 * journal of every store involved (cli/commands/mine.ts).
 *
 * Sources, each `--from X` (repeatable) or a positional:
 * - a journal file (`…/journal.jsonl`); one inside a workspace (`<dir>/invocations/<id>/`) brings
 *   that workspace's store into the corpus;
 * - a bundle (`weft export`): its journal, and its pinned libraries (for `--library <digest>`);
 * - a folder: a workspace — every journal in it.
 * And the store flags: `--dir D` (a workspace) or `--redis URL`: every journal in that store is
 * mined and in the corpus.
 *
 * Every journal read — mined or only in the corpus — is verified first with the verifier `weft
 * verify` uses (journal/verify-bytes.ts, over the file's bytes or the stored lines:
 * journal/stored-lines.ts). One that does not verify stops the whole command (exit 1), naming
 * each broken journal by id with the verifier's problem: it is never mined, and leaving it out
 * of the corpus instead would silently weaken the promise that the new version changes no
 * recorded decomposition. With `--public-key FILE` a sealed journal must be sealed by that key
 * (else refused the same way); an unsealed one (a run still going, hibernated, or cut) is not
 * mined — nothing vouches for it — but stays in the corpus, where it can only refuse candidates.
 * Without a key the seals' signatures are not checked (the report says so).
 *
 * Journals are keyed by invocation id (mining/journals.ts): the same journal reached twice is read
 * once; a journal and a prefix of it (a copy taken before the run finished) is the longer; two
 * different histories of one id are refused (exit 1). Reading is in sorted order; mining sorts
 * again anyway, so the order of the sources never changes the result.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { looksLikeBundle, parseBundle } from '../journal/bundle.js';
import type { JournalRecord } from '../journal/records.js';
import type { PublicKey } from '../journal/seal.js';
import { journalFileOf, type JournalStore } from '../journal/store.js';
import { storedJournalLines } from '../journal/stored-lines.js';
import { FileStore } from '../stores/file.js';
import { readJournalBytes } from '../journal/verify-bytes.js';
import type { Library } from '../htn/library/schema.js';
import { validateLibrary } from '../htn/library/validate.js';
import { DivergentJournalsError, invocationOf, mergeJournal, type SourcedJournal } from '../mining/index.js';
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
  /** What the reader left out and why (unsealed journals under --public-key), and whether seals were checked. */
  notes: string[];
}

export type Progress = (line: string) => void;

/** A journal given to mine cannot be trusted (it does not verify, or is not a journal), or one id has two histories: nothing is mined (exit 1). */
export class UnreadableJournalError extends Error {
  override readonly name = 'UnreadableJournalError';
  constructor(
    message: string,
    /** The JSON line's `refused`: a journal that does not verify, or one id with two histories. */
    readonly code: 'journal.unreadable' | 'journal.divergent' = 'journal.unreadable',
  ) {
    super(message);
  }
}

/** What one journal's check found: its records, or why it is refused; `unsealed` under a key: corpus only. */
type Checked = { records: JournalRecord[]; unsealed: boolean } | { problem: string };

/** Verify a journal's bytes (weft verify's verifier); with a key, a sealed journal must be sealed by it. */
function check(bytes: Uint8Array, key: PublicKey | undefined): Checked {
  const chain = readJournalBytes(bytes);
  if (!chain.ok) return { problem: chain.error?.message ?? 'broken journal' };
  if (chain.records[0]?.kind !== 'invocation.pinned') return { problem: 'not a journal (it does not start with invocation.pinned)' };
  if (!key) return { records: chain.records, unsealed: false };
  if (!chain.sealed) return { records: chain.records, unsealed: true };
  const sealed = readJournalBytes(bytes, { publicKey: key });
  return sealed.ok ? { records: sealed.records, unsealed: false } : { problem: sealed.error?.message ?? 'the seal does not match the key' };
}

/** The bytes of a store's journal: its file, or its stored lines (what `weft verify <id>` reads). */
async function storedBytes(store: JournalStore, id: string): Promise<Uint8Array | undefined> {
  const file = journalFileOf(store, id);
  if (file !== undefined) return existsSync(file) ? readFileSync(file) : undefined;
  return storedJournalLines(store, id);
}

/** The workspace folder holding a journal file, if it is `<dir>/invocations/<id>/journal.jsonl`. */
function workspaceOf(file: string): string | undefined {
  const abs = path.resolve(file);
  return path.basename(path.dirname(path.dirname(abs))) === 'invocations' ? path.resolve(path.dirname(abs), '..', '..') : undefined;
}

/** The journals read so far, checked and merged by id; broken ones collected to be named together. */
class Reader {
  readonly journals = new Map<string, SourcedJournal>();
  readonly minedIds = new Set<string>();
  readonly unsealed = new Set<string>();
  readonly broken: string[] = [];
  private readonly storesRead = new Set<JournalStore>();

  constructor(
    private readonly key: PublicKey | undefined,
    private readonly progress: Progress | undefined,
  ) {}

  /** Check and keep one journal's bytes; `mined`: learn from it too. */
  add(bytes: Uint8Array, where: string, mined: boolean): void {
    const checked = check(bytes, this.key);
    if ('problem' in checked) {
      this.broken.push(`${where} does not verify (${checked.problem})`);
      return;
    }
    try {
      mergeJournal(this.journals, checked.records, where);
    } catch (err) {
      if (err instanceof DivergentJournalsError) throw new UnreadableJournalError(err.message, 'journal.divergent');
      throw err;
    }
    const id = invocationOf(checked.records);
    if (checked.unsealed) this.unsealed.add(id);
    if (mined) this.minedIds.add(id);
  }

  /** Every journal of a store (once per store), reporting progress on long ones. */
  async readStore(store: JournalStore, mined: boolean): Promise<void> {
    if (this.storesRead.has(store)) {
      if (mined) for (const id of await store.list()) this.minedIds.add(id);
      return;
    }
    this.storesRead.add(store);
    const ids = (await store.list()).sort();
    for (const [i, id] of ids.entries()) {
      const bytes = await storedBytes(store, id);
      if (bytes !== undefined) this.add(bytes, `journal ${id} in ${store.name}`, mined);
      if (this.progress && ids.length >= 20 && (i + 1) % 20 === 0) this.progress(`read ${i + 1}/${ids.length} journals of ${store.name}`);
    }
  }
}

export async function readMiningInputs(sources: readonly string[], store: JournalStore | undefined, progress?: Progress, key?: PublicKey): Promise<MiningInputs> {
  const reader = new Reader(key, progress);
  const libraries = new Map<string, Library>();
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
      await reader.readStore(workspace(path.resolve(source)), true);
      continue;
    }
    const bytes = readFileSync(source);
    if (looksLikeBundle(bytes)) {
      let bundle;
      try {
        bundle = parseBundle(new TextDecoder().decode(bytes));
      } catch (err) {
        throw new UsageError(`--from ${source}: not a readable bundle (${(err as Error).message})`);
      }
      reader.add(new TextEncoder().encode(bundle.journal), `the bundle ${source}`, true);
      for (const [digest, data] of Object.entries(bundle.libraries)) libraries.set(digest, validateLibrary(data));
    } else {
      reader.add(bytes, source, true);
      const dir = workspaceOf(source);
      if (dir) await reader.readStore(workspace(dir), false);
    }
  }
  const stores: JournalStore[] = [...workspaces.keys()].sort().map((d) => workspaces.get(d)!);
  if (store) {
    await reader.readStore(store, sources.length === 0);
    stores.push(store);
  }
  if (reader.broken.length > 0) {
    throw new UnreadableJournalError(
      `${reader.broken.join('; ')} — mining learns only from intact journals and checks against all of them: ` +
        '`weft verify` names the bad record; restore the journal, or mine without the store that holds it',
    );
  }
  const notes: string[] = [];
  const ids = [...reader.journals.keys()].sort();
  const corpus = new Map(ids.map((id) => [id, reader.journals.get(id)!.records]));
  const mined = new Map(ids.filter((id) => reader.minedIds.has(id) && !reader.unsealed.has(id)).map((id) => [id, corpus.get(id)!]));
  const skipped = ids.filter((id) => reader.minedIds.has(id) && reader.unsealed.has(id));
  if (skipped.length > 0) notes.push(`not mined (not sealed, so --public-key vouches for nothing in it; still checked for conflicts): ${skipped.join(', ')}`);
  if (!key) notes.push('seal signatures not checked (chains only): pass --public-key FILE to require seals by your key');
  return { mined, corpus, stores, libraries, notes };
}
