/**
 * An invocation's journal as the viewer may show it — only what is durable:
 *
 * - `journalBytes`: the lines a journal file holds, what the page verifies. A workspace journal is
 *   its file, byte for byte (so a tampered file is seen as it is), but while a live writer holds
 *   its lease only up to the writer's durable mark (stores/file-durable.ts): never a record
 *   written and not yet flushed, nor one a failed flush takes back. A Redis journal is the list of
 *   its records written out line by line, the bytes `weft export` and `weft verify <id>` use (Redis
 *   answers a read only once the write before it is in its fsync'd AOF). A stored record that
 *   cannot be read is stood in for by a line that is not JSON, so the page names its seq.
 * - `durableRecords`: the records from a seq on, by the same rule — what the live follower sends;
 *   `durableLines` the same as the workspace file's lines, for a follower with nothing to redact.
 *   `storedLines` is what a follower with nothing to redact sends: the store's own lines — those of
 *   a workspace journal (durableLines), or Redis's list entries — neither parsed nor encoded again.
 *   A follower reads again at every change and at its poll, so these give what is new under the
 *   durable mark as soon as there is any, and what lies past the mark at a later read (file.ts
 *   `durableJournal`, `prefix`).
 */
import { promises as fs } from 'node:fs';
import { splitJournalText } from '../journal/reader.js';
import type { JournalRecord } from '../journal/records.js';
import { journalFileOf, type JournalStore } from '../journal/store.js';
import { storedJournalLines } from '../journal/stored-lines.js';
import { FileStore } from '../stores/file.js';
import { RedisStore } from '../stores/redis.js';

/** The journal's bytes, or undefined when the store holds no journal for `id` (the id is valid). */
export async function journalBytes(store: JournalStore, id: string): Promise<Uint8Array | undefined> {
  if (store instanceof FileStore) return (await store.durableJournal(id))?.bytes;
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

/** Where a follower has read a workspace journal to: the next seq and the byte it starts at. */
export interface FollowCursor {
  seq: number;
  byte: number;
}

/**
 * The durable records of `id` from seq `from` on, in order (a torn last line — a write under way —
 * is left for later). Throws when a line is not JSON: the follower reads again at the next change.
 * With `cursor` (where the previous call stopped, for the same `from`), a workspace journal is read
 * from that byte on, not from its start: a follower's cost per record does not grow with the
 * journal. The cursor after the records is returned with them.
 */
export async function durableRecords(store: JournalStore, id: string, from: number, cursor?: FollowCursor): Promise<{ records: JournalRecord[]; cursor?: FollowCursor }> {
  if (!(store instanceof FileStore)) return { records: await store.read(id, from) };
  const { lines, cursor: after } = await durableLines(store, id, from, cursor);
  return { records: lines.map((line) => JSON.parse(line) as JournalRecord), ...(after ? { cursor: after } : {}) };
}

/**
 * The durable lines of a workspace journal from seq `from` on, as the file holds them (line i is
 * seq from + i: the file is the journal, in order) — what a follower sends when nothing in them is
 * to be redacted, without parsing and re-encoding each record. `cursor` as for durableRecords.
 */
export async function durableLines(store: FileStore, id: string, from: number, cursor?: FollowCursor): Promise<{ lines: string[]; cursor?: FollowCursor }> {
  const at = cursor && cursor.seq === from ? cursor : undefined;
  // A follower's read (`prefix`): what is new under the mark now; the rest at the next read.
  const journal = await store.durableJournal(id, at?.byte ?? 0, { prefix: true });
  if (journal === undefined) return { lines: [] };
  // Only complete lines: the bytes after the last line break are a write under way.
  const end = journal.bytes.lastIndexOf(0x0a) + 1;
  const { lines } = splitJournalText(journal.bytes.subarray(0, end).toString('utf8'));
  const firstSeq = at ? at.seq : 0; // the seq of lines[0]
  return { lines: lines.slice(from - firstSeq), cursor: { seq: firstSeq + lines.length, byte: (at?.byte ?? 0) + end } };
}

/**
 * The journal's stored lines from seq `from` on, as the store keeps them, for a store that keeps
 * its journal as the lines a journal file holds: a workspace (durableLines, `cursor` as there) or
 * Redis (its list entries, each a record's canonical line: RedisStore.readLines). Undefined for any
 * other store: its records are read and encoded instead (durableRecords).
 */
export async function storedLines(store: JournalStore, id: string, from: number, cursor?: FollowCursor): Promise<{ lines: string[]; cursor?: FollowCursor } | undefined> {
  if (store instanceof FileStore) return durableLines(store, id, from, cursor);
  if (store instanceof RedisStore) return { lines: await store.readLines(id, from) };
  return undefined;
}
