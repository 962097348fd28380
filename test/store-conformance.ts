/**
 * The journal store conformance suite: one set of tests every JournalStore (memory, file, later
 * Redis) must pass — the contract in journal/store.ts, invariants 1, 4 and 6 of DESIGN.md.
 *
 * A store joins by supplying a harness. Optional capabilities (an injectable clock, crash
 * simulation, a real holder process, blob corruption) switch on the tests that need them; a store
 * without them skips those tests by name rather than passing them vacuously.
 */
import { describe, expect, test } from 'vitest';
import { sha256Hex } from '../journal/digest.js';
import { BlobError, FencedError, InvalidNameError, JournalIntegrityError, LeaseHeldError, SeqConflictError, TornTailError } from '../journal/errors.js';
import type { JournalRecord, Pin } from '../journal/records.js';
import { chain, pinned, testPin } from './store-fixtures.js';

export { chain, pinned, testPin } from './store-fixtures.js';
import type { JournalStore, Lease, StatusNote } from '../journal/store.js';
import { canonicalize } from '../journal/canonical.js';

export interface HarnessOptions {
  /** The wall clock the store should use for lease expiry (ignored unless `injectableClock`). */
  now: () => number;
}

export interface StoreHarness {
  name: string;
  /** A fresh, empty store. */
  create(options: HarnessOptions): Promise<JournalStore>;
  /** Another handle on the same data, as a second runtime would open it. */
  peer(store: JournalStore, options: HarnessOptions): Promise<JournalStore>;
  /** True when the store reads time from `options.now`; otherwise the suite sleeps for real. */
  injectableClock: boolean;
  cleanup?(store: JournalStore): Promise<void>;
  crash?: {
    /** Leave `partial` (no newline) at the end of the journal, as a crash mid-append would. */
    tearTail(store: JournalStore, invocation: string, partial: Uint8Array): Promise<void>;
    /** A real process that takes the lease and appends `records` records (seq 0 is invocation.pinned), then waits. */
    holder?(store: JournalStore, invocation: string, options: { ttlMs: number; records: number; pin: Pin }): Promise<Holder>;
  };
  /** Overwrite the bytes stored under `digest`. */
  corruptBlob?(store: JournalStore, digest: string): Promise<void>;
  /** Overwrite an invocation's stored metadata with `text`, as damage would. */
  damageMetadata?(store: JournalStore, invocation: string, text: string): Promise<void>;
}

export interface Holder {
  lease: Lease;
  /** Kill the process (SIGKILL) and wait for it to exit. */
  kill(): Promise<void>;
}

const TTL = 1_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function storeConformance(h: StoreHarness): void {
  let t = 1_767_225_600_000;
  const now = () => (h.injectableClock ? t : Date.now());
  const advance = async (ms: number) => (h.injectableClock ? void (t += ms) : sleep(ms));

  async function withStore(fn: (store: JournalStore) => Promise<void>): Promise<void> {
    const store = await h.create({ now });
    try {
      await fn(store);
    } finally {
      await store.close();
      await h.cleanup?.(store);
    }
  }
  const it = (name: string, fn: (store: JournalStore) => Promise<void>) => test(name, () => withStore(fn));
  const itIf = (cond: boolean, name: string, fn: (store: JournalStore) => Promise<void>) => test.skipIf(!cond)(name, () => withStore(fn));
  const acquire = (store: JournalStore, inv: string, writer = 'writer-a', ttlMs = TTL) => store.acquire(inv, { writer, ttlMs });

  async function seeded(store: JournalStore, inv: string, n: number): Promise<{ lease: Lease; records: JournalRecord[] }> {
    const lease = await acquire(store, inv);
    const records = chain(inv, n);
    await store.append(lease, 0, records);
    return { lease, records };
  }

  describe(`store conformance: ${h.name}`, () => {
    describe('inbox advisories (journal/advisory.ts)', () => {
      const advisory = (seq: number, index: number, rule = 'warn-above') => ({ type: 'advisory' as const, seq, index, epoch: 2, subject: 'epoch' as const, rule, reason: `why ${seq}.${index}`, at: 1 });

      it('kept once per seq and index, in journal order, apart from the command slot', async (store) => {
        await seeded(store, 'inv-adv', 1);
        expect(await store.advisories('inv-adv')).toEqual([]);
        await store.putInbox('inv-adv', { type: 'cancel', by: 'ops', reason: 'stop', at: 5 });
        await store.putAdvisory('inv-adv', advisory(9, 1));
        await store.putAdvisory('inv-adv', advisory(4, 0));
        await store.putAdvisory('inv-adv', advisory(9, 0));
        await store.putAdvisory('inv-adv', { ...advisory(4, 0), reason: 'raised again by a resume' });
        expect(await store.advisories('inv-adv')).toEqual([advisory(4, 0), advisory(9, 0), advisory(9, 1)]);
        // The command slot is untouched by an advisory, and an advisory by the slot.
        expect(await store.peekInbox('inv-adv')).toEqual({ type: 'cancel', by: 'ops', reason: 'stop', at: 5 });
        await store.clearInbox('inv-adv');
        expect(await store.peekInbox('inv-adv')).toBeUndefined();
        expect((await store.advisories('inv-adv')).length).toBe(3);
        expect(await store.advisories('inv-other')).toEqual([]);
      });

      it('refuses what is not an advisory, and an inbox command is not one', async (store) => {
        await seeded(store, 'inv-adv2', 1);
        await expect(store.putAdvisory('inv-adv2', { type: 'approval', decision: 'approved', by: 'me', at: 1 } as never)).rejects.toThrow(/not an advisory/);
        await expect(store.putAdvisory('inv-adv2', { ...advisory(1, 0), rule: '' })).rejects.toThrow(/not an advisory/);
        await expect(store.putInbox('inv-adv2', advisory(1, 0) as never)).rejects.toThrow(/not an inbox message/);
        expect(await store.advisories('inv-adv2')).toEqual([]);
        expect(await store.peekInbox('inv-adv2')).toBeUndefined();
      });
    });

    describe('journal', () => {
      it('an unknown invocation is empty', async (store) => {
        expect(await store.length('nobody')).toBe(0);
        expect(await store.tail('nobody')).toBeUndefined();
        expect(await store.read('nobody')).toEqual([]);
        expect(await store.list()).toEqual([]);
        expect(await store.getSnapshot('nobody')).toBeUndefined();
      });

      it('appends, reads ranges, tail, length and a sorted list', async (store) => {
        const lease = await acquire(store, 'inv-b');
        const records = chain('inv-b', 5);
        await store.append(lease, 0, records.slice(0, 1));
        await store.append(lease, 1, records.slice(1));
        expect(await store.read('inv-b')).toEqual(records);
        expect(await store.read('inv-b', 1, 3)).toEqual(records.slice(1, 3));
        expect(await store.read('inv-b', 3)).toEqual(records.slice(3));
        expect(await store.read('inv-b', 4, 99)).toEqual(records.slice(4));
        expect(await store.tail('inv-b')).toEqual(records[4]);
        expect(await store.length('inv-b')).toBe(5);
        await seeded(store, 'inv-a', 1);
        await acquire(store, 'inv-c'); // a lease alone is not a journal
        expect(await store.list()).toEqual(['inv-a', 'inv-b']);
      });

      it('keeps the unhashed meta envelope and hands back copies', async (store) => {
        const lease = await acquire(store, 'meta');
        const [record] = chain('meta', 1);
        record!.meta = { at: '2026-01-01T00:00:00.000Z', writer: 'writer-a' };
        await store.append(lease, 0, [record!]);
        record!.meta.writer = 'mutated after append';
        const [back] = await store.read('meta');
        expect(back!.meta).toEqual({ at: '2026-01-01T00:00:00.000Z', writer: 'writer-a' });
        back!.seq = 99;
        expect((await store.tail('meta'))!.seq).toBe(0);
      });

      it('refuses an append whose expected seq is not the length, and writes nothing', async (store) => {
        const { lease, records } = await seeded(store, 'seq', 3);
        const more = chain(records[2]!, 2);
        await expect(store.append(lease, 2, more)).rejects.toThrow(SeqConflictError);
        await expect(store.append(lease, 4, more)).rejects.toThrow(SeqConflictError);
        const err = await store.append(lease, 5, more).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(SeqConflictError);
        expect((err as Error).message).toMatch(/has 3 records; re-read the journal/);
        expect(await store.length('seq')).toBe(3);
        await store.append(lease, 3, more);
        expect(await store.length('seq')).toBe(5);
      });

      it('refuses records that do not continue the chain, and writes nothing', async (store) => {
        const { lease, records } = await seeded(store, 'link', 2);
        const [good] = chain(records[1]!, 1);
        await expect(store.append(lease, 2, [{ ...good!, prev: 'f'.repeat(64) }])).rejects.toThrow(JournalIntegrityError);
        await expect(store.append(lease, 2, [{ ...good!, seq: 3 }])).rejects.toThrow(/record says seq 3/);
        const batch = chain(records[1]!, 3);
        batch[2] = { ...batch[2]!, prev: batch[0]!.hash };
        await expect(store.append(lease, 2, batch)).rejects.toThrow(/seq 4: prev does not match/);
        expect(await store.length('link')).toBe(2);
        expect(await store.tail('link')).toEqual(records[1]);
      });

      it('writes a batch all or nothing, even when a later record cannot be encoded', async (store) => {
        const { lease, records } = await seeded(store, 'batch', 1);
        const batch = chain(records[0]!, 3);
        (batch[2]!.body as { state: unknown }).state = { n: Number.NaN };
        await expect(store.append(lease, 1, batch)).rejects.toThrow(/NaN is not a JSON number/);
        expect(await store.length('batch')).toBe(1);
        await store.append(lease, 1, chain(records[0]!, 3));
        expect(await store.length('batch')).toBe(4);
      });

      it('validates invocation ids before building a key', async (store) => {
        for (const bad of ['../escape', 'a/b', '', '.hidden', 'x'.repeat(201)]) {
          await expect(store.acquire(bad, { writer: 'w', ttlMs: TTL })).rejects.toThrow(InvalidNameError);
          await expect(store.read(bad)).rejects.toThrow(InvalidNameError);
        }
      });

      it('shows what one handle appended to another handle on the same store', async (store) => {
        const { records } = await seeded(store, 'shared', 3);
        const other = await h.peer(store, { now });
        expect(await other.read('shared')).toEqual(records);
        expect(await other.list()).toEqual(['shared']);
        if (other !== store) await other.close();
      });
    });

    describe('lease and fencing', () => {
      it('refuses a second writer with LeaseHeldError, on the same handle or another', async (store) => {
        const a = await acquire(store, 'one', 'writer-a');
        const other = await h.peer(store, { now });
        for (const s of [store, other]) {
          const err = await acquire(s, 'one', 'writer-b').catch((e: unknown) => e);
          expect(err).toBeInstanceOf(LeaseHeldError);
          expect((err as Error).message).toMatch(/invocation one is being written by writer-a .*only one writer per invocation/);
        }
        await expect(acquire(store, 'one', 'writer-a')).rejects.toThrow(LeaseHeldError);
        await store.append(a, 0, chain('one', 1));
        const forged: Lease = { ...a, writer: 'writer-b', token: a.token + 1 };
        await expect(other.append(forged, 1, chain((await store.tail('one'))!, 1))).rejects.toThrow(FencedError);
        expect(await store.length('one')).toBe(1);
        if (other !== store) await other.close();
      });

      it('takes over an expired lease, bumping the token, and fences the old holder', async (store) => {
        const { lease: old, records } = await seeded(store, 'expire', 2);
        await advance(TTL + 200);
        const other = await h.peer(store, { now });
        const fresh = await acquire(other, 'expire', 'writer-b');
        expect(fresh.token).toBeGreaterThan(old.token);
        const late = chain(records[1]!, 1);
        const err = await store.append(old, 2, late).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(FencedError);
        expect((err as Error).message).toMatch(new RegExp(`token ${old.token}\\) was taken over by token ${fresh.token}`));
        await expect(store.renew(old, TTL)).rejects.toThrow(FencedError);
        await expect(store.putSnapshot(old, { seq: 2, hash: records[1]!.hash, data: {} })).rejects.toThrow(FencedError);
        await store.release(old); // a fenced release must not disturb the new holder
        expect(await store.length('expire')).toBe(2);
        await other.append(fresh, 2, late);
        expect(await store.read('expire')).toEqual([...records, ...late]);
        if (other !== store) await other.close();
      });

      it('renews a lease so it keeps excluding others past its first expiry', async (store) => {
        const a = await acquire(store, 'renew', 'writer-a', TTL);
        await advance(TTL * 0.6);
        const renewed = await store.renew(a, TTL);
        expect(renewed.token).toBe(a.token);
        expect(renewed.expiresAt).toBeGreaterThan(a.expiresAt);
        await advance(TTL * 0.6);
        await expect(acquire(store, 'renew', 'writer-b')).rejects.toThrow(LeaseHeldError);
        await store.append(renewed, 0, chain('renew', 1));
        expect(await store.length('renew')).toBe(1);
      });

      it('releases: the next writer takes over at once and the released lease is fenced', async (store) => {
        const { lease: a, records } = await seeded(store, 'release', 1);
        await store.release(a);
        const b = await acquire(store, 'release', 'writer-b');
        expect(b.token).toBeGreaterThan(a.token);
        await expect(store.append(a, 1, chain(records[0]!, 1))).rejects.toThrow(FencedError);
        await store.release(b);
        await expect(store.append(b, 1, chain(records[0]!, 1))).rejects.toThrow(/was released; acquire the lease again/);
        const c = await acquire(store, 'release', 'writer-c');
        expect(c.token).toBeGreaterThan(b.token);
        expect(await store.length('release')).toBe(1);
      });
    });

    describe('snapshots', () => {
      it('puts and gets the latest snapshot, anchored in the journal and fenced', async (store) => {
        const { lease, records } = await seeded(store, 'snap', 3);
        await store.putSnapshot(lease, { seq: 2, hash: records[1]!.hash, data: { state: 'execute', n: [1, 2] } });
        await store.putSnapshot(lease, { seq: 3, hash: records[2]!.hash, data: { state: 'boundary' } });
        expect(await store.getSnapshot('snap')).toEqual({ seq: 3, hash: records[2]!.hash, data: { state: 'boundary' } });
        await expect(store.putSnapshot(lease, { seq: 4, hash: records[2]!.hash, data: {} })).rejects.toThrow(/journal has 3/);
        await expect(store.putSnapshot(lease, { seq: 2, hash: records[2]!.hash, data: {} })).rejects.toThrow(JournalIntegrityError);
        await expect(store.putSnapshot({ ...lease, token: lease.token + 7 }, { seq: 3, hash: records[2]!.hash, data: {} })).rejects.toThrow(FencedError);
        const other = await h.peer(store, { now });
        expect((await other.getSnapshot('snap'))!.data).toEqual({ state: 'boundary' });
        if (other !== store) await other.close();
      });
    });

    describe('listing', () => {
      it('lists an invocation with a snapshot even while its journal is empty, and never one with only a lease', async (store) => {
        await seeded(store, 'b-journal', 2);
        const empty = await acquire(store, 'a-snapshot-only');
        await store.putSnapshot(empty, { seq: 0, hash: 'a'.repeat(64), data: { value: 'hibernated' } });
        await acquire(store, 'c-lease-only');
        expect(await store.length('a-snapshot-only')).toBe(0);
        expect(await store.list()).toEqual(['a-snapshot-only', 'b-journal']);
        const other = await h.peer(store, { now });
        expect(await other.list()).toEqual(['a-snapshot-only', 'b-journal']);
        if (other !== store) await other.close();
      });

      itIf(h.crash !== undefined, 'lists a journal emptied by quarantining its torn first record', async (store) => {
        const lease = await acquire(store, 'emptied');
        await h.crash!.tearTail(store, 'emptied', new TextEncoder().encode(canonicalize(pinned('emptied'))).slice(0, 30));
        expect(await store.list()).toEqual(['emptied']); // torn: listed (its readers report the torn record)
        await store.quarantineTornTail(lease);
        expect(await store.length('emptied')).toBe(0);
        expect(await store.list()).toEqual(['emptied']);
      });
    });

    describe('status index', () => {
      const note = (over: Partial<StatusNote> = {}): StatusNote => ({ status: 'suspended', reason: 'HTTP 401', class: 'credentials', code: 'model.credentials', fix: 'weft resume s', at: 1_767_225_600_000, writer: 'writer-a', ...over });

      it('puts, gets, overwrites and clears a note; an unknown id has none', async (store) => {
        expect(await store.getStatus('nobody')).toBeUndefined();
        await store.clearStatus('nobody'); // clearing nothing is fine
        await store.putStatus('s', note());
        expect(await store.getStatus('s')).toEqual(note());
        await store.putStatus('s', note()); // idempotent
        expect(await store.getStatus('s')).toEqual(note());
        await store.putStatus('s', { status: 'running', at: 5 });
        expect(await store.getStatus('s')).toEqual({ status: 'running', at: 5 }); // replaced whole, not merged
        const other = await h.peer(store, { now });
        expect(await other.getStatus('s')).toEqual({ status: 'running', at: 5 });
        await store.clearStatus('s');
        expect(await store.getStatus('s')).toBeUndefined();
        expect(await other.getStatus('s')).toBeUndefined();
        await store.clearStatus('s');
        if (other !== store) await other.close();
      });

      it('leaves undefined fields out and hands back copies', async (store) => {
        const given = note({ reason: undefined, fix: undefined });
        await store.putStatus('copies', given);
        given.status = 'running';
        const back = (await store.getStatus('copies'))!;
        expect(back).toEqual({ status: 'suspended', class: 'credentials', code: 'model.credentials', at: 1_767_225_600_000, writer: 'writer-a' });
        expect(Object.keys(back)).not.toContain('reason');
        back.reason = 'mutated';
        expect((await store.getStatus('copies'))!.reason).toBeUndefined();
      });

      it('needs no lease: a note is written while a writer holds the lease and after it is released', async (store) => {
        const { lease } = await seeded(store, 'held', 2);
        await store.putStatus('held', note({ writer: 'someone-else' }));
        expect((await store.getStatus('held'))!.writer).toBe('someone-else');
        await store.release(lease);
        await store.putStatus('held', note({ reason: 'the store was down' }));
        expect((await store.getStatus('held'))!.reason).toBe('the store was down');
        expect(await store.length('held')).toBe(2); // the journal is untouched
      });

      it('a note alone is not an invocation: list() names it only once it has a journal or a snapshot', async (store) => {
        await store.putStatus('noted', note());
        expect(await store.list()).toEqual([]);
        expect(await store.length('noted')).toBe(0);
        await seeded(store, 'noted', 1);
        expect(await store.list()).toEqual(['noted']);
        expect((await store.getStatus('noted'))!.status).toBe('suspended');
      });

      it('validates the id and refuses a malformed note', async (store) => {
        await expect(store.putStatus('../escape', note())).rejects.toThrow(InvalidNameError);
        await expect(store.getStatus('a/b')).rejects.toThrow(InvalidNameError);
        await expect(store.clearStatus('')).rejects.toThrow(InvalidNameError);
        await expect(store.putStatus('bad', { status: 'done', at: 1 } as unknown as StatusNote)).rejects.toThrow(TypeError);
        await expect(store.putStatus('bad', { status: 'running', at: Number.NaN })).rejects.toThrow(TypeError);
        expect(await store.getStatus('bad')).toBeUndefined();
      });
    });

    describe('invocation metadata', () => {
      const LIB = 'a'.repeat(64);
      const LIB2 = 'b'.repeat(64);

      it('puts, gets and replaces the record whole; an unknown id has none; a peer reads it', async (store) => {
        expect(await store.getMetadata('nobody')).toBeUndefined();
        await store.putMetadata('m', { domain: 'travel', library: LIB });
        expect(await store.getMetadata('m')).toEqual({ domain: 'travel', library: LIB });
        await store.putMetadata('m', { domain: 'travel', library: LIB }); // idempotent
        await store.putMetadata('m', { library: LIB2 });
        expect(await store.getMetadata('m')).toEqual({ library: LIB2 }); // replaced whole, not merged
        const other = await h.peer(store, { now });
        expect(await other.getMetadata('m')).toEqual({ library: LIB2 });
        if (other !== store) await other.close();
      });

      it('keeps only its known fields and hands back copies', async (store) => {
        const given = { domain: 'refunds', library: LIB, module: '/tmp/evil.js' } as unknown as { domain: string; library: string };
        await store.putMetadata('copies', given);
        given.domain = 'travel';
        const back = (await store.getMetadata('copies'))!;
        expect(back).toEqual({ domain: 'refunds', library: LIB });
        back.domain = 'mutated';
        expect((await store.getMetadata('copies'))!.domain).toBe('refunds');
      });

      it('needs no lease, leaves the journal alone, and alone is not an invocation', async (store) => {
        await store.putMetadata('meta-only', { domain: 'travel', library: LIB });
        expect(await store.list()).toEqual([]);
        expect(await store.length('meta-only')).toBe(0);
        const { lease } = await seeded(store, 'meta-only', 2);
        await store.putMetadata('meta-only', { domain: 'travel', library: LIB2 });
        expect(await store.length('meta-only')).toBe(2);
        await store.release(lease);
        expect(await store.list()).toEqual(['meta-only']);
        expect(await store.getMetadata('meta-only')).toEqual({ domain: 'travel', library: LIB2 });
      });

      it('validates the id and refuses malformed metadata — a domain is a name, never a path', async (store) => {
        await expect(store.putMetadata('../escape', { domain: 'travel', library: LIB })).rejects.toThrow(InvalidNameError);
        await expect(store.getMetadata('a/b')).rejects.toThrow(InvalidNameError);
        for (const bad of [
          { domain: '../evil.js', library: LIB },
          { domain: '/abs/evil.js', library: LIB },
          { domain: '', library: LIB },
          { domain: 'travel', library: 'short' },
          { domain: 'travel' },
          { domain: 7, library: LIB },
        ]) {
          await expect(store.putMetadata('bad', bad as never), JSON.stringify(bad)).rejects.toThrow(TypeError);
        }
        expect(await store.getMetadata('bad')).toBeUndefined();
      });

      itIf(h.damageMetadata !== undefined, 'damaged metadata is not "none": reading it throws DamagedMetadataError, saying what to do', async (store) => {
        await store.putMetadata('damaged', { domain: 'travel', library: LIB, sealKey: 'c'.repeat(64) });
        for (const text of ['{"library":', '[]', JSON.stringify({ domain: 'travel', library: LIB, redact: 'all' })]) {
          await h.damageMetadata!(store, 'damaged', text);
          await expect(store.getMetadata('damaged'), text).rejects.toMatchObject({ name: 'DamagedMetadataError', code: 'store.metadata_damaged', invocation: 'damaged' });
        }
        await store.putMetadata('damaged', { domain: 'travel', library: LIB }); // putting it again repairs it
        expect(await store.getMetadata('damaged')).toEqual({ domain: 'travel', library: LIB });
      });

      it('keeps the sealing key id, validated like the others, and replaced whole with the rest', async (store) => {
        const KEY = 'c'.repeat(64);
        const KEY2 = 'd'.repeat(64);
        await store.putMetadata('keyed', { domain: 'travel', library: LIB, sealKey: KEY });
        expect(await store.getMetadata('keyed')).toEqual({ domain: 'travel', library: LIB, sealKey: KEY });
        const other = await h.peer(store, { now });
        expect(await other.getMetadata('keyed')).toEqual({ domain: 'travel', library: LIB, sealKey: KEY });
        if (other !== store) await other.close();
        await store.putMetadata('keyed', { domain: 'travel', library: LIB, sealKey: KEY2 }); // a re-key replaces it
        expect((await store.getMetadata('keyed'))!.sealKey).toBe(KEY2);
        await store.putMetadata('keyed', { domain: 'travel', library: LIB });
        expect(await store.getMetadata('keyed')).toEqual({ domain: 'travel', library: LIB }); // whole, not merged
        for (const bad of ['c'.repeat(16), 'C'.repeat(64), '', 7, null]) {
          await expect(store.putMetadata('keyed', { domain: 'travel', library: LIB, sealKey: bad } as never), JSON.stringify(bad)).rejects.toThrow(TypeError);
        }
        expect(await store.getMetadata('keyed')).toEqual({ domain: 'travel', library: LIB }); // a refused write changes nothing
      });
    });

    describe('blobs', () => {
      it('stores bytes under their SHA-256, idempotently; a missing blob is undefined', async (store) => {
        const bytes = new TextEncoder().encode('{"library":"travel","version":3}');
        const digest = await store.putBlob(bytes);
        expect(digest).toBe(sha256Hex(bytes));
        expect(await store.putBlob(bytes.slice())).toBe(digest);
        expect(Array.from((await store.getBlob(digest))!)).toEqual(Array.from(bytes));
        expect(Array.from((await store.getBlob(await store.putBlob(new Uint8Array(0))))!)).toEqual([]);
        expect(await store.getBlob('a'.repeat(64))).toBeUndefined();
        await expect(store.getBlob('../../etc/passwd')).rejects.toThrow(InvalidNameError);
      });

      itIf(h.corruptBlob !== undefined, 'refuses a blob whose bytes no longer match its digest', async (store) => {
        const digest = await store.putBlob(new TextEncoder().encode('original'));
        await h.corruptBlob!(store, digest);
        await expect(store.getBlob(digest)).rejects.toThrow(BlobError);
        await store.putBlob(new TextEncoder().encode('original')); // putting it again repairs it
        expect(new TextDecoder().decode(await store.getBlob(digest))).toBe('original');
      });
    });

    describe('crashes', () => {
      const crash = h.crash;
      const tornLine = (record: JournalRecord) => new TextEncoder().encode(canonicalize(record)).slice(0, 40);

      itIf(crash !== undefined, 'a torn final line is reported, never dropped; quarantine moves it aside', async (store) => {
        const { lease, records } = await seeded(store, 'torn', 3);
        const [fourth] = chain(records[2]!, 1);
        await crash!.tearTail(store, 'torn', tornLine(fourth!));
        for (const op of [() => store.read('torn'), () => store.read('torn', 0, 1), () => store.length('torn'), () => store.tail('torn')]) {
          const err = await op().catch((e: unknown) => e);
          expect(err).toBeInstanceOf(TornTailError);
          expect((err as TornTailError).seq).toBe(3);
          expect((err as Error).message).toMatch(/seq 3: torn final record .*quarantineTornTail/);
        }
        await expect(store.append(lease, 3, [fourth!])).rejects.toThrow(TornTailError);
        await store.release(lease);
        const b = await acquire(store, 'torn', 'writer-b');
        await expect(store.append(b, 3, [fourth!])).rejects.toThrow(TornTailError);
        await expect(store.quarantineTornTail(lease)).rejects.toThrow(FencedError);
        await expect(store.read('torn')).rejects.toThrow(TornTailError); // still there, untouched
        const moved = await store.quarantineTornTail(b);
        expect(moved).toEqual({ seq: 3, keptAt: expect.any(String) });
        expect(await store.read('torn')).toEqual(records);
        expect(await store.quarantineTornTail(b)).toBeUndefined();
        await store.append(b, 3, [fourth!]);
        expect(await store.read('torn')).toEqual([...records, fourth]);
      });

      itIf(crash !== undefined, 'a torn first record is seq 0', async (store) => {
        const lease = await acquire(store, 'torn0');
        await crash!.tearTail(store, 'torn0', tornLine(pinned('torn0')));
        await expect(store.length('torn0')).rejects.toThrow(/seq 0: torn final record/);
        expect((await store.quarantineTornTail(lease))!.seq).toBe(0);
        expect(await store.length('torn0')).toBe(0);
        await store.append(lease, 0, chain('torn0', 2));
        expect(await store.length('torn0')).toBe(2);
      });

      itIf(crash?.holder !== undefined, 'a dead holder process is taken over before its TTL; its lease is fenced', async (store) => {
        const holder = await crash!.holder!(store, 'dead', { ttlMs: 60_000, records: 3, pin: testPin });
        let killed = false;
        try {
          const err = await acquire(store, 'dead', 'writer-b').catch((e: unknown) => e);
          expect(err).toBeInstanceOf(LeaseHeldError);
          expect((err as Error).message).toContain(`being written by ${holder.lease.writer}`);
          await holder.kill();
          killed = true;
          // Crash between records: what it appended is complete and reads back fine.
          const records = await store.read('dead');
          expect(records.map((r) => r.seq)).toEqual([0, 1, 2]);
          const b = await acquire(store, 'dead', 'writer-b', 60_000);
          expect(b.token).toBeGreaterThan(holder.lease.token);
          const next = chain(records[2]!, 1);
          await expect(store.append(holder.lease, 3, next)).rejects.toThrow(FencedError);
          await store.append(b, 3, next);
          expect(await store.length('dead')).toBe(4);
        } finally {
          if (!killed) await holder.kill();
        }
      });
    });
  });
}
