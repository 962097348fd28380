/**
 * An invocation's journal as the lines a journal file holds — what the page verifies. A workspace
 * journal is its file, byte for byte (so a tampered file is seen as it is); a Redis journal is the
 * list of its records written out line by line, the bytes `weft export` and `weft verify <id>`
 * use. A stored record that cannot be read is stood in for by a line that is not JSON, so the
 * page names its seq.
 */
import { promises as fs } from 'node:fs';
import { journalFileOf, type JournalStore } from '../journal/store.js';
import { storedJournalLines } from '../journal/stored-lines.js';

/** The journal's bytes, or undefined when the store holds no journal for `id` (the id is valid). */
export async function journalBytes(store: JournalStore, id: string): Promise<Uint8Array | undefined> {
  const file = journalFileOf(store, id);
  if (file !== undefined) {
    try {
      return await fs.readFile(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }
  return storedJournalLines(store, id);
}
