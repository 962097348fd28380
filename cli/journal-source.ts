/**
 * What `weft verify` and `weft log` read, the same way in both modes: a file (a journal, or a
 * bundle written by `weft export`), or an invocation by id in a store — the workspace (`--dir D`,
 * default ./.weft) or Redis (`--redis URL`, or WEFT_REDIS_URL, or a reference `redis://…#ID` that
 * names both: cli/journal-ref.ts). An argument that names an existing
 * file, or looks like a path (a slash, a .jsonl or .json name, not an id), is a file; anything else
 * is an invocation id.
 *
 * A workspace's journal is its file, read as it is. A Redis journal is the list of its lines; they
 * are read back as records and written out as lines again — the bytes `weft export` puts in a
 * bundle. A stored line that is not JSON is stood in for by a line that is not JSON either, so the
 * verdict names its seq like it would for a file.
 *
 * A file is read whole by `readJournalFile` (`weft verify` streams one that starts like a journal);
 * what cannot be read is one line, `cannot read journal FILE (CODE)`, the command's exit 2.
 */
import { existsSync, promises as fs, statSync } from 'node:fs';
import path from 'node:path';
import { isValidInvocationId, journalFileOf } from '../journal/store.js';
import { storedJournalLines } from '../journal/stored-lines.js';
import { locate, locationOf } from './hints.js';
import { openStore, storeChoice } from './store-choice.js';
import { isTenants, tenantOfFile } from './tenant-scope.js';
import { parseRedisJournalRef } from './journal-ref.js';
import { MissingPathError } from './exit-codes.js';

/** The file to read, or the bytes of a stored journal; `name` says where it came from. */
export type JournalSource = { file: string; name: string } | { bytes: Uint8Array; name: string; id: string };

/** The argument names neither a file nor an invocation of the store: the message says where it looked (exit 2). */
export class JournalNotFoundError extends Error {
  override readonly name = 'JournalNotFoundError';
}

/**
 * Resolve `target` (see the header) with the command's store flags (`dir`, `redis`, …); throws
 * JournalNotFoundError, UsageError for a bad flag, or the store's error when it cannot be opened.
 */
export async function journalSource(target: string, strings: Record<string, string | undefined>): Promise<JournalSource> {
  // A Redis journal's reference (`redis://HOST:PORT/DB[?prefix=P]#ID`, what run --json prints as its journal): that store, that id.
  const ref = parseRedisJournalRef(target);
  if (ref) return journalSource(ref.id, { ...strings, redis: ref.url, 'redis-prefix': ref.prefix });
  // A path (an existing file, a folder in it, a .jsonl or .json name) is a file: the reader says what is wrong with it.
  if ((existsSync(target) && statSync(target).isFile()) || /[\\/]|\.jsonl?$/.test(target) || !isValidInvocationId(target)) {
    // --tenant T: another tenant's file (or one whose pin cannot be read) is answered as a missing file — the words readJournalFile uses.
    if (strings.tenant !== undefined && tenantOfFile(target) !== strings.tenant) throw unreadableJournal(target, { code: 'ENOENT' }); // the very error of a file that is not there
    return { file: target, name: target };
  }
  // Without --dir: the default workspace (workspace.ts DEFAULT_DIR; not imported, verify stays light).
  const choice = storeChoice(path.resolve(strings.dir ?? '.weft'), strings);
  const store = await openStore(choice);
  const notThere = () => new JournalNotFoundError(locate(`no journal file ${target}, and no invocation ${target} in ${store.name} (weft ls lists them)`, target, locationOf(choice)));
  // --tenant T: another tenant's invocation is not there (cli/tenant-scope.ts).
  if (!(await isTenants(store, target, strings.tenant))) throw notThere();
  const file = journalFileOf(store, target);
  if (file !== undefined) {
    if (!existsSync(file)) throw notThere();
    return { file, name: file };
  }
  const bytes = await storedJournalLines(store, target);
  if (bytes === undefined) throw notThere();
  return { bytes, name: `${target} in ${store.name}`, id: target };
}


/**
 * The one-line error for a journal file that cannot be read (its code, ENOENT…, else the message):
 * a file the user named that is not there is a MissingPathError, `file.not_found` in the --json line
 * (cli/exit-codes.ts).
 */
export function unreadableJournal(file: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code;
  const message = `cannot read journal ${file} (${code ?? (err as Error).message})`;
  return code === 'ENOENT' ? new MissingPathError(message) : new Error(message);
}

/** Read a journal file's bytes; throws a one-line Error the command prints with exit code 2. */
export async function readJournalFile(file: string): Promise<Uint8Array> {
  try {
    return await fs.readFile(file);
  } catch (err) {
    throw unreadableJournal(file, err);
  }
}
