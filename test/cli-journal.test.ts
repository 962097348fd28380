// Tests of `weft keygen`, `weft verify` and `weft log` on the COMPILED cli (dist/; `npm test` builds
// it first). Each command's end-to-end cases spawn it (`weft`: the golden journal verified, its
// --json line, exit 4 without a key and exit 2 for a bad command line as a process's exit codes, a
// key pair written, the log drawn); the other cases — each kind of damage, each key, each usage
// error — run the command's own module in this process (`here`: test/support/command-in-process.ts, the code
// the process runs, its printed text and exit code). The committed fixtures in test/fixtures/journal/
// must be exactly what make.ts produces, and the golden journal's fingerprint is pinned here:
// if it changes, the hashed format changed — that is a breaking change, not a fixture refresh.
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import type { JournalRecord } from '../journal/records.js';
import { loadSigningKey } from '../runtime/keys.js';
import { buildJournal, fixtureFiles, goldenDrafts, goldenGenesis, goldenKey, rechain, toJsonl } from './fixtures/journal/make.js';
import { runNode } from './support/cli.js';
import { weftHere } from './support/command-in-process.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist/cli/main.js');
const fixtures = path.join(root, 'test/fixtures/journal');
const GOLDEN_FINGERPRINT = '214fddeb738b3b5475c3ea57fe20fba871715c6a66118caeba8bd2892c06b176';
const GOLDEN_KEY_ID = 'e8c2ed4067488f983e47e869c0d7058e673d794422a659e8a012945f66ba5cca';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

async function weft(...args: string[]): Promise<Result> {
  const { code, stdout, stderr } = await runNode(cli, args, { NO_COLOR: '1' }, root);
  return { code: code ?? 1, stdout, stderr };
}

/** `weft …` by the command's module in this process (see the header). */
async function here(...args: string[]): Promise<Result> {
  const { code, stdout, stderr } = await weftHere(args, { NO_COLOR: '1' }, root);
  return { code: code ?? 1, stdout, stderr };
}

let tmp: string;
const fixture = (name: string) => path.join(fixtures, name);
async function writeTmp(name: string, text: string): Promise<string> {
  const file = path.join(tmp, name);
  await fs.writeFile(file, text);
  return file;
}

beforeAll(async () => {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npx tsc -p tsconfig.build.json\` (npm test does) first`);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'weft-cli-journal-'));
});
afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('fixtures', () => {
  test('the committed fixtures are what make.ts produces', async () => {
    for (const [name, text] of Object.entries(fixtureFiles())) {
      if (process.env.WEFT_UPDATE_FIXTURES === '1') await fs.writeFile(fixture(name), text);
      expect(await fs.readFile(fixture(name), 'utf8'), name).toBe(text);
    }
  });
});

describe('weft verify', () => {
  test('the golden journal verifies with its key and prints the pinned fingerprint', async () => {
    const r = await weft('verify', fixture('golden.jsonl'), '--public-key', fixture('golden.pub'));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`fingerprint ${GOLDEN_FINGERPRINT}`);
    expect(r.stdout).toContain(`verified: 15 records, invocation inv-golden-0001, sealed by key ${GOLDEN_KEY_ID} (signature valid)`);
  });

  test('--json prints one object', async () => {
    const r = await weft('verify', fixture('golden.jsonl'), '--public-key', fixture('golden.pub'), '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      ok: true, exitCode: 0, input: 'journal', chainIntact: true, fingerprint: GOLDEN_FINGERPRINT, sealed: true, records: 15, invocation: 'inv-golden-0001',
      keyId: GOLDEN_KEY_ID, signatureChecked: true, sealMismatch: false, keySource: 'file',
    });
    const bad = await weft('verify', fixture('tampered.jsonl'), '--json');
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, exitCode: 1, chainIntact: false, records: 9, error: { seq: 9, message: expect.stringMatching(/^seq 9: hash mismatch/) } });
  });

  // Exit 4, not 0 (the contract before `weft verify` had exit codes 3 and 4): an unchecked seal is not a verified journal.
  test('without a key: the chain is checked and the seal reported, not checked — exit 4', async () => {
    const sealed = await weft('verify', fixture('golden.jsonl'));
    expect(sealed.code).toBe(4);
    expect(sealed.stdout).toContain(`chain intact: 15 records, sealed by key ${GOLDEN_KEY_ID} (signature not checked: pass --public-key)`);
    expect(sealed.stdout).toContain(GOLDEN_FINGERPRINT);
    expect(sealed.stdout).toMatch(/^seal NOT checked: no key was given — pass --public-key FILE .* or --no-signature /m);
    const unsealed = await here('verify', fixture('unsealed.jsonl'));
    expect(unsealed.code).toBe(4);
    expect(unsealed.stdout).toContain('chain intact: 14 records, NOT sealed: truncated or still running');
    // a journal re-sealed by another key is an intact chain; only the key tells
    expect((await here('verify', fixture('resealed-other-key.jsonl'))).code).toBe(4);
    expect((await here('verify', fixture('resealed-other-key.jsonl'), '--no-signature')).code).toBe(0);
  });

  test('unsealed with a key or edited: exit 1 naming the seq; sealed by another key: exit 3, a seal mismatch', async () => {
    const unsealed = await here('verify', fixture('unsealed.jsonl'), '--public-key', fixture('golden.pub'));
    expect(unsealed.code).toBe(1);
    expect(unsealed.stdout).toMatch(/^seq 14: not sealed: truncated or still running$/m);
    const other = await here('verify', fixture('resealed-other-key.jsonl'), '--public-key', fixture('golden.pub'));
    expect(other.code).toBe(3);
    expect(other.stdout).toMatch(/^seal mismatch: the seal at seq 14 was made by key 964e6364e3fd3302…, not by the key in .*golden\.pub \(e8c2ed4067488f98…\)$/m);
    const wrongKey = await here('verify', fixture('golden.jsonl'), '--public-key', fixture('other.pub'));
    expect(wrongKey.code).toBe(3);
    expect(wrongKey.stdout).toMatch(/^seal mismatch: the seal at seq 14 was made by key e8c2ed4067488f98…/m);
    expect(wrongKey.stdout).not.toMatch(/chain broken/);
    const tampered = await here('verify', fixture('tampered.jsonl'), '--public-key', fixture('golden.pub'));
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toMatch(/^seq 9: hash mismatch/m);
  });

  test('each kind of damage exits 1 with `seq N:` at the first bad record', async () => {
    const golden = await fs.readFile(fixture('golden.jsonl'), 'utf8');
    const lines = golden.split('\n').slice(0, -1);
    const join = (ls: string[]) => ls.map((l) => l + '\n').join('');
    const records = lines.map((l) => JSON.parse(l) as JournalRecord);
    const schemaBroken = records.map((r) => (r.seq === 6 ? { ...r, body: { ...(r.body as object), attempt: -1 } } : r)) as JournalRecord[];
    const cases: [string, string, number, RegExp][] = [
      ['flip a byte in the body', join(lines.map((l, i) => (i === 9 ? l.replace('FL-7731', 'FL-7730') : l))), 9, /hash mismatch/],
      ['flip a byte in seq', join(lines.map((l, i) => (i === 5 ? l.replace('"seq":5', '"seq":4') : l))), 5, /expected seq 5, found seq 4/],
      ['flip a byte in kind', join(lines.map((l, i) => (i === 7 ? l.replace('step.failed', 'step.faile$') : l))), 7, /unknown record kind/],
      ['flip a byte in prev', join(lines.map((l, i) => (i === 3 ? l.replace(/"prev":"(.)/, (_m, c: string) => `"prev":"${c === '0' ? '1' : '0'}`) : l))), 3, /prev does not match/],
      ['flip a byte into invalid JSON', join(lines.map((l, i) => (i === 2 ? l.replace('"epoch":0', '"epoch":0}') : l))), 2, /not valid JSON/],
      ['drop a record', join(lines.filter((_, i) => i !== 4)), 4, /expected seq 4, found seq 5/],
      ['duplicate a record', join([...lines.slice(0, 5), lines[4]!, ...lines.slice(5)]), 5, /expected seq 5, found seq 4/],
      ['reorder two records', join(lines.map((l, i) => (i === 3 ? lines[6]! : i === 6 ? lines[3]! : l))), 3, /expected seq 3, found seq 6/],
      ['truncate the tail', join(lines.slice(0, 12)), 12, /not sealed: truncated or still running/],
      ['torn final record', join(lines.slice(0, 10)) + lines[10]!.slice(0, 40), 10, /torn final record/],
      ['a body off its schema, re-hashed and re-sealed', toJsonl(rechain(schemaBroken, 6, goldenKey)), 6, /step.dispatched body.attempt/],
    ];
    for (const [name, text, seq, problem] of cases) {
      const file = await writeTmp(`${name.replace(/\W+/g, '-')}.jsonl`, text);
      const r = await here('verify', file, '--public-key', fixture('golden.pub'));
      expect(r.code, name).toBe(1);
      const first = r.stdout.split('\n')[0]!;
      expect(first, name).toMatch(new RegExp(`^seq ${seq}: `));
      expect(first, name).toMatch(problem);
    }
  });

  test('usage errors and unreadable files exit 2', async () => {
    expect((await weft('verify')).code).toBe(2);
    expect((await here('verify', 'a.jsonl', 'b.jsonl')).code).toBe(2);
    expect((await here('verify', fixture('golden.jsonl'), '--bogus')).code).toBe(2);
    const missing = await here('verify', path.join(tmp, 'nope.jsonl'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read journal .*nope\.jsonl \(ENOENT\)/);
    const badKey = await writeTmp('bad.pub', JSON.stringify({ format: 'weft.ed25519.public.v1', publicKey: 'ab'.repeat(32), keyId: 'cd'.repeat(32) }));
    const r = await here('verify', fixture('golden.jsonl'), '--public-key', badKey);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/keyId" is not the SHA-256 of "publicKey"/);
    const empty = await writeTmp('empty.jsonl', '');
    const e = await here('verify', empty);
    expect(e.code).toBe(1);
    expect(e.stdout).toMatch(/^seq 0: empty journal/);
  });
});

describe('weft keygen', () => {
  test('writes weft.key (0600) and weft.pub, refuses to overwrite, and the key seals a verifiable journal', async () => {
    const dir = path.join(tmp, 'keys');
    const r = await weft('keygen', '--out', dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const secretStat = await fs.stat(path.join(dir, 'weft.key'));
    expect(secretStat.mode & 0o777).toBe(0o600);
    const pub = JSON.parse(await fs.readFile(path.join(dir, 'weft.pub'), 'utf8')) as Record<string, string>;
    expect(pub.format).toBe('weft.ed25519.public.v1');
    expect(Object.keys(pub).sort()).toEqual(['format', 'keyId', 'publicKey']);
    expect(r.stdout).toContain(`key id ${pub.keyId}`);
    const secret = JSON.parse(await fs.readFile(path.join(dir, 'weft.key'), 'utf8')) as Record<string, string>;
    expect(secret.format).toBe('weft.ed25519.secret.v1');
    expect(secret.publicKey).toBe(pub.publicKey);

    const before = await fs.readFile(path.join(dir, 'weft.key'), 'utf8');
    const again = await here('keygen', '--out', dir);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already exists; refusing to overwrite/);
    expect(await fs.readFile(path.join(dir, 'weft.key'), 'utf8')).toBe(before);

    const key = await loadSigningKey(path.join(dir, 'weft.key'));
    const journal = await writeTmp('own-key.jsonl', toJsonl(buildJournal(goldenGenesis, goldenDrafts, { key })));
    const ok = await here('verify', journal, '--public-key', path.join(dir, 'weft.pub'));
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`sealed by key ${pub.keyId}`);
    // the secret file works as a key for verify too; the golden key does not verify it (a seal mismatch: exit 3)
    expect((await here('verify', journal, '--public-key', path.join(dir, 'weft.key'))).code).toBe(0);
    expect((await here('verify', journal, '--public-key', fixture('golden.pub'))).code).toBe(3);
  });

  test('a second key pair differs; --out is required', async () => {
    const a = await here('keygen', '--out', path.join(tmp, 'a'));
    const b = await here('keygen', '--out', path.join(tmp, 'b'));
    expect(a.code + b.code).toBe(0);
    expect(a.stdout).not.toBe(b.stdout.replaceAll(path.join(tmp, 'b'), path.join(tmp, 'a')));
    expect((await here('keygen')).code).toBe(2);
  });
});

describe('weft log', () => {
  test('one line per record, envelope marked unverified, status last', async () => {
    const r = await weft('log', fixture('golden.jsonl'), '--width', '200');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toContain('invocation inv-golden-0001, tenant acme');
    expect(lines[1]).toBe('(times and writers are unverified envelope fields)');
    expect(lines).toHaveLength(2 + 15 + 2);
    expect(lines[3]).toMatch(/^\s+1\s+e0\s+model\.requested\s+parse attempt=0 /);
    expect(lines[4]).toContain('model.completed          parse attempt=0 → goal travel(lisbon,2026-05-01,2026-05-04)');
    expect(lines[8]).toContain('step.dispatched          #0 book_flight key=inv-golden-0001.1.0 attempt=1 args={"date":"2026-05-01","from":"BER"');
    expect(lines[8]).toContain('[unverified: 2026-04-20T09:00:06.000Z runtime-1]');
    expect(lines[9]).toContain('step.failed              #0 key=inv-golden-0001.1.0 attempt=1 transient http.503: airline API unavailable');
    expect(lines.at(-2)).toBe(`chain intact: 15 records, sealed by key ${GOLDEN_KEY_ID} (signature not checked: pass --public-key)`);
  });

  test('lines fit the width', async () => {
    const r = await here('log', fixture('golden.jsonl'), '--width', '80');
    for (const line of r.stdout.trimEnd().split('\n').slice(2, -2)) expect(Array.from(line).length).toBeLessThanOrEqual(80);
  });

  test('a broken journal: the records before the bad one, the bad line, then the error', async () => {
    const r = await here('log', fixture('tampered.jsonl'), '--width', '120');
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2 + 9 + 1 + 2);
    expect(lines[10]).toMatch(/^\s+8\s+e1\s+step\.dispatched/);
    expect(lines[11]).toMatch(/^\s+9\s+✗ \{"body":\{"attempt":2,"key":"inv-golden-0001\.1\.0","result":\{"booking":"FL-7731","currency":"EUR","price":31\.25/);
    expect(lines[12]).toMatch(/^seq 9: hash mismatch/);
    expect(lines[13]).toBe('chain broken at seq 9: the 9 records before it are intact');
    expect((await here('log')).code).toBe(2);
  });
});
