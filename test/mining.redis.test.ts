/**
 * Mining in the distributed mode, with real processes: a private redis-server, a `weft worker` for
 * travel started BEFORE any mined version exists, and `weft run|mine|replay --redis` commands.
 *
 * - Mining the Redis store gives the same library version (digest and report) as mining the same
 *   run in a workspace on disk.
 * - The mined version (filed in Redis by `--apply`) runs on the domain's existing worker — same
 *   process, no restart — with no authoring; the worker ran its taxi booking; the run replays.
 * - A journal edited in Redis (its author reply) is refused by `weft mine --redis`, as `weft verify`
 *   refuses it: nothing mined, written or filed.
 *
 * The commands under test are processes: the Redis run on the worker, `mine --redis` (and `--dir`, to
 * compare), the run on the mined version, replay, verify. The two runs that are only material — the
 * same run in a workspace on disk, and the run whose journal is then edited in Redis — are made in
 * this process as `weft run` makes them (test/support/runs-here.ts).
 *
 * Needs `redis-server` on PATH (under CI=true its absence fails; elsewhere skipped loudly) and the build.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TRAVEL_TRANSFER_INTENTS } from '../examples/travel/transfer-script.js';
import { assertBuilt, weft, type CliResult } from './support/cli.js';
import { fileRedis } from './support/file-redis.js';
import { runInWorkspace, runOnRedis } from './support/runs-here.js';
import { startWeftWorker, type WorkerProcess } from './support/weft-processes.js';

/** The file's private Redis (AOF, fsync always); each scenario under its own --redis-prefix. */
const redis = fileRedis();
const redisOk = redis.available;
const root = mkdtempSync(path.join(tmpdir(), 'weft-mining-redis-'));
const AS_OF = '2026-06-01T09:00:00Z';
const PREFIX = 'mining';
let worker: WorkerProcess | undefined;

interface Rec {
  kind: string;
  epoch: number;
  body: Record<string, unknown>;
}

beforeAll(async () => {
  if (!redisOk) return;
  assertBuilt();
}, 60_000);

afterAll(async () => {
  await worker?.kill();
  rmSync(root, { recursive: true, force: true });
});

const redisArgs = () => ['--redis', redis.url, '--redis-prefix', PREFIX];
const lastJson = (r: CliResult) => {
  expect(r.code, `exit ${r.code}; stderr:\n${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
};
const journalOf = async (id: string) => (await redis.admin.lrange(`${PREFIX}:{${id}}:journal`, 0, -1)).map((l) => JSON.parse(l) as Rec);

describe.skipIf(!redisOk)('mining with Redis and workers', () => {
  test('mining the Redis store gives the file store\'s version; the mined version runs on the existing worker with no authoring', async () => {
    worker = await startWeftWorker(['--domain', 'travel', ...redisArgs(), '--dir', path.join(root, 'worker')]);
    const lisbonArgs = ['run', 'travel', TRAVEL_TRANSFER_INTENTS.lisbon, '--seed', '11', '--as-of', AS_OF, '--json'];
    // The same run in a workspace on disk, the one to compare with: made here as `weft run … --dir ws --json` makes it.
    const [inRedis, onDisk] = await Promise.all([
      weft([...lisbonArgs, ...redisArgs(), '--dispatch', 'bullmq', '--dir', path.join(root, 'runtime')]),
      runInWorkspace('travel', { intent: TRAVEL_TRANSFER_INTENTS.lisbon, seed: '11', asOf: AS_OF, dir: path.join(root, 'ws') }),
    ]);
    expect(lastJson(inRedis)).toMatchObject({ status: 'completed' });
    expect(onDisk).toMatchObject({ status: 'completed', fingerprint: lastJson(inRedis).fingerprint });

    const fromRedis = lastJson(await weft(['mine', ...redisArgs(), '--library', 'travel', '--out', path.join(root, 'redis.json'), '--apply', '--json']));
    const fromFiles = lastJson(await weft(['mine', '--dir', path.join(root, 'ws'), '--library', 'travel', '--out', path.join(root, 'files.json'), '--json']));
    expect(fromRedis).toMatchObject({ accepted: 1, applied: true });
    expect(fromRedis.library).toBe(fromFiles.library);
    expect(fromRedis.candidates).toEqual(fromFiles.candidates);
    const digest = fromRedis.library as string;
    expect(await redis.admin.exists(`${PREFIX}:blob:${digest}`), 'the version is filed in Redis by digest').toBe(1);

    const pid = worker.pid;
    const porto = lastJson(await weft(['run', 'travel', TRAVEL_TRANSFER_INTENTS.porto, '--seed', '12', '--as-of', AS_OF, ...redisArgs(), '--dispatch', 'bullmq', '--dir', path.join(root, 'runtime'), '--library', digest, '--json']));
    expect(porto.status).toBe('completed');
    const records = await journalOf(porto.id as string);
    expect((records[0]!.body.pin as { library: string }).library).toBe(digest);
    expect(records.filter((r) => r.kind === 'model.requested').map((r) => r.body.purpose)).not.toContain('author');
    expect(records.filter((r) => r.kind === 'epoch.derived').map((r) => r.body.source)).toEqual(['htn', 'htn', 'htn']);
    const booking = records.find((r) => r.kind === 'step.dispatched' && r.body.actuator === 'taxi.book')!;
    expect(booking.body.args).toMatchObject({ from: 'porto-airport', to: 'h-infante', day: 20, amount: 28 });
    expect(worker.pid).toBe(pid);
    expect(worker.child.exitCode, 'the worker still runs: it was never restarted').toBeNull();
    expect(worker.stdout(), 'the existing worker ran the mined version\'s taxi booking').toContain(booking.body.key as string);

    const replay = lastJson(await weft(['replay', porto.id as string, ...redisArgs(), '--json']));
    expect(replay).toMatchObject({ identical: true, fingerprint: porto.fingerprint });
  }, 300_000);

  test('a journal edited in Redis is refused: weft verify says the chain is broken and weft mine --redis mines nothing (exit 1, named by id)', async () => {
    const args = ['--redis', redis.url, '--redis-prefix', 'tampered'];
    // The run to tamper with: made here as `weft run … --redis URL --redis-prefix tampered --json` makes it (its runtime in this process).
    const run = await runOnRedis('travel', { intent: TRAVEL_TRANSFER_INTENTS.lisbon, seed: '21', asOf: AS_OF, redis: redis.url, prefix: 'tampered', dir: path.join(root, 'tampered'), dispatch: 'in-process' });
    expect(run.status).toBe('completed');
    const id = run.id as string;
    const before = lastJson(await weft(['mine', ...args, '--library', 'travel', '--out', path.join(root, 't0.json'), '--json']));
    expect(before).toMatchObject({ accepted: 1 });
    // The author reply quotes the taxi and no longer books it; the stored hashes are left as they were.
    const key = `tampered:{${id}}:journal`;
    const lines = await redis.admin.lrange(key, 0, -1);
    const at = lines.findIndex((l) => l.includes('"kind":"model.completed"') && l.includes('"purpose":"author"'));
    const record = JSON.parse(lines[at]!) as { body: { reply: string } };
    record.body.reply = JSON.stringify({ steps: (JSON.parse(record.body.reply) as { steps: unknown[] }).steps.slice(0, 1) });
    await redis.admin.lset(key, at, JSON.stringify(record));
    const verify = await weft(['verify', id, ...args, '--no-signature']);
    expect(verify.code, verify.stdout).toBe(1);
    expect(verify.stdout).toContain(`chain broken at seq ${at}`);
    const out = path.join(root, 't1.json');
    const blobs = (await redis.admin.keys('tampered:blob:*')).sort();
    const mined = await weft(['mine', ...args, '--library', 'travel', '--out', out, '--apply', '--json']);
    expect(mined.code, mined.stderr).toBe(1);
    expect(mined.stderr).toMatch(new RegExp(`journal ${id} in .* does not verify \\(seq ${at}: `));
    expect(JSON.parse(mined.stdout.trim().split('\n').at(-1)!)).toMatchObject({ refused: 'journal.unreadable' });
    expect(existsSync(out)).toBe(false);
    expect((await redis.admin.keys('tampered:blob:*')).sort(), 'nothing filed').toEqual(blobs);
  }, 180_000);
});
