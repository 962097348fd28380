/**
 * The `--json` contract of the `weft` command: run, resume, approve, replay, verify and ls print
 * exactly one JSON line on stdout whatever the outcome — a usage error (an unknown flag, a bad
 * --as-of), a domain that cannot be found or fails to load, an invocation that is not there —
 * with `status` null (or what the store shows), `reason` the message and `refused` a code. A
 * domain that cannot be found or loaded exits 2 (the command line names something that is not
 * there), and a syntax error in a domain module names the file and the line. Every command under
 * test is a process; the one run a test resumes is a fixture made in this process as `weft run
 * --hibernate --json` makes it (test/support/runs-here.ts).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, weft, type CliResult } from './support/cli.js';
import { runInWorkspace } from './support/runs-here.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-cli-json-'));
const dir = path.join(root, '.weft');
beforeAll(() => assertBuilt());
afterAll(() => rmSync(root, { recursive: true, force: true }));

const ENV = { WEFT_REDIS_URL: '', WEFT_SIGNING_KEY: '', WEFT_DEBUG: '' };
const show = (r: CliResult) => `exit ${r.code} signal ${r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

/** The one JSON line on stdout, or a failure showing what was printed instead. */
function oneLine(r: CliResult): Record<string, unknown> {
  const lines = r.stdout.split('\n').filter((l) => l !== '');
  expect(lines, show(r)).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

describe('--json: one line on stdout whatever the outcome', () => {
  test.each([
    ['run: an unknown flag', ['run', 'travel', '--bogus'], 'usage', /Unknown option '--bogus'/],
    ['run: a bad --as-of', ['run', 'travel', '--as-of', 'yesterday'], 'usage', /--as-of yesterday is not an ISO 8601 time/],
    ['run: a missing domain', ['run'], 'usage', /missing the domain/],
    ['resume: an unknown flag', ['resume', 'inv-x', '--bogus'], 'usage', /Unknown option/],
    ['approve: no --by', ['approve', 'inv-x'], 'usage', /--by NAME is required/],
    ['replay: an unknown flag', ['replay', 'inv-x', '--bogus'], 'usage', /Unknown option/],
    ['verify: an unknown flag', ['verify', 'x.jsonl', '--bogus'], 'usage', /Unknown option/],
    ['ls: an unknown flag', ['ls', '--bogus'], 'usage', /Unknown option/],
    ['ls: a bad --redis', ['ls', '--redis', 'http://x'], 'usage', /redis:\/\/ or rediss:\/\//],
    ['resume: --quarantine-torn with Redis', ['resume', 'inv-x', '--quarantine-torn', '--redis', 'redis://127.0.0.1:1'], 'usage', /--quarantine-torn is for a workspace on disk/],
    ['show: an unknown flag', ['show', 'x', '--bogus'], 'usage', /Unknown option/],
    ['show: no id', ['show'], 'usage', /missing argument/],
  ])('%s: exit 2, refused usage', async (_name, args, refused, reason) => {
    const r = await weft([...args, '--dir', dir, '--json'], ENV, root);
    expect(r.code, show(r)).toBe(2);
    const line = oneLine(r);
    expect(line).toMatchObject({ status: null, refused, fingerprint: null });
    expect(line.reason).toMatch(reason);
    expect(r.stderr).toMatch(reason); // a person still reads it on stderr
  });

  test('verify and replay failure lines keep their own fields (ok/exitCode, identical)', async () => {
    expect(oneLine(await weft(['verify', 'x.jsonl', '--bogus', '--json'], ENV, root))).toMatchObject({ ok: false, exitCode: 2 });
    expect(oneLine(await weft(['replay', 'inv-x', '--bogus', '--json'], ENV, root))).toMatchObject({ identical: false });
  });

  test('an unknown invocation: resume, approve, replay and verify exit 2 with refused invocation.not_found, naming how to list them', async () => {
    for (const args of [['resume', 'inv-nothing'], ['approve', 'inv-nothing', '--by', 'ana'], ['replay', 'inv-nothing'], ['verify', 'inv-nothing']]) {
      const r = await weft([...args, '--dir', dir, '--json'], ENV, root);
      expect(r.code, `${args[0]}: ${show(r)}`).toBe(2);
      expect(oneLine(r), args[0]).toMatchObject({ status: null, refused: 'invocation.not_found' });
      expect(r.stderr, args[0]).toContain(`weft ls --dir ${dir}`);
    }
  });

  test('an unknown command with --json still gets its line', async () => {
    const r = await weft(['bogus', '--json'], ENV, root);
    expect(r.code).toBe(2);
    expect(oneLine(r)).toMatchObject({ refused: 'usage', reason: expect.stringContaining('unknown command "bogus"') });
  });
});

describe('a domain that cannot be found or loaded', () => {
  test('weft run ./no-such-domain.js --json | tail -1 is JSON; exit 2', async () => {
    const r = await weft(['run', './no-such-domain.js', '--dir', dir, '--json'], ENV, root);
    expect(r.code, show(r)).toBe(2);
    const line = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(line).toMatchObject({ id: null, status: null, journal: null, refused: 'domain.not_found' });
    expect(line.reason).toMatch(/domain module \.\/no-such-domain\.js not found/);
  });

  test('a module with a syntax error names the file and the line — its own, or the module it imports; exit 2', async () => {
    const folder = path.join(root, 'broken');
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, 'domain.mjs'), 'export default {\n  name: "broken",\n  libraries: [ ,, oops here\n};\n');
    writeFileSync(path.join(folder, 'outer.mjs'), "import './helper.mjs';\nexport { default } from './domain.mjs';\n");
    writeFileSync(path.join(folder, 'helper.mjs'), 'export const a = 1;\n');
    for (const [module, at] of [['domain.mjs', 'domain.mjs:3'], ['outer.mjs', 'domain.mjs:3']] as const) {
      const r = await weft(['run', path.join(folder, module), '--dir', dir, '--json'], ENV, root);
      expect(r.code, show(r)).toBe(2);
      const line = oneLine(r);
      expect(line).toMatchObject({ status: null, refused: 'domain.load_failed' });
      expect(line.reason).toContain(`a syntax error at ${path.join(folder, at)}`);
      expect(line.reason).toContain("Unexpected identifier 'here'");
    }
  });

  test('a module that is not a domain, and resume with a --domain that is not there: exit 2 with the code', async () => {
    writeFileSync(path.join(root, 'not-a-domain.mjs'), 'export default { hello: 1 };\n');
    const notDomain = await weft(['run', './not-a-domain.mjs', '--dir', dir, '--json'], ENV, root);
    expect(notDomain.code, show(notDomain)).toBe(2);
    expect(oneLine(notDomain)).toMatchObject({ refused: 'domain.not_a_domain' });

    const { id, status } = await runInWorkspace('travel', { dir, hibernate: true });
    expect(status).toBe('hibernated');
    const r = await weft(['resume', id, '--dir', dir, '--domain', './gone.mjs', '--json'], ENV, root);
    expect(r.code, show(r)).toBe(2);
    expect(oneLine(r)).toMatchObject({ id, status: 'hibernated', refused: 'domain.not_found' });
  });
});
