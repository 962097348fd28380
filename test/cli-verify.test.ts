/**
 * `weft verify`'s exit-code contract (0 verified, 1 not intact, 2 usage, 3 the seal is not the
 * key's, 4 the seal was not checked), the readers' `sealMismatch` verdict behind exit 3, the
 * portable bundle (journal/bundle.ts) and `weft export`, which writes one: a bundle exported from
 * a real run verifies in an empty directory, and a damaged, foreign or differently-sealed journal
 * is refused. Each exit code and each input kind has a real `weft verify` process here or in
 * cli-journal.test.ts (the --json lines, exit 3 for another key, a bundle with its carried key, a
 * bundle in an empty folder); the other cases run the command's own module in this process
 * (`verifyHere`: test/support/command-in-process.ts, the code the process runs, its text and exit code), and
 * `weft export` runs in-process too, on a run made in this process as `weft run` makes it
 * (test/support/runs-here.ts).
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import '../journal/sha256-node.js';
import { chainRecord } from '../journal/chain.js';
import { digestOf } from '../journal/digest.js';
import { BUNDLE_FORMAT, BundleError, buildBundle, looksLikeBundle, parseBundle, type Bundle } from '../journal/bundle.js';
import { readJournalText, verifyJournalText, type JournalReport, type JournalVerdict, type ReadOptions } from '../journal/reader.js';
import type { JournalRecord } from '../journal/records.js';
import { publicKeyOf, signFingerprint } from '../journal/seal.js';
import { readJournalBytes, verifyJournalBytes } from '../journal/verify-bytes.js';
import { run as exportRun } from '../cli/commands/export.js';
import { goldenGenesis, goldenKey, otherKey, toJsonl } from './fixtures/journal/make.js';
import { assertBuilt, repoRoot, weft } from './support/cli.js';
import { weftHere } from './support/command-in-process.js';
import { runInWorkspace } from './support/runs-here.js';

const fixtures = path.join(repoRoot, 'test/fixtures/journal');
const fixture = (name: string) => path.join(fixtures, name);
const golden = readFileSync(fixture('golden.jsonl'), 'utf8');
const goldenRecords = golden.trimEnd().split('\n').map((l) => JSON.parse(l) as JournalRecord);
const GOLDEN_KEY_ID = goldenKey.keyId;
const OTHER_KEY_ID = otherKey.keyId;
/** The value the golden journal's pinned digest names (make.ts). */
const goldenLibrary = { library: 'travel', version: 3 };
const goldenPublicKey = { format: 'weft.ed25519.public.v1' as const, ...publicKeyOf(goldenKey) };

const tmp = mkdtempSync(path.join(tmpdir(), 'weft-cli-verify-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
beforeAll(() => assertBuilt());

function writeTmp(name: string, text: string): string {
  const file = path.join(tmp, name);
  writeFileSync(file, text);
  return file;
}

const verify = (...args: string[]) => weft(['verify', ...args]);
/** `weft verify …` by the command's module in this process (see the header). */
const verifyHere = (...args: string[]) => weftHere(['verify', ...args]);

/** The golden journal with its seal re-made: the golden key id, but the other key's signature (hash re-computed, so the chain is intact). */
function badSignatureJournal(): string {
  const seal = goldenRecords.at(-1)! as JournalRecord<'invocation.sealed'>;
  const body = { ...seal.body, signature: signFingerprint(otherKey, seal.body.fingerprint) };
  const forged = chainRecord(seal.prev, { seq: seal.seq, kind: 'invocation.sealed', epoch: seal.epoch, body }) as JournalRecord;
  return toJsonl([...goldenRecords.slice(0, -1), forged]);
}

/** The golden journal with one more record after the seal (its line copied): not intact. */
const afterSeal = () => golden + golden.split('\n')[13] + '\n';

describe('weft verify: exit codes', () => {
  test('the right key: exit 0', async () => {
    const r = await verifyHere(fixture('golden.jsonl'), '--public-key', fixture('golden.pub'));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('(signature valid)');
  });

  test('no key, no --no-signature: exit 4, saying the seal was not checked and what to pass', async () => {
    for (const name of ['golden.jsonl', 'unsealed.jsonl', 'resealed-other-key.jsonl']) {
      const r = await verifyHere(fixture(name));
      expect(r.code, name).toBe(4);
      expect(r.stdout, name).toMatch(/^seal NOT checked: .*pass --public-key FILE .*or --no-signature to check only the chain$/m);
    }
    const json = JSON.parse((await verify(fixture('golden.jsonl'), '--json')).stdout);
    expect(json).toMatchObject({ ok: false, exitCode: 4, chainIntact: true, sealed: true, signatureChecked: false, sealMismatch: false, keySource: null });
  });

  test('--no-signature: the chain alone, exit 0 sealed or not; a broken chain still exits 1', async () => {
    const sealed = await verifyHere(fixture('golden.jsonl'), '--no-signature');
    expect(sealed.code).toBe(0);
    expect(sealed.stdout).toContain('signature not checked (--no-signature)');
    const unsealed = await verifyHere(fixture('unsealed.jsonl'), '--no-signature');
    expect(unsealed.code).toBe(0);
    expect(unsealed.stdout).toContain('NOT sealed');
    expect(unsealed.stdout).toContain('signature not checked (--no-signature)');
    expect(JSON.parse((await verify(fixture('golden.jsonl'), '--no-signature', '--json')).stdout)).toMatchObject({ ok: true, exitCode: 0, signatureChecked: false });
    expect((await verifyHere(fixture('tampered.jsonl'), '--no-signature')).code).toBe(1);
  });

  test('a wrong key: exit 3, a seal mismatch naming both keys, never "chain broken"', async () => {
    const r = await verify(fixture('golden.jsonl'), '--public-key', fixture('other.pub'));
    expect(r.code).toBe(3);
    expect(r.stdout.split('\n')[0]).toBe(
      `seal mismatch: the seal at seq 14 was made by key ${GOLDEN_KEY_ID.slice(0, 16)}…, not by the key in ${fixture('other.pub')} (${OTHER_KEY_ID.slice(0, 16)}…)`,
    );
    expect(r.stdout).toContain('chain intact: 15 records');
    expect(r.stdout).not.toMatch(/chain broken/);
    const json = JSON.parse((await verify(fixture('golden.jsonl'), '--public-key', fixture('other.pub'), '--json')).stdout);
    expect(json).toMatchObject({ ok: false, exitCode: 3, chainIntact: true, sealMismatch: true, signatureChecked: false, records: 15, keySource: 'file', error: { seq: 14 } });
  });

  test('a bad signature under the right key id: exit 3', async () => {
    const r = await verifyHere(writeTmp('bad-signature.jsonl', badSignatureJournal()), '--public-key', fixture('golden.pub'));
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/^seal mismatch: the seal at seq 14 names the key in .*golden\.pub .* but its signature does not verify/m);
    expect(r.stdout).not.toMatch(/chain broken/);
  });

  test('a broken chain is exit 1 whatever the key: tampered, and a record after a foreign seal', async () => {
    for (const key of ['golden.pub', 'other.pub']) {
      const r = await verifyHere(fixture('tampered.jsonl'), '--public-key', fixture(key));
      expect(r.code, key).toBe(1);
      expect(r.stdout, key).toMatch(/^seq 9: hash mismatch/);
    }
    expect((await verifyHere(fixture('tampered.jsonl'))).code).toBe(1);
    const extra = writeTmp('after-seal.jsonl', afterSeal());
    expect((await verifyHere(extra, '--public-key', fixture('other.pub'))).code).toBe(1);
    expect((await verifyHere(extra, '--no-signature')).code).toBe(1);
  });

  test('--public-key with --no-signature is a usage error: exit 2', async () => {
    const r = await verifyHere(fixture('golden.jsonl'), '--public-key', fixture('golden.pub'), '--no-signature');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/pass one of them/);
  });
});

describe('the readers mark a seal mismatch, and only one', () => {
  const encoder = new TextEncoder();
  const verdicts = (text: string, options: ReadOptions): Array<JournalReport | JournalVerdict> => [
    readJournalText(text, options),
    verifyJournalText(text, options),
    verifyJournalBytes(encoder.encode(text), options),
    readJournalBytes(encoder.encode(text), options),
  ];
  const cases: Array<[string, string, ReadOptions, boolean]> = [
    ['golden, other key', golden, { publicKey: publicKeyOf(otherKey) }, true],
    ['bad signature, golden key', badSignatureJournal(), { publicKey: publicKeyOf(goldenKey) }, true],
    ['golden, golden key', golden, { publicKey: publicKeyOf(goldenKey) }, false],
    ['golden, no key', golden, {}, false],
    ['tampered, other key', readFileSync(fixture('tampered.jsonl'), 'utf8'), { publicKey: publicKeyOf(otherKey) }, false],
    ['a record after the seal, other key', afterSeal(), { publicKey: publicKeyOf(otherKey) }, false],
    ['unsealed, golden key', readFileSync(fixture('unsealed.jsonl'), 'utf8'), { publicKey: publicKeyOf(goldenKey) }, false],
  ];
  test.each(cases)('%s', (_name, text, options, mismatch) => {
    for (const v of verdicts(text, options)) {
      expect(v.sealMismatch === true).toBe(mismatch);
      if (mismatch) expect(v).toMatchObject({ ok: false, sealed: true, error: { seq: 14 } });
    }
  });
});

describe('the bundle', () => {
  const goldenBundle = (): Bundle =>
    buildBundle({ invocation: 'inv-golden-0001', journal: golden, libraries: { [digestOf(goldenLibrary)]: goldenLibrary }, publicKey: goldenPublicKey });
  const refused = (value: unknown, reason: RegExp) => {
    let error: unknown;
    try {
      parseBundle(typeof value === 'string' ? value : JSON.stringify(value));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(BundleError);
    expect((error as BundleError).code).toBe('bundle.invalid');
    expect((error as BundleError).failureClass).toBe('permanent');
    expect((error as BundleError).message).toMatch(reason);
  };

  test('buildBundle → JSON → parseBundle round-trips', () => {
    const bundle = goldenBundle();
    expect(bundle.format).toBe(BUNDLE_FORMAT);
    expect(Object.keys(bundle)).toEqual(['format', 'invocation', 'journal', 'libraries', 'publicKey']);
    expect(parseBundle(JSON.stringify(bundle))).toEqual(bundle);
    expect(parseBundle(JSON.stringify(bundle, null, 2))).toEqual(bundle);
    const unsealed = { ...bundle, publicKey: null };
    expect(parseBundle(JSON.stringify(unsealed))).toEqual(unsealed);
  });

  test('parseBundle refuses a wrong library digest, an inconsistent key, extra fields, a wrong format', () => {
    const bundle = goldenBundle();
    refused({ ...bundle, libraries: { [digestOf(goldenLibrary)]: { library: 'travel', version: 4 } } }, /does not match its digest/);
    refused({ ...bundle, libraries: { 'not-a-digest': goldenLibrary } }, /not a SHA-256 digest/);
    refused({ ...bundle, publicKey: { ...goldenPublicKey, keyId: OTHER_KEY_ID } }, /keyId is not the SHA-256 of its publicKey/);
    refused({ ...bundle, extra: 1 }, /unrecognized key/i);
    refused({ ...bundle, publicKey: { ...goldenPublicKey, secretKey: '00'.repeat(32) } }, /publicKey: .*unrecognized key/i);
    refused({ ...bundle, format: 'weft.bundle.v2' }, /not a Weft bundle \(format "weft.bundle.v2"/);
    refused({ ...bundle, journal: 42 }, /journal: /);
    refused('{"format":', /not JSON/);
    refused('[]', /not a JSON object/);
    expect(() => buildBundle({ invocation: 'x', journal: '', libraries: { [digestOf(goldenLibrary)]: {} }, publicKey: null })).toThrow(BundleError);
  });

  test('looksLikeBundle tells a bundle from a journal', () => {
    const encoder = new TextEncoder();
    expect(looksLikeBundle(encoder.encode(JSON.stringify(goldenBundle())))).toBe(true);
    expect(looksLikeBundle(encoder.encode(`\n  ${JSON.stringify(goldenBundle(), null, 2)}\n`))).toBe(true);
    expect(looksLikeBundle(encoder.encode(golden))).toBe(false);
    expect(looksLikeBundle(encoder.encode(golden.split('\n')[0]! + '\n'))).toBe(false);
    expect(looksLikeBundle(encoder.encode('{"format":"weft.bundle.v0"}'))).toBe(false);
    expect(looksLikeBundle(new Uint8Array())).toBe(false);
  });

  test('weft verify <bundle>: 0 with the carried key (and says so), 3 with another key, 1 when a journal byte changes', async () => {
    const bundle = goldenBundle();
    const file = writeTmp('golden.bundle.json', JSON.stringify(bundle) + '\n');
    const ok = await verify(file);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`sealed by key ${GOLDEN_KEY_ID} — the key carried in the bundle; compare it with the key you trust, or pass --public-key`);
    expect(JSON.parse((await verify(file, '--json')).stdout)).toMatchObject({ ok: true, exitCode: 0, input: 'bundle', keySource: 'bundle', signatureChecked: true });
    expect((await verifyHere(file, '--public-key', fixture('golden.pub'))).code).toBe(0);
    const other = await verifyHere(file, '--public-key', fixture('other.pub'));
    expect(other.code).toBe(3);
    expect(other.stdout).toMatch(/^seal mismatch: the seal at seq 14 was made by key /m);
    expect((await verifyHere(file, '--no-signature')).code).toBe(0);

    const at = bundle.journal.indexOf('FL-7731');
    const edited = { ...bundle, journal: bundle.journal.slice(0, at) + 'FL-7730' + bundle.journal.slice(at + 7) };
    const broken = await verifyHere(writeTmp('edited.bundle.json', JSON.stringify(edited)));
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/^seq 9: hash mismatch/);
  });

  test('weft verify <bundle>: exit 4 without any key; exit 1 for a bundle that does not hold together', async () => {
    const bundle = goldenBundle();
    const keyless = await verifyHere(writeTmp('keyless.bundle.json', JSON.stringify({ ...bundle, publicKey: null })));
    expect(keyless.code).toBe(4);
    expect(keyless.stdout).toMatch(/^seal NOT checked: the bundle carries no key and none was given/m);

    const foreign = await verifyHere(writeTmp('foreign.bundle.json', JSON.stringify({ ...bundle, invocation: 'inv-other' })));
    expect(foreign.code).toBe(1);
    expect(foreign.stdout).toMatch(/^bundle inconsistent: the bundle is for invocation inv-other, but its journal is the journal of inv-golden-0001/);

    const other = { a: 1 };
    const noLibrary = await verifyHere(writeTmp('no-library.bundle.json', JSON.stringify({ ...bundle, libraries: { [digestOf(other)]: other } })));
    expect(noLibrary.code).toBe(1);
    expect(noLibrary.stdout).toContain(`the journal pins library ${goldenGenesis.pin.library}, which the bundle does not carry`);

    const invalid = await verifyHere(writeTmp('invalid.bundle.json', JSON.stringify({ ...bundle, extra: true })));
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toMatch(/^invalid bundle: /);
  });
});

describe('weft export', () => {
  let out = '';
  let err = '';
  const capture = () => {
    out = '';
    err = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((out += String(s)), true));
    vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => ((err += String(s)), true));
  };
  afterEach(() => vi.restoreAllMocks());
  const exportOf = async (...argv: string[]) => {
    capture();
    try {
      return await exportRun(argv);
    } finally {
      vi.restoreAllMocks();
    }
  };

  const ws = path.join(tmp, 'ws');
  let id: string;
  let journalFile: string;
  beforeAll(async () => {
    // A fixture: made in this process as `weft run travel --dir ws --json` makes it.
    const run = await runInWorkspace('travel', { dir: ws });
    expect(run.status).toBe('completed');
    id = run.id;
    journalFile = run.journal;
  });

  test('exports a sealed run as one JSON line that verifies in an empty directory, with nothing else', async () => {
    expect(await exportOf(id, '--dir', ws)).toBe(0);
    expect(err).toBe('');
    expect(out.endsWith('\n') && out.indexOf('\n') === out.length - 1).toBe(true);
    const bundle = parseBundle(out);
    expect(bundle.invocation).toBe(id);
    expect(bundle.journal).toBe(readFileSync(journalFile, 'utf8'));
    const pub = JSON.parse(readFileSync(path.join(ws, 'keys', 'weft.pub'), 'utf8')) as Bundle['publicKey'];
    expect(bundle.publicKey).toEqual(pub);
    const pinned = JSON.parse(bundle.journal.split('\n')[0]!) as JournalRecord<'invocation.pinned'>;
    expect(Object.keys(bundle.libraries)).toEqual([pinned.body.pin.library]);

    const empty = mkdtempSync(path.join(tmp, 'empty-'));
    writeFileSync(path.join(empty, 'bundle.json'), out);
    const r = await weft(['verify', 'bundle.json'], {}, empty);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`verified: ${bundle.journal.split('\n').length - 1} records, invocation ${id}`);
    expect(r.stdout).toContain('the key carried in the bundle');
  });

  test('an unknown id: exit 2, "no invocation <id> in <dir>" and how to list them; no id: exit 2', async () => {
    expect(await exportOf('inv-nope', '--dir', ws)).toBe(2);
    expect(err).toBe(`weft export: no invocation inv-nope in ${ws} (weft ls --dir ${ws} lists them)\n`);
    expect(out).toBe('');
    expect(await exportOf('--dir', ws)).toBe(2);
    expect(await exportOf('../escape', '--dir', ws)).toBe(2);
  });

  test('a journal copied from another invocation is refused, naming both ids', async () => {
    const dir = path.join(ws, 'invocations', 'inv-copy');
    mkdirSync(dir, { recursive: true });
    cpSync(journalFile, path.join(dir, 'journal.jsonl'));
    expect(await exportOf('inv-copy', '--dir', ws)).toBe(1);
    expect(err).toContain(`the journal filed under inv-copy is the journal of invocation ${id}`);
    expect(out).toBe('');
  });

  test('a damaged journal is refused with its first problem', async () => {
    const copy = path.join(tmp, 'ws-damaged');
    cpSync(ws, copy, { recursive: true });
    const file = path.join(copy, 'invocations', id, 'journal.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[3] = lines[3]!.replace('"seq":3}', '"seq":4}');
    writeFileSync(file, lines.join('\n'));
    expect(await exportOf(id, '--dir', copy)).toBe(1);
    expect(err).toMatch(/^weft export: the journal of \S+ does not verify, refusing to export it: seq 3: expected seq 3, found seq 4/);
    expect(out).toBe('');
  });

  test('a journal sealed by another key than the workspace key: exported with the sealing key the store holds, refused when it holds none', async () => {
    const copy = path.join(tmp, 'ws-rekeyed');
    cpSync(ws, copy, { recursive: true });
    const sealing = JSON.parse(readFileSync(path.join(ws, 'keys', 'weft.pub'), 'utf8')) as { keyId: string };
    cpSync(fixture('other.pub'), path.join(copy, 'keys', 'weft.pub'));
    // The runtime that sealed the journal left its public key in the blob area, under its key id.
    expect(await exportOf(id, '--dir', copy)).toBe(0);
    expect(parseBundle(out).publicKey?.keyId).toBe(sealing.keyId);
    rmSync(path.join(copy, 'blobs', sealing.keyId));
    expect(await exportOf(id, '--dir', copy)).toBe(1);
    expect(err).toContain(`sealed by key ${sealing.keyId}, not by this workspace's key ${OTHER_KEY_ID}`);
    expect(out).toBe('');
  });
});
