/**
 * `weft serve` as a real process beside real runtimes on a private Redis: a runtime SIGKILLed
 * mid-run is finished by serve on its own, within the lease time plus a few seconds, to the
 * uninterrupted fingerprint with every effect applied once; a decision left with
 * `weft approve --leave-to-serve` from another process is recorded by serve. (Durable sleep woken
 * by serve: test/sleep.test.ts; serve's rules: test/serve.test.ts.)
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signingKeyFromSecret } from '../journal/seal.js';
import { writeKeyPair } from '../runtime/keys.js';
import { assertBuilt, repoRoot, weft } from './support/cli.js';
import { redisAvailable, startRedis } from './support/redis-server.js';
import { spawnWeft, waitFor, type Spawned } from './support/weft-processes.js';

const available = redisAvailable();
if (!available && process.env.CI !== 'true') console.warn('\n*** redis-server is not installed: the weft serve process tests are SKIPPED ***\n');
const suite = available || process.env.CI === 'true' ? describe : describe.skip;

suite('weft serve (processes)', () => {
  let server: Awaited<ReturnType<typeof startRedis>>;
  const root = mkdtempSync(path.join(tmpdir(), 'weft-serve-'));
  let n = 0;
  // Every workspace holds the one signing key: an invocation pins the key that seals it (flag 3), so
  // serve, in its own folder, finishes a run started elsewhere — and fingerprints compare — only under one key.
  const sharedKeys = path.join(root, 'shared-keys');
  const fresh = () => {
    const folder = mkdtempSync(path.join(root, `d${n++}-`));
    cpSync(sharedKeys, path.join(folder, 'keys'), { recursive: true });
    return folder;
  };
  const running: Spawned[] = [];
  beforeAll(async () => {
    assertBuilt();
    await writeKeyPair(sharedKeys, signingKeyFromSecret(new Uint8Array(32).fill(78)));
    server = await startRedis({ aof: true });
  });
  afterAll(async () => {
    for (const p of running) p.signal('SIGKILL');
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const store = (prefix: string) => ['--redis', server.url, '--redis-prefix', prefix];
  const onRedis = (prefix: string) => [...store(prefix), '--dispatch', 'in-process'];
  const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as { id: string; status: string; fingerprint: string | null };

  /** serve's own line for an invocation it ran to the end: `stopped   <id> <status>`. */
  const stoppedLine = (serve: Spawned, id: string) => new RegExp(`^stopped\\s+${id} (\\w+)`, 'm').exec(serve.stdout())?.[1];
  /** The invocation's row in `weft ls` (one process, once serve has said it is done). */
  async function listed(prefix: string, id: string) {
    const rows = JSON.parse((await weft(['ls', ...store(prefix), '--json'])).stdout) as Array<{ id: string; status: string }>;
    return rows.find((r) => r.id === id);
  }

  test('a runtime SIGKILLed mid-run while serve runs: serve finishes it to the uninterrupted fingerprint, every effect once', async () => {
    const reference = lastJson((await weft(['run', 'travel', '--seed', '11', '--dir', fresh(), '--json'])).stdout);
    const prefix = 'k1';
    const serve = spawnWeft(['serve', '--domain', 'travel', ...onRedis(prefix), '--dir', fresh(), '--poll-ms', '200']);
    running.push(serve);
    const started = Date.now();
    const killed = await weft(['run', 'travel', '--seed', '11', ...onRedis(prefix), '--dir', fresh(), '--json'], { WEFT_CRASH_AFTER: 'step.dispatched:4' });
    expect(killed.signal).toBe('SIGKILL');
    const redis = new Redis(server.url);
    try {
      // Waits on serve's own line, not a poll of `weft ls` (a process each time). The lease lasts 30 s:
      // finishing within 35 s shows serve took over at once (the dead holder's pid is gone).
      const ended = await waitFor('serve finishing the killed run', () => stoppedLine(serve, reference.id), 60_000);
      expect(ended, serve.stdout()).toBe('completed');
      expect(Date.now() - started).toBeLessThan(35_000);
      expect(await listed(prefix, reference.id)).toMatchObject({ status: 'completed' });
      const replay = await weft(['replay', reference.id, ...store(prefix), '--json']);
      expect(JSON.parse(replay.stdout)).toMatchObject({ status: 'completed', fingerprint: reference.fingerprint });
      const world = JSON.parse((await redis.get(`${prefix}:travel:{${reference.id}}:providers`))!) as { ledger: Record<string, { applied: number }> };
      for (const [key, entry] of Object.entries(world.ledger)) expect(entry.applied, key).toBe(1);
      expect(serve.stdout()).toMatch(new RegExp(`resuming  ${reference.id} \\(interrupted`));
    } finally {
      redis.disconnect();
      serve.signal('SIGTERM');
      await serve.done;
    }
  });

  test('a decision written with approve --leave-to-serve from another process is recorded by serve, which goes on', async () => {
    const prefix = 'a1';
    // Travel whose policy needs a person for any spend over 100: the booking epoch awaits approval.
    const strict = path.join(root, 'strict-travel.mjs');
    const dist = (p: string) => JSON.stringify(path.join(repoRoot, 'dist', p));
    writeFileSync(
      strict,
      [
        `import travel from ${dist('examples/travel/index.js')};`,
        `import { defineDomain, spendApprovalPolicy } from ${dist('index.js')};`,
        `export default defineDomain({`,
        `  name: 'strict-travel', libraries: travel.libraries, observe: travel.observe, evaluables: travel.evaluables,`,
        `  actuators: (ctx) => travel.actuators(ctx), model: (ctx) => travel.model(ctx), intent: travel.intent, asOf: travel.asOf,`,
        `  policy: spendApprovalPolicy({ version: 'strict-serve', limit: 100, amountArg: 'amount' }),`,
        `});`,
      ].join('\n'),
    );
    const helpdesk = strict;
    const started = lastJson((await weft(['run', strict, ...onRedis(prefix), '--dir', fresh(), '--json'])).stdout);
    expect(started.status).toBe('awaiting_approval');
    const approve = await weft(['approve', started.id, '--by', 'ana', '--leave-to-serve', '--domain', helpdesk, ...onRedis(prefix), '--dir', fresh(), '--json']);
    expect(lastJson(approve.stdout)).toMatchObject({ id: started.id, status: 'awaiting_approval' });
    const serve = spawnWeft(['serve', '--domain', helpdesk, ...onRedis(prefix), '--dir', fresh(), '--poll-ms', '200']);
    running.push(serve);
    try {
      const ended = await waitFor('serve recording the approval and finishing', () => stoppedLine(serve, started.id), 60_000);
      expect(ended, serve.stdout()).toBe('completed');
      expect(await listed(prefix, started.id)).toMatchObject({ status: 'completed' });
      expect(serve.stdout()).toMatch(new RegExp(`resuming  ${started.id} \\(approval`));
    } finally {
      serve.signal('SIGTERM');
      await serve.done;
    }
  });
});
