/**
 * Every hint the `weft` command prints works as printed, in both modes: each `weft resume|approve|
 * replay|verify|log|export|ls …` a run, a resume, an approval or a listing prints is run as it
 * stands (through a shell, from another folder than the workspace) and must find the invocation —
 * never "no invocation … in file:…", never a usage error, never the word null. In the workspace mode
 * the hints name `--dir`; with Redis they name `--redis URL --redis-prefix P` and no folder, the
 * journal line says how to get a file of it (`weft export … > bundle.json`), and verify, log and
 * replay take the id with `--redis` as they take a file. `weft log bundle.json` shows the bundle's
 * records like a journal file's.
 *
 * The hints are real `weft` processes; the texts that print them come from the command's own
 * module where the command is a fixture (the runs, the listing: test/support/command-in-process.ts, the code
 * the process runs, in this process), and from the real processes the hints start (the resume's,
 * the approval's). A hint the test reads the result of is run at once; every other one at the end of
 * the walk, once per shape (the hint with its invocation id written <id>): a hint of a shape already
 * run (an export of another id, the listing's resume that the suspension printed too) starts no
 * process.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { spawnTracked } from './support/children.js';
import { assertBuilt, weft, weftBin, type CliResult } from './support/cli.js';
import { weftHere } from './support/command-in-process.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';
import { runInWorkspace } from './support/runs-here.js';
import { NO_REDIS_MESSAGE, requireRedis, startRedis, type RedisServer } from './support/redis-server.js';

const available = requireRedis();
if (!available && process.env.CI === 'true') {
  test('redis-server is installed (required under CI)', () => {
    throw new Error(NO_REDIS_MESSAGE);
  });
}

const root = mkdtempSync(path.join(tmpdir(), 'weft-cli-hints-'));
let server: RedisServer | undefined;
beforeAll(async () => {
  assertBuilt();
  if (available) server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** No Redis unless the arguments name one; the workspace's own key. */
const ENV = { WEFT_REDIS_URL: '', WEFT_SIGNING_KEY: '', WEFT_DEBUG: '' };
const show = (r: CliResult) => `exit ${r.code} signal ${r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;


const COMMANDS = /\bweft (?:resume|approve|replay|verify|log|export|ls)\b/g;
const VALUED = new Set(['--dir', '--redis', '--redis-prefix', '--redis-durability', '--queue', '--public-key', '--by', '--domain']);

/**
 * The commands a text prints: from each `weft <command>`, its id (or file) and the flags and
 * redirection that follow it, up to the prose (`(or leave it …)`, `once …`, `;`). An optional
 * `[--reject]` is left out and a placeholder `<you>` filled in, as a user would.
 */
export function hintsIn(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    for (const match of line.matchAll(COMMANDS)) {
      const words = line.slice(match.index).split(/\s+/);
      const command = words.slice(0, 2);
      let i = 2;
      let ended = false;
      const take = (word: string) => {
        const clean = word.replace(/[),;]+$/, '');
        ended = clean !== word;
        command.push(clean === '<you>' ? 'tester' : clean);
      };
      if (command[1] !== 'ls' && words[2] !== undefined && !words[2].startsWith('-')) take(words[i++]!);
      while (!ended && i < words.length) {
        const word = words[i]!;
        if (word === '[--reject]') i += 1;
        else if (word === '>') {
          take(words[i]!);
          take(words[i + 1]!);
          i += 2;
        } else if (word.startsWith('--')) {
          take(word);
          i += 1;
          if (!ended && VALUED.has(command.at(-1)!)) take(words[i++]!);
        } else break;
      }
      out.push(command.join(' '));
    }
  }
  return out;
}

/** Run a printed hint as it stands, through a shell, in `cwd` (`weft` is the built CLI). */
function runHint(hint: string, cwd: string): Promise<CliResult> {
  const line = hint.replace(/^weft /, `${JSON.stringify(process.execPath)} ${JSON.stringify(weftBin)} `);
  return new Promise((resolve, reject) => {
    const child = spawnTracked('sh', ['-c', line], { cwd, env: { ...process.env, ...ENV } });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c) => (stdout += c));
    child.stderr!.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/**
 * The hints of one walk. `follow` checks every hint a text printed and runs at once those the test
 * reads the result of (`now`), or all of them; the others wait for `settle`, which runs one of each
 * shape no hint of the walk has run yet (the shape: the hint with its invocation id written <id>).
 * A hint run before, word for word, is not run again: its result stands.
 */
class Walk {
  private readonly ran = new Map<string, CliResult>();
  private readonly waiting: string[] = [];
  constructor(private readonly cwd: string) {}

  private static shape(hint: string): string {
    return hint.replace(/inv-[0-9a-f]+/g, '<id>');
  }

  private async run(hint: string): Promise<CliResult> {
    const before = this.ran.get(hint);
    const ran = before ?? (await runHint(hint, this.cwd));
    this.ran.set(hint, ran);
    expect(`${ran.stdout}${ran.stderr}`, `${hint}\n${show(ran)}`).not.toMatch(/no invocation|unknown option|usage: weft/i);
    expect(ran.code, `${hint}\n${show(ran)}`).not.toBe(2);
    return ran;
  }

  /** Every hint `result` printed: each must find its invocation. Returns the hints run now and their results. */
  async follow(result: CliResult, now: (hint: string) => boolean = () => true): Promise<Array<{ hint: string; result: CliResult }>> {
    const out = [];
    for (const hint of hintsIn(`${result.stdout}\n${result.stderr}`)) {
      expect(hint, 'a hint never names null').not.toMatch(/\bnull\b/);
      if (now(hint) || this.ran.has(hint)) out.push({ hint, result: await this.run(hint) });
      else this.waiting.push(hint);
    }
    return out;
  }

  /** The hints not run yet, one of each shape not run yet. */
  async settle(): Promise<void> {
    const shapes = new Set([...this.ran.keys()].map(Walk.shape));
    for (const hint of this.waiting.splice(0)) {
      if (shapes.has(Walk.shape(hint))) continue;
      shapes.add(Walk.shape(hint));
      await this.run(hint);
    }
  }
}

const startsWith = (prefix: string) => (hint: string) => hint.startsWith(prefix);

interface Mode {
  name: string;
  /** The location flags a user passes. */
  where: () => string[];
  /** What every hint must name (and must not). */
  names: RegExp;
  never: RegExp;
}

/** The workspace: `--dir D`, or a path in D (the audit and replay hints name the journal file). */
const fileMode = (dir: string): Mode => ({ name: 'workspace', where: () => ['--dir', dir], names: new RegExp(`(--dir |[^ ]*)${dir}\\b`), never: /--redis/ });
const redisMode = (prefix: string): Mode => ({
  name: 'redis',
  where: () => ['--redis', server!.url, '--redis-prefix', prefix],
  names: new RegExp(`--redis ${server!.url} --redis-prefix ${prefix}`),
  never: /--dir/,
});

/** The whole walk in one mode: hibernate → resume → audit/replay/export; approval; a suspension; ls. */
async function everyHintWorks(mode: Mode, cwd: string): Promise<Walk> {
  mkdirSync(cwd, { recursive: true });
  const where = mode.where();
  const walk = new Walk(cwd);
  const expectNamed = (hints: string[]) => {
    for (const hint of hints.filter((h) => !/^weft (log|verify) \S+\.json$/.test(h))) {
      expect(hint).toMatch(mode.names);
      expect(hint).not.toMatch(mode.never);
    }
  };

  // A hibernated run: its resume hint, then the completed run's audit, replay (and export) hints.
  const hibernated = await weftHere(['run', 'travel', '--hibernate', ...where], ENV, cwd);
  expect(hibernated.code, show(hibernated)).toBe(0);
  expect(hibernated.stdout).not.toMatch(/journal +null/);
  const resumeHints = hintsIn(hibernated.stdout);
  expect(resumeHints.some((h) => h.startsWith('weft resume '))).toBe(true);
  expectNamed(resumeHints);
  const resumed = (await walk.follow(hibernated, startsWith('weft resume '))).find((f) => f.hint.startsWith('weft resume '));
  expect(resumed!.result.code, show(resumed!.result)).toBe(0);
  expect(resumed!.result.stdout).toMatch(/status +completed/);
  const afterHints = hintsIn(resumed!.result.stdout);
  expect(afterHints.filter((h) => /^weft (verify|replay) /.test(h))).toHaveLength(2);
  expectNamed(afterHints);
  const followed = await walk.follow(resumed!.result);
  for (const { hint, result } of followed) expect(result.code, `${hint}\n${show(result)}`).toBe(0);
  if (mode.name === 'redis') expect(followed.map((f) => f.hint.split(' ')[1])).toEqual(['export', 'verify', 'replay']);
  const verified = followed.find((f) => f.hint.startsWith('weft verify '))!;
  expect(verified.result.stdout).toMatch(/^verified: 56 records/m); // a travel run: 47 records, and one admission per step since flag 9
  expect(followed.find((f) => f.hint.startsWith('weft replay '))!.result.stdout).toMatch(/identical to the journal/);

  // A run awaiting approval: the approve hint (with --by filled in) continues it.
  const waiting = await weftHere(['run', writeStrictTravelDomain(root), '--seed', '2', ...where], ENV, cwd);
  expect(waiting.code, show(waiting)).toBe(0);
  expect(waiting.stdout).toMatch(/status +awaiting_approval/);
  expectNamed(hintsIn(waiting.stdout));
  const approved = (await walk.follow(waiting, startsWith('weft approve '))).find((f) => f.hint.startsWith('weft approve '));
  expect(approved!.hint).toMatch(/^weft approve \S+ --by \S+ /); // a real name, never a <placeholder> the shell reads
  expect(approved!.result.code, show(approved!.result)).toBe(0);
  expect(approved!.result.stdout).toMatch(/status +completed/);

  // A suspension (the model endpoint refuses): its next step, and the row ls prints for it.
  const suspended = await weftHere(['run', 'travel', 'Take me to Porto on the 3rd', '--model-url', 'http://127.0.0.1:9/v1', '--model', 'x', '--model-attempts', '1', ...where], ENV, cwd);
  expect(suspended.stdout, show(suspended)).toMatch(/status +suspended/);
  expectNamed(hintsIn(suspended.stdout));
  const next = (await walk.follow(suspended, startsWith('weft resume '))).find((f) => f.hint.startsWith('weft resume '));
  expect(next!.result.stdout, show(next!.result)).toMatch(/status +suspended/); // the endpoint is still down: found, and suspended again

  const listed = await weftHere(['ls', ...where], ENV, cwd);
  expect(listed.code, show(listed)).toBe(0);
  const fixes = hintsIn(listed.stdout);
  expect(fixes.length, listed.stdout).toBeGreaterThan(0);
  expectNamed(fixes);
  await walk.follow(listed, () => false);
  const json = JSON.parse((await weft(['ls', '--json', ...where], ENV, cwd)).stdout) as Array<{ fix?: string }>;
  for (const row of json.filter((r) => r.fix !== undefined)) expect(row.fix).toMatch(mode.names);
  await walk.settle();
  return walk;
}

describe('every hint the CLI prints works as printed', () => {
  test('workspace mode (--dir, run from another folder)', async () => {
    await everyHintWorks(fileMode(path.join(root, 'ws')), path.join(root, 'elsewhere'));
  });

  test.skipIf(!available)('Redis mode (--redis URL --redis-prefix P): no folder, no null; the journal line names the export', async () => {
    const cwd = path.join(root, 'redis-cwd');
    await everyHintWorks(redisMode('hints'), cwd);
    const run = await weftHere(['run', 'travel', 'Take me to Faro on the 5th', '--redis', server!.url, '--redis-prefix', 'hints'], ENV, cwd);
    const journalLine = run.stdout.split('\n').find((l) => l.startsWith('journal'))!;
    expect(journalLine).toMatch(/^journal +in redis:\/\/.* \(a file of it: weft export \S+ --redis \S+ --redis-prefix hints > bundle\.json\)$/);
    const [exported] = await new Walk(cwd).follow({ ...run, stdout: journalLine });
    expect(exported!.result.code, show(exported!.result)).toBe(0);
    const bundleVerified = await weft(['verify', 'bundle.json'], ENV, cwd);
    expect(bundleVerified.code, show(bundleVerified)).toBe(0);
  });
});

describe('verify and log take an invocation by id in either store, and log shows a bundle', () => {
  test.skipIf(!available)('log <id> --redis and log <id> --dir show the same records; log bundle.json shows them too', async () => {
    const cwd = path.join(root, 'log');
    mkdirSync(cwd, { recursive: true });
    const dir = path.join(root, 'log-ws');
    const redis = ['--redis', server!.url, '--redis-prefix', 'log'];
    // The runs are fixtures, made in this process: by `weft run travel --dir D --json`'s own code
    // (test/support/runs-here.ts), and by the command's module (test/support/command-in-process.ts).
    const inFile = await runInWorkspace('travel', { dir });
    // The workspace's signing key with Redis too (Redis mode's own default is the user's key): the same seal.
    const key = ['--signing-key', path.join(dir, 'keys', 'weft.key')];
    const ranInRedis = await weftHere(['run', 'travel', ...redis, ...key, '--dir', dir], ENV, cwd);
    expect(ranInRedis.code, show(ranInRedis)).toBe(0);
    const inRedis = { id: /^invocation +(\S+)$/m.exec(ranInRedis.stdout)![1]! };
    expect(inRedis.id).toBe(inFile.id);
    const records = (out: string) => out.split('\n').filter((l) => /^ +\d+ +e\d/.test(l)).map((l) => l.replace(/\s+\[unverified:.*$/, ''));

    // The workspace by the command's module here (the same code), Redis and the bundle by real processes.
    const fromFile = await weftHere(['log', inFile.id, '--dir', dir], ENV, cwd);
    const fromRedis = await weft(['log', inRedis.id, ...redis], ENV, cwd);
    expect(fromFile.code, show(fromFile)).toBe(0);
    expect(fromRedis.code, show(fromRedis)).toBe(0);
    expect(records(fromFile.stdout)).toHaveLength(56); // 47, and 9 step admissions (flag 9)
    expect(records(fromRedis.stdout)).toEqual(records(fromFile.stdout));

    const exported = await weftHere(['export', inRedis.id, ...redis], ENV, cwd);
    expect(exported.code, show(exported)).toBe(0);
    writeFileSync(path.join(cwd, 'bundle.json'), exported.stdout);
    const fromBundle = await weft(['log', 'bundle.json'], ENV, cwd);
    expect(fromBundle.code, show(fromBundle)).toBe(0);
    expect(fromBundle.stdout).not.toContain('✗');
    expect(records(fromBundle.stdout)).toEqual(records(fromFile.stdout));

    const verifiedHere = await weftHere(['verify', inFile.id, '--dir', dir, '--no-signature'], ENV, cwd);
    expect(verifiedHere.code, show(verifiedHere)).toBe(0);
    expect(verifiedHere.stdout).toMatch(new RegExp(`^chain intact: 56 records, invocation ${inFile.id}, sealed by key `, 'm'));
    const verified = await weft(['verify', inFile.id, ...redis, '--no-signature', '--json'], ENV, cwd);
    expect(verified.code, show(verified)).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, records: 56, invocation: inFile.id });
    const missing = await weft(['verify', 'inv-nothing', ...redis, '--json'], ENV, cwd);
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stdout)).toMatchObject({ ok: false, exitCode: 2, refused: 'invocation.not_found' });
    expect(missing.stderr).toContain(`weft ls --redis ${server!.url} --redis-prefix log`);
  });
});
