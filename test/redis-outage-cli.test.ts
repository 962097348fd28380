/**
 * A Redis outage through the `weft` command (issue 19, point 1): Redis SIGKILLed mid-run of
 * `weft run … --redis URL` and mid-`weft resume`, and gone before a resume. Each command ends by
 * itself within its give-up budget (WEFT_REDIS_GIVE_UP_MS, small here) and a margin for a loaded
 * machine, leaves no process behind, and says what happened in its own words: Redis at the URL is
 * unreachable, and the command to run once it is back — never ioredis' text ("Connection is
 * closed.", "max retries per request"), never a stack. Once Redis is back, the listing (`weft ls
 * --redis --json` after the cut-off run; the library's listing after the cut-off resume) shows the
 * invocation as interrupted, and a resume goes on from the journal to the fingerprint of an
 * uninterrupted run, every effect applied once.
 *
 * The commands cut off are real processes; what only sets the scene or checks the aftermath — the
 * signing key, the uninterrupted reference run (on the file store: Redis gives the same fingerprint,
 * redis-runtime.test.ts), the hibernation before a resume, the resumes once Redis is back — runs in
 * the test's own process (test/support/runs-here.ts), as the commands make them.
 * Each test that kills a server starts its own; "gone" is a port with nothing listening. Needs
 * `redis-server` on PATH: under CI (CI=true) its absence fails the file; elsewhere the file is skipped
 * with a loud notice.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { effectCounts, parseTravelState } from '../examples/travel/state.js';
import { alive } from './support/children.js';
import { assertBuilt, repoRoot, weft, type CliResult } from './support/cli.js';
import { freePort, NO_REDIS_MESSAGE, requireRedis, startRedis, type RedisServer } from './support/redis-server.js';
import { keyPairIn } from './support/journals-here.js';
import { spawnWeft, waitFor } from './support/weft-processes.js';
import { listOnRedis, resumeOnRedis, runInWorkspace, runOnRedis } from './support/runs-here.js';

const available = requireRedis();
if (!available && process.env.CI === 'true') {
  test('redis-server is installed (required under CI)', () => {
    throw new Error(NO_REDIS_MESSAGE);
  });
}

const SEED = '7';
const SLOW_TRAVEL = path.join(repoRoot, 'test', 'support', 'slow-travel-domain.mjs');
/** The give-up budget of every command here. */
const BUDGET_MS = 1_500;
/** How long past its budget (and the slow observer's delay) a command may take to end: room for a loaded machine. */
const MARGIN_MS = 15_000;
/** The slow observer's delay: the run is in flight, its Redis connections open, when Redis is killed. */
const OBSERVE_DELAY_MS = 1_500;
/** ioredis' own words, which a user must never be left with. */
const IOREDIS_TEXT = /Connection is closed|max retries per request|ECONNREFUSED|\[ioredis\]/i;
const STACK = /^\s+at .+/m;

const root = mkdtempSync(path.join(tmpdir(), 'weft-redis-outage-'));
let folders = 0;
const fresh = (name: string) => mkdtempSync(path.join(root, `${name}-${++folders}-`));
let keyFile = '';
const reference = { id: '', fingerprint: '' };

const env = (extra: Record<string, string> = {}) => ({ WEFT_SIGNING_KEY: keyFile, WEFT_REDIS_URL: '', WEFT_DEBUG: '', WEFT_REDIS_GIVE_UP_MS: String(BUDGET_MS), ...extra });
const onRedis = (s: RedisServer, prefix: string) => ['--redis', s.url, '--redis-prefix', prefix];
const show = (r: CliResult) => `exit ${r.code} signal ${r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
const lastJson = (r: CliResult) => JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '') as { id: string; status: string | null; reason: string | null; fingerprint: string | null; refused?: string };

async function peek<T>(s: RedisServer, fn: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(s.url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  try {
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}
const recordsIn = (s: RedisServer, prefix: string, id: string) => peek(s, (r) => r.llen(`${prefix}:{${id}}:journal`));

/** Every travel effect of the invocation applied exactly once. */
async function expectEffectsOnce(s: RedisServer, prefix: string, id: string) {
  const text = await peek(s, (r) => r.get(`${prefix}:travel:{${id}}:providers`));
  const counts = effectCounts(parseTravelState(text!));
  expect(Object.keys(counts.byKey).length).toBeGreaterThan(0);
  for (const [key, e] of Object.entries(counts.byKey)) expect(e.applied, `effect ${key} (${e.actuator}) applied ${e.applied} times`).toBe(1);
}

/** Whether any process of the group led by `pid` (a spawned command and whatever it started) still runs. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The command started with `args`, Redis killed once `ready()` says the run is in flight; the result and the time from the kill to the exit. */
async function killedUnder(server: RedisServer, args: string[], ready: () => Promise<boolean>) {
  const command = spawnWeft(args, env({ WEFT_TEST_OBSERVE_DELAY_MS: String(OBSERVE_DELAY_MS) }));
  await waitFor('the run to be in flight', async () => (await ready().catch(() => false)) || undefined);
  await server.kill();
  const killedAt = Date.now();
  const deadline = setTimeout(() => command.signal('SIGKILL'), BUDGET_MS + OBSERVE_DELAY_MS + MARGIN_MS);
  const result = await command.done;
  clearTimeout(deadline);
  return { result, afterKillMs: Date.now() - killedAt, pid: command.pid };
}

/**
 * What is said once Redis is back: ls lists the invocation as interrupted; a resume completes it.
 * `rested`: the journal length at which the invocation rested (hibernated) before the command that
 * was cut off woke it — if that command wrote nothing before Redis died, the durable state is still
 * that rest (a wake leaves no record of its own), and ls says `hibernated`, truthfully. `cli`: the
 * listing is `weft ls --redis --json` (else the library's, as the command makes it); the resume runs here.
 */
async function afterRestart(server: RedisServer, prefix: string, id: string, { rested, cli = false }: { rested?: number; cli?: boolean } = {}) {
  await server.restart();
  const at = { redis: server.url, prefix, signingKey: keyFile, giveUpMs: 10_000, dispatch: 'in-process' as const };
  let rows: Array<{ id: string; status: string; reason?: string }>;
  if (cli) {
    const ls = await weft(['ls', ...onRedis(server, prefix), '--dir', fresh('ls'), '--json'], env());
    expect(ls.code, show(ls)).toBe(0);
    rows = JSON.parse(ls.stdout) as typeof rows;
  } else {
    rows = await listOnRedis({ ...at, dir: fresh('ls') });
  }
  const row = rows.find((r) => r.id === id);
  if (rested !== undefined && (await recordsIn(server, prefix, id)) === rested) {
    expect(row).toMatchObject({ id, status: 'hibernated' });
  } else {
    expect(row).toMatchObject({ id, status: 'interrupted' });
    expect(row!.reason).toMatch(/lost its store/);
  }
  const resumed = await resumeOnRedis(id, { ...at, dir: fresh('resume-back') });
  expect(resumed).toMatchObject({ id, status: 'completed', fingerprint: reference.fingerprint });
  await expectEffectsOnce(server, prefix, id);
}

beforeAll(async () => {
  if (!available) return;
  assertBuilt();
  keyFile = await keyPairIn(fresh('key'));
  const out = await runInWorkspace('travel', { dir: fresh('reference'), seed: SEED, signingKey: keyFile });
  if (out.status !== 'completed' || !out.fingerprint) throw new Error(`the reference run: ${JSON.stringify(out)}`);
  Object.assign(reference, { id: out.id, fingerprint: out.fingerprint });
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!available).concurrent('a Redis outage through the weft command', () => {
  test('weft run: Redis SIGKILLed mid-run and left down — within the budget it says Redis at the URL is unreachable and what to run once it is back; ls then lists it interrupted, and resume completes it', async () => {
    const server = await startRedis();
    try {
      const prefix = 'run-gone';
      const dir = fresh('run');
      const { result, afterKillMs, pid } = await killedUnder(server, ['run', '--domain', SLOW_TRAVEL, '--seed', SEED, ...onRedis(server, prefix), '--dir', dir], async () => (await recordsIn(server, prefix, reference.id)) >= 3); // past its first model calls: the slow observation is next
      expect(result.signal, `the command must end by itself; ${show(result)}`).toBeNull();
      expect(afterKillMs, show(result)).toBeLessThan(BUDGET_MS + OBSERVE_DELAY_MS + MARGIN_MS);
      expect(result.code, show(result)).toBe(1);
      expect(groupAlive(pid), 'nothing the command started outlives it').toBe(false);
      const status = /^status\s+(.*)$/m.exec(result.stdout)?.[1] ?? '';
      expect(status, show(result)).toMatch(new RegExp(`^suspended — .*Redis at redis://127\\.0\\.0\\.1:${server.port}/0 (is unreachable|became unreachable with an append .* the last append's outcome is unknown)`));
      // The command names the store it used (cli/hints.ts adds the location to the runtime's fix).
      expect(result.stdout, show(result)).toMatch(new RegExp(`next: weft resume ${reference.id} --redis redis://127\\.0\\.0\\.1:${server.port}/0 .*once the store is reachable again`));
      // Nowhere in what it printed, the progress of the observation its domain's own client lost included.
      expect(result.stdout).not.toMatch(IOREDIS_TEXT);
      expect(result.stderr).not.toMatch(STACK);
      expect(result.stderr).not.toMatch(IOREDIS_TEXT);
      await afterRestart(server, prefix, reference.id, { cli: true });
    } finally {
      await server.stop();
    }
  });

  test('weft resume: Redis SIGKILLed mid-resume and left down — it ends within the budget with a --json line saying so, leaving no process behind; once Redis is back the resume completes', async () => {
    const server = await startRedis();
    try {
      const prefix = 'resume-gone';
      const hibernated = await runOnRedis('travel', { redis: server.url, prefix, giveUpMs: 10_000, dispatch: 'in-process', dir: fresh('hibernate'), signingKey: keyFile, seed: SEED, hibernate: true });
      expect(hibernated).toMatchObject({ id: reference.id, status: 'hibernated' });
      const before = await recordsIn(server, prefix, reference.id);
      const lease = `${prefix}:{${reference.id}}:lease`;
      // In flight: the resume holds the lease again (a token above the hibernating run's).
      const { result, afterKillMs, pid } = await killedUnder(
        server,
        ['resume', reference.id, '--domain', SLOW_TRAVEL, ...onRedis(server, prefix), '--dir', fresh('resume'), '--json'],
        async () => Number(await peek(server, (r) => r.hget(lease, 'token'))) > 1,
      );
      expect(result.signal, `the command must end by itself; ${show(result)}`).toBeNull();
      expect(afterKillMs, show(result)).toBeLessThan(BUDGET_MS + OBSERVE_DELAY_MS + MARGIN_MS);
      expect(alive(pid)).toBe(false);
      expect(groupAlive(pid), 'nothing the command started outlives it').toBe(false);
      expect(result.code, show(result)).toBe(1);
      const out = lastJson(result);
      expect(out).toMatchObject({ id: reference.id, fingerprint: null });
      // The lease is taken before the resume reads what it needs to run (metadata, journal, key):
      // cut off there, it is refused before the run starts, and with the store gone it cannot say
      // the invocation's status (null); cut off later, the run reports itself suspended.
      expect([null, 'suspended'], show(result)).toContain(out.status);
      // Unreachable with nothing in flight, or with an append in flight (its outcome unknown): each says so.
      expect(out.reason).toMatch(new RegExp(`Redis at redis://127\\.0\\.0\\.1:${server.port}/0 (is unreachable|became unreachable with an append .* the last append's outcome is unknown)`));
      expect(out.reason).not.toMatch(IOREDIS_TEXT);
      expect(result.stderr).not.toMatch(STACK);
      expect(await recordsIn(server, prefix, reference.id).catch(() => -1)).toBe(-1); // still down
      await afterRestart(server, prefix, reference.id, { rested: before });
      expect(await recordsIn(server, prefix, reference.id)).toBeGreaterThan(before);
    } finally {
      await server.stop();
    }
  });

  test('weft resume against a Redis that is gone: it says so within the budget, naming the URL and what to do, and leaves no process behind', async () => {
    const url = `redis://127.0.0.1:${await freePort()}/0`;
    const started = Date.now();
    const command = spawnWeft(['resume', reference.id, '--redis', url, '--dir', fresh('resume-none'), '--json'], env());
    const deadline = setTimeout(() => command.signal('SIGKILL'), BUDGET_MS + MARGIN_MS);
    const result = await command.done;
    clearTimeout(deadline);
    expect(result.signal, `the command must end by itself; ${show(result)}`).toBeNull();
    expect(Date.now() - started, show(result)).toBeLessThan(BUDGET_MS + MARGIN_MS);
    expect(groupAlive(command.pid), 'nothing the command started outlives it').toBe(false);
    expect(result.code, show(result)).toBe(1);
    expect(result.stderr, show(result)).toMatch(new RegExp(`^weft resume: Redis at ${url.replace(/[./]/g, '\\$&')} is unreachable \\(.+\\): start it or check the URL, then run the command again$`, 'm'));
    expect(result.stderr).not.toMatch(IOREDIS_TEXT);
    expect(lastJson(result)).toMatchObject({ id: reference.id, status: null, refused: 'store.unreachable' });
  });
});
