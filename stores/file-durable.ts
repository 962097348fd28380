/**
 * The file store's durable mark: `<dir>/invocations/<id>/journal.durable`, how many bytes (and
 * records) of `journal.jsonl` are flushed — so that a reader in another process (the viewer
 * following a run) shows only durable records: never one written but not yet fdatasync'd, never one
 * that a failed flush takes back (file.ts `takeBack` cuts the file back to the mark, never below).
 *
 * - The lease holder writes it after each successful flush, and creates it (with the journal's
 *   length then) BEFORE it opens the journal for appending: a journal a writer of this version
 *   appends to never exists without its mark.
 * - One fixed-width line rewritten in place at offset 0 (`pwrite`, one syscall, a few µs; no
 *   fsync, no rename) on an fd the holder keeps open beside the journal's:
 *     `w1 <size, 16 digits> <records, 12 digits> <size again>\n`
 *   A reader racing a rewrite could in principle read a mix of two versions; the size is written
 *   twice, so a mix reads as two different sizes and is read again (and, failing that, read as
 *   "nothing new yet" — never as more than was durable). Sizes only grow while one holder writes.
 * - Not fsynced: after a power cut the mark may be older than the journal's durable bytes (never
 *   newer: it is written after the journal's flush). So it bounds what is shown only while a live
 *   writer holds the lease; once no live writer does (released at the end, or its process gone),
 *   the journal's complete lines are what any next writer takes as the journal, and are shown whole.
 * - A journal with no mark at all was written by a Weft from before the mark; its writer has ended
 *   (or its next writer will create the mark before it appends): it is read whole, as before.
 * - Writing it is best effort: the append it follows has succeeded, and a mark that failed to move
 *   only makes a viewer lag until the next one.
 */
import { closeSync, constants, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { errno } from './file-io.js';

export const DURABLE_MARK = 'journal.durable';
const MARK_BYTES = 'w1 '.length + 16 + 1 + 12 + 1 + 16 + 1;
const MARK = /^w1 (\d{16}) (\d{12}) (\d{16})\n$/;

/** How much of a journal is durable: its first `size` bytes, holding `records` complete records. */
export interface DurableMark {
  size: number;
  records: number;
}

function markLine(mark: DurableMark): Buffer {
  const size = String(mark.size).padStart(16, '0');
  return Buffer.from(`w1 ${size} ${String(mark.records).padStart(12, '0')} ${size}\n`, 'latin1');
}

/**
 * Open (creating it when absent, never truncating) the mark of the journal in `dir`; when it was
 * absent or empty, write `initial` into it (what the journal held when the writer opened it).
 * Returns its fd for `writeDurableMark`, or undefined when it cannot be had (then no mark moves, and
 * a viewer shows what it showed).
 */
export function openDurableMark(dir: string, initial: () => DurableMark): number | undefined {
  let fd: number;
  try {
    fd = openSync(join(dir, DURABLE_MARK), constants.O_RDWR | constants.O_CREAT, 0o644);
  } catch {
    return undefined;
  }
  try {
    if (parseMark(readMarkBytes(fd)) === undefined) writeDurableMark(fd, initial());
    return fd;
  } catch {
    closeSync(fd);
    return undefined;
  }
}

/** Move the mark (after a successful flush). Best effort: see the header. */
export function writeDurableMark(fd: number, mark: DurableMark): void {
  try {
    const line = markLine(mark);
    writeSync(fd, line, 0, line.length, 0);
  } catch {
    /* the append succeeded; a viewer lags until the next mark */
  }
}

function readMarkBytes(fd: number): Buffer {
  const buffer = Buffer.alloc(MARK_BYTES + 1);
  const n = readSync(fd, buffer, 0, buffer.length, 0);
  return buffer.subarray(0, n);
}

/** A mark's bytes read as a mark; undefined when empty, garbled, or torn (two sizes that differ). */
function parseMark(bytes: Buffer): DurableMark | undefined {
  const m = MARK.exec(bytes.toString('latin1'));
  if (!m || m[1] !== m[3]) return undefined;
  return { size: Number(m[1]), records: Number(m[2]) };
}

/**
 * The mark of the journal in `dir`: `'absent'` when there is none (a journal from before the mark),
 * a mark of 0 when it exists but cannot be read consistently after a few tries (just created, or
 * garbled: nothing is shown beyond what is surely durable).
 */
export function readDurableMark(dir: string): DurableMark | 'absent' {
  let fd: number;
  try {
    fd = openSync(join(dir, DURABLE_MARK), 'r');
  } catch (err) {
    if (errno(err) === 'ENOENT') return 'absent';
    return { size: 0, records: 0 };
  }
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      const mark = parseMark(readMarkBytes(fd));
      if (mark) return mark;
    }
    return { size: 0, records: 0 };
  } catch {
    return { size: 0, records: 0 };
  } finally {
    closeSync(fd);
  }
}
