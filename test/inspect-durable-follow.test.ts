/**
 * The viewer shows only durable records of a workspace journal (stores/file-durable.ts, the
 * durable mark; inspector/journal-bytes.ts): a record written to the file but not yet flushed is
 * in neither the journal the page verifies nor what the live WebSocket sends, and when its flush
 * fails and the store takes it back, a follower never sees it — the record the writer appends in
 * its place is the one it gets at that seq. A normal run's records all reach a follower, each once,
 * in order, as the file holds them; a journal without a mark (an older workspace) is read whole.
 * A follower reads what is new under the mark first and what lies past it at its next read.
 *
 * The viewer runs in this process over its own FileStore (as `weft inspect` would, beside a writer in
 * another process); the failing flush is injected by standing in for fs.fdatasync.
 */
import fs, { mkdtempSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { openLive, type LiveClient } from '../bench/live-client.js';
import { travelDomain } from '../examples/travel/domain.js';
import { createInspectorServer } from '../inspector/server.js';
import { durableRecords, journalBytes } from '../inspector/journal-bytes.js';
import { chainRecord } from '../journal/chain.js';
import { recordLine } from '../journal/encode.js';
import type { JournalRecord } from '../journal/records.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { DURABLE_MARK, writeDurableMark } from '../stores/file-durable.js';
import { createRuntime } from '../runtime/index.js';
import { chain } from './store-fixtures.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-durable-follow-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Poll `check` until it holds (a generous deadline: the machine may be busy). */
async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A viewer over `dir` (its own FileStore, as another process would have) and a follower of `id` from seq 0. */
async function follow(dir: string, id: string): Promise<{ lines: Map<number, string[]>; seqs: number[]; socket: LiveClient; origin: string; close(): Promise<void> }> {
  const server = createInspectorServer({ store: new FileStore(dir), loopback: true });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const lines = new Map<number, string[]>();
  const seqs: number[] = [];
  const socket = await openLive(origin, `/live?follow=${id}&from=0`, (text) => {
    const m = JSON.parse(text) as { type: string; from: number; lines: string[] };
    if (m.type !== 'records') return;
    m.lines.forEach((line, i) => {
      seqs.push(m.from + i);
      lines.set(m.from + i, [...(lines.get(m.from + i) ?? []), line]);
    });
  });
  return {
    lines,
    seqs,
    socket,
    origin,
    close: async () => {
      socket.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type Done = (err: NodeJS.ErrnoException | null) => void;

test('a record whose flush is still running is not shown; when the flush fails and is taken back, a follower never sees it — it gets the record appended in its place', async () => {
  const dir = path.join(root, 'fail');
  const id = 'inv-durable';
  const writer = new FileStore(dir, { flush: 'thread-pool' });
  const lease = await writer.acquire(id, { writer: 'w', ttlMs: 60_000 });
  const records = chain(id, 2);
  await writer.append(lease, 0, records);
  const follower = await follow(dir, id);
  const reader = new FileStore(dir);
  const journalFile = writer.journalPath(id);
  try {
    await until('the two flushed records at the follower', () => follower.seqs.length === 2);
    // The next record: written, its flush held open, then failed.
    const staged = chainRecord(records[1]!.hash, { seq: 2, kind: 'state.observed', epoch: 0, body: { actuator: 'probe', key: 'staged', state: { staged: true } } }) as JournalRecord;
    let held: Done | undefined;
    const real = fs.fdatasync;
    fs.fdatasync = ((_fd: number, done: Done) => void (held = done)) as unknown as typeof fs.fdatasync;
    syncBuiltinESMExports();
    let appended: Promise<unknown>;
    try {
      appended = writer.append(lease, 2, [staged]).catch((err: unknown) => err);
      await until('the staged record written and its flush started', () => held);
    } finally {
      fs.fdatasync = real;
      syncBuiltinESMExports();
    }
    // It is in the file (a reader of the file would see it)…
    expect(readFileSync(journalFile, 'utf8')).toContain(recordLine(staged));
    expect((await reader.read(id)).map((r) => r.hash)).toContain(staged.hash);
    // …but not in what the viewer serves: the journal the page verifies, and the records the follower reads.
    expect(Buffer.from((await journalBytes(reader, id))!).toString('utf8')).toBe(records.map((r) => recordLine(r) + '\n').join(''));
    expect((await durableRecords(reader, id, 0)).records.map((r) => r.hash)).toEqual(records.map((r) => r.hash));
    const api = await (await fetch(`${follower.origin}/api/invocations/${id}/journal`)).text();
    expect(api).not.toContain(staged.hash);
    // The follower has had its chances at the file as it is now (its watch, then its 1 s poll) before the flush fails.
    await new Promise((r) => setTimeout(r, 2_500));
    held!(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    expect(((await appended) as NodeJS.ErrnoException).code).toBe('EIO');
    expect(readFileSync(journalFile, 'utf8')).not.toContain(staged.hash); // taken back
    // The writer goes on with another record at seq 2; the follower gets that one, and never the staged one.
    const instead = chainRecord(records[1]!.hash, { seq: 2, kind: 'state.observed', epoch: 0, body: { actuator: 'probe', key: 'instead', state: { staged: false } } }) as JournalRecord;
    await writer.append(lease, 2, [instead]);
    await until('the record appended instead at the follower', () => follower.seqs.length === 3);
    expect(follower.seqs).toEqual([0, 1, 2]);
    expect(follower.lines.get(2)).toEqual([recordLine(instead)]);
    for (const lines of follower.lines.values()) for (const line of lines) expect(line).not.toContain(staged.hash);
    await writer.release(lease);
  } finally {
    await follower.close();
    await writer.close();
  }
});

test("a normal run's records all reach a follower, each once, in order, as the journal file holds them", async () => {
  const dir = path.join(root, 'run');
  const store = new FileStore(dir, { flush: 'thread-pool' });
  const runtime = createRuntime({ store, domain: travelDomain, stateDir: path.join(root, 'run-state'), signingKey: signingKeyFromSecret(new Uint8Array(32).fill(5)), sleep: async () => undefined });
  const handle = await runtime.start(travelDomain.intent!, { tenant: 't1', seed: 1, asOf: travelDomain.asOf! });
  const follower = await follow(dir, handle.id); // opened while the run goes on
  try {
    const result = await handle.done;
    expect(result.status).toBe('completed');
    const file = readFileSync(store.journalPath(handle.id), 'utf8').trimEnd().split('\n');
    await until('every record at the follower', () => follower.seqs.length >= file.length);
    expect(follower.seqs).toEqual([...file.keys()]);
    expect([...follower.lines.values()].map((l) => l.join('|'))).toEqual(file);
    // Ended and released: the whole journal is served (and with the mark gone — an older workspace — too).
    const reader = new FileStore(dir);
    expect(Buffer.from((await journalBytes(reader, handle.id))!).toString('utf8')).toBe(file.join('\n') + '\n');
    unlinkSync(path.join(dir, 'invocations', handle.id, 'journal.durable'));
    expect((await durableRecords(reader, handle.id, 0)).records.length).toBe(file.length);
  } finally {
    await follower.close();
    await runtime.close();
    await store.close();
  }
});

test("a follower reads on from where it stopped (a byte cursor), getting exactly the records a full read gives — a torn line under way is left for later", async () => {
  const dir = path.join(root, 'cursor');
  const store = new FileStore(dir);
  const id = 'cursor-1';
  const records = chain(id, 9) as JournalRecord[];
  const lease = await store.acquire(id, { writer: 'w', ttlMs: 60_000 });
  await store.append(lease, 0, records.slice(0, 4));
  const first = await durableRecords(store, id, 0);
  expect(first.records.map((r) => r.seq)).toEqual([0, 1, 2, 3]);
  expect(first.cursor?.seq).toBe(4);
  await store.append(lease, 4, records.slice(4, 7));
  const next = await durableRecords(store, id, 4, first.cursor);
  expect(next.records.map((r) => r.hash)).toEqual(records.slice(4, 7).map((r) => r.hash));
  expect(next.records).toEqual((await durableRecords(store, id, 4)).records); // the same as read from the start
  // A cursor for another seq is not used: the read starts over and still gives the records from `from`.
  expect((await durableRecords(store, id, 5, first.cursor)).records.map((r) => r.seq)).toEqual([5, 6]);
  // Half a line at the end (a write under way): not a record yet, and the cursor stays before it.
  fs.appendFileSync(path.join(dir, 'invocations', id, 'journal.jsonl'), recordLine(records[7]!).slice(0, 20));
  const torn = await durableRecords(store, id, 7, next.cursor);
  expect(torn.records).toEqual([]);
  expect(torn.cursor).toEqual(next.cursor);
  await store.release(lease);
});

test('a journal past a mark its writer never moved (the writer gone): a follower gets what is under the mark first, then the rest at its next read — the page the whole at once', async () => {
  const dir = path.join(root, 'stale-mark');
  const store = new FileStore(dir);
  const id = 'stale-1';
  const records = chain(id, 4) as JournalRecord[];
  const lease = await store.acquire(id, { writer: 'w', ttlMs: 60_000 });
  await store.append(lease, 0, records);
  await store.release(lease); // no live writer now
  // The mark as a writer killed between its flush and the mark's move leaves it: two records short.
  const underMark = records.slice(0, 2).map((r) => recordLine(r) + '\n').join('');
  const markFd = fs.openSync(path.join(dir, 'invocations', id, DURABLE_MARK), 'r+');
  try {
    writeDurableMark(markFd, { size: Buffer.byteLength(underMark), records: 2 });
  } finally {
    fs.closeSync(markFd);
  }
  const reader = new FileStore(dir);
  const first = await durableRecords(reader, id, 0);
  expect(first.records.map((r) => r.seq)).toEqual([0, 1]);
  const rest = await durableRecords(reader, id, 2, first.cursor);
  expect(rest.records.map((r) => r.hash)).toEqual(records.slice(2).map((r) => r.hash));
  // The page's whole journal is not a follower's read: no live writer, so every line at once.
  expect(Buffer.from((await journalBytes(reader, id))!).toString('utf8')).toBe(records.map((r) => recordLine(r) + '\n').join(''));
});
