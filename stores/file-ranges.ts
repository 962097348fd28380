/**
 * Reading parts of a journal file without reading all of it: the first lines, the last line,
 * the lines (or the bytes) from a byte offset, and the byte offset of a line counted back from the end. A
 * snapshot anchors resume at a seq; with that seq's byte offset (kept beside the snapshot), resume
 * reads only the journal's tail — constant work however long the journal has grown.
 *
 * Every function reports "torn" when the file does not end with "\n" and leaves the decision
 * (TornTailError, never a silent drop) to the store. Offsets are trusted only after checking that
 * they start a line (the byte before is "\n") — a stale or foreign offset falls back to a scan.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

const NEWLINE = 0x0a;
const CHUNK = 64 * 1024;

function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buffer, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done === length ? buffer : buffer.subarray(0, done);
}

function withFile<T>(path: string, use: (fd: number, size: number) => T): T | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return use(fd, fstatSync(fd).size);
  } finally {
    closeSync(fd);
  }
}

/** Complete lines of `bytes` (without "\n"), and whether a torn remainder follows them. */
function splitLines(bytes: Buffer): { lines: string[]; torn: boolean } {
  const lines: string[] = [];
  let start = 0;
  for (let i = bytes.indexOf(NEWLINE); i >= 0; i = bytes.indexOf(NEWLINE, start)) {
    lines.push(bytes.toString('utf8', start, i));
    start = i + 1;
  }
  return { lines, torn: start < bytes.length };
}

/** The bytes from byte `offset` to the end (a viewer's follower reading on); undefined when there is no file. */
export function bytesFrom(path: string, offset: number): Buffer | undefined {
  return withFile(path, (fd, size) => readAt(fd, offset, Math.max(0, size - offset)));
}

/** Whether the file ends in a torn line (no final "\n"); undefined when there is no file. */
export function endsTorn(path: string): boolean | undefined {
  return withFile(path, (fd, size) => size > 0 && readAt(fd, size - 1, 1)[0] !== NEWLINE);
}

/** The first `count` complete lines (fewer if the file has fewer). */
export function headLines(path: string, count: number): { lines: string[]; torn: boolean; size: number } | undefined {
  return withFile(path, (fd, size) => {
    let length = Math.min(size, CHUNK);
    for (;;) {
      const bytes = readAt(fd, 0, length);
      const { lines, torn } = splitLines(bytes);
      if (lines.length >= count || length >= size) return { lines: lines.slice(0, count), torn: length >= size && torn, size };
      length = Math.min(size, length * 4);
    }
  });
}

/** The last complete line, its byte offset, and whether the file ends torn. */
export function lastLine(path: string): { line: string | undefined; offset: number; torn: boolean; size: number } | undefined {
  return withFile(path, (fd, size) => {
    if (size === 0) return { line: undefined, offset: 0, torn: false, size };
    const lastByte = readAt(fd, size - 1, 1)[0];
    if (lastByte !== NEWLINE) return { line: undefined, offset: 0, torn: true, size };
    let window = Math.min(size, CHUNK);
    for (;;) {
      const start = size - window;
      const bytes = readAt(fd, start, window);
      const prev = bytes.lastIndexOf(NEWLINE, bytes.length - 2);
      if (prev >= 0 || start === 0) {
        const lineStart = prev + 1;
        return { line: bytes.toString('utf8', lineStart, bytes.length - 1), offset: start + lineStart, torn: false, size };
      }
      window = Math.min(size, window * 4);
    }
  });
}

/** The complete lines from `offset` to the end, if `offset` starts a line; undefined otherwise. */
export function linesFrom(path: string, offset: number): { lines: string[]; torn: boolean; size: number } | undefined {
  return withFile(path, (fd, size) => {
    if (offset > size) return undefined;
    if (offset > 0 && readAt(fd, offset - 1, 1)[0] !== NEWLINE) return undefined;
    return { ...splitLines(readAt(fd, offset, size - offset)), size };
  });
}

/** The byte offset where line `seq` starts, counting back from the end of a file of `length` complete lines. */
export function offsetOfLine(path: string, length: number, seq: number): number | undefined {
  if (seq > length || seq < 0) return undefined;
  return withFile(path, (fd, size) => {
    if (seq === length) return size;
    // Line `seq` starts right after the (length - seq + 1)-th newline counted from the end.
    let needed = length - seq + 1;
    let end = size;
    while (end > 0) {
      const start = Math.max(0, end - CHUNK);
      const bytes = readAt(fd, start, end - start);
      for (let i = bytes.length - 1; i >= 0; i--) {
        if (bytes[i] === NEWLINE && --needed === 0) return start + i + 1;
      }
      end = start;
    }
    return needed === 1 ? 0 : undefined;
  });
}
