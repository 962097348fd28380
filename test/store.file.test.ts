/**
 * FileStore: the conformance suite (injected clock, torn-tail crashes, real holder processes,
 * blob corruption), plus what only the file store promises — its on-disk layout, group commit,
 * the lease file and its lock, and races between real processes.
 *
 * Holder processes import the compiled journal in dist/ (`npm test` builds it first; compiling a
 * copy here cost every run seconds of CPU).
 */
import fs, { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { canonicalize } from '../journal/canonical.js';
import { LeaseHeldError } from '../journal/errors.js';
import type { Lease } from '../journal/store.js';
import { FileStore } from '../stores/file.js';
import { spawnTracked } from './support/children.js';
import { chain, storeConformance, testPin, type Holder } from './store-conformance.js';

const repo = resolve(import.meta.dirname, '..');
const scratch = mkdtempSync(join(tmpdir(), 'weft-file-store-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(scratch, `store-${++dirs}`, '.weft');

/** The URL of the compiled journal (dist/, built by `npm test` before vitest runs) for holder processes; its stores are beside it (dist/stores/). */
async function compiledJournal(): Promise<string> {
  const entry = join(repo, 'dist', 'journal', 'index.js');
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run "npm run build" (npm test does it first)`);
  return pathToFileURL(entry).href;
}

const CHILD = `
const [url, dir, invocation, ttl, records, pin] = process.argv.slice(1);
const j = await import(url);
const { FileStore } = await import(url.replace('/journal/index.js', '/stores/index.js'));
const store = new FileStore(dir);
const options = { writer: 'child-' + process.pid, ttlMs: Number(ttl) };
let lease;
try {
  if (Number(records) === 0) lease = await store.acquire(invocation, options);
  else {
    const w = await j.JournalWriter.create(store, { invocation, tenant: 'acme', intent: 'holder', pin: JSON.parse(pin) }, options);
    for (let i = 1; i < Number(records); i++) await w.append({ kind: 'state.observed', epoch: 0, body: { actuator: 'probe', key: 'c' + i, state: { n: i } } });
    lease = w.currentLease;
  }
  process.stdout.write(JSON.stringify({ lease }) + '\\n');
} catch (err) {
  process.stdout.write(JSON.stringify({ error: err.code ?? String(err) }) + '\\n');
  process.exit(0);
}
setInterval(() => {}, 1 << 30);
`;

/** Start a process that takes the lease through the compiled store; resolves once it holds it (or was refused). */
async function spawnHolder(dir: string, invocation: string, ttlMs: number, records: number): Promise<Holder & { error?: string }> {
  const url = await compiledJournal();
  const child = spawnTracked(process.execPath, ['--input-type=module', '-e', CHILD, url, dir, invocation, String(ttlMs), String(records), JSON.stringify(testPin)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const line = await new Promise<string>((done, fail) => {
    let buf = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      if (buf.includes('\n')) done(buf.slice(0, buf.indexOf('\n')));
    });
    child.once('exit', (code) => fail(new Error(`holder exited (${code}) before reporting`)));
  });
  const reply = JSON.parse(line) as { lease?: Lease; error?: string };
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  return { lease: reply.lease!, error: reply.error, kill };
}

// The conformance suite for both ways of flushing: the default ('auto': one journal at a time
// blocks) and always on the thread pool.
for (const flush of ['auto', 'thread-pool'] as const) {
  storeConformance({
    name: `file (flush: ${flush})`,
    injectableClock: true,
    create: async ({ now }) => new FileStore(freshDir(), { now, flush }),
    peer: async (store, { now }) => new FileStore((store as FileStore).dir, { now, flush }),
    cleanup: async (store) => rmSync((store as FileStore).dir, { recursive: true, force: true }),
    crash: {
      tearTail: async (store, invocation, partial) => appendFileSync((store as FileStore).journalPath(invocation), partial),
      holder: (store, invocation, { ttlMs, records }) => spawnHolder((store as FileStore).dir, invocation, ttlMs, records),
    },
    corruptBlob: async (store, digest) => writeFileSync(join((store as FileStore).dir, 'blobs', digest), 'tampered'),
    damageMetadata: async (store, invocation, text) => writeFileSync(join((store as FileStore).dir, 'invocations', invocation, 'meta.json'), text),
  });
}

describe('FileStore', () => {
  test('lays out one canonical JSONL journal, a lease file and a snapshot per invocation', async () => {
    const dir = freshDir();
    const store = new FileStore(dir);
    const lease = await store.acquire('inv-1', { writer: 'w1', ttlMs: 60_000 });
    const records = chain('inv-1', 3);
    await store.append(lease, 0, records);
    await store.putSnapshot(lease, { seq: 3, hash: records[2]!.hash, data: { b: 1, a: [2] } });
    const base = join(dir, 'invocations', 'inv-1');
    expect(readFileSync(join(base, 'journal.jsonl'), 'utf8')).toBe(records.map((r) => canonicalize(r) + '\n').join(''));
    expect(JSON.parse(readFileSync(join(base, 'lease.json'), 'utf8'))).toMatchObject({ writer: 'w1', pid: process.pid, token: lease.token, expiresAt: lease.expiresAt });
    // The snapshot keeps the byte offset where its seq starts, so resume reads only the tail.
    const offset = Buffer.byteLength(readFileSync(join(base, 'journal.jsonl'), 'utf8'));
    expect(readFileSync(join(base, 'snapshot.json'), 'utf8')).toBe(`{"data":{"a":[2],"b":1},"hash":"${records[2]!.hash}","offset":${offset},"seq":3}\n`);
    expect(existsSync(join(base, 'lease.lock'))).toBe(false);
    const digest = await store.putBlob(new Uint8Array([1, 2, 3]));
    expect(readFileSync(join(dir, 'blobs', digest))).toEqual(Buffer.from([1, 2, 3]));
    await store.close();
  });

  type Flush = (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;
  const eio = () => Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }) as NodeJS.ErrnoException;

  /** A store flushing on the thread pool, holding the lease of `invocation`, whose journal has the first of `n` records. */
  async function poolStoreWithOne(invocation: string, n: number) {
    const dir = freshDir();
    const store = new FileStore(dir, { flush: 'thread-pool' });
    const lease = await store.acquire(invocation, { writer: 'w', ttlMs: 60_000 });
    const records = chain(invocation, n);
    await store.append(lease, 0, records.slice(0, 1));
    return { dir, store, lease, records };
  }
  /** Count the journal's write and flush calls while `run` runs; `flush` (given the real one) may stand in for fdatasync. */
  async function watchingIo(run: () => Promise<void>, flush?: (fd: number, done: (err: NodeJS.ErrnoException | null) => void, real: Flush) => void) {
    const calls = { write: 0, datasync: 0, datasyncSync: 0, fsync: 0, maxFlushing: 0 };
    let flushing = 0;
    const original = { writeSync: fs.writeSync, fdatasync: fs.fdatasync, fdatasyncSync: fs.fdatasyncSync, fsyncSync: fs.fsyncSync };
    fs.writeSync = ((...args: Parameters<typeof fs.writeSync>) => (calls.write++, original.writeSync(...args))) as typeof fs.writeSync;
    fs.fdatasync = ((fd: number, done: (err: NodeJS.ErrnoException | null) => void) => {
      calls.datasync++;
      calls.maxFlushing = Math.max(calls.maxFlushing, ++flushing);
      const finish = (err: NodeJS.ErrnoException | null) => {
        flushing--;
        done(err);
      };
      if (flush) flush(fd, finish, original.fdatasync);
      else original.fdatasync(fd, finish);
    }) as typeof fs.fdatasync;
    fs.fdatasyncSync = (fd) => (calls.datasyncSync++, original.fdatasyncSync(fd));
    fs.fsyncSync = (fd) => (calls.fsync++, original.fsyncSync(fd));
    syncBuiltinESMExports();
    try {
      await run();
    } finally {
      Object.assign(fs, original);
      syncBuiltinESMExports();
    }
    return calls;
  }

  // write: the journal's ONE write, and the durable mark's two (file-durable.ts: created before the
  // journal is opened for appending, moved after the flush) — never flushed.
  test.each([
    ['thread-pool', { write: 3, datasync: 1, datasyncSync: 0, fsync: 0, maxFlushing: 1 }],
    ['blocking', { write: 3, datasync: 0, datasyncSync: 1, fsync: 0, maxFlushing: 0 }],
    ['auto', { write: 3, datasync: 0, datasyncSync: 1, fsync: 0, maxFlushing: 0 }], // one journal open: blocks
  ] as const)('group commit: one append of many records is one write and one fdatasync (flush: %s)', async (flush, expected) => {
    const store = new FileStore(freshDir(), { flush });
    const lease = await store.acquire('group', { writer: 'w', ttlMs: 60_000 });
    const calls = await watchingIo(() => store.append(lease, 0, chain('group', 20)));
    expect(calls).toEqual(expected);
    expect(await store.read('group')).toEqual(chain('group', 20));
    await store.close();
  });

  test('invocations appending at the same time flush at the same time; one journal flushes one append at a time, in order', async () => {
    const store = new FileStore(freshDir(), { flush: 'thread-pool' });
    const a = await store.acquire('inv-a', { writer: 'w', ttlMs: 60_000 });
    const b = await store.acquire('inv-b', { writer: 'w', ttlMs: 60_000 });
    const [ra, rb] = [chain('inv-a', 4), chain('inv-b', 2)];
    // Hold every flush until both invocations have one running: with a flush that blocked the event
    // loop, the second append could not even start.
    const held: (() => void)[] = [];
    let released = false;
    const calls = await watchingIo(
      async () => {
        await Promise.all([store.append(a, 0, ra.slice(0, 2)), store.append(a, 2, ra.slice(2)), store.append(b, 0, rb)]);
      },
      (fd, done, real) => {
        if (released) return real(fd, done);
        held.push(() => real(fd, done));
        if (held.length === 2) {
          released = true;
          held.splice(0).forEach((go) => go());
        }
      },
    );
    expect(calls.maxFlushing).toBe(2); // inv-a's first and inv-b's, together; inv-a's second waited
    expect(calls.datasync).toBe(3);
    expect(await store.read('inv-a')).toEqual(ra);
    expect(await store.read('inv-b')).toEqual(rb);
    await store.close();
  });

  test("flush 'auto' blocks while one journal is open for appending and uses the pool once two are", async () => {
    const store = new FileStore(freshDir());
    const a = await store.acquire('auto-a', { writer: 'w', ttlMs: 60_000 });
    const b = await store.acquire('auto-b', { writer: 'w', ttlMs: 60_000 });
    const [ra, rb] = [chain('auto-a', 2), chain('auto-b', 1)];
    const alone = await watchingIo(() => store.append(a, 0, ra.slice(0, 1)));
    expect(alone).toMatchObject({ datasync: 0, datasyncSync: 1 });
    // b's append opens its journal before a's decides how to flush (each runs synchronously up to
    // its flush, in call order), so both see two journals open and both go to the pool.
    const together = await watchingIo(async () => {
      await Promise.all([store.append(b, 0, rb), store.append(a, 1, ra.slice(1))]);
    });
    expect(together).toMatchObject({ datasync: 2, datasyncSync: 0, maxFlushing: 2 });
    await store.release(b); // one journal open again
    const againAlone = await watchingIo(() => store.append(a, 2, chain('auto-a', 3).slice(2)));
    expect(againAlone).toMatchObject({ datasync: 0, datasyncSync: 1 });
    await store.close();
  });

  test('a failed flush is reported, leaves the journal as it was, and the same records can be appended again', async () => {
    const { dir, store, lease, records } = await poolStoreWithOne('eio', 3);
    const path = join(dir, 'invocations', 'eio', 'journal.jsonl');
    const before = readFileSync(path);
    const failing: Flush = (_fd, done) => done(eio());
    let failure: unknown;
    await watchingIo(async () => {
      failure = await store.append(lease, 1, records.slice(1)).catch((err: unknown) => err);
    }, failing);
    expect((failure as NodeJS.ErrnoException).code).toBe('EIO');
    expect(readFileSync(path)).toEqual(before); // never acknowledged, so not kept
    expect(await store.length('eio')).toBe(1);
    await store.append(lease, 1, records.slice(1));
    expect(await store.read('eio')).toEqual(records);
    await store.close();
  });

  /** A stand-in for fdatasync that holds the first `hold` flushes until `release` is called; later ones run. */
  function holdingFlushes(hold = 1) {
    const held: { fd: number; done: (err: NodeJS.ErrnoException | null) => void; real: Flush }[] = [];
    return {
      flush: ((fd, done, real) => {
        if (held.length < hold) held.push({ fd, done, real });
        else real(fd, done);
      }) as (fd: number, done: (err: NodeJS.ErrnoException | null) => void, real: Flush) => void,
      held: () => held.length,
      /** Let the held flushes run, or fail them with `error`. */
      release: (error?: NodeJS.ErrnoException) => held.splice(0).forEach(({ fd, done, real }) => (error ? done(error) : real(fd, done))),
    };
  }
  const until = async (cond: () => boolean) => {
    for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 1));
    expect(cond()).toBe(true);
  };

  test('release and close wait for a flush in flight: the lease is not let go until the append is durable', async () => {
    const dir = freshDir();
    const store = new FileStore(dir, { flush: 'thread-pool' });
    const lease = await store.acquire('wait', { writer: 'w', ttlMs: 60_000 });
    const records = chain('wait', 2);
    const hold = holdingFlushes();
    await watchingIo(async () => {
      const appended = store.append(lease, 0, records);
      await until(() => hold.held() === 1);
      let released = false;
      const releasing = store.release(lease).then(() => (released = true));
      const closing = store.close();
      await new Promise((r) => setTimeout(r, 20)); // time for release to finish, were it not queued
      expect(released).toBe(false); // still the holder's lease while its append is unflushed
      expect(JSON.parse(readFileSync(join(dir, 'invocations', 'wait', 'lease.json'), 'utf8')).released).toBeUndefined();
      hold.release();
      await Promise.all([appended, releasing, closing]);
    }, hold.flush);
    const next = new FileStore(dir);
    const lease2 = await next.acquire('wait', { writer: 'w2', ttlMs: 60_000 });
    expect(await next.read('wait')).toEqual(records);
    await next.append(lease2, 2, chain('wait', 3).slice(2));
    expect(await next.length('wait')).toBe(3);
    await next.close();
  });

  test('a flush that fails after the lease was taken over leaves the new holder\'s records alone', async () => {
    const dir = freshDir();
    let t = 1_767_225_600_000;
    const now = () => t;
    const old = new FileStore(dir, { now, flush: 'thread-pool' });
    const lease = await old.acquire('taken', { writer: 'old', ttlMs: 1_000 });
    const all = chain('taken', 4);
    const hold = holdingFlushes();
    let failure: unknown;
    await watchingIo(async () => {
      const appended = old.append(lease, 0, all.slice(0, 1)).catch((err: unknown) => (failure = err));
      await until(() => hold.held() === 1);
      // The old holder's flush hangs past its lease; a new holder takes over and continues the journal
      // (it reads the unflushed record, as a reader in another process would).
      t += 2_000;
      const fresh = new FileStore(dir, { now });
      const lease2 = await fresh.acquire('taken', { writer: 'new', ttlMs: 60_000 });
      expect(await fresh.length('taken')).toBe(1);
      await fresh.append(lease2, 1, all.slice(1));
      hold.release(eio());
      await appended;
      expect(await fresh.read('taken')).toEqual(all); // nothing the new holder acknowledged was cut
      await fresh.close();
    }, hold.flush);
    expect((failure as NodeJS.ErrnoException).code).toBe('EIO');
    await old.close();
  });

  test('a snapshot asked for while an append is flushing is taken after it, at the length that append made', async () => {
    const { store, lease, records } = await poolStoreWithOne('snap', 3);
    const hold = holdingFlushes();
    await watchingIo(async () => {
      const appended = store.append(lease, 1, records.slice(1));
      await until(() => hold.held() === 1);
      const snapshot = store.putSnapshot(lease, { seq: 3, hash: records[2]!.hash, data: { at: 3 } });
      hold.release();
      await Promise.all([appended, snapshot]);
    }, hold.flush);
    expect(await store.getSnapshot('snap')).toEqual({ seq: 3, hash: records[2]!.hash, data: { at: 3 } });
    await store.close();
  });

  test('quarantine keeps the torn bytes beside the journal', async () => {
    const store = new FileStore(freshDir());
    const lease = await store.acquire('keep', { writer: 'w', ttlMs: 60_000 });
    await store.append(lease, 0, chain('keep', 2));
    appendFileSync(store.journalPath('keep'), '{"seq":2,"kind":"st');
    const moved = await store.quarantineTornTail(lease);
    expect(moved).toEqual({ seq: 2, keptAt: `${store.journalPath('keep')}.torn-2` });
    expect(readFileSync(moved!.keptAt, 'utf8')).toBe('{"seq":2,"kind":"st');
    appendFileSync(store.journalPath('keep'), 'again');
    expect((await store.quarantineTornTail(lease))!.keptAt).toBe(`${store.journalPath('keep')}.torn-2.1`);
    expect(await store.length('keep')).toBe(2);
    await store.close();
  });

  test('two instances in one process with different writers exclude each other', async () => {
    const dir = freshDir();
    const [a, b] = [new FileStore(dir), new FileStore(dir)];
    const results = await Promise.allSettled([a.acquire('race', { writer: 'a', ttlMs: 60_000 }), b.acquire('race', { writer: 'b', ttlMs: 60_000 })]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toBeInstanceOf(LeaseHeldError);
    await Promise.all([a.close(), b.close()]);
  });

  test('breaks a lock file left by a dead process', async () => {
    const dir = freshDir();
    const store = new FileStore(dir);
    const dead = await spawnHolder(join(scratch, 'unused-store'), 'x', 1000, 0);
    await dead.kill();
    const base = join(dir, 'invocations', 'locked');
    fs.mkdirSync(base, { recursive: true });
    writeFileSync(join(base, 'lease.lock'), JSON.stringify({ pid: deadPid(dead), host: hostname(), at: Date.now() }));
    const lease = await store.acquire('locked', { writer: 'w', ttlMs: 1000 });
    expect(lease.token).toBe(1);
    expect(existsSync(join(base, 'lease.lock'))).toBe(false);
    await store.close();
  });

  test('processes racing for one lease: exactly one wins, the others are refused', async () => {
    const dir = freshDir();
    await compiledJournal();
    const holders = await Promise.all([1, 2, 3, 4].map(() => spawnHolder(dir, 'contended', 60_000, 0)));
    try {
      expect(holders.filter((h) => h.lease !== undefined)).toHaveLength(1);
      expect(holders.filter((h) => h.error === 'journal.lease_held')).toHaveLength(3);
    } finally {
      await Promise.all(holders.map((h) => h.kill()));
    }
  });
});

function deadPid(holder: Holder): number {
  return Number(holder.lease.writer.slice('child-'.length));
}

describe('FileStore reads from snapshot anchors', () => {
  test('a store that learned an anchor reads, counts and appends from it — and falls back when the anchor lies', async () => {
    const dir = freshDir();
    const writer = new FileStore(dir);
    const lease = await writer.acquire('inv-a', { writer: 'w1', ttlMs: 60_000 });
    const records = chain('inv-a', 40);
    await writer.append(lease, 0, records.slice(0, 30));
    await writer.putSnapshot(lease, { seq: 30, hash: records[29]!.hash, data: { at: 30 } });
    await writer.append(lease, 30, records.slice(30));
    await writer.release(lease);

    const reader = new FileStore(dir);
    const snapshot = await reader.getSnapshot('inv-a');
    expect(snapshot).toEqual({ seq: 30, hash: records[29]!.hash, data: { at: 30 } });
    expect(await reader.length('inv-a')).toBe(40);
    expect((await reader.read('inv-a', 30)).map((r) => r.hash)).toEqual(records.slice(30).map((r) => r.hash));
    expect((await reader.read('inv-a', 32, 35)).map((r) => r.seq)).toEqual([32, 33, 34]);
    expect((await reader.read('inv-a', 0, 2)).map((r) => r.seq)).toEqual([0, 1]);
    expect((await reader.tail('inv-a'))?.seq).toBe(39);

    // Corrupt the stored offset: the store must notice and read the whole file instead.
    const file = join(dir, 'invocations', 'inv-a', 'snapshot.json');
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(file, JSON.stringify({ ...stored, offset: stored.offset - 7 }));
    const confused = new FileStore(dir);
    await confused.getSnapshot('inv-a');
    expect(await confused.length('inv-a')).toBe(40);
    expect((await confused.read('inv-a', 30)).map((r) => r.seq)).toEqual(Array.from({ length: 10 }, (_, i) => 30 + i));
  });
});
