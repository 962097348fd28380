/**
 * Connecting to Redis tells the truth (issue 30, defect 5). Each case is the compiled `weft` as
 * separate processes against a private redis-server:
 *
 * - the first PING's clock starts once ioredis is loaded: a run whose ioredis takes 6 s to load
 *   (test/support/slow-ioredis.mjs: what twenty processes starting at once on two cores did to it)
 *   completes — it was refused "no answer to PING within 5000 ms";
 * - twenty `weft run travel --redis URL --json` started at once — ten processes to a core, which is
 *   what starved ioredis's first PING — beside two busy loops at the lowest priority that keep both
 *   cores full whenever the twenty leave a cycle (at nice 19 they take what the suite's other files
 *   leave too, instead of two cores' worth from them for the test's length), all finish with a
 *   fingerprint; each journal is sealed with that fingerprint and each world holds its one charge;
 * - a wrong password, no password, and an ACL user missing a permission Weft needs at connect are
 *   `store.auth_refused`, saying what to fix — never `store.unreachable` — and write nothing; the
 *   `--json` line of `weft ls` and `weft run` carries the code (a wrong password); the other refusals
 *   are the store `weft run` opens, opened in the test's process as the command opens it (the refusal's
 *   code and message are what its --json line and stderr print); a worker refused so exits instead of
 *   waiting for an "outage";
 * - `--redis-give-up-ms` / `WEFT_REDIS_GIVE_UP_MS` bound the first PING: against a port with nothing
 *   listening (`weft ls`), and against a server that accepts and never answers (the store a command
 *   opens, opened in the test's process: the old cap was 5 s whatever the budget).
 *
 * One private redis-server serves the file (a password and two ACL users set on it). The first two
 * blocks run side by side: each mostly waits (a 6 s import, a 6 s budget) and neither writes to the
 * server the refusal tests check is left untouched; the rest run one at a time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { setPriority, tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseTravelState } from '../examples/travel/state.js';
import { fromDist } from './support/dist.js';
import { spawnTracked } from './support/children.js';
import { assertBuilt, repoRoot, runNode, weft, weftBin, type CliResult } from './support/cli.js';
import { freePort, NO_REDIS_MESSAGE, requireRedis, startRedis, type RedisServer } from './support/redis-server.js';

const available = requireRedis();
if (!available && process.env.CI === 'true') {
  test('redis-server is installed (required under CI)', () => {
    throw new Error(NO_REDIS_MESSAGE);
  });
}

const root = mkdtempSync(path.join(tmpdir(), 'weft-redis-connect-'));
let server: RedisServer;
let admin: Redis;
const PASSWORD = 'pw-connect';
const ENV = { WEFT_REDIS_URL: '', WEFT_REDIS_GIVE_UP_MS: '', WEFT_DEBUG: '' };
const show = (r: CliResult) => `exit ${r.code} signal ${r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
const lastLine = (r: CliResult) => JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, any>;
const url = (auth = `:${PASSWORD}@`) => `redis://${auth}127.0.0.1:${server.port}/0`;

beforeAll(async () => {
  assertBuilt();
  if (!available) return;
  server = await startRedis();
  admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
  await admin.config('SET', 'requirepass', PASSWORD);
  // A user with everything but PING, and one with everything but CONFIG (Weft's durability check).
  await admin.call('ACL', 'SETUSER', 'noping', 'on', '>pw-noping', '~*', '&*', '+@all', '-ping');
  await admin.call('ACL', 'SETUSER', 'noconfig', 'on', '>pw-noconfig', '~*', '&*', '+@all', '-config');
}, 120_000);
afterAll(async () => {
  admin?.disconnect();
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** Every key in the server (the refused commands must have written none). */
const allKeys = async () => (await admin.keys('*')).sort();

/**
 * The Redis store `weft run --redis URL --json` opens (cli/store-choice.ts openStore: strict durability,
 * the default budget), opened here; it must be refused: the refusal's code (the --json line's
 * `refused`) and message (its `reason`, and the stderr line), and the warnings it would print.
 */
async function storeRefusal(redisUrl: string): Promise<{ code: string | undefined; message: string; warnings: string[] }> {
  const { RedisStore } = await fromDist<typeof import('../dist/stores/redis.js')>('stores/redis.js');
  const warnings: string[] = [];
  try {
    const store = await RedisStore.open({ redis: redisUrl, prefix: 'weft', durability: 'strict', giveUpAfterMs: 10_000, reachWithinMs: 10_000, warn: (m) => warnings.push(m) });
    await store.close();
  } catch (err) {
    return { code: (err as { code?: string }).code, message: (err as Error).message, warnings };
  }
  throw new Error(`the store at ${redisUrl.replace(/\/\/[^@]*@/, '//…@')} was not refused`);
}

/** The journal lines of `id` in Redis (default prefix), parsed. */
async function journalOf(id: string): Promise<Array<{ seq: number; kind: string; hash: string; body: any }>> {
  return (await admin.lrange(`weft:{${id}}:journal`, 0, -1)).map((line) => JSON.parse(line));
}

describe.skipIf(!available).concurrent('a healthy Redis is reached however long the client library takes to load', () => {
  test('ioredis loading for 6 s: weft run completes, its journal sealed and its world charged once', async ({ expect }) => {
    const cwd = mkdtempSync(path.join(root, 'slow-import-'));
    const run = await runNode('--import', [path.join(repoRoot, 'test', 'support', 'slow-ioredis.mjs'), weftBin, 'run', 'travel', '--redis', url(), '--seed', 'slow', '--json'], { ...ENV, WEFT_TEST_SLOW_IMPORT_MS: '6000' }, cwd);
    expect(run.code, show(run)).toBe(0);
    const line = lastLine(run);
    expect(line).toMatchObject({ status: 'completed' });
    const journal = await journalOf(line.id);
    expect(journal.at(-1)!.body.fingerprint).toBe(line.fingerprint);
    const world = parseTravelState((await admin.get(`weft:travel:{${line.id}}:providers`))!);
    expect(world.charges.map((c) => c.amount)).toEqual([780]);
  }, 120_000);
});

describe.concurrent('the give-up budget bounds the first PING', () => {
  test('a port with nothing listening: store.unreachable within the budget the flag or the variable gives', async ({ expect }) => {
    const port = await freePort();
    const byFlag = await weft(['ls', '--redis', `redis://127.0.0.1:${port}/0`, '--redis-give-up-ms', '300', '--json'], ENV, root);
    expect(byFlag.code, show(byFlag)).toBe(1);
    expect(lastLine(byFlag)).toMatchObject({ refused: 'store.unreachable' });
    expect(lastLine(byFlag).reason).toMatch(/is unreachable \((no connection for|no answer to PING within) 300 ms\)/);
    const byEnv = await weft(['ls', '--redis', `redis://127.0.0.1:${port}/0`, '--json'], { ...ENV, WEFT_REDIS_GIVE_UP_MS: '400' }, root);
    expect(lastLine(byEnv).reason).toMatch(/is unreachable \((no connection for|no answer to PING within) 400 ms\)/);
  });

  test('a server that accepts and never answers is waited for the whole budget, not a fixed 5 s', async ({ expect }) => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      // The store a command opens with a budget of 6 s (the flag's and the variable's way to it: the test above).
      const { openStore, storeChoice } = await fromDist<typeof import('../dist/cli/store-choice.js')>('cli/store-choice.js');
      const refused = await openStore(storeChoice(root, { redis: `redis://127.0.0.1:${port}/0`, 'redis-give-up-ms': '6000' })).then(
        async (store) => (await store.close(), undefined),
        (err: Error & { code?: string }) => err,
      );
      expect(refused?.code, 'the store was refused').toBe('store.unreachable');
      expect(refused?.message).toMatch(/is unreachable \(no answer to PING within 6000 ms\)/);
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  }, 60_000);

  test('a bad value is a usage error naming the flag', async ({ expect }) => {
    const bad = await weft(['ls', '--redis', 'redis://127.0.0.1:1/0', '--redis-give-up-ms', 'soon', '--json'], ENV, root);
    expect(bad.code, show(bad)).toBe(2);
    expect(lastLine(bad).reason).toMatch(/--redis-give-up-ms is a positive whole number of milliseconds, got "soon"/);
  });
});

describe.skipIf(!available)('twenty CLIs at once against one healthy Redis, under load', () => {
  test('all twenty finish with a fingerprint; each journal is sealed with it and each world holds one charge', async () => {
    const cwd = mkdtempSync(path.join(root, 'twenty-'));
    // Two busy loops, both cores full for as long as the CLIs start and run — at nice 19, so they
    // take only the cycles that nothing else (the twenty, the suite's other files) wants.
    const busy = [0, 1].map(() => spawnTracked(process.execPath, ['-e', 'for(;;){}'], { label: 'busy loop' }));
    for (const b of busy) setPriority(b.pid!, 19);
    let results: CliResult[];
    try {
      results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => runNode(weftBin, ['run', 'travel', '--redis', url(), '--seed', `c${i + 1}`, '--json'], ENV, cwd)),
      );
    } finally {
      for (const b of busy) b.kill('SIGKILL');
    }
    const lines = results.map((r) => {
      try {
        return lastLine(r);
      } catch {
        return { refused: 'no JSON line', reason: show(r) };
      }
    });
    const refused = lines.filter((l) => !l.fingerprint).map((l) => `${l.refused}: ${String(l.reason).slice(0, 200)}`);
    expect(refused).toEqual([]);
    for (const line of lines) {
      expect(line.status).toBe('completed');
      const journal = await journalOf(line.id);
      const seal = journal.at(-1)!;
      expect(seal.kind).toBe('invocation.sealed');
      expect(seal.body.fingerprint).toBe(line.fingerprint);
      expect(journal.at(-2)!.hash).toBe(line.fingerprint);
      const world = parseTravelState((await admin.get(`weft:travel:{${line.id}}:providers`))!);
      expect(world.charges.map((c) => c.amount)).toEqual([780]);
    }
    expect(new Set(lines.map((l) => l.id)).size).toBe(20);
  }, 600_000);
});

describe.skipIf(!available)('a server that refuses this client is not an outage', () => {
  test('a wrong password: weft ls --json prints one line refused store.auth_refused, saying to check the password', async () => {
    const ls = await weft(['ls', '--redis', url(':WRONG@'), '--json'], ENV, root);
    expect(ls.code, show(ls)).toBe(1);
    const lines = ls.stdout.trim().split('\n');
    expect(lines, show(ls)).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    expect(line.refused).toBe('store.auth_refused');
    expect(line.reason).toMatch(/refused this client \(WRONGPASS[^)]*\): check the password \(and the user, for an ACL user\) in the URL/);
    expect(ls.stdout + ls.stderr).not.toMatch(/unreachable/);
    expect(ls.stdout + ls.stderr).not.toContain('WRONG@');
  });

  test('a wrong password and no password: weft run refuses store.auth_refused and writes nothing', async () => {
    const before = await allKeys();
    const wrong = await weft(['run', 'travel', '--redis', url(':WRONG@'), '--json'], ENV, mkdtempSync(path.join(root, 'wrong-')));
    expect(wrong.code, show(wrong)).toBe(1);
    expect(lastLine(wrong)).toMatchObject({ refused: 'store.auth_refused', status: null, journal: null, fingerprint: null });
    const none = await storeRefusal(url(''));
    expect(none.code).toBe('store.auth_refused');
    expect(none.message).toMatch(/NOAUTH.*this server requires a password: put it in the URL/);
    expect(wrong.stdout + wrong.stderr + none.message + none.warnings.join('\n')).not.toMatch(/unreachable/);
    expect(await allKeys()).toEqual(before);
  });

  test('an ACL user without PING, or without CONFIG GET: store.auth_refused naming the permission to grant; nothing written', async () => {
    const before = await allKeys();
    const noping = await storeRefusal(url('noping:pw-noping@'));
    expect(noping.code).toBe('store.auth_refused');
    expect(noping.message).toMatch(/NOPERM.*this Redis ACL user may not run PING, which Weft needs at connect: grant it \(ACL SETUSER <user> \+ping/);
    const noconfig = await storeRefusal(url('noconfig:pw-noconfig@'));
    expect(noconfig.code).toBe('store.auth_refused');
    expect(noconfig.message).toMatch(/may not run CONFIG GET, which Weft needs at connect: grant it \(ACL SETUSER <user> \+config\|get.*pass --redis-durability relaxed/);
    expect([noping, noconfig].map((r) => [r.message, ...r.warnings].join('\n')).join('\n')).not.toMatch(/unreachable|may lose acknowledged/);
    expect(await allKeys()).toEqual(before);
  });

  test('a worker given a wrong password exits 1 saying so, instead of waiting for an outage to end', async () => {
    const worker = await weft(['worker', '--domain', 'travel', '--redis', url(':WRONG@'), '--dir', mkdtempSync(path.join(root, 'worker-'))], ENV, root);
    expect(worker.code, show(worker)).toBe(1);
    expect(worker.stderr).toMatch(/^weft worker: Redis at redis:\/\/127\.0\.0\.1:\d+\/0 refused this client \(WRONGPASS/);
    expect(worker.stderr).not.toMatch(/unreachable/);
    expect(worker.stdout + worker.stderr).not.toContain('WRONG@');
  });
});
