/**
 * Interruptions of the `weft` command are not mute. Ctrl-C (SIGINT) or SIGTERM mid-run prints one
 * line on stderr, `interrupted (SIGINT) — resume with: weft resume <id> <location>`, a command that
 * works as printed — in the workspace and with Redis — exits 130 (143 for SIGTERM), and leaves the
 * invocation resumable: `weft ls` lists it as interrupted, and the printed resume finishes it with
 * the fingerprint of an uninterrupted run. With --json the interrupted run still prints its one
 * line. A reader that stops reading (`weft ls | head -1`) ends the command quietly: no EPIPE stack.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signingKeyFromSecret } from '../journal/seal.js';
import { writeKeyPair } from '../runtime/keys.js';
import { spawnTracked } from './support/children.js';
import { assertBuilt, repoRoot, weft, weftBin, type CliResult } from './support/cli.js';
import { NO_REDIS_MESSAGE, requireRedis, startRedis, type RedisServer } from './support/redis-server.js';
import { spawnNode, waitFor } from './support/weft-processes.js';

const available = requireRedis();
if (!available && process.env.CI === 'true') {
  test('redis-server is installed (required under CI)', () => {
    throw new Error(NO_REDIS_MESSAGE);
  });
}

const root = mkdtempSync(path.join(tmpdir(), 'weft-cli-interrupt-'));
let server: RedisServer | undefined;
/** The travel run nobody interrupted: its fingerprint is what every resumed run must reach. */
let uninterrupted = '';
beforeAll(async () => {
  assertBuilt();
  if (available) server = await startRedis();
  const whole = await weft(['run', 'travel', '--dir', path.join(root, 'whole'), '--json'], ENV, root);
  uninterrupted = (JSON.parse(whole.stdout.trim().split('\n').at(-1)!) as { fingerprint: string }).fingerprint;
});
afterAll(async () => {
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

// One signing key for every process and folder: the store records the key an invocation starts
// with, and a resume from another folder must seal with it.
const sharedKeys = path.join(root, 'shared-keys');
await writeKeyPair(sharedKeys, signingKeyFromSecret(new Uint8Array(32).fill(79)));
const ENV = { WEFT_REDIS_URL: '', WEFT_SIGNING_KEY: path.join(sharedKeys, 'weft.key'), WEFT_DEBUG: '' };
/** Travel whose card.charge sleeps before its effect: a run is mid-epoch for as long as the test needs. */
const SLOW = path.join(repoRoot, 'test', 'support', 'slow-effect-travel-domain.mjs');
const SLOW_ENV = { ...ENV, WEFT_TEST_SLOW_ACTUATOR: 'card.charge', WEFT_TEST_SLOW_MS: '120000' };
const show = (r: CliResult) => `exit ${r.code} signal ${r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
/** A stack trace line ("    at f (file:1:2)") anywhere. */
const STACK = /^\s+at .+/m;

/** Run a printed command through a shell, as a user would paste it (`weft` is the built CLI). */
function runPrinted(command: string, cwd: string, env: Record<string, string>): Promise<CliResult> {
  const line = command.replace(/^weft /, `${JSON.stringify(process.execPath)} ${JSON.stringify(weftBin)} `);
  return new Promise((resolve, reject) => {
    const child = spawnTracked('sh', ['-c', line], { cwd, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c) => (stdout += c));
    child.stderr!.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Start `weft run` on the slow domain, signal it once card.charge is in flight, and return what it printed. */
async function interruptRun(where: string[], signal: NodeJS.Signals, cwd: string, json = false): Promise<CliResult> {
  mkdirSync(cwd, { recursive: true });
  const run = spawnNode(weftBin, ['run', SLOW, ...where, ...(json ? ['--json'] : [])], SLOW_ENV, cwd);
  // Two steps of the booking epoch are done; the third (card.charge) sleeps before its effect.
  if (json) await waitFor('the booking epoch', () => run.stdout() === '' && journalHas(where, '"actuator":"card.charge"'));
  else await waitFor('the booking epoch', () => /epoch 2 +step 1 +ok/.test(run.stdout()) || run.child.exitCode !== null);
  run.signal(signal);
  return run.done;
}

function journalHas(where: string[], text: string): boolean {
  const dir = where[where.indexOf('--dir') + 1]!;
  try {
    for (const id of ['inv-13c745bda7ee4b9fc19ae3fbfa414b26']) if (readFileSync(path.join(dir, 'invocations', id, 'journal.jsonl'), 'utf8').includes(text)) return true;
  } catch {
    /* not written yet */
  }
  return false;
}

const RESUME_LINE = /^interrupted \((SIGINT|SIGTERM)\) — resume with: (weft resume \S+ .+)$/m;

describe('an interrupted run says how to resume it, and the printed resume finishes it', () => {
  test('SIGINT in the workspace: one line on stderr, exit 130, listed as interrupted, resumed to the same fingerprint', async () => {
    const dir = path.join(root, 'sigint');
    const cwd = path.join(root, 'sigint-cwd');
    const stopped = await interruptRun(['--dir', dir], 'SIGINT', cwd);
    expect(stopped.code, show(stopped)).toBe(130);
    expect(stopped.stderr.trim().split('\n'), show(stopped)).toHaveLength(1);
    const [, signal, resume] = RESUME_LINE.exec(stopped.stderr)!;
    expect(signal).toBe('SIGINT');
    expect(resume).toBe(`weft resume inv-13c745bda7ee4b9fc19ae3fbfa414b26 --dir ${dir}`);

    const listed = await weft(['ls', '--dir', dir], ENV, cwd);
    expect(listed.stdout, `weft ls exited ${listed.code}: ${listed.stderr}`).toMatch(/inv-13c745bda7ee4b9fc19ae3fbfa414b26 +interrupted/);

    const resumed = await runPrinted(`${resume} --json`, path.join(root), { ...ENV, WEFT_TEST_SLOW_MS: '0' });
    expect(resumed.code, show(resumed)).toBe(0);
    expect(JSON.parse(resumed.stdout.trim().split('\n').at(-1)!)).toMatchObject({ status: 'completed', fingerprint: uninterrupted });
  });

  test('with --json the interrupted run still prints its one line', async () => {
    const dir = path.join(root, 'sigint-json');
    const stopped = await interruptRun(['--dir', dir], 'SIGINT', path.join(root, 'sigint-json-cwd'), true);
    expect(stopped.code, show(stopped)).toBe(130);
    const lines = stopped.stdout.trim().split('\n');
    expect(lines, show(stopped)).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ id: 'inv-13c745bda7ee4b9fc19ae3fbfa414b26', status: 'interrupted', refused: 'interrupted', fingerprint: null });
  });

  test.skipIf(!available)('SIGTERM with Redis: the line names --redis and --redis-prefix, exit 143, and the printed resume finishes it', async () => {
    const where = ['--redis', server!.url, '--redis-prefix', 'interrupt'];
    const cwd = path.join(root, 'sigterm-cwd');
    const stopped = await interruptRun(where, 'SIGTERM', cwd);
    expect(stopped.code, show(stopped)).toBe(143);
    const [, signal, resume] = RESUME_LINE.exec(stopped.stderr)!;
    expect(signal).toBe('SIGTERM');
    expect(resume).toBe(`weft resume inv-13c745bda7ee4b9fc19ae3fbfa414b26 --redis ${server!.url} --redis-prefix interrupt`);
    const resumed = await runPrinted(`${resume} --json`, cwd, { ...ENV, WEFT_TEST_SLOW_MS: '0' });
    expect(resumed.code, show(resumed)).toBe(0);
    expect(JSON.parse(resumed.stdout.trim().split('\n').at(-1)!)).toMatchObject({ status: 'completed', fingerprint: uninterrupted });
  });
});

/** Spawn weft with stdout a pipe this side closes before reading anything (`weft … | true`). */
function withStdoutClosed(args: string[], cwd: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnTracked(process.execPath, [weftBin, ...args], { cwd, env: { ...process.env, ...ENV } });
    child.stdout!.destroy();
    let stderr = '';
    child.stderr!.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout: '', stderr }));
  });
}

describe('a reader that stops reading', () => {
  test.skipIf(!available)('weft ls | head -1 (stdout closed early) exits quietly: no EPIPE, no stack, exit 0', async () => {
    const cwd = path.join(root, 'epipe');
    mkdirSync(cwd, { recursive: true });
    const where = ['--redis', server!.url, '--redis-prefix', 'epipe'];
    for (const intent of ['Take me to Lisbon for the conference on the 12th, under 900 EUR', 'Take me to Porto', 'Take me to Faro']) {
      await weft(['run', 'travel', intent, '--hibernate', ...where], ENV, cwd);
    }
    // Closing the pipe before the command writes makes every write fail: the EPIPE surfaces while it
    // still closes its Redis connection, where Node used to throw it as an unhandled 'error' event.
    for (const args of [['ls', ...where], ['ls', ...where, '--json'], ['log', 'inv-13c745bda7ee4b9fc19ae3fbfa414b26', ...where]]) {
      const r = await withStdoutClosed(args, cwd);
      expect(r.stderr, `${args.join(' ')}\n${show(r)}`).not.toMatch(/EPIPE|Unhandled 'error' event/);
      expect(r.stderr).not.toMatch(STACK);
      expect(r.code, `${args.join(' ')}\n${show(r)}`).toBe(0);
    }
  });
});
