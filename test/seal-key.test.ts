/**
 * Behaviour flag 3 — the sealing key is pinned at start (issue 19, point 4). A new invocation pins
 * the key id that will seal it; a resume or approval with another key (or none) is refused before
 * anything is written, naming both key ids and how to pass the key; a re-key is explicit and
 * recorded (`invocation.rekeyed`), never silent, and `verify` expects the seal by the key in force.
 * A journal pinned before flag 3 resumes with any key, as before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { canonicalize } from '../journal/canonical.js';
import { chainRecord, genesisHash } from '../journal/chain.js';
import { verifyRecords } from '../journal/reader.js';
import { readJournalBytes } from '../journal/verify-bytes.js';
import type { JournalRecord } from '../journal/records.js';
import { publicKeyOf, signFingerprint, signingKeyFromSecret, type SigningKey } from '../journal/seal.js';
import { MemoryStore } from '../journal/stores/memory.js';
import { JournalWriter } from '../journal/writer.js';
import { FLAG_DECLARED_SPEND, FLAG_FAIL_CLOSED, FLAG_SEAL_KEY_PINNED } from '../machines/flags.js';
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

function runtimeOn(store: MemoryStore, signingKey: SigningKey | undefined, policy?: AdmissionPolicy) {
  return createRuntime({ store, domain: travelDomain, stateDir, ...(signingKey ? { signingKey } : {}), ...(policy ? { policy } : {}), writer: `w${writers++}`, sleep: async () => undefined });
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

describe('flag 3: the sealing key is pinned at start', () => {
  test('a new invocation pins flag 3 and the key id that will seal it', async () => {
    const { store, id } = await hibernated();
    const pinned = (await store.read(id, 0, 1))[0] as JournalRecord<'invocation.pinned'>;
    expect(pinned.body.pin.flags).toEqual([FLAG_FAIL_CLOSED, FLAG_DECLARED_SPEND, FLAG_SEAL_KEY_PINNED]);
    expect(pinned.body.pin.sealKey).toBe(keyA.keyId);
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
    expect(err.message).toContain(short(keyA));
    expect(err.message).toContain(short(keyB));
    expect(err.message).toContain('--signing-key FILE');
    expect(err.message).toContain('WEFT_SIGNING_KEY');
    expect(err.message).toContain('--rekey');
    expect(err.message).not.toContain('\n');
    expect(await store.length(id)).toBe(before);
    // No lease was taken: the right key resumes at once, to a seal the original key verifies.
    const result = await (await resume(runtimeOn(store, keyA), id)).done;
    expect(result.status).toBe('completed');
    expect(verifyRecords(await store.read(id), { publicKey: publicKeyOf(keyA) }).ok).toBe(true);
  });

  test('resume with no key at all is refused the same way', async () => {
    const { store, id } = await hibernated();
    const err = await refusal(runtimeOn(store, undefined).resume(id));
    expect(err).toBeInstanceOf(SealKeyMismatchError);
    expect(err.message).toMatch(/sealed by signing key [0-9a-f]{16} \(pinned at start\), and this runtime has no signing key/);
  });

  test('an explicit re-key is recorded, seals with the new key, verifies with it (not the old one), and replays', async () => {
    const { store, id } = await hibernated();
    const result = await (await resume(runtimeOn(store, keyB), id, { rekey: true })).done;
    expect(result.status).toBe('completed');
    const records = await store.read(id);
    const rekeys = records.filter((r) => r.kind === 'invocation.rekeyed');
    expect(rekeys.map((r) => r.body)).toEqual([{ from: keyA.keyId, to: keyB.keyId }]);
    expect((records.at(-1) as JournalRecord<'invocation.sealed'>).body.keyId).toBe(keyB.keyId);
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
  });

  test('after a re-key, the key in force is the new one: the old key is refused, the new one goes on', async () => {
    const { store, id } = await hibernated();
    // Re-key, and hibernate again at once (the next boundary).
    const handle = await resume(runtimeOn(store, keyB), id, { rekey: true });
    handle.hibernate();
    expect((await handle.done).status).toBe('hibernated');
    const err = await refusal(runtimeOn(store, keyA).resume(id));
    expect(err).toBeInstanceOf(SealKeyMismatchError);
    expect(err.message).toContain('re-keyed to it');
    // Starting it again with the new key attaches to it (the pin keeps the key it started with).
    const again = await runtimeOn(store, keyB).start(intent, { id });
    if (again.state?.value === 'hibernated') again.send({ type: 'resume' });
    expect((await again.done).status).toBe('completed');
    expect(verifyRecords(await store.read(id), { publicKey: publicKeyOf(keyB) }).ok).toBe(true);
  });

  test('a journal re-sealed by another key without a re-key record is not intact (verify) and is refused by replay', async () => {
    const { store, id } = await hibernated();
    await (await resume(runtimeOn(store, keyA), id)).done;
    const records = await store.read(id);
    // Silently re-seal with B: the chain and signature are valid, only the key differs from the pin.
    const seal = records.at(-1)!;
    const resealed = chainRecord(seal.prev, { seq: seal.seq, kind: 'invocation.sealed', epoch: seal.epoch, body: { algorithm: 'ed25519', fingerprint: seal.prev, keyId: keyB.keyId, signature: signFingerprint(keyB, seal.prev) } }) as JournalRecord;
    const forged = [...records.slice(0, -1), resealed];
    const report = verifyRecords(forged, { publicKey: publicKeyOf(keyB) });
    expect(report.ok).toBe(false);
    expect(report.sealMismatch).toBeUndefined(); // not intact (exit 1), not merely another key
    expect(report.error!.message).toMatch(new RegExp(`sealed by key ${short(keyB)}…, but the journal pinned key ${short(keyA)}…`));
    const bytes = new TextEncoder().encode(forged.map((r) => canonicalize(r) + '\n').join(''));
    expect(readJournalBytes(bytes, { publicKey: publicKeyOf(keyB) }).error?.message).toBe(report.error!.message);
    await expect(runtimeOn(new MemoryStore(), keyA).replay({ records: forged })).rejects.toThrow(/pinned key/);
  });

  test('approve with another key is refused before the decision is written to the inbox', async () => {
    const asks: AdmissionPolicy = { id: 'asks-first@1', admitEpoch: ({ plan }) => (plan.steps.some((s) => !s.readOnly) ? { decision: 'require_approval', reason: 'a person decides' } : { decision: 'allow' }) };
    const store = new MemoryStore();
    const result = await (await runtimeOn(store, keyA, asks).start(intent, { id: `inv-seal-${ids++}` })).done;
    expect(result.status).toBe('awaiting_approval');
    const err = await refusal(runtimeOn(store, keyB, asks).approve(result.id, { decision: 'approved', by: 'ana' }));
    expect(err).toBeInstanceOf(SealKeyMismatchError);
    expect(await store.peekInbox(result.id)).toBeUndefined();
  });

  test('starting the same invocation again with another key says so (not "a different pin")', async () => {
    const { store, id } = await hibernated();
    const err = await refusal(runtimeOn(store, keyB).start(intent, { id }));
    expect(err).toBeInstanceOf(SealKeyMismatchError);
  });

  test('a journal pinned before flag 3 resumes with any key, as before', async () => {
    const store = new MemoryStore();
    const { id } = await hibernated(store);
    const pinned = (await store.read(id, 0, 1))[0] as JournalRecord<'invocation.pinned'>;
    const { sealKey: _dropped, ...pin } = pinned.body.pin;
    const writer = await JournalWriter.create(store, { invocation: 'old', tenant: pinned.body.tenant, intent, pin: { ...pin, flags: [FLAG_FAIL_CLOSED, FLAG_DECLARED_SPEND] } }, { writer: 'test', now: () => new Date(0) });
    await writer.close();
    const result = await (await resume(runtimeOn(store, keyB), 'old')).done;
    expect(result.status).toBe('completed');
    expect(verifyRecords(await store.read('old'), { publicKey: publicKeyOf(keyB) }).ok).toBe(true);
    expect(genesisHash('old', { ...pin, flags: [FLAG_FAIL_CLOSED, FLAG_DECLARED_SPEND] })).toBe((await store.read('old', 0, 1))[0]!.prev);
    expect(canonicalize((await store.read('old', 0, 1))[0]!.body)).not.toContain('sealKey');
  });
});
