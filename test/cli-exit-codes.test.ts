/**
 * One table of exit and refusal codes (cli/exit-codes.ts, docs/cli-exit-codes.md): an error maps
 * to one exit code and one `refused` code whichever command met it; an unknown invocation is
 * answered alike — exit 2, `refused: invocation.not_found` — by every command that takes an id;
 * bad input (a missing replay file, a bad --id, a --status that is no status, a --dir that is not
 * there) exits 2 saying what is wrong, never 0 or a misleading message. The table in the docs is
 * the table in the code.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { UsageError } from '../cli/args.js';
import { DomainLoadError } from '../cli/domain-loader.js';
import { EXIT, exitCodeOf, MissingPathError, refusalCode } from '../cli/exit-codes.js';
import { JournalNotFoundError } from '../cli/journal-source.js';
import { statusFlag } from '../cli/commands/ls.js';
import { InvocationNotFoundError, PinMismatchError, RuntimeUsageError } from '../runtime/errors.js';
import { assertBuilt, pool, repoRoot, weft, type CliResult } from './support/cli.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-exit-codes-'));
const empty = path.join(root, 'empty');
beforeAll(() => assertBuilt());
afterAll(() => rmSync(root, { recursive: true, force: true }));

const ENV = { WEFT_REDIS_URL: '', WEFT_SIGNING_KEY: '', WEFT_DEBUG: '' };
const shown = (r: CliResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
const lastLine = (r: CliResult) => JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;

describe('the table', () => {
  test.each([
    ['a usage error', new UsageError('bad flag'), 'usage', EXIT.usage],
    ['the runtime and the client: unknown invocation', new InvocationNotFoundError('x', 'memory'), 'invocation.not_found', EXIT.usage],
    ['the CLI pin lookup: invocation not found', new DomainLoadError('no invocation x', 'invocation.not_found'), 'invocation.not_found', EXIT.usage],
    ['verify/log: no journal and no invocation', new JournalNotFoundError('no journal file x'), 'invocation.not_found', EXIT.usage],
    ['a missing file the user named', new MissingPathError('no file'), 'file.not_found', EXIT.usage],
    ['a domain that is not there', new DomainLoadError('no domain'), 'domain.not_found', EXIT.usage],
    ['an id that can never be one', new RuntimeUsageError('runtime.bad_invocation_id', 'bad id'), 'runtime.bad_invocation_id', EXIT.usage],
    ['a refusal of the runtime', new PinMismatchError('inv-1', 'resume', [{ field: 'library', pinned: 'a', offered: 'b', fix: 'x' }]), 'pin.mismatch', EXIT.failed],
    ['an error nobody expected', new Error('boom'), 'error', EXIT.failed],
  ])('%s', (_name, err, refused, exit) => {
    expect(refusalCode(err)).toBe(refused);
    expect(exitCodeOf(err)).toBe(exit);
  });

  test('docs/cli-exit-codes.md lists every exit code of the table', () => {
    const doc = readFileSync(path.join(repoRoot, 'docs', 'cli-exit-codes.md'), 'utf8');
    for (const code of Object.values(EXIT)) expect(doc, `exit code ${code}`).toMatch(new RegExp(`^\\| \`${code}\` \\|`, 'm'));
  });

  test('ls --status takes only a status, and the refusal lists them all', () => {
    expect(statusFlag('awaiting_approval')).toBe('awaiting_approval');
    expect(statusFlag(undefined)).toBeUndefined();
    expect(() => statusFlag('bogus')).toThrow(UsageError);
    expect(() => statusFlag('bogus')).toThrow(/use one of pending, running, awaiting_approval, .*completed, failed, .*damaged/);
  });
});

describe('an unknown invocation: one exit code and one refusal code from every command that takes an id', () => {
  const id = 'inv-0000000000000000000000000000dead';
  const commands: Array<[string, string[]]> = [
    ['show', []],
    ['resume', []],
    ['approve', ['--by', 'x']],
    ['cancel', []],
    ['fork', ['--at-epoch', '1']],
    ['replay', []],
    ['export', []],
    ['log', []],
    ['verify', []],
  ];
  test('exit 2, refused invocation.not_found, the message saying how to list them', async () => {
    const results = await pool(2, commands.map(([name, extra]) => () => weft([name, id, ...extra, '--dir', empty, ...(name === 'export' ? [] : ['--json'])], ENV, root)));
    results.forEach((r, i) => {
      const name = commands[i]![0];
      expect(r.code, `${name}: ${shown(r)}`).toBe(EXIT.usage);
      expect(r.stderr, name).toMatch(new RegExp(`no (journal file ${id}, and no )?invocation ${id}`));
      expect(r.stderr, name).toContain(`weft ls --dir ${empty}`);
      if (name !== 'export') expect(lastLine(r), name).toMatchObject({ refused: 'invocation.not_found' });
    });
  });
});

describe('bad input exits 2 and says what is wrong', () => {
  test('replay of a missing file says the file is missing (not "invalid invocation id")', async () => {
    const r = await weft(['replay', './missing.jsonl', '--json'], ENV, root);
    expect(r.code, shown(r)).toBe(EXIT.usage);
    expect(r.stderr).toContain('no journal or bundle file ./missing.jsonl');
    expect(r.stderr).not.toContain('invalid invocation id');
    expect(lastLine(r)).toMatchObject({ refused: 'file.not_found', identical: false });
  });

  test('run --id that can never be an id is a usage error, before anything is written', async () => {
    const dir = path.join(root, 'bad-id');
    const r = await weft(['run', 'travel', '--id', '../escape', '--dir', dir, '--json'], ENV, root);
    expect(r.code, shown(r)).toBe(EXIT.usage);
    expect(lastLine(r)).toMatchObject({ refused: 'usage' });
    expect(r.stderr).toMatch(/--id: invalid invocation id "..\/escape"/);
    expect(r.stderr).toContain('usage: weft run');
  });

  test('ls --status bogus lists the valid statuses', async () => {
    const r = await weft(['ls', '--status', 'bogus', '--dir', empty, '--json'], ENV, root);
    expect(r.code, shown(r)).toBe(EXIT.usage);
    expect(lastLine(r)).toMatchObject({ refused: 'usage' });
    expect(r.stderr).toMatch(/--status "bogus" is not a status: use one of .*awaiting_approval/);
  });

  test('mine --dir <a folder that is not there> names the folder', async () => {
    const missing = path.join(root, 'nonexistent');
    const r = await weft(['mine', '--dir', missing, '--library', 'travel', '--out', path.join(root, 'm.json'), '--json'], ENV, root);
    expect(r.code, shown(r)).toBe(EXIT.usage);
    expect(r.stderr).toContain(`--dir ${missing}: no such folder`);
  });
});
