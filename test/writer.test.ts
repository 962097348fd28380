/**
 * JournalWriter over every store: create, append, appendAll, seal, open/resume, and fail-closed
 * validation (an invalid body is refused before anything is written). Whatever the writer leaves
 * in a store must pass the offline reader.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { genesisHash } from '../journal/chain.js';
import { InvalidRecordError, LeaseHeldError, WeftError } from '../journal/errors.js';
import { verifyRecords } from '../journal/reader.js';
import { publicKeyOf, signingKeyFromSecret } from '../journal/seal.js';
import type { JournalStore } from '../journal/store.js';
import { FileStore } from '../stores/file.js';
import { MemoryStore } from '../stores/memory.js';
import { JournalWriter, type Genesis, type RecordDraft } from '../journal/writer.js';
import { testPin } from './store-conformance.js';

const scratch = mkdtempSync(join(tmpdir(), 'weft-writer-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let n = 0;

const stores: Array<[string, () => JournalStore]> = [
  ['memory', () => new MemoryStore()],
  ['file', () => new FileStore(join(scratch, `s${++n}`))],
];

const genesis = (invocation: string): Genesis => ({ invocation, tenant: 'acme', intent: 'book a trip', pin: testPin });
const observed = (i: number): RecordDraft<'state.observed'> => ({ kind: 'state.observed', epoch: 1, body: { actuator: 'inventory', key: `k${i}`, state: { i } } });
const key = signingKeyFromSecret(new Uint8Array(32).fill(7));
const clock = () => new Date('2026-01-02T03:04:05.000Z');

describe.each(stores)('JournalWriter over the %s store', (_name, make) => {
  test('create writes invocation.pinned at seq 0, chained from the genesis hash', async () => {
    const store = make();
    const writer = await JournalWriter.create(store, genesis('trip'), { writer: 'rt-1', now: clock });
    expect(writer.seq).toBe(1);
    const [first] = await store.read('trip');
    expect(first).toMatchObject({ seq: 0, kind: 'invocation.pinned', prev: genesisHash('trip', testPin), meta: { at: '2026-01-02T03:04:05.000Z', writer: 'rt-1' } });
    expect(writer.tail).toBe(first!.hash);
    await writer.close();
    await store.close();
  });

  test('append and appendAll advance seq and tail; the result passes the reader', async () => {
    const store = make();
    const writer = await JournalWriter.create(store, genesis('trip'), { writer: 'rt-1' });
    const one = await writer.append(observed(1));
    expect(one).toMatchObject({ seq: 1, kind: 'state.observed', prev: (await store.read('trip'))[0]!.hash });
    const group = await writer.appendAll([observed(2), observed(3), observed(4)]);
    expect(group.map((r) => r.seq)).toEqual([2, 3, 4]);
    expect(writer.seq).toBe(5);
    expect(writer.tail).toBe(group[2]!.hash);
    const report = verifyRecords(await store.read('trip'));
    expect(report).toMatchObject({ ok: true, invocation: 'trip', sealed: false, fingerprint: group[2]!.hash });
    await writer.close();
    await store.close();
  });

  test('refuses an invalid body before anything is written, and carries on after', async () => {
    const store = make();
    const writer = await JournalWriter.create(store, genesis('strict'), { writer: 'rt-1' });
    const bad = { kind: 'state.observed', epoch: 1, body: { actuator: 'inventory', key: 'k', state: 1, extra: true } } as unknown as RecordDraft;
    await expect(writer.appendAll([observed(1), bad])).rejects.toThrow(InvalidRecordError);
    await expect(writer.append({ kind: 'step.failed', epoch: 1, body: { step: 0, key: 'k', attempt: 0, class: 'flaky', code: 'x', message: '' } } as unknown as RecordDraft)).rejects.toThrow(
      /refusing to write a step\.failed record: step\.failed body\.class/,
    );
    expect(await store.length('strict')).toBe(1);
    expect(writer.seq).toBe(1);
    await writer.append(observed(1));
    expect(verifyRecords(await store.read('strict')).ok).toBe(true);
    await writer.close();
    await store.close();
  });

  test('open resumes at the tail; seal closes the journal for good', async () => {
    const store = make();
    const first = await JournalWriter.create(store, genesis('resume'), { writer: 'rt-1' });
    await first.appendAll([observed(1), observed(2)]);
    await first.close();
    const second = await JournalWriter.open(store, 'resume', { writer: 'rt-2' });
    expect(second.seq).toBe(3);
    expect(second.tail).toBe((await store.tail('resume'))!.hash);
    await second.append(observed(3));
    const fingerprint = await second.seal(key, 1);
    expect(fingerprint).toBe((await store.read('resume', 3, 4))[0]!.hash);
    await second.close();
    const report = verifyRecords(await store.read('resume'), { publicKey: publicKeyOf(key) });
    expect(report).toMatchObject({ ok: true, sealed: true, fingerprint, keyId: key.keyId });
    await expect(JournalWriter.open(store, 'resume', { writer: 'rt-3' })).rejects.toThrow(/is sealed/);
    await store.close();
  });

  test('one writer at a time: a second writer is refused and writes nothing', async () => {
    const store = make();
    const first = await JournalWriter.create(store, genesis('single'), { writer: 'rt-1' });
    await expect(JournalWriter.open(store, 'single', { writer: 'rt-2' })).rejects.toThrow(LeaseHeldError);
    await expect(JournalWriter.create(store, genesis('single'), { writer: 'rt-2' })).rejects.toThrow(LeaseHeldError);
    expect(await store.length('single')).toBe(1);
    await first.append(observed(1));
    await first.close();
    const next = await JournalWriter.open(store, 'single', { writer: 'rt-2' });
    expect(next.currentLease.token).toBeGreaterThan(first.currentLease.token);
    await next.close();
    await store.close();
  });

  test('create on an existing journal and open on a missing one fail clearly, releasing the lease', async () => {
    const store = make();
    await (await JournalWriter.create(store, genesis('once'), { writer: 'rt-1' })).close();
    const exists = await JournalWriter.create(store, genesis('once'), { writer: 'rt-2' }).catch((e: unknown) => e);
    expect(exists).toBeInstanceOf(WeftError);
    expect((exists as WeftError).code).toBe('journal.exists');
    await expect(JournalWriter.open(store, 'never', { writer: 'rt-2' })).rejects.toThrow(/has no journal; start it first/);
    // Both failures released their lease: a third writer gets in at once.
    await (await JournalWriter.open(store, 'once', { writer: 'rt-3' })).close();
    await (await JournalWriter.create(store, genesis('never'), { writer: 'rt-3' })).close();
    await store.close();
  });
});
