/**
 * What `weft run` prints is what the journal holds (issue 30, defect 7). During a Redis outage the
 * CLI used to print records the run had only chained — a model reply, a transient failure — which
 * the store never received, and a resume asked for them again. Now a progress line is printed once
 * its record is durable (cli/follow.ts, the handle's 'durable' event), and a record the run went on
 * from but never wrote is told only after the run stopped, marked `— not yet recorded`.
 *
 * The run: travel with a slow observer (test/support/slow-travel-domain.mjs) on a private Redis,
 * killed while the observation sleeps — after the second model request is durable and its reply
 * only chained. Then, with Redis back and before any resume:
 *
 * - every unmarked progress line the run printed is the line of a record in the journal, in the
 *   journal's order (the same function draws both: cli/progress.ts);
 * - every marked line is of a record the journal does not hold, and there is at least one;
 *
 * and the printed resume completes the run with the fingerprint of an uninterrupted one, every
 * travel effect applied once, the unrecorded reply asked for again (a model.completed past the
 * journal the outage left).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { progressLine } from '../cli/progress.js';
import type { JournalRecord } from '../journal/records.js';
import { effectCounts, parseTravelState } from '../examples/travel/state.js';
import { assertBuilt, repoRoot, weft, type CliResult } from './support/cli.js';
import { NO_REDIS_MESSAGE, requireRedis, startRedis, type RedisServer } from './support/redis-server.js';
import { spawnWeft, waitFor } from './support/weft-processes.js';

const available = requireRedis();
if (!available && process.env.CI === 'true') {
  test('redis-server is installed (required under CI)', () => {
    throw new Error(NO_REDIS_MESSAGE);
  });
}

const SEED = '7';
const SLOW_TRAVEL = path.join(repoRoot, 'test', 'support', 'slow-travel-domain.mjs');
const PREFIX = 'progress';
const MARK = ' — not yet recorded';
const root = mkdtempSync(path.join(tmpdir(), 'weft-progress-durable-'));
let keyFile = '';
let server: RedisServer;
const env = (extra: Record<string, string> = {}) => ({ WEFT_SIGNING_KEY: keyFile, WEFT_REDIS_URL: '', WEFT_DEBUG: '', WEFT_REDIS_GIVE_UP_MS: '1500', ...extra });
const show = (r: CliResult) => `exit ${r.code} signal ${r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
const lastJson = (r: CliResult) => JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, any>;

async function withRedis<T>(fn: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  try {
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}
const journalOf = (id: string) => withRedis(async (r) => (await r.lrange(`${PREFIX}:{${id}}:journal`, 0, -1)).map((l) => JSON.parse(l) as JournalRecord));

beforeAll(async () => {
  if (!available) return;
  assertBuilt();
  const keys = mkdtempSync(path.join(root, 'key-'));
  const keygen = await weft(['keygen', '--out', keys]);
  if (keygen.code !== 0) throw new Error(`weft keygen: ${show(keygen)}`);
  keyFile = path.join(keys, 'weft.key');
  server = await startRedis();
}, 120_000);
afterAll(async () => {
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!available)('printed progress is durable progress', () => {
  test('Redis killed mid-run: every unmarked line is a record in the journal; what was never written is marked, then asked for again by resume', async () => {
    const reference = await weft(['run', 'travel', '--seed', SEED, '--redis', server.url, '--redis-prefix', 'reference', '--dir', mkdtempSync(path.join(root, 'ref-')), '--json'], env());
    expect(reference.code, show(reference)).toBe(0);
    const { id, fingerprint } = lastJson(reference);

    const dir = mkdtempSync(path.join(root, 'run-'));
    const run = spawnWeft(['run', '--domain', SLOW_TRAVEL, '--seed', SEED, '--redis', server.url, '--redis-prefix', PREFIX, '--dir', dir], env({ WEFT_TEST_OBSERVE_DELAY_MS: '3000' }));
    // Five records durable: the pin, the first request, its rejected reply, the second request. Its
    // reply is chained at once (a scripted model), and the slow observation follows.
    await waitFor('the second model request', async () => (await journalOf(id).catch(() => [])).length >= 5 || run.child.exitCode !== null);
    await server.kill();
    const stopped = await run.done;
    expect(stopped.code, show(stopped)).toBe(1);
    expect(stopped.stdout).toMatch(/^status +suspended/m);

    await server.restart();
    const journal = await journalOf(id);
    const expected = journal.map((r) => progressLine(r, false)).filter((l): l is string => l !== undefined);
    // The progress lines: what came before the outcome's blank line.
    const printed = stopped.stdout.slice(0, stopped.stdout.indexOf('\n\n')).split('\n');
    const marked = printed.filter((l) => l.endsWith(MARK)).map((l) => l.slice(0, -MARK.length));
    const unmarked = printed.filter((l) => !l.endsWith(MARK));
    expect(unmarked, show(stopped)).toEqual(expected.slice(0, unmarked.length));
    expect(marked.length, show(stopped)).toBeGreaterThan(0);
    for (const line of marked) expect(expected, `marked "${line}" yet it is in the journal`).not.toContain(line);
    // The reply the run printed marked is the second parse reply, which the journal does not hold.
    expect(marked.some((l) => /^epoch 1 +model +parse reply #2: /.test(l)), show(stopped)).toBe(true);

    const resumed = await weft(['resume', id, '--redis', server.url, '--redis-prefix', PREFIX, '--dir', dir, '--json'], env());
    expect(resumed.code, show(resumed)).toBe(0);
    expect(lastJson(resumed)).toMatchObject({ status: 'completed', fingerprint });
    const whole = await journalOf(id);
    const asked = whole.findIndex((r) => r.kind === 'model.completed' && r.epoch === 1 && (r.body as { attempt: number }).attempt === 2);
    expect(asked).toBeGreaterThanOrEqual(journal.length);
    const counts = effectCounts(parseTravelState((await withRedis((r) => r.get(`${PREFIX}:travel:{${id}}:providers`)))!));
    for (const [key, e] of Object.entries(counts.byKey)) expect(e.applied, `effect ${key} (${e.actuator})`).toBe(1);
  }, 240_000);
});
