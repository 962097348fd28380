/**
 * `weft serve` as a real process beside real runtimes on a private Redis: a runtime SIGKILLed
 * mid-run is finished by serve on its own, within the lease time plus a few seconds, to the
 * uninterrupted fingerprint with every effect applied once; a decision left with
 * `weft approve --leave-to-serve` from another process is recorded by serve. (Durable sleep woken
 * by serve: test/sleep.test.ts; serve's rules: test/serve.test.ts.)
 *
 * One private Redis serves the file, each test under its own --redis-prefix; the outage test kills
 * and restarts a server of its own. serve, the workers and the runs whose runtime is killed are
 * processes; the runs that only feed serve (references, a run left awaiting approval, the run after
 * the outage) and the looks at the store (`ls`, `replay`) are made in the test's process as the
 * commands make them (test/support/runs-here.ts). The tests run two at a time: the outage test is the
 * longest, so it goes first and the other three run beside it.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { signingKeyFromSecret } from '../journal/seal.js';
import { writeKeyPair } from '../runtime/keys.js';
import { assertBuilt, repoRoot, weft } from './support/cli.js';
import { fileRedis } from './support/file-redis.js';
import { startRedis } from './support/redis-server.js';
import { listOnRedis, replayById, runInWorkspace, runOnRedis } from './support/runs-here.js';
import { sleep, spawnWeft, waitFor, type Spawned } from './support/weft-processes.js';

const redis = fileRedis();

describe.skipIf(!redis.available).concurrent('weft serve (processes)', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'weft-serve-'));
  let n = 0;
  // Every workspace holds the one signing key: the store records the key an invocation starts with,
  // so serve, in its own folder, finishes a run started elsewhere only with that key.
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
  });
  afterAll(async () => {
    for (const p of running) p.signal('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });

  const store = (prefix: string) => ['--redis', redis.url, '--redis-prefix', prefix];
  const onRedis = (prefix: string) => [...store(prefix), '--dispatch', 'in-process'];
  const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as { id: string; status: string; fingerprint: string | null };

  /** serve's own line for an invocation it ran to the end: `stopped   <id> <status>`. */
  const stoppedLine = (serve: Spawned, id: string) => new RegExp(`^stopped\\s+${id} (\\w+)`, 'm').exec(serve.stdout())?.[1];
  /** The invocation's row as `weft ls --json` lists it (read in this process, once serve has said it is done). */
  async function listed(prefix: string, id: string) {
    return (await listOnRedis({ redis: redis.url, prefix, dir: fresh() })).find((r) => r.id === id);
  }
  /** `weft replay ID --redis … --json`, made in this process. */
  const replayed = (prefix: string, id: string) => replayById(id, { redis: redis.url, prefix, dir: fresh() });
  /** `weft run travel --seed N --dir D --json` (the embedded reference), made in this process. */
  const embedded = (seed: string) => runInWorkspace('travel', { seed, dir: fresh() });

  test('a Redis outage: serve and a worker each log one line when it starts and one when it ends, and carry on', async ({ expect }) => {
    const own = await startRedis({ aof: true });
    const args = ['--redis', own.url, '--redis-prefix', 'out'];
    const serve = spawnWeft(['serve', '--domain', 'travel', ...args, '--dir', fresh(), '--poll-ms', '100']);
    const worker = spawnWeft(['worker', '--domain', 'travel', ...args, '--dir', fresh()]);
    running.push(serve, worker);
    const seen = () => `serve stdout:\n${serve.stdout()}\nserve stderr:\n${serve.stderr()}\nworker stderr:\n${worker.stderr()}`;
    const step = (what: string, check: () => boolean, ms: number) => waitFor(what, check, ms).catch((err: Error) => Promise.reject(new Error(`${err.message}\n${seen()}`)));
    try {
      await step('serve and worker to be ready', () => /— ready/.test(serve.stderr()) && /— ready/.test(worker.stderr()), 30_000);
      await own.kill();
      await step('the worker to log the outage', () => /Redis unreachable since/.test(worker.stderr()), 20_000);
      // serve learns of it when its store's connection closes, not only when a listing gives up.
      await step('serve to log the outage', () => /^outage\s+since/m.test(serve.stdout()), 20_000);
      await sleep(1_500); // several more polls and reconnects fail meanwhile
      await own.restart();
      await step('the worker to log the end of the outage', () => /Redis reachable again/.test(worker.stderr()), 20_000);
      await step('serve to log the end of the outage', () => /^outage\s+ended after \d+ ms/m.test(serve.stdout()), 20_000);
      expect(worker.stderr().match(/Redis unreachable since/g)).toHaveLength(1);
      expect(worker.stderr().match(/Redis reachable again/g)).toHaveLength(1);
      expect(serve.stdout().match(/^outage/gm)).toHaveLength(2);
      expect(serve.stdout()).not.toMatch(/^error/m);
      // Both carry on: a run with --dispatch bullmq completes on the worker.
      const run = runOnRedis('travel', { redis: own.url, prefix: 'out', dispatch: 'bullmq', dir: fresh() });
      run.catch(() => undefined); // a run that does not end in time fails the test below, not the file
      const ended = await Promise.race([run.then((line) => line.status), sleep(60_000).then(() => 'not ended')]);
      expect(ended, `the run after the outage did not end within 60 s\n${seen()}`).toBe('completed');
      expect(worker.stdout()).toMatch(/ attempt 1 ok \d+ ms$/m);
      // And both stop on SIGTERM (BullMQ's own graceful close never ended after a long outage).
      serve.signal('SIGTERM');
      worker.signal('SIGTERM');
      const stopped = await Promise.race([Promise.all([serve.done, worker.done]).then(() => true), sleep(20_000).then(() => false)]);
      expect(stopped, `serve and the worker exit on SIGTERM after an outage\n${seen()}`).toBe(true);
    } finally {
      serve.signal('SIGKILL');
      worker.signal('SIGKILL');
      await Promise.all([serve.done, worker.done]);
      await own.stop();
    }
  });

  test('a runtime SIGKILLed mid-run while serve runs: serve finishes it to the uninterrupted fingerprint, every effect once', async ({ expect }) => {
    const reference = await embedded('11');
    const prefix = 'k1';
    const serve = spawnWeft(['serve', '--domain', 'travel', ...onRedis(prefix), '--dir', fresh(), '--poll-ms', '200']);
    running.push(serve);
    const started = Date.now();
    const killed = await weft(['run', 'travel', '--seed', '11', ...onRedis(prefix), '--dir', fresh(), '--json'], { WEFT_CRASH_AFTER: 'step.dispatched:4' });
    expect(killed.signal).toBe('SIGKILL');
    try {
      // Waits on serve's own line, not a poll of `weft ls` (a process each time). The lease lasts 30 s:
      // finishing within 35 s shows serve took over at once (the dead holder's pid is gone).
      const ended = await waitFor('serve finishing the killed run', () => stoppedLine(serve, reference.id), 60_000);
      expect(ended, serve.stdout()).toBe('completed');
      expect(Date.now() - started).toBeLessThan(35_000);
      expect(await listed(prefix, reference.id)).toMatchObject({ status: 'completed' });
      expect(await replayed(prefix, reference.id)).toMatchObject({ status: 'completed', fingerprint: reference.fingerprint });
      const world = JSON.parse((await redis.admin.get(`${prefix}:travel:{${reference.id}}:providers`))!) as { ledger: Record<string, { applied: number }> };
      for (const [key, entry] of Object.entries(world.ledger)) expect(entry.applied, key).toBe(1);
      expect(serve.stdout()).toMatch(new RegExp(`resuming  ${reference.id} \\(interrupted`));
    } finally {
      serve.signal('SIGTERM');
      await serve.done;
    }
  });

  test('a decision written with approve --leave-to-serve from another process is recorded by serve, which goes on', async ({ expect }) => {
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
    const started = await runOnRedis(strict, { redis: redis.url, prefix, dispatch: 'in-process', dir: fresh() });
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

  test('serve --domain travel --dispatch auto, started before any worker: another domain’s interrupted run is left alone, silently; travel’s runs on the worker that came later', async ({ expect }) => {
    const prefix = 'dom';
    const helpdesk = path.join(repoRoot, 'examples', 'helpdesk', 'helpdesk-domain.js');
    const serve = spawnWeft(['serve', '--domain', 'travel', ...store(prefix), '--dir', fresh(), '--poll-ms', '200']);
    running.push(serve);
    let worker: Spawned | undefined;
    try {
      await waitFor('serve to be ready', () => /— ready/.test(serve.stderr()), 60_000);
      expect(serve.stderr()).toContain('dispatch auto (per invocation, on queue weft-effects-travel)');
      // Another domain's run, killed mid-run on the same Redis: interrupted, and not travel's.
      const theirs = await weft(['run', helpdesk, ...onRedis(prefix), '--dir', fresh(), '--json'], { WEFT_CRASH_AFTER: 'step.dispatched:1' });
      expect(theirs.signal).toBe('SIGKILL');
      const theirId = (await listOnRedis({ redis: redis.url, prefix, dir: fresh() }))[0]!;
      expect(theirId.status).toBe('interrupted');
      // A travel worker starts after serve did.
      worker = spawnWeft(['worker', '--domain', 'travel', ...store(prefix), '--dir', fresh()]);
      running.push(worker);
      await waitFor('the worker to be ready', () => /— ready/.test(worker!.stderr()), 60_000);
      const reference = await embedded('12');
      const killed = await weft(['run', 'travel', '--seed', '12', ...onRedis(prefix), '--dir', fresh(), '--json'], { WEFT_CRASH_AFTER: 'step.dispatched:4' });
      expect(killed.signal).toBe('SIGKILL');
      const ended = await waitFor('serve finishing the killed travel run', () => stoppedLine(serve, reference.id), 60_000);
      expect(ended, serve.stdout()).toBe('completed');
      // Decided when it was taken: a worker consumed travel's queue by then, so its effects ran there.
      expect(serve.stdout()).toMatch(new RegExp(`resuming  ${reference.id} \\(interrupted[^\\n]*— effects on workers`));
      expect(worker.stdout()).toMatch(new RegExp(`^${reference.id}\\.\\S+ attempt 1 ok \\d+ ms$`, 'm'));
      expect(await replayed(prefix, reference.id)).toMatchObject({ status: 'completed', fingerprint: reference.fingerprint });
      // The helpdesk run: not one line of serve's about it, and still where it was.
      expect(serve.stdout()).not.toContain(theirId.id);
      expect(serve.stderr()).not.toContain(theirId.id);
      expect(await listed(prefix, theirId.id)).toMatchObject({ status: 'interrupted' });
    } finally {
      serve.signal('SIGTERM');
      worker?.signal('SIGTERM');
      await Promise.all([serve.done, worker?.done]);
    }
  });

});
