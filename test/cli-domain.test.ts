/**
 * Domains and the pin through the `weft` command: a domain given by path runs like the built-in and
 * is found again by resume/approve/replay from the workspace's record of it (or named with
 * --domain); resume and approve with another model than the pinned one are refused, naming the pin,
 * and the invocation stays resumable; a journal copied from another invocation is refused and
 * listed as damaged; an exported bundle replays in an empty folder; every command answers --help.
 *
 * What the commands print and exit with runs as processes: run by path, the refusals (another
 * model, a domain not found, a copied journal), approve found by the record, replay and verify of a
 * bundle in an empty folder, --intent-file, --help (`weft --help`, which lists every command's usage,
 * and `<command> --help` for two commands: the path is one for all), --version. The fixture runs, and the acts whose
 * subject is which domain and pin an invocation is opened with (resume and approve once found,
 * replay by id, the listing, the bundle), are made in-process on the modules the commands run
 * (test/support/runs-here.ts).
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TRAVEL_INTENT } from '../examples/travel/transcript.js';
import { spawnTracked } from './support/children.js';
import { assertBuilt, repoRoot, weft, weftBin } from './support/cli.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';
import { fromDist } from './support/dist.js';
import { commandModule, commandModules } from './support/commands-here.js';
import { openInvocation, replayById, runInWorkspace } from './support/runs-here.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-cli-domain-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
beforeAll(() => assertBuilt());

interface Line {
  id: string;
  status: string;
  reason: string | null;
  journal: string;
  fingerprint: string | null;
  publicKey: string | null;
}
const last = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Line;


describe('domains and the pin from the command line', () => {
  test('resume with another model is refused naming the pin; resume with the pinned one finishes to the uninterrupted fingerprint', async () => {
    // The runs are fixtures made in this process as weft run makes them (test/support/runs-here.ts): resume is what is tested.
    const whole = await runInWorkspace('travel', { seed: '8', dir: path.join(root, 'whole') });
    const dir = path.join(root, 'pinned');
    const paused = await runInWorkspace('travel', { seed: '8', dir, hibernate: true });
    expect(paused.status).toBe('hibernated');
    const journalBefore = readFileSync(paused.journal, 'utf8');
    const refused = await weft(['resume', paused.id, '--dir', dir, '--model-url', 'http://127.0.0.1:9/v1', '--model', 'someone-else', '--json']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('model.id: pinned scripted:travel-demo, offered openai-compatible:someone-else');
    expect(last(refused.stdout)).toMatchObject({ id: paused.id, status: 'hibernated', fingerprint: null });
    expect(readFileSync(paused.journal, 'utf8')).toBe(journalBefore);
    // With the pinned model (no model flags), resumed as `weft resume ID --dir D` opens it, in-process: the whole run's fingerprint.
    const resumed = await openInvocation({ dir, id: paused.id, domain: undefined }, async (ws) => (await ws.runtime.resume(paused.id)).done);
    expect(resumed).toMatchObject({ status: 'completed', fingerprint: whole.fingerprint });
  });

  test('a domain by path: recorded at start, found by approve; approve with another model is refused first', async () => {
    const file = writeStrictTravelDomain(root);
    const dir = path.join(root, 'strict');
    const waiting = await weft(['run', file, '--dir', dir, '--json']);
    expect(waiting.code, waiting.stderr).toBe(0);
    const line = last(waiting.stdout);
    expect(line.status).toBe('awaiting_approval');
    const refused = await weft(['approve', line.id, '--by', 'ana', '--dir', dir, '--model-url', 'http://127.0.0.1:9/v1', '--model', 'x']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refusing to approve .*pinned scripted:travel-demo/);
    const approved = await weft(['approve', line.id, '--by', 'ana', '--dir', dir, '--json']);
    expect(approved.code, approved.stderr).toBe(0);
    expect(last(approved.stdout).status).toBe('completed');
    // replay finds it by the same record (in-process, as `weft replay ID --dir D` does).
    expect((await replayById(line.id, { dir, generateKey: false })).fingerprint).toBe(last(approved.stdout).fingerprint);
  });

  test('without the workspace record, a user domain is named with --domain; the error says so', async () => {
    const file = writeStrictTravelDomain(root);
    const dir = path.join(root, 'no-meta');
    const line = await runInWorkspace(file, { dir });
    expect(line.status).toBe('awaiting_approval');
    rmSync(path.join(dir, 'meta'), { recursive: true });
    const lost = await weft(['approve', line.id, '--by', 'ana', '--dir', dir]);
    // The store's metadata names the domain (strict-travel), which is neither a built-in nor mapped: a domain that is not there exits 2.
    expect(lost.code).toBe(2);
    expect(lost.stderr).toContain('belongs to domain strict-travel');
    expect(lost.stderr).toContain('pass --domain <path | package>');
    // Named with --domain, it is found (opened in-process as `weft approve ID --domain FILE --dir D` opens it).
    const found = await openInvocation({ dir, id: line.id, domain: file }, async (ws) => (await ws.runtime.approve(line.id, { decision: 'approved', by: 'ana' })).done);
    expect(found.status).toBe('completed');
    // The built-in, by contrast, is found by the name of the library it pinned (`weft resume ID --dir D`, in-process).
    const travel = await runInWorkspace('travel', { seed: '5', dir, hibernate: true });
    rmSync(path.join(dir, 'meta'), { recursive: true });
    expect((await openInvocation({ dir, id: travel.id, domain: undefined }, async (ws) => (await ws.runtime.resume(travel.id)).done)).status).toBe('completed');
  });

  test('a journal copied from another invocation: resume and replay refuse it naming both ids; ls lists it as damaged', async () => {
    const dir = path.join(root, 'foreign');
    const a = await runInWorkspace('travel', { seed: '1', dir });
    const b = await runInWorkspace('travel', { seed: '2', dir, hibernate: true });
    cpSync(a.journal, b.journal);
    const resumed = await weft(['resume', b.id, '--dir', dir]);
    expect(resumed.code).toBe(1);
    expect(resumed.stderr).toContain(`the journal filed as invocation ${b.id} belongs to invocation ${a.id}`);
    // replay by id refuses it in the runtime (in-process, as `weft replay ID --dir D` does); by its file, the command.
    await expect(replayById(b.id, { dir, generateKey: false })).rejects.toThrow(`belongs to invocation ${a.id}`);
    const byFile = await weft(['replay', b.journal]);
    expect(byFile.code).toBe(1);
    expect(byFile.stderr).toContain(`belongs to invocation ${a.id}`);
    // What `weft ls --json` lists (runtime/list.ts, in-process).
    const { listInvocations, FileStore } = await commandModules();
    const rows = await listInvocations(new FileStore(dir));
    expect(rows.find((r) => r.id === b.id)).toMatchObject({ status: 'damaged', problem: expect.stringContaining(a.id) });
    expect(rows.find((r) => r.id === a.id)).toMatchObject({ status: 'completed' });
  });

  test('an exported bundle verifies and replays in an empty folder, to the run\'s fingerprint', async () => {
    const dir = path.join(root, 'export');
    const run = await runInWorkspace('travel', { dir });
    // The bundle `weft export ID --dir D` prints (cli/commands/export.ts exportBundle, in-process); replay and verify read it as processes.
    const { exportBundle } = await fromDist<typeof import('../dist/cli/commands/export.js')>('cli/commands/export.js');
    const empty = path.join(root, 'empty');
    mkdirSync(empty);
    writeFileSync(path.join(empty, 'bundle.json'), JSON.stringify(await exportBundle(dir, run.id)) + '\n');
    const replayed = await weft(['replay', 'bundle.json', '--json'], {}, empty);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(last(replayed.stdout)).toMatchObject({ id: run.id, status: 'completed', fingerprint: run.fingerprint });
    const verified = await weft(['verify', 'bundle.json'], {}, empty);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(readdirSync(empty), 'replay and verify write nothing where they run').toEqual(['bundle.json']);
  });

  test('every command answers --help with its usage and exit 0', async () => {
    // `weft --help` loads every command's module in one process and lists each usage; two commands then
    // answer `<command> --help` (and -h among other options) as processes: that path in cli/main.ts is
    // the same for every command, only the module it prints the usage of differs — and each module's
    // usage is the one the list printed (read in this process from the module the process loaded).
    const all = await weft(['--help']);
    expect(all.code, all.stderr).toBe(0);
    for (const command of ['run', 'resume', 'approve', 'replay', 'verify', 'log', 'ls', 'keygen', 'export', 'htn']) {
      const { usage } = await commandModule(command);
      expect(usage.startsWith(`${command} `), `${command}: ${usage}`).toBe(true);
      expect(all.stdout, command).toContain(`\n  ${usage}\n`);
    }
    for (const args of [['run', '--help'], ['verify', 'bundle.json', '-h']]) {
      const r = await weft(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toBe(`usage: weft ${(await commandModule(args[0]!)).usage}\n`);
    }
  });

  test('--intent-file F and --intent-file - (stdin) give what the positional gives; a 1 MB intent, too long for a command line, reaches the runtime and is refused there, sealed', async () => {
    const dir = (name: string) => path.join(root, `intent-file-${name}`);
    // The positional's run is made in-process as `weft run travel "<intent>" --dir D --json` makes it.
    const positional = await runInWorkspace('travel', { intent: TRAVEL_INTENT, dir: dir('positional') });
    const file = path.join(root, 'intent.txt');
    writeFileSync(file, `${TRAVEL_INTENT}\n`); // as `echo "…" > intent.txt` writes it: the line break is not part of the intent
    const fromFile = await weft(['run', 'travel', '--intent-file', file, '--dir', dir('file'), '--json']);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(JSON.parse(fromFile.stdout)).toMatchObject({ id: positional.id, status: 'completed', fingerprint: positional.fingerprint });

    const huge = `Book Lisbon. ${'please '.repeat(150_000)}`; // ~1 MB: execve refuses an argument this long (E2BIG)
    const child = spawnTracked(process.execPath, [weftBin, 'run', 'travel', '--intent-file', '-', '--dir', dir('stdin'), '--json'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.stdin!.end(huge);
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(code, stderr).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({ status: 'failed', reason: expect.stringContaining(`the intent is ${huge.length} characters, over the pinned cap`), fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/) });

    const both = await weft(['run', 'travel', TRAVEL_INTENT, '--intent-file', file, '--dir', dir('both')]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('give the intent once');
  });

  test('weft --version (and -V) prints the package version and exits 0', async () => {
    const { version } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const r = await weft([flag]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`weft ${version}\n`);
    }
  });
});

