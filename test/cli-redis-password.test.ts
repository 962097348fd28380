/**
 * A Redis URL that holds a password, given in WEFT_REDIS_URL, is never printed (cli/hints.ts): `weft
 * run` against a password-protected Redis names it `--redis "$WEFT_REDIS_URL"` in every command it
 * prints — the start-a-worker notice, audit and replay — says so once on stderr, and the printed
 * replay works as printed where that variable holds the URL. A URL given with --redis while the
 * variable is unset is printed as given (quoted), so the hint still runs as printed. An error names
 * the server without its credentials.
 * Run as separate processes against a private Redis with `requirepass`.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, weft, weftBin } from './support/cli.js';
import { NO_REDIS_MESSAGE, requireRedis, startRedis, type RedisServer } from './support/redis-server.js';

const available = requireRedis();
if (!available && process.env.CI === 'true') {
  test('redis-server is installed (required under CI)', () => {
    throw new Error(NO_REDIS_MESSAGE);
  });
}

const PASSWORD = 'hunter2-secret';
const NOTICE = 'weft: the Redis URL holds a password: the commands printed name it as "$WEFT_REDIS_URL"';
const root = mkdtempSync(path.join(tmpdir(), 'weft-cli-redis-password-'));
let server: RedisServer;
let url = '';
beforeAll(async () => {
  assertBuilt();
  if (!available) return;
  server = await startRedis();
  const admin = new Redis(server.url);
  await admin.config('SET', 'requirepass', PASSWORD);
  admin.disconnect();
  url = server.url.replace('redis://', `redis://:${PASSWORD}@`);
});
afterAll(async () => {
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** Run a printed command through a shell, `weft` being the built CLI. */
function shell(command: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('sh', ['-c', command.replace(/^weft /, `'${process.execPath}' '${weftBin}' `)], { env: { ...process.env, ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe.runIf(available)('a Redis URL with a password', () => {
  test('weft run prints every command with "$WEFT_REDIS_URL", says so once, and the printed replay works as printed', async () => {
    const dir = path.join(root, 'ws');
    const run = await weft(['run', 'travel', '--dir', dir], { WEFT_REDIS_URL: url });
    expect(run.code, run.stderr).toBe(0);
    const output = run.stdout + run.stderr;
    expect(output).not.toContain(PASSWORD);
    expect(run.stderr).toContain('(start `weft worker --domain travel --redis "$WEFT_REDIS_URL"` to run them on workers');
    expect(run.stderr.split('\n').filter((l) => l === NOTICE)).toHaveLength(1);
    const replay = run.stdout.split('\n').find((l) => l.startsWith('replay with: '))!.slice('replay with: '.length);
    expect(replay).toMatch(/^weft replay inv-\S+ --redis "\$WEFT_REDIS_URL" --dir /);
    // The viewer's line names the store the same way (and no durability flag: weft inspect only reads).
    const seeIt = run.stdout.split('\n').find((l) => l.startsWith('see it: '))!;
    expect(seeIt).toMatch(/^see it: +weft inspect --redis "\$WEFT_REDIS_URL" --dir \S+ --public-key \S+/);
    const replayed = await shell(replay, { WEFT_REDIS_URL: url });
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(replayed.stdout + replayed.stderr).not.toContain(PASSWORD);
  });

  test('given with --redis and WEFT_REDIS_URL unset: the hints name the URL as given, and run as printed', async () => {
    const dir = path.join(root, 'ws-flag');
    const run = await weft(['run', 'travel', '--redis', url, '--dir', dir, '--seed', 'flag'], { WEFT_REDIS_URL: '' });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).not.toContain('$WEFT_REDIS_URL');
    const replay = run.stdout.split('\n').find((l) => l.startsWith('replay with: '))!.slice('replay with: '.length);
    expect(replay).toContain(`--redis ${url}`);
    const replayed = await shell(replay, { WEFT_REDIS_URL: '' });
    expect(replayed.code, replayed.stderr).toBe(0);
  });

  test('an unreachable server is named without the password', async () => {
    const ls = await weft(['ls', '--redis', `redis://:${PASSWORD}@127.0.0.1:1/0`], { WEFT_REDIS_GIVE_UP_MS: '300' });
    expect(ls.code).toBe(1);
    expect(ls.stderr).toContain('cannot list redis://127.0.0.1:1/0');
    expect(ls.stdout + ls.stderr).not.toContain(PASSWORD);
  });

  test('a URL that is not a Redis one is refused without printing its password', async () => {
    const ls = await weft(['ls', '--redis', `http://me:${PASSWORD}@127.0.0.1:1/0`]);
    expect(ls.code).toBe(2);
    expect(ls.stderr).toContain('--redis takes a redis:// or rediss:// URL, got another (not shown: it may hold a password)');
    expect(ls.stdout + ls.stderr).not.toContain(PASSWORD);
  });
});
