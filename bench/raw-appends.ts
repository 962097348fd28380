/**
 * The raw baseline of every fsync'd-append figure: the same bytes appended to a plain file, one
 * write + fdatasync per chunk, flushed the way the store under test flushes — blocking
 * (fdatasyncSync) or on libuv's thread pool (`pool`).
 */
import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { fdatasyncOnPool } from '../stores/file-io.js';

export async function rawAppends(file: string, chunks: readonly Uint8Array[], pool: boolean): Promise<void> {
  const fd = openSync(file, 'a');
  try {
    for (const bytes of chunks) {
      let done = 0;
      while (done < bytes.length) done += writeSync(fd, bytes, done);
      if (pool) await fdatasyncOnPool(fd);
      else fdatasyncSync(fd);
    }
  } finally {
    closeSync(fd);
  }
}
