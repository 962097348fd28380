/**
 * The distributed mode (issue 12, "Tests that must exist"): runs that share nothing but Redis —
 * each with its own --dir (a fresh temp folder) and its own store connection — and one signing key
 * (made once, as `weft keygen` makes it), so seals compare across runtimes and processes.
 *
 * 1. The travel example and the README's user domain (examples/helpdesk) on Redis give the
 *    embedded (file store) fingerprint; `weft replay --redis` replays the Redis journal.
 * 2. Hibernated by one runtime, resumed by another (another --dir): the uninterrupted fingerprint;
 *    the listing shows it.
 * 3. A `weft run` SIGKILLed mid-epoch (after its N-th durable append, or inside a world effect) and
 *    resumed at once by another runtime (`weft resume` for one kill point, the others in-process):
 *    the dead holder's lease is taken over (same host), the journal is the uninterrupted one and
 *    every effect is applied once (the ledger in Redis). A holder on another host cannot be seen
 *    dead: its lease is refused until it expires.
 * 4. A `weft resume` of an invocation another runtime is resuming is refused (lease held, no stack
 *    trace, a --json line); the other completes, and the journal exports (`weft export --redis`)
 *    and verifies (`weft verify`'s check of the bundle, in this process).
 * 5. Redis SIGKILLed: mid-`weft run` and restarted (the run goes on), before a `weft resume` and left
 *    down (a clear error), mid-`weft run` and left down (it gives up by itself); then restarted:
 *    nothing acknowledged is lost and the resume completes.
 * 6. A server that may lose acknowledged appends (appendonly no; maxmemory-policy allkeys-lru) is
 *    refused by `weft run`, naming the setting; --redis-durability relaxed runs with one WARNING line.
 *
 * What is the runtime's (the reference run, runs that compare fingerprints, hibernations, resumes,
 * listings, replays) runs in the test's own process (test/support/runs-here.ts: as the commands
 * make them, each call with its own store and runtime); real `weft` processes remain for what is the
 * command's or a crash's: SIGKILLs, printed refusals and exit codes, the outage behaviour, and one
 * end-to-end run of each command used here with --redis (run, resume, replay, export).
 *
 * One private redis-server (AOF, appendfsync always) serves the file, each test under its own
 * --redis-prefix; the tests that kill a server (5) or need a misconfigured one (6) start their own
 * (the two `appendonly no` tests share one, and its refused run), so killing it cannot disturb the
 * tests running alongside. Needs `redis-server` on PATH: under CI (CI=true) its absence fails the
 * file; elsewhere the file is skipped with a loud notice.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { effectCounts, parseTravelState, type TravelState } from '../examples/travel/state.js';
import { assertBuilt, pool, repoRoot, weft, weftBin, type CliResult } from './support/cli.js';
import { fileRedis } from './support/file-redis.js';
import { startRedis, type RedisServer } from './support/redis-server.js';
import { keyPairIn, verifyBundle } from './support/journals-here.js';
import { listOnRedis, replayById, resumeOnRedis, runInWorkspace, runOnRedis, type RedisRunLine } from './support/runs-here.js';
import { runNodeWithin, waitFor } from './support/weft-processes.js';

/** The file's private Redis (AOF, fsync always); the tests that kill or misconfigure one start their own. */
const redis = fileRedis();
const available = redis.available;

const SEED = '7';
const HELPDESK = path.join(repoRoot, 'examples', 'helpdesk', 'helpdesk-domain.js');
const SLOW_TRAVEL = path.join(repoRoot, 'test', 'support', 'slow-travel-domain.mjs');

const root = mkdtempSync(path.join(tmpdir(), 'weft-redis-runtime-'));
let folders = 0;
/** A fresh, empty folder: each CLI process and each in-process runtime gets its own --dir (and cwd where it matters). */
const fresh = (name: string) => mkdtempSync(path.join(root, `${name}-${++folders}-`));

let keyFile = '';
/** The uninterrupted run of travel on Redis (prefix `ref`). */
const ref = { id: '', fingerprint: '', hashes: [] as string[], applied: [] as string[], appends: 0 };

interface RunJson {
  id: string;
  status: string | null;
  reason: string | null;
  journal: string | null;
  fingerprint: string | null;
  publicKey: string | null;
  refused?: string;
}

/** Every process: the shared signing key, and no Redis unless the arguments name one. */
const env = (extra: Record<string, string> = {}) => ({ WEFT_SIGNING_KEY: keyFile, WEFT_REDIS_URL: '', WEFT_DEBUG: '', ...extra });
const onRedis = (s: RedisServer, prefix: string) => ['--redis', s.url, '--redis-prefix', prefix];
/** The same place for an in-process run or resume (test/support/runs-here.ts), in a fresh --dir. */
const here = (s: RedisServer, prefix: string, name: string) => ({ redis: s.url, prefix, dir: fresh(name), signingKey: keyFile, giveUpMs: 10_000, dispatch: 'in-process' as const });
const lastJson = (r: CliResult): RunJson => {
  const line = r.stdout.trim().split('\n').at(-1) ?? '';
  try {
    return JSON.parse(line) as RunJson;
  } catch {
    throw new Error(`no JSON line on stdout (exit ${r.code}, signal ${r.signal}):\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  }
};
const show = (r: CliResult) => `exit ${r.code} signal ${r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
/** A stack trace line ("    at f (file:1:2)") anywhere on stderr. */
const STACK = /^\s+at .+/m;

/** One short-lived client for a look at a server (never left open across a kill). */
async function peek<T>(s: RedisServer, fn: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(s.url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  try {
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}
const journalKey = (prefix: string, id: string) => `${prefix}:{${id}}:journal`;
const hashesIn = (s: RedisServer, prefix: string, id = ref.id) =>
  peek(s, async (r) => (await r.lrange(journalKey(prefix, id), 0, -1)).map((line) => (JSON.parse(line) as { hash: string }).hash));
/** The travel providers' world of one invocation under a prefix (examples/travel/state.ts). */
async function worldIn(s: RedisServer, prefix: string, id = ref.id): Promise<TravelState> {
  const text = await peek(s, (r) => r.get(`${prefix}:travel:{${id}}:providers`));
  if (text === null) throw new Error(`no travel world under ${prefix} for ${id}`);
  return parseTravelState(text);
}
const appliedKeys = (state: TravelState) =>
  Object.entries(effectCounts(state).byKey)
    .filter(([, e]) => e.applied > 0)
    .map(([k]) => k)
    .sort();

/** Every effect of the uninterrupted run applied exactly once, and no other; returns the ledger. */
async function expectEffectsOnce(s: RedisServer, prefix: string, ex: typeof expect) {
  const counts = effectCounts(await worldIn(s, prefix));
  for (const [key, e] of Object.entries(counts.byKey)) ex(e.applied, `effect ${key} (${e.actuator}) applied ${e.applied} times`).toBe(1);
  ex(Object.keys(counts.byKey).sort()).toEqual(ref.applied);
  return counts;
}

/** Like weft(), but SIGKILLs the process after `ms` (timedOut says so): a CLI must not hang a suite. */
const weftWithin = (ms: number, args: string[], extra: Record<string, string>, cwd = repoRoot) => runNodeWithin(ms, weftBin, args, extra, cwd);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A hibernated travel invocation under `prefix` (run here, in its own folder); its id. */
async function hibernated(s: RedisServer, prefix: string): Promise<string> {
  const out = await runOnRedis('travel', { ...here(s, prefix, `hibernate-${prefix}`), seed: SEED, hibernate: true });
  if (out.status !== 'hibernated' || out.id !== ref.id) throw new Error(`hibernating under ${prefix}: ${JSON.stringify(out)}`);
  return out.id;
}

/** A resume here (its own store, runtime and --dir), for the resumes whose subject is the runtime. */
const resumeHere = (s: RedisServer, prefix: string, name: string, id = ref.id): Promise<RedisRunLine> => resumeOnRedis(id, here(s, prefix, name));

/** What a refused in-process resume throws: the code the command's --json line names `refused`, and the message it prints. */
async function refusal(p: Promise<unknown>): Promise<{ code: string | undefined; message: string }> {
  try {
    await p;
  } catch (err) {
    return { code: (err as { code?: string }).code, message: (err as Error).message };
  }
  throw new Error('expected a refusal');
}

/**
 * The `appendonly no` server of 6, and `weft run` refused on it: shared by the two tests that look at
 * that refusal. Both are started in beforeAll, so they belong to the file (a child started in a test is
 * killed when that test ends) and the refused run overlaps the reference run.
 */
let aofOff: RedisServer | undefined;
let refusedOnAofOff: Promise<CliResult> | undefined;

beforeAll(async () => {
  if (!available) return;
  assertBuilt();
  const server = redis.server;
  keyFile = await keyPairIn(fresh('key'));
  aofOff = await startRedis({ aof: false });
  const weakDir = fresh('weak');
  refusedOnAofOff = weft(['run', 'travel', '--seed', SEED, ...onRedis(aofOff, 't6'), '--dir', weakDir, '--json'], env(), weakDir);
  refusedOnAofOff.catch(() => undefined);
  // The reference run, counting its durable appends (what WEFT_COUNT_APPENDS prints): the kill points of 3.
  const out = await runOnRedis('travel', { ...here(server, 'ref', 'reference'), seed: SEED, countAppends: true });
  if (out.status !== 'completed' || !out.fingerprint) throw new Error(`the reference run on Redis: ${JSON.stringify(out)}`);
  ref.id = out.id;
  ref.fingerprint = out.fingerprint;
  ref.hashes = await hashesIn(server, 'ref');
  ref.applied = appliedKeys(await worldIn(server, 'ref'));
  ref.appends = out.appends!;
});

afterAll(async () => {
  await aofOff?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!available).concurrent('weft on Redis', () => {
  test('the reference run: fewer durable appends than records (records that announce no call travel with the next write-ahead record), nine world effects each applied once', ({ expect }) => {
    expect(ref.hashes.length).toBeGreaterThan(20);
    expect(ref.appends).toBeLessThan(ref.hashes.length);
    expect(ref.appends).toBeGreaterThan(ref.applied.length); // a durable write ahead of every world effect
    expect(ref.hashes.at(-1)).not.toBe(ref.fingerprint); // the seal follows the fingerprinted record
    expect(ref.applied.length).toBe(9);
  });

  // ── 1 ─────────────────────────────────────────────────────────────────────────────────────
  test('1. travel on Redis gives the embedded fingerprint and the same record hashes; weft replay --redis replays the Redis journal', async ({ expect }) => {
    const embedded = await runInWorkspace('travel', { dir: fresh('embedded-travel'), seed: SEED, signingKey: keyFile });
    expect(embedded).toMatchObject({ id: ref.id, status: 'completed', fingerprint: ref.fingerprint });
    const fileHashes = readFileSync(embedded.journal, 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { hash: string }).hash);
    expect(fileHashes).toEqual(ref.hashes);
    // And the Redis journal replays (calling nothing) from a process and folder of its own.
    const replay = await weft(['replay', ref.id, ...onRedis(redis.server, 'ref'), '--dir', fresh('replay-ref'), '--json'], env());
    expect(replay.code, show(replay)).toBe(0);
    expect(lastJson(replay)).toMatchObject({ id: ref.id, status: 'completed', fingerprint: ref.fingerprint });
  });

  test('1. the README user domain (examples/helpdesk) on Redis gives the embedded fingerprint', async ({ expect }) => {
    const [r, f] = await Promise.all([
      runOnRedis(HELPDESK, { ...here(redis.server, 't1-helpdesk', 'helpdesk-redis'), seed: SEED }),
      runInWorkspace(HELPDESK, { dir: fresh('helpdesk-file'), seed: SEED, signingKey: keyFile }),
    ]);
    expect(r.status).toBe('completed');
    expect(f.status).toBe('completed');
    expect(r.id).toBe(f.id);
    expect(r.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(r.fingerprint).toBe(f.fingerprint);
  });

  // ── 2 ─────────────────────────────────────────────────────────────────────────────────────
  test('2. hibernated by one runtime, resumed by another (another --dir, another store connection): the uninterrupted fingerprint; the listing shows it completed', async ({ expect }) => {
    const prefix = 't2';
    const id = await hibernated(redis.server, prefix);
    const before = await listOnRedis(here(redis.server, prefix, 'ls'));
    expect(before).toEqual([expect.objectContaining({ id, status: 'hibernated' })]);
    const resumed = await resumeHere(redis.server, prefix, 'resume-b', id);
    expect(resumed).toMatchObject({ id, status: 'completed', fingerprint: ref.fingerprint });
    expect(await hashesIn(redis.server, prefix)).toEqual(ref.hashes);
    const ls = await listOnRedis(here(redis.server, prefix, 'ls'));
    expect(ls).toEqual([expect.objectContaining({ id, status: 'completed', records: ref.hashes.length })]);
    await expectEffectsOnce(redis.server, prefix, expect);
  });

  // ── 3 ─────────────────────────────────────────────────────────────────────────────────────
  /**
   * Kill a `weft run` under `prefix` with `crash` (env), then resume it at once in another folder:
   * with `weft resume` (`cli`: its exit code and stderr are looked at too) or by a runtime here.
   */
  async function killThenResume(prefix: string, crash: Record<string, string>, ex: typeof expect, cli = false) {
    const a = fresh(`crash-${prefix}`);
    const crashed = await weft(['run', 'travel', '--seed', SEED, ...onRedis(redis.server, prefix), '--dir', a, '--json'], env(crash), a);
    ex(crashed.signal, `expected a SIGKILL with ${JSON.stringify(crash)}; ${show(crashed)}`).toBe('SIGKILL');
    const before = await hashesIn(redis.server, prefix);
    ex(before, 'what the killed run acknowledged is the start of the uninterrupted journal').toEqual(ref.hashes.slice(0, before.length));
    // Right after the kill the dead runtime's lease is still live (30 s TTL). Its holder id is
    // <host>:<pid> on this host and that pid is gone, so the store takes the lease over at once.
    if (cli) {
      const b = fresh(`resume-${prefix}`);
      const resumed = await weft(['resume', ref.id, ...onRedis(redis.server, prefix), '--dir', b, '--json'], env(), b);
      ex(resumed.code, `resume right after the kill (${JSON.stringify(crash)}): ${show(resumed)}`).toBe(0);
      ex(resumed.stderr).not.toMatch(STACK);
      ex(lastJson(resumed)).toMatchObject({ id: ref.id, status: 'completed', fingerprint: ref.fingerprint });
    } else {
      ex(await resumeHere(redis.server, prefix, `resume-${prefix}`), `resume right after the kill (${JSON.stringify(crash)})`).toMatchObject({ id: ref.id, status: 'completed', fingerprint: ref.fingerprint });
    }
    ex(await hashesIn(redis.server, prefix)).toEqual(ref.hashes);
    return expectEffectsOnce(redis.server, prefix, ex);
  }

  test('3. SIGKILLed after its N-th durable append (5 points over the run), resumed by another runtime at once (weft resume at the middle point): the uninterrupted journal, every effect once', async ({ expect }) => {
    const n = ref.appends;
    const points = [...new Set([1, Math.round(n / 4), Math.round(n / 2), Math.round((3 * n) / 4), n - 1])];
    expect(points.length).toBe(5);
    await pool(
      2,
      points.map((k, i) => () => killThenResume(`t3-append-${k}`, { WEFT_CRASH_AFTER_APPEND: String(k) }, expect, i === 2)),
    );
  });

  test('3. SIGKILLed inside a world effect (applied, completion not recorded), resumed by another runtime: re-dispatched under its key, applied once', async ({ expect }) => {
    // Effect 3 is airline.hold (epoch 2), effect 5 is card.charge: the money.
    await pool(
      2,
      [3, 5].map((k) => async () => {
        const counts = await killThenResume(`t3-effect-${k}`, { WEFT_CRASH_IN_EFFECT: String(k) }, expect);
        const twice = Object.entries(counts.byKey).filter(([, e]) => e.attempts === 2 && e.applied === 1);
        expect(twice.map(([key]) => key), 'the interrupted effect was dispatched again and deduplicated').toEqual([ref.applied[k - 1]]);
      }),
    );
  });

  test('3. a killed holder on another host cannot be seen dead: resume is refused, naming when the lease expires; after it expires another runtime takes over', async ({ expect }) => {
    const prefix = 't3-foreign';
    const a = fresh('crash-foreign');
    const k = Math.round(ref.appends / 2);
    const crashed = await weft(['run', 'travel', '--seed', SEED, ...onRedis(redis.server, prefix), '--dir', a, '--json'], env({ WEFT_CRASH_AFTER_APPEND: String(k) }), a);
    expect(crashed.signal, show(crashed)).toBe('SIGKILL');
    const acknowledged = await hashesIn(redis.server, prefix);
    expect(acknowledged).toEqual(ref.hashes.slice(0, acknowledged.length));
    // Make the dead holder look like a runtime on another machine (only its host name changes).
    const leaseKey = `${prefix}:{${ref.id}}:lease`;
    await peek(redis.server, (r) => r.hset(leaseKey, 'writer', 'another-host.example:4242'));
    // The refusal the command prints (its message, and its code as the --json line's `refused`; test 4 runs the command).
    const refused = await refusal(resumeHere(redis.server, prefix, 'resume-foreign'));
    expect(refused.message).toMatch(/being written by another-host\.example:4242 \(lease token \d+, expires in \d+(\.\d+)? s\)/);
    expect(refused.code).toBe('journal.lease_held');
    expect(await hashesIn(redis.server, prefix), 'a refused resume writes nothing').toEqual(acknowledged);
    // The TTL elapsing, without waiting 30 s: the lease's expiry moved into the past (the script
    // compares it with the caller's clock, exactly as it would once the time had passed).
    await peek(redis.server, (r) => r.hset(leaseKey, 'expiresAt', String(Date.now() - 1)));
    const resumed = await resumeHere(redis.server, prefix, 'resume-foreign-2');
    expect(resumed).toMatchObject({ id: ref.id, status: 'completed', fingerprint: ref.fingerprint });
    expect(await hashesIn(redis.server, prefix)).toEqual(ref.hashes);
    await expectEffectsOnce(redis.server, prefix, expect);
  });

  // Waiting out the real lease TTL would take 30 s per kill: the runtime acquires with the
  // JournalWriter default ttlMs 30_000 (journal/writer.ts, JournalWriter.create/open), and
  // The lease time is now a setting (createRuntime({ leaseTtlMs }), WEFT_LEASE_TTL_MS for the CLI),
  // renewed every third of it while a run lives; the test above moves a foreign holder's expiry
  // into the past, which is what waiting out that time amounts to.

  // ── 4 ─────────────────────────────────────────────────────────────────────────────────────
  test('4. two runtimes resume one hibernated invocation at once: one completes, weft resume is refused (lease held, no stack trace); the journal exports and verifies', async ({ expect }) => {
    const prefix = 't4';
    const id = await hibernated(redis.server, prefix);
    // One runtime resumes here and is held at its first observation, holding the lease, until the
    // command has been refused: the two resumes overlap whatever the machine's load.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    const winner = resumeOnRedis(id, { ...here(redis.server, prefix, 'race-a'), observeGate: gate, onObserve: holding });
    winner.catch(() => undefined);
    await Promise.race([held, winner]);
    const b = fresh('race-b');
    const loser = await weft(['resume', id, ...onRedis(redis.server, prefix), '--domain', SLOW_TRAVEL, '--dir', b, '--json'], env(), b);
    release();
    expect(await winner).toMatchObject({ id, status: 'completed', fingerprint: ref.fingerprint });
    expect(loser.code, show(loser)).toBe(1);
    expect(loser.signal).toBeNull();
    expect(loser.stderr).not.toMatch(STACK);
    expect(loser.stderr).toMatch(/^weft resume: invocation \S+ is being written by \S+ \(lease token \d+, expires in [\d.]+ s\); only one writer per invocation/m);
    expect(lastJson(loser)).toMatchObject({ id, refused: 'journal.lease_held', fingerprint: null });
    // The journal is intact: the uninterrupted one, exported as a bundle that verifies offline.
    expect(await hashesIn(redis.server, prefix)).toEqual(ref.hashes);
    const out = fresh('export');
    const exported = await weft(['export', id, ...onRedis(redis.server, prefix), '--dir', out], env());
    expect(exported.code, show(exported)).toBe(0);
    const bundle = path.join(out, 'b.json');
    writeFileSync(bundle, exported.stdout);
    // The bundle checked as `weft verify <bundle> --public-key F` checks it, in this process (test/support/journals-here.ts;
    // the command reads bundles end to end in cli-domain, fork and policy-pack-cli): what is tested here is the Redis journal.
    const verify = await verifyBundle(bundle, keyFile.replace(/\.key$/, '.pub'));
    expect(verify.code, JSON.stringify(verify.json)).toBe(0);
    expect(verify.json).toMatchObject({ ok: true, fingerprint: ref.fingerprint, invocation: id, signatureChecked: true });
    const replay = await replayById(id, here(redis.server, prefix, 'replay-race'));
    expect(replay).toMatchObject({ status: 'completed', fingerprint: ref.fingerprint });
    await expectEffectsOnce(redis.server, prefix, expect);
  });

  // ── 5 ─────────────────────────────────────────────────────────────────────────────────────
  test('5. Redis SIGKILLed mid-run and restarted a second later: the run goes on to the uninterrupted fingerprint, nothing acknowledged is lost, every effect once', async ({ expect }) => {
    const own = await startRedis();
    try {
      const prefix = 't5-midrun';
      const dir = fresh('midrun');
      // The slow observer keeps the run in flight (its first observation waits 1.5 s).
      const running = weftWithin(60_000, ['run', '--domain', SLOW_TRAVEL, '--seed', SEED, ...onRedis(own, prefix), '--dir', dir, '--json'], env({ WEFT_TEST_OBSERVE_DELAY_MS: '1500' }), dir);
      let acknowledged: string[] = [];
      const deadline = Date.now() + 20_000;
      while (acknowledged.length === 0 && Date.now() < deadline) {
        acknowledged = await hashesIn(own, prefix).catch(() => []);
        if (acknowledged.length === 0) await sleep(20);
      }
      expect(acknowledged.length, 'the run appended its first records').toBeGreaterThan(0);
      expect(acknowledged.length, 'and is still in flight').toBeLessThan(ref.hashes.length);
      await own.kill();
      await sleep(1000);
      await own.restart();
      const r = await running;
      expect(r.timedOut, show(r)).toBe(false);
      expect(r.code, show(r)).toBe(0);
      expect(r.stderr).not.toMatch(STACK);
      expect(lastJson(r)).toMatchObject({ id: ref.id, status: 'completed', fingerprint: ref.fingerprint });
      const after = await hashesIn(own, prefix);
      expect(after.slice(0, acknowledged.length), 'every record acknowledged before the kill is still there').toEqual(acknowledged);
      expect(after).toEqual(ref.hashes);
      await expectEffectsOnce(own, prefix, expect);
    } finally {
      await own.stop();
    }
  });

  test('5. Redis SIGKILLed before a resume and left down: a clear error (no stack trace), a --json line with the reason; after a restart the resume completes and nothing acknowledged is lost', async ({ expect }) => {
    const own = await startRedis();
    try {
      const prefix = 't5-down';
      const id = await hibernated(own, prefix);
      const acknowledged = await hashesIn(own, prefix);
      expect(acknowledged.length).toBeGreaterThan(0);
      await own.kill();
      // A refused connection is known at once; the command should say so within seconds, not
      // retry for a minute (ioredis' defaults: 20 reconnects per command, backing off to 5 s).
      const down = await weftWithin(20_000, ['resume', id, ...onRedis(own, prefix), '--dir', fresh('resume-down'), '--json'], env());
      expect.soft(down.timedOut, `weft resume against a dead Redis did not finish within 20 s (killed after ${down.elapsedMs} ms); ${show(down)}`).toBe(false);
      if (!down.timedOut) {
        expect.soft(down.code, show(down)).toBe(1);
        expect.soft(down.stderr).not.toMatch(STACK);
        expect.soft(down.stderr, 'the error names the server').toContain(`127.0.0.1:${own.port}`);
        expect.soft(down.stderr, 'the error says the server cannot be reached').toMatch(/unreachable|cannot (reach|connect)|connection refused|ECONNREFUSED|is down|not reachable/i);
        expect.soft(down.stderr, 'an unreachable server is not a durability problem').not.toMatch(/may lose acknowledged|durability: 'relaxed'|--redis-durability relaxed/);
        const out = lastJson(down);
        expect.soft([null, 'suspended', 'hibernated']).toContain(out.status);
        expect.soft(out.reason ?? '').not.toBe('');
        expect.soft(out.refused, 'refused as an unreachable store, not a durability refusal').not.toBe('store.durability');
        expect.soft(out.journal, 'a Redis invocation has no journal file').toBeNull();
      }
      await own.restart();
      expect(await hashesIn(own, prefix), 'every record acknowledged before the kill is still there').toEqual(acknowledged);
      expect(await resumeHere(own, prefix, 'resume-up', id)).toMatchObject({ id, status: 'completed', fingerprint: ref.fingerprint });
      const after = await hashesIn(own, prefix);
      expect(after.slice(0, acknowledged.length)).toEqual(acknowledged);
      expect(after).toEqual(ref.hashes);
      await expectEffectsOnce(own, prefix, expect);
    } finally {
      await own.stop();
    }
  });

  test('5. Redis SIGKILLed mid-run and left down: the command gives up by itself once its budget (WEFT_REDIS_GIVE_UP_MS) has passed, never reconnecting for ever; after a restart the resume completes and nothing acknowledged is lost', async ({ expect }) => {
    const own = await startRedis();
    try {
      const prefix = 't5-gone';
      const dir = fresh('gone');
      // The slow observer keeps the run in flight; a 2 s budget keeps the test short. The deadline is
      // the test's backstop, sized for a loaded machine: the command must end long before it.
      const running = weftWithin(120_000, ['run', '--domain', SLOW_TRAVEL, '--seed', SEED, ...onRedis(own, prefix), '--dir', dir, '--json'], env({ WEFT_TEST_OBSERVE_DELAY_MS: '1500', WEFT_REDIS_GIVE_UP_MS: '2000' }), dir);
      const acknowledged = await waitFor('the run’s first records', async () => {
        const hashes = await hashesIn(own, prefix).catch(() => []);
        return hashes.length > 0 ? hashes : undefined;
      });
      expect(acknowledged.length, 'and is still in flight').toBeLessThan(ref.hashes.length);
      await own.kill();
      const r = await running;
      expect(r.timedOut, `a command whose Redis is gone must end by itself; ${show(r)}`).toBe(false);
      // Budget 2 s, then the outcome is written: seconds, not the minute and more that ioredis'
      // default retries took (the domain's own client too). 45 s leaves room for a loaded machine.
      expect(r.elapsedMs, show(r)).toBeLessThan(45_000);
      expect(r.code, show(r)).toBe(1);
      expect(r.stderr).not.toMatch(STACK);
      await own.restart();
      const kept = await hashesIn(own, prefix);
      expect(kept.slice(0, acknowledged.length), 'every record acknowledged before the kill is still there').toEqual(acknowledged);
      expect(await resumeHere(own, prefix, 'resume-gone')).toMatchObject({ id: ref.id, status: 'completed', fingerprint: ref.fingerprint });
      expect(await hashesIn(own, prefix)).toEqual(ref.hashes);
      await expectEffectsOnce(own, prefix, expect);
    } finally {
      await own.stop();
    }
  });

  // ── 6 ─────────────────────────────────────────────────────────────────────────────────────
  for (const { name, options, setting } of [
    { name: 'appendonly no', options: { aof: false }, setting: /appendonly is no\b.*set appendonly yes/ },
    { name: 'maxmemory-policy allkeys-lru', options: { args: ['--maxmemory-policy', 'allkeys-lru'] }, setting: /maxmemory-policy is allkeys-lru\b.*set maxmemory-policy noeviction/ },
  ]) {
    test(`6. a server with ${name} is refused, naming the setting; --redis-durability relaxed runs with one WARNING line`, async ({ expect }) => {
      // appendonly no: the file's shared server and refused run (beforeAll); the other its own.
      const own = options.aof === false ? undefined : await startRedis(options);
      const weak = own ?? aofOff!;
      try {
        const dir = fresh('weak');
        const strict = own ? await weft(['run', 'travel', '--seed', SEED, ...onRedis(weak, 't6'), '--dir', dir, '--json'], env(), dir) : await refusedOnAofOff!;
        expect(strict.code, show(strict)).not.toBe(0);
        expect(strict.signal).toBeNull();
        expect(strict.stderr).not.toMatch(STACK);
        expect(strict.stderr).toMatch(setting);
        expect(strict.stderr).toContain('--redis-durability relaxed');
        expect(lastJson(strict)).toMatchObject({ status: null, fingerprint: null, refused: 'store.durability' });
        expect(await peek(weak, (r) => r.keys('t6:*')), 'a refused store is written nothing').toEqual([]);
        const relaxed = await weft(['run', 'travel', '--seed', SEED, ...onRedis(weak, 't6'), '--redis-durability', 'relaxed', '--dir', fresh('relaxed'), '--json'], env());
        expect(relaxed.code, show(relaxed)).toBe(0);
        expect(lastJson(relaxed)).toMatchObject({ id: ref.id, status: 'completed', fingerprint: ref.fingerprint });
        const warnings = relaxed.stderr.split('\n').filter((line) => /WARNING/.test(line));
        expect(warnings, relaxed.stderr).toHaveLength(1);
        expect(warnings[0]).toMatch(setting);
      } finally {
        await own?.stop();
      }
    });
  }

  test('6. the --json line of a refused Redis run names the invocation and no journal file (a Redis invocation has none)', async ({ expect }) => {
    const strict = await refusedOnAofOff!;
    expect(strict.code, show(strict)).toBe(1);
    const out = lastJson(strict);
    expect(out.refused).toBe('store.durability');
    expect.soft(out.journal, 'not a file under --dir: the journal would have been in Redis').toBeNull();
    expect.soft(out.id, 'the id the run would have had (derived from intent, tenant, seed, asOf), as a refused resume prints it').toBe(ref.id);
  });
});
