/**
 * File-system primitives for the file store's leases, snapshots and blobs, all synchronous on
 * purpose: they are short and rare beside appends, and a synchronous critical section cannot
 * interleave with another async task of the same process (so two FileStore instances in one
 * process need no extra in-process lock around a lease). The journal append's own flush is in
 * file.ts (on the thread pool by default).
 *
 * - `atomicWrite`: write a temp file, fsync it, rename it over the target, fsync the directory
 *   (the fsyncs can be skipped for files whose loss in a power cut is harmless, like leases).
 * - `fdatasyncOnPool`: fdatasync on libuv's thread pool, the event loop free meanwhile (the
 *   journal append's flush when it does not block; see file.ts).
 *   A reader sees the old file or the new one, never a mix; after return the new one is durable.
 * - `withLock`: a cross-process mutex — an O_EXCL lock file holding {pid, host, at} — around a
 *   short synchronous critical section (read-check-write of a lease file). A lock whose owner died
 *   (same host, ESRCH) or that is older than any critical section can last is stale: it is broken
 *   by renaming it aside (one process wins the rename) and checking the renamed file is the one
 *   judged stale. Residual risk, documented: a process pausing for over LOCK_STALE_MS inside the
 *   critical section could have its lock broken.
 * - `processAlive`: `process.kill(pid, 0)`; only ESRCH means dead.
 */
import { closeSync, fdatasync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { WeftError } from '../journal/errors.js';

export const HOST = hostname();
const LOCK_STALE_MS = 10_000;
const LOCK_WAIT_MS = 10_000;
let tmpCounter = 0;

export function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/** The file's contents, or undefined when it does not exist. */
export function readIfExists(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch (err) {
    if (errno(err) === 'ENOENT') return undefined;
    throw err;
  }
}

export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Write `bytes` to `path` atomically (tmp, rename): readers see the old or the new file, never a
 * mix. With `durable` (the default) the data and the rename are also fsync'd, so they survive a
 * power loss; lease files pass `durable: false` (see file-lease.ts for why that is safe).
 */
export function atomicWrite(path: string, bytes: string | Uint8Array, options: { durable?: boolean } = {}): void {
  const durable = options.durable ?? true;
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true });
  const tmp = `${path}.tmp-${process.pid}-${++tmpCounter}`;
  const fd = openSync(tmp, 'wx');
  try {
    writeFileSync(fd, bytes);
    if (durable) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      /* the rename error is the one to report */
    }
    throw err;
  }
  if (durable) fsyncDir(dir);
}

export function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errno(err) !== 'ESRCH';
  }
}

interface LockOwner {
  pid: number;
  host: string;
  at: number;
}

/** Run `section` (synchronous) holding the lock file at `lockPath`; waits while another process holds it. */
export async function withLock<T>(lockPath: string, section: () => T): Promise<T> {
  mkdirSync(dirname(lockPath), { recursive: true });
  const owner = JSON.stringify({ pid: process.pid, host: HOST, at: Date.now() } satisfies LockOwner);
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      writeFileSync(lockPath, owner, { flag: 'wx' });
      break;
    } catch (err) {
      if (errno(err) !== 'EEXIST') throw err;
    }
    if (breakIfStale(lockPath)) continue;
    if (Date.now() > deadline) {
      throw new WeftError(
        'journal.lock_busy',
        'transient',
        `could not take the lock ${lockPath} within ${LOCK_WAIT_MS / 1000} s: another process keeps it; ` +
          `if no Weft process is running on this store, delete that file and retry`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 2 + Math.floor(Math.random() * 5)));
  }
  try {
    return section();
  } finally {
    try {
      unlinkSync(lockPath);
    } catch {
      /* broken as stale by another process: nothing left to remove */
    }
  }
}

function breakIfStale(lockPath: string): boolean {
  let text: string;
  let mtime: number;
  try {
    text = readFileSync(lockPath, 'utf8');
    mtime = statSync(lockPath).mtimeMs;
  } catch (err) {
    if (errno(err) === 'ENOENT') return true; // released meanwhile: try again at once
    throw err;
  }
  if (!isStale(text, mtime)) return false;
  const aside = `${lockPath}.stale-${process.pid}-${++tmpCounter}`;
  try {
    renameSync(lockPath, aside);
  } catch (err) {
    if (errno(err) === 'ENOENT') return true; // another process broke it first
    throw err;
  }
  if (readFileSync(aside, 'utf8') !== text) {
    // We renamed a fresh lock taken after we looked: put it back unless yet another was taken.
    try {
      linkSync(aside, lockPath);
    } catch {
      /* EEXIST: a newer lock exists; the fresh one we moved is lost (documented residual risk) */
    }
  }
  unlinkSync(aside);
  return true;
}

function isStale(text: string, mtimeMs: number): boolean {
  let owner: Partial<LockOwner>;
  try {
    owner = JSON.parse(text) as Partial<LockOwner>;
  } catch {
    return Date.now() - mtimeMs > 1_000; // died between creating and writing the lock file
  }
  // Our own pid: no section of ours can be open while we wait (sections are synchronous), so a
  // previous process with the same pid left it.
  if (owner.host === HOST && owner.pid === process.pid) return true;
  if (owner.host === HOST && typeof owner.pid === 'number' && !processAlive(owner.pid)) return true;
  return Date.now() - (owner.at ?? mtimeMs) > LOCK_STALE_MS;
}

/** fdatasync on libuv's thread pool: the event loop goes on meanwhile. */
export function fdatasyncOnPool(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve())));
}
