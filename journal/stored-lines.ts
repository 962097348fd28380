/**
 * A store's journal written out as the lines a journal file holds: its records line by line, the
 * bytes `weft export` and `weft verify <id>` use for a store without files (Redis). A stored
 * record that cannot be read (a line that is not JSON) is stood in for by a line that is not JSON
 * after the good ones, so a verifier names its seq. Undefined when the store has no journal.
 */
import { recordLine } from './encode.js';
import { JournalIntegrityError } from './errors.js';
import type { JournalRecord } from './records.js';
import type { JournalStore } from './store.js';

export async function storedJournalLines(store: JournalStore, id: string): Promise<Uint8Array | undefined> {
  let records: JournalRecord[];
  let bad = '';
  try {
    records = await store.read(id);
  } catch (err) {
    if (!(err instanceof JournalIntegrityError)) throw err;
    records = await store.read(id, 0, err.seq);
    bad = '{ (a stored line that is not JSON)\n';
  }
  if (records.length === 0 && bad === '') return undefined;
  return new TextEncoder().encode(records.map((r) => `${recordLine(r)}\n`).join('') + bad);
}
