/**
 * Golden journals (invariant 2, and STYLE.md practice 8): a committed travel journal — with the
 * library blob it pinned — replays to its committed fingerprint, calling nothing. Edited copies,
 * each re-hashed into a valid chain and re-sealed so that only replay's re-derivation can catch
 * them, must fail with a ReplayDivergenceError naming the record: a changed model reply, a
 * reordered completion, and a method library changed under the same name.
 *
 * `WEFT_UPDATE_FIXTURES=1 npx vitest run test/golden-replay.test.ts` regenerates the fixture (do
 * it only for an intended, versioned change of what the runtime records). Before regenerating,
 * keep the old one as a frozen fixture (`travel-v0`: pinned with no behaviour flags, policy v1;
 * `travel-v1`: flag 1 alone, before flag 2): a journal an older weft wrote must replay on this
 * one, to its own fingerprint, forever; `travel-v2`: pinned to the travel library before the taxi
 * task of the gap path and to policy v2 — the fixture was regenerated only because adding
 * `book_transfer`, its operators and the taxi's spending actuator changed what a new run pins (the
 * library digest, policy v3, the spenders), and a test holds every other byte of it equal to
 * travel-v2's; `travel-v3`: flags 1 and 2, before the behaviour flags of issue 23 — the fixture
 * was regenerated only because a new run pins them, and a test holds every other byte equal;
 * `travel-v4`: flags 1, 2, 4, 5, 7, 8 under the coded policy `spend-approval@3`, before travel's
 * default policy became the policy pack travel@4 — regenerated only because a new run pins the pack's
 * id, and under flag 7 records the rule on each admission, and a test holds every other byte equal;
 * `travel-v5`: flags 1, 2, 4, 5, 7, 8 under the travel@4 pack, before flag 9 — regenerated only
 * because a new run pins flag 9 and records each step's admission at dispatch, allow included; a
 * test holds it equal to travel-v5 but for the flags and one step admission before each dispatch).
 * `travel-v6`: flags 1, 2, 4, 5, 7, 8, 9 under the travel@4 pack and the library before
 * `book_transfer`'s bindings, before issue 30 — regenerated only because a new run pins flags 10–13,
 * the library with the bindings and the travel@5 pack; a test holds every other byte equal.
 * (Flag 3 was withdrawn before it shipped; the committed journal pins every implemented flag with
 * its spending actuators, and nothing in it depends on the key that sealed it but the seal. Its
 * blobs are the pinned library, the pinned pack and the sealing key.)
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { canonicalBytes, canonicalize } from '../journal/canonical.js';
import { chainRecord, genesisHash } from '../journal/chain.js';
import type { JournalRecord } from '../journal/records.js';
import { publicKeyOf, signFingerprint, signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Library } from '../htn/library/schema.js';
import { travelDomain } from '../examples/travel/domain.js';
import { TRAVEL_POLICY_PACK, travelPackPolicy, travelPackPolicyV4 } from '../examples/travel/policy-pack.js';
import { packBytes } from '../policy/index.js';
import { IMPLEMENTED_FLAGS } from '../machines/flags.js';
import { createRuntime, ReplayDivergenceError } from '../runtime/index.js';

/** The travel library with the taxi task, before book_transfer bound its effects to the goal and counted its booking per run (issue 30). */
const TAXI_LIBRARY_BEFORE_BINDINGS = '7e848cef61d5a62ecfd371d9ae236a170e1f93a6b87e3774f002302d777876da';
const fixtureDir = path.join(import.meta.dirname, 'fixtures', 'runtime', 'travel');
const fixtureFile = path.join(fixtureDir, 'fixture.json');
const key = signingKeyFromSecret(new Uint8Array(32).fill(11));
const start = { tenant: 'golden', seed: '1', asOf: travelDomain.asOf! };
const scratch = mkdtempSync(path.join(tmpdir(), 'weft-golden-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function runtimeOver(storeDir: string) {
  const stateDir = path.join(scratch, `state-${Math.random().toString(36).slice(2)}`);
  return createRuntime({ store: new FileStore(storeDir), domain: travelDomain, stateDir, signingKey: key });
}

/**
 * A frozen fixture (test/fixtures/runtime/<name>), copied to scratch: it replays to its committed
 * fingerprint and verifies under the test key. Returns the pin it recorded, for the caller's checks.
 */
async function expectFrozenReplays(name: string): Promise<JournalRecord<'invocation.pinned'>['body']['pin']> {
  const frozenDir = path.join(import.meta.dirname, 'fixtures', 'runtime', name);
  const frozen = JSON.parse(readFileSync(path.join(frozenDir, 'fixture.json'), 'utf8')) as { id: string; fingerprint: string };
  const dir = path.join(scratch, `frozen-${name}`);
  cpSync(frozenDir, dir, { recursive: true });
  const journal = path.join(dir, 'invocations', frozen.id, 'journal.jsonl');
  expect(await runtimeOver(dir).replay({ journalPath: journal })).toMatchObject({ id: frozen.id, status: 'completed', sealed: true, fingerprint: frozen.fingerprint });
  expect((await runtimeOver(dir).verify({ journalPath: journal }, publicKeyOf(key))).ok).toBe(true);
  return (JSON.parse(readFileSync(journal, 'utf8').split('\n')[0]!) as JournalRecord<'invocation.pinned'>).body.pin;
}

/** Run the travel example live into `dir`; keep only the journal and the blobs (a portable store). */
async function generate(dir: string): Promise<{ id: string; fingerprint: string }> {
  const result = await (await runtimeOver(dir).start(travelDomain.intent!, start)).done;
  // The store's metadata (domain, library, sealing key id) and listing summary are not part of a portable journal.
  for (const name of ['lease.json', 'snapshot.json', 'meta.json', 'summary.json', 'journal.durable']) rmSync(path.join(dir, 'invocations', result.id, name), { force: true });
  rmSync(path.join(dir, 'locks'), { recursive: true, force: true });
  return { id: result.id, fingerprint: result.fingerprint! };
}

if (process.env.WEFT_UPDATE_FIXTURES === '1' || !existsSync(fixtureFile)) {
  rmSync(fixtureDir, { recursive: true, force: true });
  mkdirSync(fixtureDir, { recursive: true });
  const made = await generate(fixtureDir);
  writeFileSync(fixtureFile, JSON.stringify({ ...made, publicKey: publicKeyOf(key) }, null, 2) + '\n');
}
const fixture = JSON.parse(readFileSync(fixtureFile, 'utf8')) as { id: string; fingerprint: string };
const journalOf = (dir: string) => path.join(dir, 'invocations', fixture.id, 'journal.jsonl');
const readRecords = (dir: string) =>
  readFileSync(journalOf(dir), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as JournalRecord);

/** A private copy of the fixture store whose journal is `edit(records)`, re-chained and re-sealed. */
function editedCopy(name: string, edit: (records: JournalRecord[]) => void): string {
  const dir = path.join(scratch, name);
  cpSync(fixtureDir, dir, { recursive: true });
  const records = readRecords(dir);
  edit(records);
  const first = records[0] as JournalRecord<'invocation.pinned'>;
  let prev = genesisHash(first.body.invocation, first.body.pin);
  const out: JournalRecord[] = [];
  for (const r of records) {
    const body = r.kind === 'invocation.sealed' ? { algorithm: 'ed25519' as const, fingerprint: prev, keyId: key.keyId, signature: signFingerprint(key, prev) } : r.body;
    const rechained = chainRecord(prev, { seq: r.seq, kind: r.kind, epoch: r.epoch, body: body as never }) as JournalRecord;
    out.push(rechained);
    prev = rechained.hash;
  }
  writeFileSync(journalOf(dir), out.map((r) => canonicalize(r) + '\n').join(''));
  return dir;
}

async function divergence(dir: string): Promise<ReplayDivergenceError> {
  const err = await runtimeOver(dir).replay({ journalPath: journalOf(dir) }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ReplayDivergenceError);
  return err as ReplayDivergenceError;
}

describe('golden journals', () => {
  test('the committed travel journal replays to its committed fingerprint', async () => {
    const dir = path.join(scratch, 'pristine');
    cpSync(fixtureDir, dir, { recursive: true });
    const result = await runtimeOver(dir).replay({ journalPath: journalOf(dir) });
    expect(result).toMatchObject({ id: fixture.id, status: 'completed', sealed: true, fingerprint: fixture.fingerprint });
    const report = await runtimeOver(dir).verify({ journalPath: journalOf(dir) }, publicKeyOf(key));
    expect(report.ok).toBe(true);
  });

  test('a live run today writes the golden journal byte for byte (hashed parts)', async () => {
    const dir = path.join(scratch, 'live');
    const made = await generate(dir);
    expect(made.fingerprint).toBe(fixture.fingerprint);
    expect(readRecords(dir).map((r) => r.hash)).toEqual(readRecords(fixtureDir).map((r) => r.hash));
  });

  test('a changed model reply, re-hashed into a valid chain, diverges at the re-derived plan', async () => {
    let edited = -1;
    const dir = editedCopy('changed-reply', (records) => {
      const reply = records.find((r) => r.kind === 'model.completed' && String((r.body as { reply: string }).reply).includes('"book_trip"'))!;
      const body = reply.body as { reply: string };
      body.reply = body.reply.replace(',900]', ',950]');
      expect(body.reply).toContain('950');
      edited = reply.seq;
    });
    const err = await divergence(dir);
    expect(err.seq).toBeGreaterThan(edited);
    expect(err.kind).toBe('epoch.derived');
    expect(err.message).toMatch(new RegExp(`seq ${err.seq} \\(epoch\\.derived\\)`));
  });

  test('a reordered completion, re-hashed, diverges at the first moved record', async () => {
    let moved = -1;
    const dir = editedCopy('reordered', (records) => {
      const completions = records.filter((r) => r.kind === 'step.completed' && r.epoch === 2);
      const [a, b] = [completions[0]!, completions[1]!];
      [a.body, b.body] = [b.body, a.body];
      moved = a.seq;
    });
    const err = await divergence(dir);
    expect(err.seq).toBe(moved);
    expect(err.kind).toBe('step.completed');
  });

  test('a method library changed under the same name diverges at the first decomposition', async () => {
    const dir = editedCopy('changed-library', (records) => {
      const pinned = records[0] as JournalRecord<'invocation.pinned'>;
      const blob = readFileSync(path.join(fixtureDir, 'blobs', pinned.body.pin.library));
      const library = JSON.parse(blob.toString('utf8')) as Library;
      library.methods = [...library.methods].reverse(); // same name, same tasks — another order of preference
      const digest = libraryDigest(library);
      writeFileSync(path.join(scratch, 'changed-library', 'blobs', digest), canonicalBytes(library));
      pinned.body.pin.library = digest;
    });
    const err = await divergence(dir);
    const firstDerived = readRecords(dir).find((r) => r.kind === 'epoch.derived')!;
    expect(err.seq).toBe(firstDerived.seq);
    expect(err.kind).toBe('epoch.derived');
  });

  test('a frozen journal pinned before behaviour flag 1 (travel-v0) still replays to its committed fingerprint', async () => {
    const pin = await expectFrozenReplays('travel-v0');
    expect(pin).toMatchObject({ flags: [], policy: 'spend-approval@1' });
  });

  test('a frozen journal pinned with flag 1 alone (travel-v1: before flag 2) still replays to its committed fingerprint', async () => {
    const pin = await expectFrozenReplays('travel-v1');
    expect(pin.flags).toEqual([1]);
  });

  test('the committed travel journal pins every implemented flag and its spending actuators, and no key: only its seal names the key', () => {
    const records = readRecords(fixtureDir);
    const pinned = records[0] as JournalRecord<'invocation.pinned'>;
    expect(pinned.body.pin.flags).toEqual([...IMPLEMENTED_FLAGS]);
    expect(pinned.body.pin.spenders).toEqual([{ actuator: 'card.charge', arg: 'amount' }, { actuator: 'taxi.book', arg: 'amount' }]);
    expect(records.slice(0, -1).some((r) => canonicalize(r).includes(key.keyId))).toBe(false);
    expect((records.at(-1) as JournalRecord<'invocation.sealed'>).body.keyId).toBe(key.keyId);
  });

  test('a frozen journal pinned to the library before the taxi and policy v2 (travel-v2) still replays to its committed fingerprint', async () => {
    const pin = await expectFrozenReplays('travel-v2');
    expect(pin).toMatchObject({ flags: [1, 2], policy: 'spend-approval@2', spenders: [{ actuator: 'card.charge', arg: 'amount' }] });
    expect(pin.library).not.toBe(libraryDigest(travelDomain.libraries[0]!));
  });

  test('the taxi (gap-path) library changed only the pin: the golden journal is travel-v2 record for record, but for the library digest, the policy id and the spenders it pins', () => {
    const frozenDir = path.join(import.meta.dirname, 'fixtures', 'runtime', 'travel-v2');
    const old = readRecords(frozenDir);
    // The golden journal as it was then (travel-v3): flags added since change the pin alone (next test).
    const now = readRecords(path.join(import.meta.dirname, 'fixtures', 'runtime', 'travel-v3'));
    const oldPin = (old[0] as JournalRecord<'invocation.pinned'>).body.pin;
    const newPin = (now[0] as JournalRecord<'invocation.pinned'>).body.pin;
    // travel-v3 pinned the taxi library as it was before book_transfer's bindings (issue 30), which travel-v5 pins too.
    expect(newPin.library).toBe(TAXI_LIBRARY_BEFORE_BINDINGS);
    // What the old run would have recorded under today's pin: every digest, policy id and spender list swapped.
    const swap = (r: JournalRecord) =>
      canonicalize({ seq: r.seq, kind: r.kind, epoch: r.epoch, body: r.kind === 'invocation.sealed' ? null : r.body })
        .replaceAll(oldPin.library, newPin.library)
        .replaceAll(`"${oldPin.policy}"`, `"${newPin.policy}"`)
        .replace(canonicalize(oldPin.spenders as never), canonicalize(newPin.spenders as never));
    expect(now.map(swap)).toEqual(old.map(swap));
  });

  test('a frozen journal pinned with flags 1 and 2 (travel-v3: before flag 4) still replays to its committed fingerprint', async () => {
    const pin = await expectFrozenReplays('travel-v3');
    expect(pin).toMatchObject({ flags: [1, 2], policy: 'spend-approval@3' });
  });

  test('the flags of issue 23 changed only the pin: travel-v4 is travel-v3 record for record, but for the flags it pins', () => {
    const old = readRecords(path.join(import.meta.dirname, 'fixtures', 'runtime', 'travel-v3'));
    const now = readRecords(path.join(import.meta.dirname, 'fixtures', 'runtime', 'travel-v4'));
    const oldPin = (old[0] as JournalRecord<'invocation.pinned'>).body.pin;
    const newPin = (now[0] as JournalRecord<'invocation.pinned'>).body.pin;
    expect(newPin.flags).not.toEqual(oldPin.flags);
    const flags = (r: JournalRecord, pin: typeof oldPin) => canonicalize({ seq: r.seq, kind: r.kind, epoch: r.epoch, body: r.kind === 'invocation.sealed' ? null : r.body }).replace(`"flags":${canonicalize(pin.flags)}`, '"flags":*');
    expect(now.map((r) => flags(r, newPin))).toEqual(old.map((r) => flags(r, oldPin)));
  });

  test('a frozen journal pinned with the flags of issue 23 under the coded policy (travel-v4: before the travel@4 pack) still replays to its committed fingerprint', async () => {
    const pin = await expectFrozenReplays('travel-v4');
    expect(pin).toMatchObject({ flags: [1, 2, 4, 5, 7, 8], policy: 'spend-approval@3' });
  });

  test('the travel@4 pack as the default changed only the policy: travel-v5 is travel-v4 record for record, but for the policy id wherever it appears and the rule on each admission.decided', () => {
    const old = readRecords(path.join(import.meta.dirname, 'fixtures', 'runtime', 'travel-v4'));
    // The golden journal as it was then (travel-v5): flag 9 since added steps' admissions (next tests).
    const now = readRecords(path.join(import.meta.dirname, 'fixtures', 'runtime', 'travel-v5'));
    const oldPin = (old[0] as JournalRecord<'invocation.pinned'>).body.pin;
    const newPin = (now[0] as JournalRecord<'invocation.pinned'>).body.pin;
    expect(oldPin.policy).toBe('spend-approval@3');
    // travel@4, the default then (travel@5 since holds the model's allowance per run: flag 11), kept in the domain for such journals.
    expect(newPin.policy).toBe(travelPackPolicyV4.id);
    expect(newPin.policy).toMatch(/^pack:travel@4#[0-9a-f]{64}$/);
    expect(newPin.flags).toEqual(oldPin.flags);
    // Each admission names its rule now (flag 7 under a pack); under the coded policy none did.
    const admissions = (records: JournalRecord[]) => records.filter((r) => r.kind === 'admission.decided').map((r) => r.body as { rule?: string });
    expect(admissions(old).map((b) => b.rule)).toEqual([undefined, undefined, undefined]);
    expect(admissions(now).map((b) => b.rule)).toEqual(['weft:default', 'weft:default', 'weft:default']);
    // The policy id is on the pin, every admission and every certification — and nowhere else changed.
    const mentions = (records: JournalRecord[], id: string) => records.filter((r) => canonicalize(r.body as never).includes(`"${id}"`)).map((r) => r.kind);
    expect(mentions(now, newPin.policy)).toEqual(mentions(old, oldPin.policy));
    expect(mentions(now, newPin.policy).filter((k) => k === 'admission.decided' || k === 'epoch.certified')).toHaveLength(6);
    const withoutRule = (r: JournalRecord) => {
      if (r.kind !== 'admission.decided') return r.body;
      const { rule: _rule, ...body } = r.body as { rule?: string };
      return body;
    };
    const comparable = (r: JournalRecord, id: string) =>
      canonicalize({ seq: r.seq, kind: r.kind, epoch: r.epoch, body: r.kind === 'invocation.sealed' ? null : (withoutRule(r) as never) }).replaceAll(`"${id}"`, '"*policy*"');
    expect(now.map((r) => comparable(r, newPin.policy))).toEqual(old.map((r) => comparable(r, oldPin.policy)));
  });

  test('a frozen journal pinned under the travel@4 pack before flag 9 (travel-v5) still replays to its committed fingerprint', async () => {
    const pin = await expectFrozenReplays('travel-v5');
    expect(pin).toMatchObject({ flags: [1, 2, 4, 5, 7, 8], policy: travelPackPolicyV4.id });
  });

  test('flag 9 changed only the pin and added one step admission before each dispatch: the golden journal as it was then (travel-v6) is travel-v5 record for record otherwise', () => {
    const old = readRecords(path.join(import.meta.dirname, 'fixtures', 'runtime', 'travel-v5'));
    const now = readRecords(path.join(import.meta.dirname, 'fixtures', 'runtime', 'travel-v6'));
    const oldPin = (old[0] as JournalRecord<'invocation.pinned'>).body.pin;
    const newPin = (now[0] as JournalRecord<'invocation.pinned'>).body.pin;
    expect(newPin.flags).toEqual([...oldPin.flags, 9]);
    const stepAdmission = (r: JournalRecord) => r.kind === 'admission.decided' && (r.body as { subject: string }).subject === 'step';
    expect(old.filter(stepAdmission)).toEqual([]);
    // Each step admission stands right before the step.dispatched it admitted (attempt 1), an allow naming its rule.
    const added = now.filter(stepAdmission);
    const dispatched = now.filter((r) => r.kind === 'step.dispatched');
    expect(added).toHaveLength(dispatched.length);
    expect(added).toHaveLength(9);
    for (const a of added) {
      const next = now[now.indexOf(a) + 1]!;
      expect(next.kind).toBe('step.dispatched');
      expect(next.epoch).toBe(a.epoch);
      expect(a.body).toEqual({ subject: 'step', step: (next.body as { step: number }).step, decision: 'allow', policy: travelPackPolicyV4.id, rule: 'weft:default' });
      expect((next.body as { attempt: number }).attempt).toBe(1);
    }
    // Without them (and without seq, hash and the pin's flags, which they shift), every record is travel-v5's.
    const comparable = (r: JournalRecord, pin: typeof oldPin) => canonicalize({ kind: r.kind, epoch: r.epoch, body: r.kind === 'invocation.sealed' ? null : r.body }).replace(`"flags":${canonicalize(pin.flags)}`, '"flags":*');
    expect(now.filter((r) => !stepAdmission(r)).map((r) => comparable(r, newPin))).toEqual(old.map((r) => comparable(r, oldPin)));
  });

  test('a frozen journal pinned with flag 9 under the travel@4 pack and the library before the bindings (travel-v6: before issue 30) still replays to its committed fingerprint', async () => {
    const pin = await expectFrozenReplays('travel-v6');
    expect(pin).toMatchObject({ flags: [1, 2, 4, 5, 7, 8, 9], policy: travelPackPolicyV4.id, library: TAXI_LIBRARY_BEFORE_BINDINGS });
  });

  test('issue 30 changed only the pin: the golden journal is travel-v6 record for record, but for the flags (10–13), the library digest (book_transfer\'s bindings) and the policy id (travel@5) wherever they appear', () => {
    const old = readRecords(path.join(import.meta.dirname, 'fixtures', 'runtime', 'travel-v6'));
    const now = readRecords(fixtureDir);
    const oldPin = (old[0] as JournalRecord<'invocation.pinned'>).body.pin;
    const newPin = (now[0] as JournalRecord<'invocation.pinned'>).body.pin;
    expect(newPin.flags).toEqual([...oldPin.flags, 10, 11, 12, 13]);
    expect(newPin.library).toBe(libraryDigest(travelDomain.libraries[0]!));
    expect(newPin.library).not.toBe(oldPin.library);
    expect(newPin.policy).toBe(travelPackPolicy.id);
    expect(newPin.policy).not.toBe(oldPin.policy);
    // The demo's plans are the library's: no warning, no refusal, and every admission still weft:default.
    expect(now.filter((r) => r.kind === 'admission.decided').every((r) => (r.body as { rule?: string; warnings?: unknown }).rule === 'weft:default' && (r.body as { warnings?: unknown }).warnings === undefined)).toBe(true);
    expect(now.some((r) => r.kind === 'step.refused')).toBe(false);
    const comparable = (r: JournalRecord, pin: typeof oldPin) =>
      canonicalize({ seq: r.seq, kind: r.kind, epoch: r.epoch, body: r.kind === 'invocation.sealed' ? null : r.body })
        .replace(`"flags":${canonicalize(pin.flags)}`, '"flags":*')
        .replaceAll(pin.library, '*library*')
        .replaceAll(`"${pin.policy}"`, '"*policy*"');
    expect(now.map((r) => comparable(r, newPin))).toEqual(old.map((r) => comparable(r, oldPin)));
  });

  test("the fixture holds only the journal and its pinned blobs: the library, the domain's default pack and the sealing key", () => {
    expect(readdirSync(fixtureDir).sort()).toEqual(['blobs', 'fixture.json', 'invocations']);
    expect(readdirSync(path.join(fixtureDir, 'invocations', fixture.id))).toEqual(['journal.jsonl']);
    const pin = (readRecords(fixtureDir)[0] as JournalRecord<'invocation.pinned'>).body.pin;
    expect(readdirSync(path.join(fixtureDir, 'blobs')).sort()).toEqual([pin.library, travelPackPolicy.digest, key.keyId].sort());
    expect(new Uint8Array(readFileSync(path.join(fixtureDir, 'blobs', travelPackPolicy.digest)))).toEqual(packBytes(TRAVEL_POLICY_PACK));
  });
});
