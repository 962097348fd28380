/**
 * The sealing key across processes and folders (issue 19, point 4):
 *
 * 0. The key is not in the hash chain: the same run in two workspace folders, each with its own
 *    generated key, has the same fingerprint and the same journal but for the seal.
 * 1. A resume or an approval with another key (another WEFT_SIGNING_KEY or --signing-key) is
 *    refused, exit 1, naming both key ids and how to pass the key, writing nothing (no record, no
 *    decision in the inbox); with the key that started it, it completes to a seal the original
 *    public key verifies.
 * 2. `weft resume --rekey` is explicit and recorded: `invocation.rekeyed` in the journal (weft log),
 *    the seal verifies with the new key and not the old one (exit 3, naming the re-key).
 * 3. Redis: `weft run` with no key says on stderr that it generated one in <dir>/keys and that other
 *    hosts must be given it; a resume from another folder without it refuses with a message about
 *    the key (never completes re-keyed) and makes no key there; with `--signing-key` it completes,
 *    sealed by the original key.
 *
 * The commands whose flags, output and exit codes are tested here run as processes (the built CLI:
 * run on Redis, resume and approve with another key, --signing-key, --rekey, keygen, log, a bad key
 * file). The other runs they act on are made in-process as `weft run` makes them, in a workspace
 * or on Redis (test/support/runs-here.ts runInWorkspace, runOnRedis), and which key seals
 * and verifies is checked in-process on the modules `weft verify` and `weft approve` run
 * (test/support/journals-here.ts). One private Redis for the file (test/support/file-redis.ts), a key prefix
 * per test.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, weft, type CliResult } from './support/cli.js';
import { fileRedis } from './support/file-redis.js';
import { keyPair, storedJournal, verifyJournal } from './support/journals-here.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';
import { openInvocation, runInWorkspace, runOnRedis } from './support/runs-here.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-cli-signing-key-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let folders = 0;
const fresh = (name: string) => mkdtempSync(path.join(root, `${name}-${++folders}-`));
/** No key and no Redis from the environment unless a test says so. */
const env = (extra: Record<string, string> = {}) => ({ WEFT_SIGNING_KEY: '', WEFT_REDIS_URL: '', WEFT_DEBUG: '', ...extra });
const show = (r: CliResult) => `exit ${r.code} signal ${r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

interface RunJson {
  id: string;
  status: string | null;
  reason: string | null;
  journal: string | null;
  fingerprint: string | null;
  publicKey: string | null;
}
const lastJson = (r: CliResult): RunJson => JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '') as RunJson;
const keyIdIn = (pubFile: string) => (JSON.parse(readFileSync(pubFile, 'utf8')) as { keyId: string }).keyId;

/** A key pair as `weft keygen --out` writes it, made in-process (`weft keygen` itself runs in the re-key test). */
async function keygen(name: string): Promise<{ key: string; pub: string }> {
  const { key, pub } = await keyPair(path.join(fresh(name), 'k'));
  return { key, pub };
}

beforeAll(() => assertBuilt());
// No key from this process's environment in the runs and workspaces opened in-process (the children get env()).
const inheritedKey = process.env.WEFT_SIGNING_KEY;
beforeAll(() => {
  delete process.env.WEFT_SIGNING_KEY;
});
afterAll(() => {
  if (inheritedKey !== undefined) process.env.WEFT_SIGNING_KEY = inheritedKey;
});

describe('weft and the sealing key (file store)', () => {
  test('the same run in two folders, each with its own generated key, has one fingerprint; only the seals differ', async () => {
    // `weft run travel --seed 30 --dir D --json` in two folders, made in-process: each workspace makes its own key.
    const [a, b] = [fresh('own-a'), fresh('own-b')];
    const [ja, jb] = await Promise.all([a, b].map((dir) => runInWorkspace('travel', { seed: '30', dir })));
    expect(ja!.status).toBe('completed');
    expect(ja!.publicKey).toBe(path.join(a, 'keys', 'weft.pub'));
    expect(keyIdIn(ja!.publicKey)).not.toBe(keyIdIn(jb!.publicKey));
    expect(ja!.id).toBe(jb!.id);
    expect(ja!.fingerprint).toBe(jb!.fingerprint);
    const hashes = (file: string) => readFileSync(file, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { hash: string }).hash);
    expect(hashes(ja!.journal).slice(0, -1)).toEqual(hashes(jb!.journal).slice(0, -1));
    // Each seal is its own key's: verify (what `weft verify --public-key` decides) holds each journal to the key that sealed it.
    expect((await verifyJournal(ja!.journal, { publicKey: ja!.publicKey })).code).toBe(0);
    expect((await verifyJournal(ja!.journal, { publicKey: jb!.publicKey })).code).toBe(3);
  });

  test('resume with another key is refused naming both key ids; --signing-key with the right one completes, verified by the original key', async () => {
    const dir = fresh('ws');
    const started = await runInWorkspace('travel', { seed: '31', dir, hibernate: true });
    expect(started.status).toBe('hibernated');
    const original = path.join(dir, 'keys', 'weft.pub');
    const other = await keygen('other');
    const journalBefore = readFileSync(started.journal, 'utf8');

    const refused = await weft(['resume', started.id, '--dir', dir, '--json'], env({ WEFT_SIGNING_KEY: other.key }));
    expect(refused.code, show(refused)).toBe(1);
    const reason = lastJson(refused).reason!;
    expect(reason).toContain(keyIdIn(original).slice(0, 16));
    expect(reason).toContain(keyIdIn(other.pub).slice(0, 16));
    expect(reason).toContain('--signing-key FILE');
    expect(reason).toContain('WEFT_SIGNING_KEY');
    expect(refused.stderr).not.toMatch(/^\s+at .+/m);
    expect(readFileSync(started.journal, 'utf8')).toBe(journalBefore); // nothing written

    // The right key, passed explicitly from elsewhere (a copy of the workspace's key file): --signing-key wins over WEFT_SIGNING_KEY.
    const copy = path.join(fresh('copy'), 'mine.key');
    cpSync(path.join(dir, 'keys', 'weft.key'), copy);
    const resumed = await weft(['resume', started.id, '--dir', dir, '--signing-key', copy, '--json'], env({ WEFT_SIGNING_KEY: other.key }));
    expect(resumed.code, show(resumed)).toBe(0);
    expect(lastJson(resumed).status).toBe('completed');
    const verified = await verifyJournal(started.journal, { publicKey: original });
    expect(verified.code, verified.lines.join('\n')).toBe(0);
  });

  test('resume --rekey is explicit and recorded: weft log shows it, the new key verifies the seal, the old one does not (exit 3)', async () => {
    const dir = fresh('ws');
    const started = await runInWorkspace('travel', { seed: '32', dir, hibernate: true });
    expect(started.status).toBe('hibernated');
    // The new key from `weft keygen` itself.
    const out = path.join(fresh('rekey'), 'k');
    const made = await weft(['keygen', '--out', out], env());
    expect(made.code, show(made)).toBe(0);
    const other = { key: path.join(out, 'weft.key'), pub: path.join(out, 'weft.pub') };
    expect(made.stdout).toContain(`key id ${keyIdIn(other.pub)}`);
    const resumed = await weft(['resume', started.id, '--dir', dir, '--signing-key', other.key, '--rekey', '--json'], env());
    expect(resumed.code, show(resumed)).toBe(0);
    expect(lastJson(resumed).status).toBe('completed');
    const log = await weft(['log', started.journal], env());
    expect(log.stdout).toMatch(/invocation\.rekeyed/);
    expect(log.stdout).toContain(keyIdIn(other.pub).slice(0, 12));
    expect((await verifyJournal(started.journal, { publicKey: other.pub })).code).toBe(0);
    const withOld = await verifyJournal(started.journal, { publicKey: path.join(dir, 'keys', 'weft.pub') });
    expect(withOld.code).toBe(3);
    expect(withOld.lines.join('\n')).toContain(`re-keyed to key ${keyIdIn(other.pub).slice(0, 16)}`);
  });

  test('approve with another key is refused before the decision is written; with the key that started it, it completes', async () => {
    // Travel under a policy that asks a person for anything over 100.
    const domain = writeStrictTravelDomain(fresh('strict'));
    const dir = fresh('ws');
    const started = await runInWorkspace(domain, { dir });
    expect(started.status).toBe('awaiting_approval');
    const original = path.join(dir, 'keys', 'weft.pub');
    const other = await keygen('approver');
    const journalBefore = readFileSync(started.journal, 'utf8');

    const refused = await weft(['approve', started.id, '--by', 'ana', '--dir', dir, '--signing-key', other.key, '--json'], env());
    expect(refused.code, show(refused)).toBe(1);
    const reason = lastJson(refused).reason!;
    expect(reason).toContain(keyIdIn(original).slice(0, 16));
    expect(reason).toContain(keyIdIn(other.pub).slice(0, 16));
    expect(reason).toContain('--signing-key FILE');
    expect(readFileSync(started.journal, 'utf8')).toBe(journalBefore);
    expect(existsSync(path.join(dir, 'invocations', started.id, 'inbox.json'))).toBe(false); // the decision was not left behind

    // With no key given, `weft approve --dir D` opens it with the workspace's key, which started it (in-process).
    const approved = await openInvocation({ dir, id: started.id, domain: undefined }, async (ws) => (await ws.runtime.approve(started.id, { decision: 'approved', by: 'ana' })).done);
    expect(approved.status).toBe('completed');
    expect((await verifyJournal(started.journal, { publicKey: original })).code).toBe(0);
  });

  test('a --signing-key file that is not a key is one clear line', async () => {
    const bad = path.join(fresh('bad'), 'not-a.key');
    writeFileSync(bad, 'hello');
    const r = await weft(['run', 'travel', '--seed', '33', '--dir', fresh('ws'), '--signing-key', bad], env());
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`key file ${bad}: not JSON`);
    expect(r.stderr).not.toMatch(/^\s+at .+/m);
  });
});

const redis = fileRedis();

describe.skipIf(!redis.available)('weft on Redis and the sealing key', () => {
  test("run makes the user's key and says so; a resume from another folder (same user) completes sealed by it; another host without it refuses (about the key), makes no key, and with --signing-key completes sealed by the original key", async () => {
    const prefix = redis.freshPrefix('sk');
    const flags = ['--redis', redis.url, '--redis-prefix', prefix];
    // The user's home on this host, and another host's (cli/key-files.ts userKeysDir).
    const home = fresh('home');
    const elsewhere = fresh('other-host');
    const x = fresh('x');
    const run = await weft(['run', 'travel', '--seed', '34', '--hibernate', ...flags, '--json'], env({ WEFT_HOME: home }), x);
    expect(run.code, show(run)).toBe(0);
    const started = lastJson(run);
    expect(started.status).toBe('hibernated');
    expect(run.stderr).toContain(`generated your signing key in ${path.join(home, 'keys')}`);
    expect(run.stderr).toContain('--signing-key');
    expect(started.publicKey).toBe(path.join(home, 'keys', 'weft.pub'));
    expect(existsSync(path.join(x, '.weft', 'keys'))).toBe(false); // not in the folder it ran from
    const again = await weft(['run', 'travel', '--seed', '35', '--hibernate', ...flags, '--json'], env({ WEFT_HOME: home }), fresh('x2'));
    expect(again.stderr).not.toContain('generated'); // said once, when made
    expect(lastJson(again).publicKey).toBe(started.publicKey);

    const journalLength = () => redis.admin.llen(`${prefix}:{${started.id}}:journal`);
    const before = await journalLength();
    expect(before).toBeGreaterThan(0);

    // Another host: no key of the user's there — refused, naming the key, nothing written, no key made.
    const y = fresh('y');
    const refused = await weft(['resume', started.id, ...flags, '--json'], env({ WEFT_HOME: elsewhere }), y);
    expect(refused.code, show(refused)).toBe(1);
    const out = lastJson(refused);
    expect(out.status).not.toBe('completed');
    expect(out.fingerprint).toBeNull();
    expect(out.reason).toMatch(/key/);
    expect(out.reason).toContain(keyIdIn(started.publicKey!).slice(0, 16));
    expect(existsSync(path.join(elsewhere, 'keys', 'weft.key'))).toBe(false);
    expect(existsSync(path.join(y, '.weft', 'keys', 'weft.key'))).toBe(false);
    expect(await journalLength()).toBe(before); // nothing written

    const resumed = await weft(['resume', started.id, ...flags, '--signing-key', path.join(home, 'keys', 'weft.key'), '--json'], env({ WEFT_HOME: elsewhere }), y);
    expect(resumed.code, show(resumed)).toBe(0);
    expect(lastJson(resumed).status).toBe('completed');
    // Its journal in Redis, as `weft export` writes it out, verifies with the original key (in-process: what `weft verify --public-key` decides).
    const verified = await verifyJournal((await storedJournal(redis.url, prefix, started.id))!, { publicKey: started.publicKey! });
    expect(verified.code, verified.lines.join('\n')).toBe(0);

    // The same user in yet another folder: the second invocation resumes with no flag at all.
    const z = fresh('z');
    const same = await weft(['resume', lastJson(again).id, ...flags, '--json'], env({ WEFT_HOME: home }), z);
    expect(lastJson(same).status, show(same)).toBe('completed');
    expect((await verifyJournal((await storedJournal(redis.url, prefix, lastJson(again).id))!, { publicKey: started.publicKey! })).code).toBe(0);
  });

  test('an invocation started with a key in the folder it ran from (before keys moved to the user\'s folder) resumes there with it', async () => {
    const prefix = redis.freshPrefix('sk-legacy');
    const flags = ['--redis', redis.url, '--redis-prefix', prefix];
    const x = fresh('legacy');
    const keys = path.join(x, '.weft', 'keys');
    await keyPair(keys);
    // `weft run travel --seed 36 --hibernate --redis … --signing-key ./.weft/keys/weft.key` from folder x, made in-process.
    const started = await runOnRedis('travel', { dir: path.join(x, '.weft'), redis: redis.url, prefix, dispatch: 'in-process', signingKey: path.join(keys, 'weft.key'), seed: '36', hibernate: true });
    expect(started.status).toBe('hibernated');
    // No flag now: the key the store records is found in ./.weft/keys, though the user's key is another.
    const resumed = await weft(['resume', started.id, ...flags, '--json'], env({ WEFT_HOME: fresh('home-l2') }), x);
    expect(lastJson(resumed).status, show(resumed)).toBe('completed');
  });
});
