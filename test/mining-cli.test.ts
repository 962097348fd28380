/**
 * `weft mine` and `weft run --library` from the command line (embedded mode): a Lisbon gap run in a
 * workspace is mined (`--dir`, a journal file, a bundle: the same version), the version is written
 * for review (`--out`, or the default name) and filed in the store by digest (`--apply`); Porto then
 * runs on it by digest or by file, with no authoring, and resumes without it; old and new journals
 * replay; a long input shows progress on stderr. Bad command
 * lines exit 2 with a message and, with --json, one JSON line.
 *
 * Trust: a journal edited in the workspace is refused whether reached by --dir, a folder or only
 * as corpus (exit 1, named by id); a copy cut before the gap epoch closed and the full journal give
 * the same version in either order, a re-chained fork of the id is refused; --public-key mines only
 * journals sealed by that key. Output: --out never replaces a file without --force; nothing
 * accepted writes and files nothing; a model's control characters reach the terminal inert.
 *
 * Real `weft` processes where the command line is the subject: `mine`'s JSON line (a version
 * applied, nothing accepted, progress beside it, each usage error, each refusal code), its text on a
 * terminal, `run --library FILE` and a `resume` with no --library. The other calls — the fixture runs
 * on a mined version, the replays, the routes to the same version and the verdicts compared between
 * them — run the commands' own modules in this process (`weftHere`: test/support/command-in-process.ts, the
 * code the process runs; text mode, read with `minedText`/`ranText`).
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { JournalRecord } from '../journal/records.js';
import { assertBuilt, weft, type CliResult } from './support/cli.js';
import { commandModules } from './support/commands-here.js';
import { fromDist } from './support/dist.js';
import { weftHere } from './support/command-in-process.js';
import { runInWorkspace } from './support/runs-here.js';

// The library as the command runs it (dist/, loaded once: test/support/commands-here.ts), which the
// in-process commands load anyway — no second copy of the runtime to transform and load.
const { signingKeyFromSecret, FileStore, createRuntime } = await commandModules();
const { chainRecord } = await fromDist<typeof import('../dist/journal/chain.js')>('journal/chain.js');
const { recordLine } = await fromDist<typeof import('../dist/journal/encode.js')>('journal/encode.js');
const { libraryDigest } = await fromDist<typeof import('../dist/htn/library/digest.js')>('htn/library/digest.js');
const { travelDomain } = await fromDist<typeof import('../dist/examples/travel/domain.js')>('examples/travel/domain.js');
const { validateLibrary } = await fromDist<typeof import('../dist/htn/library/validate.js')>('htn/library/validate.js');
const { travelLibrary } = await fromDist<typeof import('../dist/examples/travel/library.js')>('examples/travel/library.js');
const { TRAVEL_TRANSFER_INTENTS } = await fromDist<typeof import('../dist/examples/travel/transfer-script.js')>('examples/travel/transfer-script.js');

const root = mkdtempSync(join(tmpdir(), 'weft-mining-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const AS_OF = '2026-06-01T09:00:00Z';
const ws = join(root, 'ws');
let lisbon: { id: string; journal: string; fingerprint: string; publicKey: string };

const lastJson = (r: CliResult) => JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
/** What `weft mine` printed as text (mining/report.ts renderReport): the version, how many methods it added, the decompositions checked, each candidate's lines. */
const minedText = (r: CliResult) => {
  const head = /^mined \d+ gap-path epoch\(s\) into \d+ candidate\(s\); checked (\d+) recorded decomposition\(s\) for conflicts$/m.exec(r.stdout);
  expect(head, `${r.stdout}\n${r.stderr}`).not.toBeNull();
  const added = /^new library version ([0-9a-f]{64}) \((\d+) method\(s\) added to [0-9a-f]{64}\)$/m.exec(r.stdout);
  const stays = /^no method accepted: the library stays ([0-9a-f]{64})$/m.exec(r.stdout);
  return { library: added?.[1] ?? stays![1]!, accepted: added ? Number(added[2]) : 0, checked: Number(head![1]), candidates: r.stdout.split('\n').filter((l) => l.startsWith('  ')) };
};
/** What `weft run` / `weft resume` printed as text (cli/follow.ts printOutcome). */
const ranText = (r: CliResult) => {
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  const field = (name: string) => new RegExp(`^${name} +(\\S+)`, 'm').exec(r.stdout)?.[1];
  return { id: field('invocation')!, status: field('status')!, journal: field('journal')!, fingerprint: field('fingerprint') };
};
const lines = (file: string) => readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { kind: string; epoch: number; body: Record<string, unknown> });

beforeAll(async () => {
  assertBuilt();
  // The run mined is a fixture made in this process as `weft run` makes it (test/support/runs-here.ts).
  lisbon = (await runInWorkspace('travel', { dir: ws, intent: TRAVEL_TRANSFER_INTENTS.lisbon, seed: '11', asOf: AS_OF })) as typeof lisbon;
  expect(lisbon).toMatchObject({ status: 'completed' });
}, 120_000);

describe('weft mine', () => {
  test('--dir: the report names the accepted method, --out holds the new version, --apply files it; Porto runs on it by digest with no authoring', async () => {
    const out = join(root, 'mined.json');
    const r = await weft(['mine', '--dir', ws, '--library', 'travel', '--out', out, '--apply', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const line = lastJson(r) as { library: string; base: string; out: string; applied: boolean; accepted: number; candidates: Array<{ verdict: string; task: string }> };
    expect(line).toMatchObject({ base: libraryDigest(travelLibrary), out, applied: true, accepted: 1, candidates: [{ verdict: 'accepted', task: 'book_transfer' }] });
    expect(r.stderr).toMatch(/mined-book_transfer-[0-9a-f]{12} \(book_transfer\) accepted/);
    const written = validateLibrary(JSON.parse(readFileSync(out, 'utf8')));
    expect(libraryDigest(written)).toBe(line.library);
    expect(readFileSync(out, 'utf8')).toContain('\n  "methods": [');
    expect(existsSync(join(ws, 'blobs', line.library)), 'the version is filed in the store by digest').toBe(true);

    const p = ranText(await weftHere(['run', 'travel', TRAVEL_TRANSFER_INTENTS.porto, '--seed', '12', '--as-of', AS_OF, '--dir', ws, '--library', line.library]));
    expect(p.status).toBe('completed');
    const records = lines(p.journal);
    expect((records[0]!.body.pin as { library: string }).library).toBe(line.library);
    expect(records.filter((x) => x.kind === 'model.requested').map((x) => x.body.purpose)).not.toContain('author');
    expect(records.filter((x) => x.kind === 'epoch.derived').map((x) => x.body.source)).toEqual(['htn', 'htn', 'htn']);

    for (const [journal, fingerprint] of [[lisbon.journal, lisbon.fingerprint], [p.journal, p.fingerprint]] as const) {
      const replay = await weftHere(['replay', journal]);
      expect(replay.code, replay.stderr).toBe(0);
      expect(replay.stdout).toContain('without calling anything: identical to the journal\n');
      expect(replay.stdout).toContain(`\nfingerprint ${fingerprint}\n`);
    }
  }, 240_000);

  test('a journal file, a bundle, and the workspace give the same version; without --out it is written here under its name and digest', async () => {
    // Another run in the workspace: mining one journal file of it still checks the candidate against all of them.
    const madrid = await runInWorkspace('travel', { dir: ws, intent: TRAVEL_TRANSFER_INTENTS.madrid, seed: '14', asOf: AS_OF });
    expect(madrid.status, madrid.reason ?? '').toBe('completed');
    const here = join(root, 'here');
    mkdirSync(here);
    const fromFile = await weftHere(['mine', '--from', lisbon.journal, '--library', 'travel'], {}, here);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    const digest = minedText(fromFile).library;
    const whole = await weftHere(['mine', '--dir', ws, '--library', 'travel', '--out', join(root, 'whole.json')]);
    expect(minedText(whole).checked).toBeGreaterThanOrEqual(6);
    expect(minedText(fromFile).checked, 'the journal file\'s whole workspace is the corpus').toBe(minedText(whole).checked);
    expect(readdirSync(here)).toEqual([`travel-${digest.slice(0, 12)}.library.json`]);
    const bundle = join(root, 'lisbon.bundle.json');
    const exported = await weftHere(['export', lisbon.id, '--dir', ws]);
    expect(exported.code, exported.stderr).toBe(0);
    writeFileSync(bundle, exported.stdout);
    const fromBundle = await weftHere(['mine', '--from', bundle, '--library', 'travel', '--out', join(root, 'b.json')]);
    expect(fromBundle.code, fromBundle.stderr).toBe(0);
    expect(minedText(fromBundle).library).toBe(digest);
    expect(minedText(fromBundle).checked, 'a bundle brings its own journal only').toBe(3);
    // Without --json: the report on stdout (a folder as the positional).
    const text = await weftHere(['mine', ws, '--library', 'travel', '--out', join(root, 'c.json')]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`new library version ${digest}`);
    expect(text.stdout).toContain(`wrote ${join(root, 'c.json')}`);
  }, 180_000);

  test('weft run --library FILE runs the version in the file (filed in the store at start)', async () => {
    const file = join(root, 'for-run.json');
    const mined = await weftHere(['mine', '--from', lisbon.journal, '--library', 'travel', '--out', file]);
    expect(mined.code, mined.stderr).toBe(0);
    const digest = libraryDigest(validateLibrary(JSON.parse(readFileSync(file, 'utf8'))));
    const other = join(root, 'ws-file');
    const r = await weft(['run', 'travel', TRAVEL_TRANSFER_INTENTS.madrid, '--seed', '13', '--as-of', AS_OF, '--dir', other, '--library', file, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = lastJson(r) as { status: string; journal: string };
    expect(out.status).toBe('completed');
    expect((lines(out.journal)[0]!.body.pin as { library: string }).library).toBe(digest);
    expect(existsSync(join(other, 'blobs', digest))).toBe(true);
    expect(lines(out.journal).some((x) => x.kind === 'model.requested' && x.body.purpose === 'author')).toBe(false);
  }, 120_000);

  test('a run on a mined version hibernated at its first boundary resumes without --library: the version is read from the store', async () => {
    const file = join(root, 'for-resume.json');
    expect((await weftHere(['mine', '--from', lisbon.journal, '--library', 'travel', '--out', file])).code).toBe(0);
    const other = join(root, 'ws-resume');
    const rested = ranText(await weftHere(['run', 'travel', TRAVEL_TRANSFER_INTENTS.porto, '--seed', '15', '--as-of', AS_OF, '--dir', other, '--library', file, '--hibernate']));
    expect(rested.status).toBe('hibernated');
    rmSync(file);
    const resumed = await weft(['resume', rested.id, '--dir', other, '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const out = lastJson(resumed) as { status: string; journal: string };
    expect(out.status).toBe('completed');
    expect(lines(out.journal).some((x) => x.kind === 'model.requested' && x.body.purpose === 'author')).toBe(false);
  }, 180_000);

  test('on a long input, progress goes to stderr; the JSON line stays alone on stdout', async () => {
    const many = join(root, 'ws-many');
    const store = new FileStore(many);
    const runtime = createRuntime({ store, domain: travelDomain, stateDir: join(many, 'state'), signingKey: signingKeyFromSecret(new Uint8Array(32).fill(3)), sleep: async () => undefined });
    const intents = Object.values(TRAVEL_TRANSFER_INTENTS);
    for (let i = 0; i < 21; i++) {
      const result = await (await runtime.start(intents[i % intents.length]!, { tenant: 'many', seed: String(i), asOf: AS_OF })).done;
      expect(result.status).toBe('completed');
    }
    const r = await weft(['mine', '--dir', many, '--library', 'travel', '--out', join(root, 'many.json'), '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`read 20/21 journals of ${store.name}`);
    expect(r.stderr).toContain('21 gap-path epoch(s) from 21 journal(s)');
    expect(r.stderr).toContain('judging candidate 1/1');
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(lastJson(r)).toMatchObject({ accepted: 1, candidates: [{ verdict: 'accepted', sources: expect.arrayContaining([expect.objectContaining({ epoch: 3 })]) }] });
    expect((lastJson(r).candidates as Array<{ sources: unknown[] }>)[0]!.sources).toHaveLength(21);
  }, 180_000);

  test.each([
    [['mine', '--from', 'x.jsonl'], /--library is required/],
    [['mine', '--library', 'travel'], /nothing to mine/],
    [['mine', '--from', '/nonexistent/j.jsonl', '--library', 'travel'], /no such file or folder/],
    [['mine', '--dir', 'WS', '--library', 'nope'], /no library of that name/],
    [['mine', '--dir', 'WS', '--library', 'travel', '--min-support', '0'], /--min-support must be a positive integer/],
    [['mine', '--dir', 'WS', '--library', 'a'.repeat(64)], /no library with that digest/],
    [['run', 'travel', '--dir', 'WS', '--library', '/nonexistent/lib.json'], /--library \/nonexistent\/lib.json: no such file/],
  ])('%j exits 2 with a message and one JSON line', async (args, message) => {
    const argv = args.map((a) => (a === 'WS' ? ws : a));
    const r = await weft([...argv, '--json']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(lastJson(r)).toMatchObject({ refused: 'usage' });
  }, 60_000);

  test('a journal edited after it was sealed is refused, never mined', async () => {
    const edited = join(root, 'edited.jsonl');
    writeFileSync(edited, readFileSync(lisbon.journal, 'utf8').replace('"h-alfama"', '"h-belem"'));
    const r = await weft(['mine', '--from', edited, '--library', 'travel', '--out', join(root, 'e.json'), '--json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/does not verify/);
    expect(lastJson(r)).toMatchObject({ refused: 'journal.unreadable' });
    expect(existsSync(join(root, 'e.json'))).toBe(false);
  }, 60_000);

  /** The workspace copied, with the author reply of `id`'s journal edited (the quote kept, the booking dropped). */
  const tamperedCopy = (name: string) => {
    const dir = join(root, name);
    cpSync(ws, dir, { recursive: true });
    const file = join(dir, 'invocations', lisbon.id, 'journal.jsonl');
    const edited = readFileSync(file, 'utf8').split('\n').map((line) => {
      if (!line.includes('"kind":"model.completed"') || !line.includes('"purpose":"author"')) return line;
      const record = JSON.parse(line) as { body: { reply: string } };
      const reply = JSON.parse(record.body.reply) as { steps: unknown[] };
      record.body.reply = JSON.stringify({ steps: reply.steps.slice(0, 1) });
      return JSON.stringify(record);
    });
    writeFileSync(file, edited.join('\n'));
    return dir;
  };

  test('a journal edited in a workspace is refused from --dir and from a folder: weft verify and weft mine agree, nothing is written', async () => {
    const dir = tamperedCopy('ws-tampered');
    const verify = await weftHere(['verify', lisbon.id, '--dir', dir, '--no-signature']);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toMatch(/chain broken/);
    // --dir by a real process (its JSON line), the folder by the command's module here.
    for (const [args, mine] of [[['--dir', dir, '--json'], weft], [['--from', dir], weftHere]] as const) {
      const out = join(root, 'tampered.json');
      const r = await mine(['mine', ...args, '--library', 'travel', '--out', out]);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`journal ${lisbon.id} in .* does not verify \\(seq \\d+: `));
      if (args.includes('--json')) expect(lastJson(r)).toMatchObject({ refused: 'journal.unreadable' });
      expect(existsSync(out)).toBe(false);
    }
    // Only in the corpus (another journal is mined): still refused — the conflict check must see every journal.
    const other = readdirSync(join(dir, 'invocations')).find((id) => id !== lisbon.id)!;
    const r = await weftHere(['mine', '--from', join(dir, 'invocations', other, 'journal.jsonl'), '--library', 'travel', '--out', join(root, 't2.json')]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`journal ${lisbon.id} in`);
  }, 120_000);

  test('a copy cut before the gap epoch closed and the full journal: either order gives the full journal\'s version; a different history of the id is refused', async () => {
    const records = readFileSync(lisbon.journal, 'utf8').trim().split('\n');
    const closed = records.findIndex((l) => l.includes('"kind":"epoch.closed"') && l.includes('"epoch":3'));
    const prefix = join(root, 'prefix.jsonl');
    writeFileSync(prefix, `${records.slice(0, closed).join('\n')}\n`);
    const one = await weftHere(['mine', '--from', prefix, '--from', lisbon.journal, '--library', 'travel', '--out', join(root, 'p1.json')]);
    const two = await weftHere(['mine', '--from', lisbon.journal, '--from', prefix, '--library', 'travel', '--out', join(root, 'p2.json')]);
    expect(one.code, one.stderr).toBe(0);
    expect(two.code, two.stderr).toBe(0);
    expect(minedText(one)).toMatchObject({ accepted: 1 });
    expect(minedText(one).library).toBe(minedText(two).library);
    expect(minedText(one).candidates).toEqual(minedText(two).candidates);
    // Re-chained after an edit of the author reply (so it verifies, unsealed): the same id, another history.
    const parsed = records.map((l) => JSON.parse(l) as JournalRecord);
    const rechained: JournalRecord[] = [parsed[0]!];
    let edited = -1;
    for (const r of parsed.slice(1, closed)) {
      let body = r.body as Record<string, unknown>;
      if (r.kind === 'model.completed' && body.purpose === 'author') {
        body = { ...body, reply: JSON.stringify({ steps: (JSON.parse(body.reply as string) as { steps: unknown[] }).steps.slice(0, 1) }) };
        edited = r.seq;
      }
      rechained.push(chainRecord(rechained.at(-1)!.hash, { seq: r.seq, kind: r.kind, epoch: r.epoch, body } as never));
    }
    expect(edited).toBeGreaterThan(0);
    const fork = join(root, 'fork.jsonl');
    writeFileSync(fork, rechained.map((r) => `${recordLine(r)}\n`).join(''));
    const verified = await weftHere(['verify', fork, '--no-signature']);
    expect(verified.code, verified.stdout).toBe(0);
    const r = await weft(['mine', '--from', lisbon.journal, '--from', fork, '--library', 'travel', '--out', join(root, 'p3.json'), '--json']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`invocation ${lisbon.id} is read twice with different histories: ${lisbon.journal}`);
    expect(r.stderr).toContain(` and ${fork} differ at seq ${edited} (neither is a prefix of the other)`);
    expect(lastJson(r)).toMatchObject({ refused: 'journal.divergent' });
    expect(existsSync(join(root, 'p3.json'))).toBe(false);
  }, 120_000);

  test('--out never replaces a file silently (--force does); nothing accepted writes no file and files nothing; the report is inert on a terminal', async () => {
    const out = join(root, 'taken.json');
    writeFileSync(out, 'mine\n');
    const refused = await weftHere(['mine', '--from', lisbon.journal, '--library', 'travel', '--out', out]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/exists: pass --force/);
    expect(readFileSync(out, 'utf8')).toBe('mine\n');
    const forced = await weftHere(['mine', '--from', lisbon.journal, '--library', 'travel', '--out', out, '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(libraryDigest(validateLibrary(JSON.parse(readFileSync(out, 'utf8'))))).toBe(minedText(forced).library);

    // Mining again on the version just mined: the method is there already — no new version.
    const dir = join(root, 'ws-again');
    cpSync(ws, dir, { recursive: true });
    const blobs = existsSync(join(dir, 'blobs')) ? readdirSync(join(dir, 'blobs')).sort() : [];
    const none = join(root, 'none.json');
    const again = await weft(['mine', '--dir', dir, '--library', out, '--out', none, '--apply', '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(lastJson(again)).toMatchObject({ accepted: 0, applied: false, out: null, library: minedText(forced).library });
    expect(again.stderr).toContain('nothing accepted; no new version (nothing filed)');
    expect(existsSync(none)).toBe(false);
    expect(existsSync(join(dir, 'blobs')) ? readdirSync(join(dir, 'blobs')).sort() : []).toEqual(blobs);

    // A model's constant holding an 8-bit CSI (U+009B) and a bidi override: the reason shows them as \\uXXXX.
    const records = readFileSync(lisbon.journal, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as JournalRecord);
    const rechained: JournalRecord[] = [records[0]!];
    for (const r of records.slice(1).filter((x) => x.kind !== 'invocation.sealed')) {
      let body = r.body as Record<string, unknown>;
      if (r.kind === 'model.completed' && body.purpose === 'author') body = { ...body, reply: (body.reply as string).replace(/"h-alfama"/g, '"h-\u009b31m\u202e"') };
      rechained.push(chainRecord(rechained.at(-1)!.hash, { seq: r.seq, kind: r.kind, epoch: r.epoch, body } as never));
    }
    const odd = join(root, 'odd.jsonl');
    writeFileSync(odd, rechained.map((r) => `${recordLine(r)}\n`).join(''));
    const text = await weft(['mine', '--from', odd, '--library', 'travel', '--out', join(root, 'odd.json')]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/does not generalise/);
    expect(text.stdout).toContain('h-\\u009b31m\\u202e');
    expect(text.stdout).not.toMatch(/[\u0080-\u009f\u202a-\u202e]/);
    expect(text.stdout).toContain('nothing accepted; no new version');
    expect(text.stdout).toContain('seal signatures not checked');
    expect(existsSync(join(root, 'odd.json'))).toBe(false);
  }, 180_000);

  test('--public-key: journals sealed by that key are mined; an unsealed one is not mined but stays in the corpus; another key is refused', async () => {
    expect(existsSync(lisbon.publicKey), JSON.stringify(lisbon)).toBe(true);
    // Text mode: the report, and its notes, on stdout.
    const ok = await weftHere(['mine', '--from', lisbon.journal, '--public-key', lisbon.publicKey, '--library', 'travel', '--out', join(root, 'k1.json')]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(minedText(ok)).toMatchObject({ accepted: 1 });
    expect(ok.stdout + ok.stderr).not.toContain('seal signatures not checked');
    const records = readFileSync(lisbon.journal, 'utf8').trim().split('\n');
    const unsealed = join(root, 'unsealed.jsonl');
    writeFileSync(unsealed, `${records.slice(0, -1).join('\n')}\n`);
    const skipped = await weftHere(['mine', '--from', unsealed, '--public-key', lisbon.publicKey, '--library', 'travel', '--out', join(root, 'k2.json')]);
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(minedText(skipped)).toMatchObject({ accepted: 0, candidates: [] });
    expect(skipped.stdout).toContain(`not mined (not sealed, so --public-key vouches for nothing in it; still checked for conflicts): ${lisbon.id}`);
    const keygen = await weftHere(['keygen', '--out', join(root, 'other-key')]);
    expect(keygen.code, keygen.stderr).toBe(0);
    const otherPub = join(root, 'other-key', 'weft.pub');
    const wrong = await weftHere(['mine', '--from', lisbon.journal, '--public-key', otherPub, '--library', 'travel', '--out', join(root, 'k3.json')]);
    expect(wrong.code, wrong.stderr).toBe(1);
    expect(wrong.stderr).toMatch(/does not verify \(seq \d+: .*key/);
  }, 120_000);
});
