/**
 * The file store's lease: `<invocation dir>/lease.json` = { writer, pid, host, token, expiresAt,
 * released? }, replaced only by atomic rename, and only inside the invocation's lock
 * (`lease.lock`, see file-io.ts), so two processes — or two FileStore instances in one process —
 * can never both see the lease free and both take it.
 *
 * Invariants:
 * - A lease excludes every other acquirer (any writer id, any process, this one included) until
 *   it expires, is released, or — same host only — its process is dead (`kill(pid, 0)` → ESRCH).
 *   A dead holder is taken over at once, without waiting for its TTL.
 * - Every acquisition writes token = previous token + 1; the file is never deleted, so tokens
 *   strictly increase for the life of the store directory and fencing holds across process
 *   crashes and restarts. The lease file is not fsync'd: a power cut may roll it back, but it also
 *   ends every process that could hold a lease on this machine's disk (the file store is a
 *   local-disk store; several hosts sharing one directory should use the Redis store).
 * - Renew and release happen under the lock too (a renew racing a takeover must not write the old
 *   token back). Releasing a lease that was taken over changes nothing.
 * - Reading the lease for fencing (`readLease`) needs no lock: the rename makes it atomic.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { LeaseHeldError } from '../journal/errors.js';
import type { AcquireOptions, Lease } from '../journal/store.js';
import { checkFence, heldDetail, leaseExcludes, type StoredLease } from './checks.js';
import { HOST, atomicWrite, processAlive, readIfExists, withLock } from './file-io.js';

export const LEASE_FILE = 'lease.json';
const LOCK_FILE = 'lease.lock';

/** The lease recorded in `invocationDir`, or undefined when none was ever taken. */
export function readLease(invocationDir: string): StoredLease | undefined {
  const bytes = readIfExists(join(invocationDir, LEASE_FILE));
  if (bytes === undefined) return undefined;
  let value: StoredLease;
  try {
    value = JSON.parse(bytes.toString('utf8')) as StoredLease;
  } catch {
    throw new Error(`${join(invocationDir, LEASE_FILE)} is not valid JSON; it is written only by atomic rename, so something else wrote it — restore it or delete it if no writer is running`);
  }
  if (typeof value?.token !== 'number' || typeof value.expiresAt !== 'number' || typeof value.writer !== 'string') {
    throw new Error(`${join(invocationDir, LEASE_FILE)} is not a Weft lease file (expected writer, token, expiresAt)`);
  }
  return value;
}

/**
 * The lease as the fencing check on every append needs it, for one syscall instead of five: the
 * file's identity (inode, size, change time to the nanosecond) is compared with the last read,
 * and the file is re-read only when it changed. Every lease write is a rename of a new file, so a
 * takeover, a renewal or a release always changes that identity.
 */
export class LeaseReader {
  private readonly cache = new Map<string, { ino: bigint; size: bigint; ctimeNs: bigint; lease: StoredLease | undefined }>();

  read(invocationDir: string): StoredLease | undefined {
    const stat = statSync(join(invocationDir, LEASE_FILE), { bigint: true, throwIfNoEntry: false });
    if (!stat) {
      this.cache.delete(invocationDir);
      return undefined;
    }
    const cached = this.cache.get(invocationDir);
    if (cached && cached.ino === stat.ino && cached.size === stat.size && cached.ctimeNs === stat.ctimeNs) return cached.lease;
    const lease = readLease(invocationDir);
    this.cache.set(invocationDir, { ino: stat.ino, size: stat.size, ctimeNs: stat.ctimeNs, lease });
    return lease;
  }
}

/** Is the recorded holder still running? Another host's process cannot be checked: assume so. */
export function holderAlive(stored: StoredLease): boolean {
  if (stored.pid === undefined || stored.host !== HOST) return true;
  return processAlive(stored.pid);
}

function writeLease(invocationDir: string, stored: StoredLease): void {
  // Atomic (rename) but not fsync'd: the lease only has to order processes that are alive. A power
  // cut that could roll lease.json back also kills every process on this host that held a lease,
  // so no fenced writer survives to use a stale token — and the journal's expected-seq check
  // still refuses any append that does not continue the journal exactly.
  atomicWrite(join(invocationDir, LEASE_FILE), JSON.stringify(stored) + '\n', { durable: false });
}

function toLease(invocation: string, stored: StoredLease): Lease {
  return { invocation, writer: stored.writer, token: stored.token, expiresAt: stored.expiresAt };
}

/** Take the lease, or throw LeaseHeldError naming the live holder. */
export function acquireLease(invocationDir: string, invocation: string, options: AcquireOptions, now: () => number): Promise<Lease> {
  return withLock(join(invocationDir, LOCK_FILE), () => {
    const current = readLease(invocationDir);
    const at = now();
    if (current && leaseExcludes(current, at, holderAlive)) {
      throw new LeaseHeldError(invocation, current.writer, heldDetail(current, at));
    }
    const stored: StoredLease = {
      writer: options.writer,
      pid: process.pid,
      host: HOST,
      token: (current?.token ?? 0) + 1,
      expiresAt: at + options.ttlMs,
    };
    writeLease(invocationDir, stored);
    return toLease(invocation, stored);
  });
}

/** Extend the lease; FencedError if it was taken over or released. */
export function renewLease(invocationDir: string, lease: Lease, ttlMs: number, now: () => number): Promise<Lease> {
  return withLock(join(invocationDir, LOCK_FILE), () => {
    const current = readLease(invocationDir);
    checkFence(lease, current);
    const stored: StoredLease = { ...current!, expiresAt: now() + ttlMs };
    writeLease(invocationDir, stored);
    return toLease(lease.invocation, stored);
  });
}

/** Give the lease up (expires now, token fenced). A lease already taken over is left alone. */
export function releaseLease(invocationDir: string, lease: Lease, now: () => number): Promise<void> {
  return withLock(join(invocationDir, LOCK_FILE), () => {
    const current = readLease(invocationDir);
    if (!current || current.token !== lease.token || current.released) return;
    writeLease(invocationDir, { ...current, expiresAt: now(), released: true });
  });
}
