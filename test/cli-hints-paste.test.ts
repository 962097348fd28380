/**
 * Every hint pastes and runs as printed (cli/hints.ts): the Redis URL the command was given (the
 * `"$WEFT_REDIS_URL"` variable only when it holds that URL), the `--dispatch` / `--queue` the run
 * used, a real approver name (never `<you>`, which a shell reads as a redirection), and any prose
 * behind a `#` (never parsed as arguments). The approve hint a Redis run prints is run through a
 * shell from another folder, as a user would paste it.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { approverWord, command, locate, locationOf, redisUrlInHints } from '../cli/hints.js';
import { suspensionFix } from '../runtime/handle.js';
import { assertBuilt, repoRoot, weft, weftBin } from './support/cli.js';
import { requireRedis, startRedis, type RedisServer } from './support/redis-server.js';

const redisChoice = (url: string) => ({ dir: path.resolve('.weft'), redis: { url, prefix: 'weft', durability: 'strict' as const } });

describe('the words of a hint', () => {
  test('a Redis URL with a password: the variable only when it holds that URL, else the URL as given, quoted', () => {
    const url = 'redis://:hunter2@h:1/0?x=1&y=2';
    expect(redisUrlInHints(url, undefined)).toBe(`'${url}'`);
    expect(redisUrlInHints(url, 'redis://:other@h:2/0')).toBe(`'${url}'`);
    expect(redisUrlInHints(url, url)).toBe('"$WEFT_REDIS_URL"');
    expect(redisUrlInHints('redis://h:1/0', 'redis://h:1/0')).toBe('redis://h:1/0');
  });

  test('the dispatch and queue the run used go on the commands that dispatch, and only when not the defaults', () => {
    const loc = locationOf(redisChoice('redis://h:1/0'), { queue: 'q2', dispatch: 'bullmq' });
    expect(command('approve', 'inv-1', loc)).toBe('weft approve inv-1 --redis redis://h:1/0 --dispatch bullmq --queue q2');
    expect(command('resume', 'inv-1', loc)).toBe('weft resume inv-1 --redis redis://h:1/0 --dispatch bullmq --queue q2');
    expect(command('replay', 'inv-1', loc)).toBe('weft replay inv-1 --redis redis://h:1/0');
    expect(command('approve', 'inv-1', locationOf(redisChoice('redis://h:1/0'), { dispatch: 'auto' }))).toBe('weft approve inv-1 --redis redis://h:1/0');
  });

  test('the approver is a real name, one shell word', () => {
    expect(approverWord()).not.toMatch(/[<>]/);
    expect(approverWord()).toMatch(/^[A-Za-z0-9_/.:@%+=,-]+$|^'.*'$/);
  });

  test('a suspension fix is a command, then its remark behind a #', () => {
    const loc = locationOf({ dir: '/w/.weft' });
    for (const [cls, code] of [['runtime', 'store.unreachable'], ['runtime', 'other'], ['transient', undefined]] as const) {
      const fix = locate(suspensionFix('inv-1', { class: cls, ...(code ? { code } : {}) }), 'inv-1', loc);
      expect(fix, `${cls} ${code}`).toMatch(/^weft resume inv-1 --dir \/w\/\.weft +# \S/);
    }
  });
});

const available = requireRedis();
describe.runIf(available || process.env.CI === 'true')('the approve hint of a Redis run', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'weft-hints-paste-'));
  let server: RedisServer;
  beforeAll(async () => {
    assertBuilt();
    server = await startRedis();
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test('runs as printed, pasted into a shell in another folder', async () => {
    const env = { WEFT_REDIS_URL: '', WEFT_HOME: path.join(root, 'home'), USER: '' };
    const run = await weft(['run', 'travel', '--redis', server.url, '--redis-prefix', 'paste', '--dispatch', 'in-process', '--policy', 'examples/travel/policy-approval.json', '--seed', 'h1'], env, repoRoot);
    expect(run.code, run.stderr).toBe(0);
    const line = run.stdout.split('\n').find((l) => l.startsWith('approve with: '))!;
    expect(line).not.toMatch(/<you>|\[--reject\]|\$WEFT_REDIS_URL/);
    const hint = line.slice('approve with: '.length).split('#')[0]!.trim();
    expect(hint).toMatch(new RegExp(`^weft approve inv-\\S+ --by \\S+ --redis ${server.url.replace(/[./]/g, '\\$&')} --redis-prefix paste --dispatch in-process$`));
    const bin = path.join(root, 'bin');
    const elsewhere = path.join(root, 'elsewhere');
    mkdirSync(bin, { recursive: true });
    mkdirSync(elsewhere, { recursive: true });
    writeFileSync(path.join(bin, 'weft'), `#!/bin/sh\nexec "${process.execPath}" "${weftBin}" "$@"\n`);
    chmodSync(path.join(bin, 'weft'), 0o755);
    const pasted = await new Promise<{ code: number; out: string }>((resolve) =>
      execFile('sh', ['-c', line.slice('approve with: '.length)], { cwd: elsewhere, env: { ...process.env, ...env, PATH: `${bin}${path.delimiter}${process.env.PATH}` } }, (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
      ),
    );
    expect(pasted.code, pasted.out).toBe(0);
    expect(pasted.out).toMatch(/status +completed/);
  });
});
