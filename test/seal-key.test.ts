/**
 * The sealing key is fixed when an invocation starts (issue 19, point 4), without entering the hash
 * chain: its id is recorded in the store's unhashed metadata (`sealKey`), so the same run sealed by
 * two different keys has the same journal and fingerprint (only the seal differs). A resume or
 * approval with another key (or none) is refused before anything is written, naming both key ids
 * and how to pass the key; a re-key is explicit and recorded (`invocation.rekeyed`, hashed), never
 * silent, and `verify` and replay hold the seal to the key in force. An invocation whose metadata
 * names no key resumes with any key, as before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { canonicalize } from '../journal/canonical.js';
import { chainRecord } from '../journal/chain.js';
import { verifyRecords } from '../journal/reader.js';
import { readJournalBytes } from '../journal/verify-bytes.js';
import type { JournalRecord } from '../journal/records.js';
import { publicKeyOf, signFingerprint, signingKeyFromSecret, type SigningKey } from '../journal/seal.js';
import { MemoryStore } from '../stores/memory.js';
import { JournalWriter } from '../journal/writer.js';
import { IMPLEMENTED_FLAGS } from '../machines/flags.js';
import type { AdmissionPolicy } from '../machines/policy.js';
import { travelDomain } from '../examples/travel/domain.js';
import { publicKeyFromStore } from '../runtime/keys.js';
import { createRuntime, RuntimeUsageError, SealKeyMismatchError, type InvocationHandle, type ResumeOptions } from '../runtime/index.js';

const keyA = signingKeyFromSecret(new Uint8Array(32).fill(41));
const keyB = signingKeyFromSecret(new Uint8Array(32).fill(42));
const short = (k: SigningKey) => k.keyId.slice(0, 16);
const intent = travelDomain.intent!;
let writers = 0;
let ids = 0;
const stateDir = mkdtempSync(path.join(tmpdir(), 'weft-seal-key-'));
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

function runtimeOn(store: MemoryStore, signingKey: SigningKey | undefined, policy?: AdmissionPolicy, world = stateDir) {
  return createRuntime({ store, domain: travelDomain, stateDir: world, ...(signingKey ? { signingKey } : {}), ...(policy ? { policy } : {}), writer: `w${writers++}`, sleep: async () => undefined });
}

/** Resume a hibernated invocation and wake it (as weft resume does). */
async function resume(runtime: ReturnType<typeof runtimeOn>, id: string, options: ResumeOptions = {}): Promise<InvocationHandle> {
  const handle = await runtime.resume(id, options);
  if (handle.state?.value === 'hibernated') handle.send({ type: 'resume' });
  return handle;
}

/** A travel invocation started with key A and hibernated at its first boundary. */
async function hibernated(store = new MemoryStore()) {
  const handle = await runtimeOn(store, keyA).start(intent, { id: `inv-seal-${ids++}` });
  handle.hibernate();
  const result = await handle.done;
  expect(result.status).toBe('hibernated');
  return { store, id: result.id };
}

async function refusal(promise: Promise<unknown>): Promise<Error> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(Error);
  return err as Error;
}

/** A whole travel run, started with `key` in a store and a world (the travel desk's state) of its own; its records. */
async function wholeRun(key: SigningKey, id: string) {
  const store = new MemoryStore();
  const world = mkdtempSync(path.join(stateDir, 'world-'));
  const result = await (await runtimeOn(store, key, undefined, world).start(intent, { id })).done;
  expect(result.status).toBe('completed');
  return { result, records: await store.read(id), store };
}

describe('the sealing key is fixed at start, outside the hash chain', () => {
  test('the same run sealed by two different keys has the same journal and fingerprint; only the seal differs', async () => {
    const a = await wholeRun(keyA, 'inv-two-keys');
    const b = await wholeRun(keyB, 'inv-two-keys');
    expect(a.result.fingerprint).toBe(b.result.fingerprint);
    expect(a.records.slice(0, -1).map((r) => r.hash)).toEqual(b.records.slice(0, -1).map((r) => r.hash));
    const sealA = (a.records.at(-1) as JournalRecord<'invocation.sealed'>).body;
    const sealB = (b.records.at(-1) as JournalRecord<'invocation.sealed'>).body;
    expect([sealA.keyId, sealB.keyId]).toEqual([keyA.keyId, keyB.keyId]);
    // Each verifies with its own key, and each replays — under either key — to the one fingerprint.
    expect(verifyRecords(a.records, { publicKey: publicKeyOf(keyA) }).ok).toBe(true);
    expect(verifyRecords(b.records, { publicKey: publicKeyOf(keyB) }).ok).toBe(true);
    expect((await runtimeOn(new MemoryStore(), keyB).replay({ records: a.records })).fingerprint).toBe(a.result.fingerprint);
  });

  test('a run hibernated under key A and resumed with A ends at the fingerprint of an uninterrupted run under key B', async () => {
    const { store, id } = await hibernated();
    const resumed = await (await resume(runtimeOn(store, keyA), id)).done;
    const whole = await wholeRun(keyB, id);
    expect(resumed.fingerprint).toBe(whole.result.fingerprint);
  });

  test('the pin carries the implemented flags and no key; the store metadata records the key id', async () => {
    const { store, id } = await hibernated();
    const pinned = (await store.read(id, 0, 1))[0] as JournalRecord<'invocation.pinned'>;
    expect(pinned.body.pin.flags).toEqual([...IMPLEMENTED_FLAGS]);
    expect(IMPLEMENTED_FLAGS).not.toContain(3); // 3 was withdrawn: never pinned
    expect(canonicalize(pinned)).not.toContain(keyA.keyId);
    expect(await store.getMetadata(id)).toMatchObject({ domain: 'travel', library: pinned.body.pin.library, sealKey: keyA.keyId });
  });

  test('a runtime without a signing key cannot start (nothing written)', async () => {
    const store = new MemoryStore();
    const err = await refusal(runtimeOn(store, undefined).start(intent));
    expect(err).toBeInstanceOf(RuntimeUsageError);
    expect((err as RuntimeUsageError).code).toBe('runtime.no_signing_key');
    expect(await store.list()).toEqual([]);
  });

  test('resume with another key is refused before anything is written, naming both key ids and how to pass the key', async () => {
    const { store, id } = await hibernated();
    const before = await store.length(id);
    const err = await refusal(runtimeOn(store, keyB).resume(id));
    expect(err).toBeInstanceOf(SealKeyMismatchError);
    expect((err as SealKeyMismatchError).code).toBe('pin.seal_key');
    expect(err.message).toContain(short(keyA));
    expect(err.message).toContain(short(keyB));
    expect(err.message).toContain('--signing-key FILE');
    expect(err.message).toContain('WEFT_SIGNING_KEY');
    expect(err.message).toContain('--rekey');
    expect(err.message).not.toContain('\n');
    expect(await store.length(id)).toBe(before);
    expect((await store.getMetadata(id))?.sealKey).toBe(keyA.keyId);
    // No lease was taken: the right key resumes at once, to a seal the original key verifies.
    const result = await (await resume(runtimeOn(store, keyA), id)).done;
    expect(result.status).toBe('completed');
    expect(verifyRecords(await store.read(id), { publicKey: publicKeyOf(keyA) }).ok).toBe(true);
  });

  test('resume with no key at all is refused the same way', async () => {
    const { store, id } = await hibernated();
    const before = await store.length(id);
    const err = await refusal(runtimeOn(store, undefined).resume(id));
    expect(err).toBeInstanceOf(SealKeyMismatchError);
    expect(err.message).toMatch(/sealed by signing key [0-9a-f]{16} \(recorded at start\), and this runtime has no signing key/);
    expect(await store.length(id)).toBe(before);
  });

  test('an explicit re-key is recorded, seals with the new key, verifies with it (not the old one), and replays', async () => {
    const { store, id } = await hibernated();
    const result = await (await resume(runtimeOn(store, keyB), id, { rekey: true })).done;
    expect(result.status).toBe('completed');
    const records = await store.read(id);
    const rekeys = records.filter((r) => r.kind === 'invocation.rekeyed');
    expect(rekeys.map((r) => r.body)).toEqual([{ from: keyA.keyId, to: keyB.keyId }]);
    expect((records.at(-1) as JournalRecord<'invocation.sealed'>).body.keyId).toBe(keyB.keyId);
    expect((await store.getMetadata(id))?.sealKey).toBe(keyB.keyId);
    expect(await publicKeyFromStore(store, keyB.keyId)).toEqual(publicKeyOf(keyB)); // what weft export bundles
    expect(verifyRecords(records, { publicKey: publicKeyOf(keyB) }).ok).toBe(true);
    const withA = verifyRecords(records, { publicKey: publicKeyOf(keyA) });
    expect(withA).toMatchObject({ ok: false, sealMismatch: true });
    expect(withA.error!.message).toContain(`re-keyed to key ${short(keyB)}`);
    // The byte verifier (weft verify) reads the re-key on its slow path and gives the same verdicts.
    const bytes = new TextEncoder().encode(records.map((r) => canonicalize(r) + '\n').join(''));
    expect(readJournalBytes(bytes, { publicKey: publicKeyOf(keyB) }).ok).toBe(true);
    expect(readJournalBytes(bytes, { publicKey: publicKeyOf(keyA) })).toMatchObject({ ok: false, sealMismatch: true });
    expect((await runtimeOn(store, keyA).replay(id)).fingerprint).toBe(result.fingerprint);
    // The re-key is in the hash chain: this run's fingerprint is not the un-re-keyed run's.
    expect(result.fingerprint).not.toBe((await wholeRun(keyA, id)).result.fingerprint);
  });

  test('after a re-key, the key in force is the new one — even when a crash left the metadata naming the old one', async () => {
    const { store, id } = await hibernated();
    // A crash between the re-key's append and the metadata's update: the metadata write fails once.
    const failing = Object.create(store) as MemoryStore;
    failing.putMetadata = async () => {
      throw new Error('crash: the metadata was not updated');
    };
    await expect(runtimeOn(failing, keyB).resume(id, { rekey: true })).rejects.toThrow(/crash/);
    const records = await store.read(id);
    expect(records.at(-1)!).toMatchObject({ kind: 'invocation.rekeyed', body: { from: keyA.keyId, to: keyB.keyId } });
    expect((await store.getMetadata(id))!.sealKey).toBe(keyA.keyId); // left behind
    // The journal wins: the old key is refused, writing nothing.
    const err = await refusal(runtimeOn(store, keyA).resume(id));
    expect(err).toBeInstanceOf(SealKeyMismatchError);
    expect(err.message).toContain('re-keyed to it');
    expect(err.message).toContain(short(keyB));
    expect(await store.length(id)).toBe(records.length);
    // The new key goes on, and puts the metadata right before the run can snapshot past the re-key.
    const handle = await resume(runtimeOn(store, keyB), id);
    expect((await store.getMetadata(id))!.sealKey).toBe(keyB.keyId);
    handle.hibernate();
    expect((await handle.done).status).toBe('hibernated');
    expect((await store.getSnapshot(id))!.seq).toBeGreaterThan(records.length);
    // Past that snapshot, the key in force is still the new one.
    expect(await refusal(runtimeOn(store, keyA).resume(id))).toBeInstanceOf(SealKeyMismatchError);
    // Starting it again with the new key attaches to it.
    const again = await runtimeOn(store, keyB).start(intent, { id });
    if (again.state?.value === 'hibernated') again.send({ type: 'resume' });
    expect((await again.done).status).toBe('completed');
    expect(verifyRecords(await store.read(id), { publicKey: publicKeyOf(keyB) }).ok).toBe(true);
  });

  test('a re-key by another process between the key check and the lease: the resume is refused, writing nothing, and asking again works', async () => {
    const { store, id } = await hibernated();
    const keyC = signingKeyFromSecret(new Uint8Array(32).fill(44));
    // Another process re-keys A → C (its record, then the metadata) just before this resume takes the lease.
    const racing = Object.create(store) as MemoryStore;
    let raced = false;
    racing.acquire = async (invocation, options) => {
      if (!raced) {
        raced = true;
        const other = await JournalWriter.open(store, invocation, { writer: 'other-process' });
        const tail = (await store.tail(invocation))!;
        await other.append({ kind: 'invocation.rekeyed', epoch: tail.epoch, body: { from: keyA.keyId, to: keyC.keyId } });
        await other.close();
        await store.putMetadata(invocation, { ...(await store.getMetadata(invocation))!, sealKey: keyC.keyId });
      }
      return store.acquire(invocation, options);
    };
    const length = await store.length(id);
    const err = await refusal(runtimeOn(racing, keyA).resume(id));
    expect(err).toBeInstanceOf(SealKeyMismatchError); // A was in force when checked, C is by the time the lease is held
    expect(await store.length(id)).toBe(length + 1); // the other process's re-key only
    expect((await store.holder(id))?.live ?? false).toBe(false); // its lease was let go
    // With the key now in force, it goes on.
    const handle = await resume(runtimeOn(store, keyC), id);
    expect((await handle.done).status).toBe('completed');
    expect(verifyRecords(await store.read(id), { publicKey: publicKeyOf(keyC) }).ok).toBe(true);
  });

  test('a re-keyed journal re-sealed by another key, or re-keyed from a key not in force, is not intact', async () => {
    const { store, id } = await hibernated();
    await (await resume(runtimeOn(store, keyB), id, { rekey: true })).done;
    const records = await store.read(id);
    const keyC = signingKeyFromSecret(new Uint8Array(32).fill(43));
    // Silently re-seal with C: the chain and signature are valid, only the key differs from the re-key's.
    const seal = records.at(-1)!;
    const resealed = chainRecord(seal.prev, { seq: seal.seq, kind: 'invocation.sealed', epoch: seal.epoch, body: { algorithm: 'ed25519', fingerprint: seal.prev, keyId: keyC.keyId, signature: signFingerprint(keyC, seal.prev) } }) as JournalRecord;
    const forged = [...records.slice(0, -1), resealed];
    const report = verifyRecords(forged, { publicKey: publicKeyOf(keyC) });
    expect(report.ok).toBe(false);
    expect(report.sealMismatch).toBeUndefined(); // not intact (exit 1), not merely another key
    expect(report.error!.message).toMatch(new RegExp(`sealed by key ${short(keyC)}…, but the journal was re-keyed to key ${short(keyB)}…`));
    const bytes = new TextEncoder().encode(forged.map((r) => canonicalize(r) + '\n').join(''));
    expect(readJournalBytes(bytes, { publicKey: publicKeyOf(keyC) }).error?.message).toBe(report.error!.message);
    await expect(runtimeOn(new MemoryStore(), keyA).replay({ records: forged })).rejects.toThrow(/by key/);

    // A second re-key must start from the first one's key.
    const rekeyAt = records.findIndex((r) => r.kind === 'invocation.rekeyed');
    const rechained: JournalRecord[] = records.slice(0, rekeyAt + 1);
    const extra = chainRecord(rechained.at(-1)!.hash, { seq: rekeyAt + 1, kind: 'invocation.rekeyed', epoch: records[rekeyAt]!.epoch, body: { from: keyA.keyId, to: keyC.keyId } }) as JournalRecord;
    const broken = verifyRecords([...rechained, extra]);
    expect(broken.ok).toBe(false);
    expect(broken.error!.message).toContain(`invocation.rekeyed from key ${short(keyA)}…, but the key in force is ${short(keyB)}…`);
  });

  test('approve with another key is refused before the decision is written to the inbox', async () => {
    const asks: AdmissionPolicy = { id: 'asks-first@1', admitEpoch: ({ plan }) => (plan.steps.some((s) => !s.readOnly) ? { decision: 'require_approval', reason: 'a person decides' } : { decision: 'allow' }) };
    const store = new MemoryStore();
    const result = await (await runtimeOn(store, keyA, asks).start(intent, { id: `inv-seal-${ids++}` })).done;
    expect(result.status).toBe('awaiting_approval');
    const before = await store.length(result.id);
    const err = await refusal(runtimeOn(store, keyB, asks).approve(result.id, { decision: 'approved', by: 'ana' }));
    expect(err).toBeInstanceOf(SealKeyMismatchError);
    expect(err.message).toContain(short(keyA));
    expect(err.message).toContain(short(keyB));
    expect(await store.peekInbox(result.id)).toBeUndefined();
    expect(await store.length(result.id)).toBe(before);
  });

  test('starting the same invocation again with another key says so (not "a different pin")', async () => {
    const { store, id } = await hibernated();
    const before = await store.length(id);
    const err = await refusal(runtimeOn(store, keyB).start(intent, { id }));
    expect(err).toBeInstanceOf(SealKeyMismatchError);
    expect(err.message).toContain(`refusing to start ${id}`);
    expect(await store.length(id)).toBe(before);
  });

  test('an invocation whose metadata names no key (started before the store kept it) resumes with any key, as before', async () => {
    const { store, id } = await hibernated();
    const { sealKey: _dropped, ...meta } = (await store.getMetadata(id))!;
    await store.putMetadata(id, meta);
    const result = await (await resume(runtimeOn(store, keyB), id)).done;
    expect(result.status).toBe('completed');
    expect(verifyRecords(await store.read(id), { publicKey: publicKeyOf(keyB) }).ok).toBe(true);
    expect((await store.read(id)).some((r) => r.kind === 'invocation.rekeyed')).toBe(false);
  });
});
