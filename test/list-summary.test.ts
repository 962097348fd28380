/**
 * Listing a file store reads the summary the store keeps beside each ended journal
 * (stores/file-summary.ts) instead of the journal — and never shows a status the journal
 * does not: a journal changed after its summary was written (edited, cut, copied under another id)
 * is read in full, and a missing summary (a crash before it was written) is no summary.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import '../journal/sha256-node.js';
import '../journal/ed25519-node.js';
import { FileStore } from '../stores/file.js';
import { invocationSummary, listInvocations, listOpenInvocations } from '../runtime/list.js';
import { fillEnded, fixtureSigningKey } from '../bench/list-fixture.js';
import { verifyRecords } from '../journal/reader.js';
import { publicKeyOf } from '../journal/seal.js';

let dir: string;
let store: FileStore;
let ids: string[];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'weft-list-summary-'));
  store = new FileStore(dir);
  ids = await fillEnded([store], 3);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const folder = (id: string) => join(dir, 'invocations', id);

describe('listing a file store of ended invocations', () => {
  test('the rows are the ones the journals give, and no journal is read', async () => {
    const fromJournals = await Promise.all(ids.map((id) => invocationSummary(store, id)));
    expect(fromJournals.map((row) => row.status)).toEqual(['completed', 'completed', 'completed']);
    // The viewer's columns: the last record's epoch and kind, from the journal and from the summary alike.
    for (const [i, row] of fromJournals.entries()) {
      const last = (await store.read(ids[i]!)).at(-1)!;
      expect(row.last?.kind).toBe('invocation.sealed');
      expect(row.epoch).toBe(last.epoch);
      expect(row.last?.at).toBe(last.meta?.at);
    }
    const read = vi.spyOn(store, 'read');
    const length = vi.spyOn(store, 'length');
    expect(await listInvocations(store)).toEqual(fromJournals);
    expect(await listInvocations(store, { tenant: 't1' })).toEqual([fromJournals[1]]);
    expect(await listOpenInvocations(store)).toEqual([]);
    expect(read).not.toHaveBeenCalled();
    expect(length).not.toHaveBeenCalled();
  });

  test('the fixture\'s journals are intact, sealed by its key, and each names its own folder (what the bench lists is real)', async () => {
    for (const id of ids) {
      const report = verifyRecords(await store.read(id), { publicKey: publicKeyOf(fixtureSigningKey) });
      expect(report.ok, report.error?.message).toBe(true);
      expect(report.sealed).toBe(true);
      expect(report.invocation).toBe(id);
    }
  });

  test('an ending append leaves a summary beside the journal', () => {
    for (const id of ids) expect(existsSync(join(folder(id), 'summary.json'))).toBe(true);
  });

  test('a journal cut after its summary was written (and listed) is listed as the journal stands, not as ended', async () => {
    const [id] = ids;
    expect((await listInvocations(store, { tenant: 't0' }))[0]!.status).toBe('completed'); // the store has read its summary
    const path = join(folder(id!), 'journal.jsonl');
    const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
    const cut = lines.slice(0, -2); // the seal and the ending gone (a hand edit, a bad restore)
    writeFileSync(path, cut.map((line) => `${line}\n`).join(''));
    const [row] = await listInvocations(store, { tenant: 't0' });
    expect(row).toEqual(await invocationSummary(store, id!));
    expect(row!.status).not.toBe('completed');
    expect(row!.records).toBe(cut.length);
  });

  test('a journal rewritten to the same size, after it was listed, is read, not trusted to its summary', async () => {
    const [id] = ids;
    expect((await listInvocations(store, { tenant: 't0' }))[0]!.status).toBe('completed'); // the store has read its summary
    const path = join(folder(id!), 'journal.jsonl');
    const text = readFileSync(path, 'utf8');
    const edited = text.replace('"invocation.completed"', '"invocation.xompleted"');
    expect(edited.length).toBe(text.length);
    writeFileSync(path, edited);
    const [row] = await listInvocations(store, { tenant: 't0' });
    expect(row).toEqual(await invocationSummary(store, id!));
    expect(row!.status).not.toBe('completed');
  });

  test('a folder copied under another id, timestamps kept, is listed as damaged, not as the copy\'s ending', async () => {
    cpSync(folder(ids[0]!), folder('list-copy'), { recursive: true, preserveTimestamps: true });
    const row = (await listInvocations(store)).find((r) => r.id === 'list-copy');
    expect(row?.status).toBe('damaged');
    expect(row?.problem).toContain('belongs to invocation list-000000');
  });

  test('without a summary (a crash before it was written) the journal is read, and the row is the same', async () => {
    const before = await listInvocations(store);
    for (const id of ids) unlinkSync(join(folder(id), 'summary.json'));
    const afterCrash = new FileStore(dir); // a new process: nothing read before
    const read = vi.spyOn(afterCrash, 'read');
    expect(await listInvocations(afterCrash)).toEqual(before);
    expect(read).toHaveBeenCalled();
  });

  test('listing again reads no summary file while the journals are unchanged; a journal that then changes is read', async () => {
    const before = await listInvocations(store);
    const summaryFile = join(folder(ids[0]!), 'summary.json');
    writeFileSync(summaryFile, '{"v":1,"stamp":'); // were it read again, it would be no summary, and the journal read
    const read = vi.spyOn(store, 'read');
    expect(await listInvocations(store)).toEqual(before);
    expect(read).not.toHaveBeenCalled();
    const path = join(folder(ids[0]!), 'journal.jsonl');
    writeFileSync(path, readFileSync(path, 'utf8').replace('"invocation.completed"', '"invocation.xompleted"'));
    const [row] = await listInvocations(store, { tenant: 't0' });
    expect(read).toHaveBeenCalled();
    expect(row!.status).not.toBe('completed');
  });

  test('a garbled summary is no summary', async () => {
    const before = await listInvocations(store);
    writeFileSync(join(folder(ids[0]!), 'summary.json'), '{"v":1,"stamp":');
    const fresh = new FileStore(dir); // one that has read no summary yet
    const read = vi.spyOn(fresh, 'read');
    expect(await listInvocations(fresh)).toEqual(before);
    expect(read).toHaveBeenCalled(); // the garbled one's journal, read instead
  });
});
