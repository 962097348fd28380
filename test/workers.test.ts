/**
 * The distributed mode with real processes: a private redis-server, `weft worker` processes, and
 * `weft run|resume --redis URL --dispatch bullmq` — every worker a separate process.
 *
 * - One and two workers run travel, and one runs the README's own domain (helpdesk), to the
 *   embedded run's fingerprint — and the jobs really ran on the workers.
 * - A worker SIGKILLed in the middle of a job (after its effect, before its outcome reached BullMQ):
 *   the runtime records `step.failed` worker.stalled (transient), attempt 2 runs on a healthy
 *   worker, the provider applies every effect once.
 * - The runtime SIGKILLed right after `step.dispatched` was durable (job not yet added), and
 *   frozen-then-killed after the worker finished the job but before `step.completed` was appended:
 *   a resume from another process and folder ends with the uninterrupted fingerprint, every effect
 *   applied once — and in the second case the actuator is not run again (the stored outcome is read).
 * - `weft worker`: SIGTERM while idle exits 0 promptly; a missing --domain or --redis, or a job lock
 *   under 500 ms, exits 2 with usage (the first as a process, the other two by the command's module
 *   in this process: one argument check after another on the same path).
 * - Two domains on one Redis: each has its own queue (weft-effects-<domain>), so a helpdesk worker
 *   never sees travel's jobs; a worker logs one line per job (none with --quiet); the notice of a run
 *   without a worker names a worker command that, run as printed, consumes the run's queue.
 *
 * What the processes cost is paid once where it can be: a travel worker and a helpdesk worker,
 * started for the file, are shared by the tests that neither kill nor reconfigure them, under one
 * prefix (SHARED), each test's run with a seed of its own (so its invocation, jobs and world are its
 * own) against the embedded run of that seed, made in this process. The two-worker test adds a
 * second for itself; the tests that kill or configure a worker (the stall, the slowed worker,
 * --quiet, the printed command) start their own under a prefix of their own; the last test stops the
 * shared travel worker with SIGTERM. The runs that only drive the workers are made in
 * this process as the command makes them (test/support/runs-here.ts); the command's own end-to-end
 * runs stay `weft` children: `weft run --redis --dispatch bullmq --json` (one worker), the runs whose
 * runtime is killed or frozen, `weft resume --redis --dispatch bullmq` after the kill, and the runs
 * whose printed notice is the subject.
 *
 * Needs `redis-server` on PATH (under CI=true its absence fails; elsewhere skipped loudly) and the
 * build (`npm run build`).
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signingKeyFromSecret } from '../journal/seal.js';
import { writeKeyPair } from '../runtime/keys.js';
import { assertBuilt, repoRoot, weft, weftBin, type CliResult } from './support/cli.js';
import { weftHere } from './support/command-in-process.js';
import { fileRedis } from './support/file-redis.js';
import { resumeOnRedis, runInWorkspace, runOnRedis } from './support/runs-here.js';
import { spawnNode, spawnWeft, startWeftWorker, waitFor, type WorkerProcess } from './support/weft-processes.js';

const HELPDESK = path.join(repoRoot, 'examples', 'helpdesk', 'helpdesk-domain.js');
const SLOW_EFFECT_TRAVEL = path.join(repoRoot, 'test', 'support', 'slow-effect-travel-domain.mjs');
/** Each domain's jobs go on its own queue (queueForDomain): travel's, unless a test says otherwise. */
const QUEUE = 'weft-effects-travel';

interface RunJson {
  id: string;
  status: string;
  fingerprint: string | null;
  journal: string | null;
}
interface Rec {
  seq: number;
  kind: string;
  epoch?: number;
  hash: string;
  body: Record<string, unknown> & { key?: string; attempt?: number; code?: string; class?: string; actuator?: string };
}
interface Ledger {
  [key: string]: { actuator: string; attempts: number; applied: number; result?: unknown };
}
interface Reference {
  id: string;
  fingerprint: string;
  records: Rec[];
  appends: number;
  /** The embedded run's workspace (its world: state/<domain>/…). */
  dir: string;
}

/** The file's private Redis; the shared workers under SHARED, the others each under a prefix of their own. */
const redis = fileRedis();
const redisOk = redis.available;
const root = mkdtempSync(path.join(tmpdir(), 'weft-workers-'));
/** The prefix of the shared workers (travel's and helpdesk's): each test there runs its own seed. */
const SHARED = 'shared';
const workers: WorkerProcess[] = [];

/**
 * A workspace folder with the one signing key the distributed runs share: the store records the key
 * an invocation starts with, and a resume elsewhere must seal with it. The embedded references are
 * made in folders of their own, each with its own generated key: a fingerprint does not depend on
 * the key, so the runs on workers still reach it.
 */
const sharedKeys = path.join(root, 'shared-keys');
await writeKeyPair(sharedKeys, signingKeyFromSecret(new Uint8Array(32).fill(77)));
function dir(name: string): string {
  const folder = path.join(root, name);
  if (!existsSync(path.join(folder, 'keys'))) cpSync(sharedKeys, path.join(folder, 'keys'), { recursive: true });
  return folder;
}
const readJsonl = (file: string) => readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Rec);

/** The embedded run of `domain` with `seed` (`weft run <domain> --seed N --dir D --json`, made in this process; once per file). */
const references = new Map<string, Promise<Reference>>();
function reference(domain: string, seed = '1'): Promise<Reference> {
  const name = `ref-${path.basename(domain, '.js')}-${seed}`;
  let made = references.get(name);
  if (!made) {
    made = (async () => {
      const out = await runInWorkspace(domain, { dir: path.join(root, name), seed, countAppends: true });
      expect(out.status).toBe('completed');
      return { id: out.id, fingerprint: out.fingerprint!, records: readJsonl(out.journal!), appends: out.appends!, dir: path.join(root, name) };
    })();
    references.set(name, made);
  }
  return made;
}
beforeAll(async () => {
  if (!redisOk) return;
  assertBuilt();
  [travelWorker, helpdeskWorker] = await Promise.all([worker(SHARED, 'shared-travel'), worker(SHARED, 'shared-helpdesk', { domain: HELPDESK })]);
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  rmSync(root, { recursive: true, force: true });
});

// ── helpers ─────────────────────────────────────────────────────────────────────────────────

async function worker(prefix: string, name: string, options: { domain?: string; env?: Record<string, string>; args?: string[] } = {}): Promise<WorkerProcess> {
  const w = await startWeftWorker(['--domain', options.domain ?? 'travel', '--redis', redis.url, '--redis-prefix', prefix, '--dir', dir(name), ...(options.args ?? [])], options.env ?? {});
  workers.push(w);
  return w;
}

/** The file's shared workers under SHARED (started in beforeAll): travel's and helpdesk's (its queue is helpdesk's own). */
let travelWorker: WorkerProcess;
let helpdeskWorker: WorkerProcess;

const runArgs = (prefix: string, name: string, domain = 'travel') => ['run', domain, '--redis', redis.url, '--redis-prefix', prefix, '--dispatch', 'bullmq', '--dir', dir(name), '--json'];
/** `weft run <domain> --seed N --redis URL --redis-prefix P --dispatch bullmq --dir D --json`, made in this process. */
const runOnWorkers = (prefix: string, name: string, seed: string, domain = 'travel') => runOnRedis(domain, { seed, redis: redis.url, prefix, dispatch: 'bullmq', dir: dir(name) });

function parsed(r: CliResult): RunJson {
  expect(r.code, `exit ${r.code} / ${r.signal}; stderr:\n${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout) as RunJson;
}

const journalOf = async (prefix: string, id: string) => (await redis.admin.lrange(`${prefix}:{${id}}:journal`, 0, -1)).map((l) => JSON.parse(l) as Rec);
const ledgerOf = async (prefix: string, id: string): Promise<Ledger> => {
  const text = await redis.admin.get(`${prefix}:travel:{${id}}:providers`);
  expect(text, `the providers' world at ${prefix}:travel:{${id}}:providers`).not.toBeNull();
  return (JSON.parse(text!) as { ledger: Ledger }).ledger;
};
/**
 * The completed jobs' ids of invocation `id` (every job of a run is named after it: `<id>.<epoch>.<step>…`),
 * an observation's per-dispatch suffix (`.r<dispatcher>-<n>`) cut off: one per recorded attempt.
 */
const completedJobs = async (prefix: string, id: string, queue = QUEUE) =>
  new Set((await redis.admin.zrange(`${prefix}:bull:${queue}:completed`, '0', '-1')).filter((job) => job.startsWith(`${id}.`)).map((job) => job.replace(/\.r[0-9a-f]+-\d+$/, '')));
const failedJobs = async (prefix: string) => new Set(await redis.admin.zrange(`${prefix}:bull:${QUEUE}:failed`, '0', '-1'));

/** The job ids a journal's dispatches and observations imply: `<key>.a<attempt>`. */
function jobIdsOf(records: Rec[]): string[] {
  return records
    .filter((r) => r.kind === 'step.dispatched' || r.kind === 'compensation.dispatched' || r.kind === 'state.observed')
    .map((r) => `${r.body.key}.a${r.body.attempt ?? 1}`);
}

/** Every effect of the travel run applied exactly once, and the same effects as the embedded run `ref` (keyed by its invocation, as this run's). */
function expectAppliedOnce(ledger: Ledger, ref: Reference): void {
  for (const [key, e] of Object.entries(ledger)) expect(e.applied, `effect ${key} (${e.actuator}) applied ${e.applied} times`).toBe(1);
  const embedded = JSON.parse(readFileSync(path.join(ref.dir, 'state', 'travel', ref.id, 'providers.json'), 'utf8')) as { ledger: Ledger };
  expect(Object.keys(ledger).sort()).toEqual(Object.keys(embedded.ledger).sort());
}

/** The hashes of every record but the seal (signed with each workspace's own key; the fingerprint it signs is the hash before it). */
const hashed = (records: Rec[]) => records.filter((r) => r.kind !== 'invocation.sealed').map((r) => r.hash);

/** Whether the job for `id` is in `state` (via BullMQ itself). */
async function jobState(prefix: string, id: string): Promise<string> {
  const queue = new Queue(QUEUE, { connection: { url: redis.url }, prefix: `${prefix}:bull` });
  try {
    return await queue.getJobState(id);
  } finally {
    await queue.close();
  }
}

/** How many workers consume `queue` under `prefix` (via BullMQ itself). */
async function workersOn(prefix: string, queue = QUEUE): Promise<number> {
  const probe = new Queue(queue, { connection: { url: redis.url }, prefix: `${prefix}:bull` });
  try {
    return await probe.getWorkersCount();
  } finally {
    await probe.close();
  }
}

/** A worker's job line: key, attempt, outcome, duration. */
const JOB_LINE = /^\S+ attempt \d+ (ok|(transient|permanent|policy) \([a-z_.]+\)) \d+ ms$/;
const linesOf = (w: WorkerProcess) => w.stdout().split('\n').filter((l) => l !== '');

// ── the tests ───────────────────────────────────────────────────────────────────────────────

describe.skipIf(!redisOk)('weft worker processes', () => {
  test('travel on ONE worker: the embedded fingerprint, every job completed on the worker, effects applied once in Redis', async () => {
    const travel = await reference('travel');
    expect(await workersOn(SHARED), 'one worker consumes travel’s queue').toBe(1);
    // The command end to end: `weft run travel --redis … --dispatch bullmq --json`.
    const r = await weft(runArgs(SHARED, 'one-runtime'), { WEFT_COUNT_APPENDS: '1' });
    const out = parsed(r);
    // The journal as `weft verify` and `weft log` read it in the Redis mode: redis://HOST:PORT/DB?prefix=P#<id>.
    expect(out).toMatchObject({ id: travel.id, status: 'completed', fingerprint: travel.fingerprint, journal: expect.stringMatching(new RegExp(`^redis://.*#${travel.id}$`)) });
    expect(r.stderr, 'as many durable appends in the Redis store as in the embedded one: the kill points the crash tests use').toContain(`appends: ${travel.appends}`);
    const records = await journalOf(SHARED, travel.id);
    expect(hashed(records)).toEqual(hashed(travel.records));
    const completed = await completedJobs(SHARED, travel.id);
    const expected = jobIdsOf(records);
    expect(expected.length).toBeGreaterThan(5);
    for (const id of expected) expect(completed.has(id), `job ${id} completed on a worker`).toBe(true);
    expect(completed.size).toBe(expected.length);
    expectAppliedOnce(await ledgerOf(SHARED, travel.id), travel);
    expect(existsSync(path.join(dir('one-runtime'), 'state')), 'the runtime kept no world of its own').toBe(false);
  });

  test('travel on TWO workers: the embedded fingerprint, every job completed, effects applied once', async () => {
    const travel = await reference('travel', '2');
    // A second worker beside the shared one, for this test (it ends with it).
    await worker(SHARED, 'two-worker-b');
    expect(await workersOn(SHARED)).toBe(2);
    const out = await runOnWorkers(SHARED, 'two-runtime', '2');
    expect(out).toMatchObject({ id: travel.id, status: 'completed', fingerprint: travel.fingerprint });
    const records = await journalOf(SHARED, travel.id);
    expect(hashed(records)).toEqual(hashed(travel.records));
    const completed = await completedJobs(SHARED, travel.id);
    for (const id of jobIdsOf(records)) expect(completed.has(id), `job ${id} completed on a worker`).toBe(true);
    expectAppliedOnce(await ledgerOf(SHARED, travel.id), travel);
  });

  test('the README’s own domain (helpdesk) on one worker: the embedded fingerprint; its desk is written by the worker only', async () => {
    const helpdesk = await reference(HELPDESK);
    const hd = helpdeskWorker;
    const out = await runOnWorkers(SHARED, 'hd-runtime', '1', HELPDESK);
    expect(out).toMatchObject({ id: helpdesk.id, status: 'completed', fingerprint: helpdesk.fingerprint });
    const records = await journalOf(SHARED, helpdesk.id);
    const completed = await completedJobs(SHARED, helpdesk.id, 'weft-effects-helpdesk');
    const expected = jobIdsOf(records);
    expect(expected.length).toBeGreaterThanOrEqual(3);
    for (const id of expected) expect(completed.has(id), `job ${id} completed on the worker`).toBe(true);
    expect(linesOf(hd).filter((l) => l.startsWith(`${helpdesk.id}.`)), 'every job ran on the one helpdesk worker').toHaveLength(expected.length);
    const deskFile = path.join(dir('shared-helpdesk'), 'state', 'helpdesk', 'desk.json');
    const desk = JSON.parse(readFileSync(deskFile, 'utf8')) as { effects: Record<string, { ticket?: string; message?: string }> };
    const embeddedDesk = JSON.parse(readFileSync(path.join(helpdesk.dir, 'state', 'helpdesk', 'desk.json'), 'utf8')) as unknown;
    expect(desk).toEqual(embeddedDesk);
    expect(Object.keys(desk.effects)).toHaveLength(2);
    expect(existsSync(path.join(dir('hd-runtime'), 'state', 'helpdesk', 'desk.json')), 'the runtime ran no actuator itself').toBe(false);
  });

  test('a worker SIGKILLed mid-job: step.failed worker.stalled (transient), attempt 2 on a healthy worker, every effect applied once', async () => {
    const travel = await reference('travel');
    // A 1 s job lock (--lock-ms): the dead worker's job is found stalled within 1.5 s of its death.
    const lock = ['--lock-ms', '1000'];
    // The 3rd effect this worker runs is airline.hold (epoch 2, step 0): it is applied, then the
    // worker dies before the outcome reaches BullMQ — mid-job, from BullMQ's point of view.
    const doomed = await worker('stall', 'stall-worker-a', { args: lock, env: { WEFT_CRASH_IN_EFFECT: '3' } });
    const run = runOnWorkers('stall', 'stall-runtime', '1');
    const died = await doomed.done;
    expect(died.signal, `the first worker should die by SIGKILL; stderr:\n${died.stderr}`).toBe('SIGKILL');
    await worker('stall', 'stall-worker-b', { args: lock });
    const out = await run;
    expect(out).toMatchObject({ id: travel.id, status: 'completed' });

    const records = await journalOf('stall', travel.id);
    const stalled = records.findIndex((r) => r.kind === 'step.failed' && r.body.code === 'worker.stalled');
    expect(stalled, 'a step.failed worker.stalled record').toBeGreaterThan(0);
    const failed = records[stalled]!;
    const key = failed.body.key!;
    expect(failed.body).toMatchObject({ class: 'transient', attempt: 1, key: `${travel.id}.2.0` });
    expect(records[stalled - 1]).toMatchObject({ kind: 'step.dispatched', body: { key, attempt: 1, actuator: 'airline.hold' } });
    expect(records[stalled + 1]).toMatchObject({ kind: 'step.dispatched', body: { key, attempt: 2, actuator: 'airline.hold' } });
    expect(records[stalled + 2]).toMatchObject({ kind: 'step.completed', body: { key, attempt: 2 } });
    expect(records.filter((r) => r.kind === 'step.failed')).toHaveLength(1);
    expect(await failedJobs('stall')).toEqual(new Set([`${key}.a1`]));
    expect((await completedJobs('stall', travel.id)).has(`${key}.a2`)).toBe(true);

    const ledger = await ledgerOf('stall', travel.id);
    expectAppliedOnce(ledger, travel);
    expect(ledger[key], 'dispatched twice, applied once').toMatchObject({ attempts: 2, applied: 1 });

    // The journal is the embedded run's plus the recorded stall: drop the stalled attempt, renumber
    // attempt 2 as 1, and every record's kind, epoch and body match (the seal aside).
    const normalized = records
      .filter((_, i) => i !== stalled && i !== stalled - 1)
      .map((r) => (r.body.key === key && r.body.attempt === 2 ? { ...r, body: { ...r.body, attempt: 1 } } : r));
    const shape = (rs: Rec[]) => rs.filter((r) => r.kind !== 'invocation.sealed').map((r) => ({ kind: r.kind, epoch: r.epoch, body: r.body }));
    expect(shape(normalized)).toEqual(shape(travel.records));
    // Its fingerprint cannot be the embedded one: the stall is part of the hashed history.
    expect(out.fingerprint).not.toBe(travel.fingerprint);
  });

  test('the runtime SIGKILLed right after step.dispatched is durable (job not added yet); a resume elsewhere gives the uninterrupted fingerprint', async () => {
    const travel = await reference('travel', '3');
    const dispatches = travel.records.filter((r) => r.kind === 'step.dispatched');
    const target = dispatches.find((r) => r.body.actuator === 'card.charge')!;
    const key = target.body.key!;
    const nth = dispatches.indexOf(target) + 1; // killed right after the append that holds it
    const crashed = await weft([...runArgs(SHARED, 'crash-dispatched-a'), '--seed', '3'], { WEFT_CRASH_AFTER: `step.dispatched:${nth}` });
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    const before = await journalOf(SHARED, travel.id);
    expect(before.at(-1)).toMatchObject({ kind: 'step.dispatched', body: { key, attempt: 1 } });
    expect(await jobState(SHARED, `${key}.a1`), 'the job was not added before the kill').toBe('unknown');

    // The command end to end: `weft resume <id> --redis … --dispatch bullmq --json`, from another folder.
    const resumed = parsed(await weft(['resume', travel.id, '--redis', redis.url, '--redis-prefix', SHARED, '--dispatch', 'bullmq', '--dir', dir('crash-dispatched-b'), '--json']));
    expect(resumed).toMatchObject({ id: travel.id, status: 'completed', fingerprint: travel.fingerprint });
    expect(hashed(await journalOf(SHARED, travel.id))).toEqual(hashed(travel.records));
    const ledger = await ledgerOf(SHARED, travel.id);
    expectAppliedOnce(ledger, travel);
    expect(ledger[key]).toMatchObject({ attempts: 1, applied: 1 });
  });

  test('the runtime frozen while a worker runs the job, and SIGKILLed after the job completed but before step.completed: the resume reads the stored outcome and runs nothing again', async () => {
    const travel = await reference('travel');
    const target = travel.records.find((r) => r.kind === 'step.dispatched' && r.body.actuator === 'airline.hold')!;
    const key = target.body.key!;
    const jobId = `${key}.a1`;
    // The job is held on the worker until the runtime is frozen (the release file), at most 60 s.
    const release = path.join(root, 'crash-completed-release');
    await worker('crash-completed', 'crash-completed-worker', { domain: SLOW_EFFECT_TRAVEL, env: { WEFT_TEST_SLOW_ACTUATOR: 'airline.hold', WEFT_TEST_SLOW_MS: '60000', WEFT_TEST_SLOW_UNTIL: release } });
    const run = spawnWeft(runArgs('crash-completed', 'crash-completed-a'));
    try {
      await waitFor(`job ${jobId} to be active on the worker`, async () => (await jobState('crash-completed', jobId)) === 'active', 60_000);
      run.signal('SIGSTOP'); // the runtime can append nothing from here on
    } finally {
      writeFileSync(release, '');
    }
    await waitFor(`job ${jobId} to complete`, async () => (await jobState('crash-completed', jobId)) === 'completed', 60_000);
    const frozen = await journalOf('crash-completed', travel.id);
    expect(frozen.at(-1), 'the worker finished; step.completed was never appended').toMatchObject({ kind: 'step.dispatched', body: { key, attempt: 1 } });
    run.signal('SIGKILL');
    expect((await run.done).signal).toBe('SIGKILL');

    const resumed = await resumeOnRedis(travel.id, { redis: redis.url, prefix: 'crash-completed', dispatch: 'bullmq', dir: dir('crash-completed-b') });
    expect(resumed).toMatchObject({ id: travel.id, status: 'completed', fingerprint: travel.fingerprint });
    expect(hashed(await journalOf('crash-completed', travel.id))).toEqual(hashed(travel.records));
    const ledger = await ledgerOf('crash-completed', travel.id);
    expectAppliedOnce(ledger, travel);
    expect(ledger[key], 'the actuator ran once: the resumed runtime read the job’s stored outcome').toMatchObject({ attempts: 1, applied: 1 });
  });

  test('weft worker without --domain or without --redis exits 2 with the usage', async () => {
    const usage = /usage: weft worker --domain D --redis URL \[--concurrency N\] \[--queue NAME\] \[--lock-ms MS\] \[--quiet\] \[--redis-prefix P\] \[--dir D\]/;
    const noDomain = await weft(['worker', '--redis', redis.url]);
    expect(noDomain.code).toBe(2);
    expect(noDomain.stderr).toContain('--domain is required');
    expect(noDomain.stderr).toMatch(usage);
    // The other two refusals are the same path with another check (cli/commands/worker.ts): the command's
    // module in this process (test/support/command-in-process.ts) — what it prints and the exit code main.ts gives.
    const noRedis = await weftHere(['worker', '--domain', 'travel'], { WEFT_REDIS_URL: '' });
    expect(noRedis.code).toBe(2);
    expect(noRedis.stderr).toContain('--redis URL (or WEFT_REDIS_URL) is required');
    expect(noRedis.stderr).toMatch(usage);
    const tooShort = await weftHere(['worker', '--domain', 'travel', '--redis', redis.url, '--lock-ms', '100']);
    expect(tooShort.code).toBe(2);
    expect(tooShort.stderr).toContain('--lock-ms is at least 500');
  });

  test('two domains on one Redis: a helpdesk worker never sees travel’s jobs; the travel worker logs one line per job (none with --quiet)', async () => {
    const travel = await reference('travel', '4');
    const other = helpdeskWorker;
    const loud = [travelWorker];
    const out = await runOnWorkers(SHARED, 'domains-runtime', '4');
    expect(out).toMatchObject({ id: travel.id, status: 'completed', fingerprint: travel.fingerprint });
    const records = await journalOf(SHARED, travel.id);
    // Every job of the run completed on travel's queue; none reached the helpdesk worker (it logs helpdesk's jobs alone).
    const completed = await completedJobs(SHARED, travel.id);
    for (const id of jobIdsOf(records)) expect(completed.has(id), `job ${id} completed`).toBe(true);
    // (It is the shared one: the helpdesk test's run, if it ran before, is the only one it logs.)
    const helpdeskRun = references.has('ref-helpdesk-domain-1') ? (await reference(HELPDESK)).id : undefined;
    const othersJobs = () => linesOf(other).filter((l) => helpdeskRun === undefined || !l.startsWith(`${helpdeskRun}.`));
    expect(othersJobs(), 'the helpdesk worker logged no job but helpdesk’s').toEqual([]);
    // One line per job: key, attempt, outcome, duration — one per job the journal implies.
    const lines = loud.flatMap((w) => linesOf(w).filter((l) => l.startsWith(`${travel.id}.`)));
    expect(lines).toHaveLength(jobIdsOf(records).length);
    for (const w of loud) for (const line of linesOf(w)) expect(line).toMatch(JOB_LINE);
    expect(lines.filter((l) => / ok \d+ ms$/.test(l)).length).toBeGreaterThan(0);
    // --quiet: the same work, no line per job (a worker of its own, alone on its queue).
    const quiet = await worker('quiet', 'domains-quiet', { args: ['--quiet'] });
    const again = await runOnWorkers('quiet', 'domains-runtime-2', '2');
    expect(again.status).toBe('completed');
    expect((await completedJobs('quiet', again.id)).size, 'the quiet worker ran the run’s jobs').toBeGreaterThan(0);
    expect(quiet.stdout()).toBe('');
    expect(othersJobs()).toEqual([]);
  });

  test('the notice of a run without a worker names a worker command that works as printed (--redis, --redis-prefix, --queue)', async () => {
    const r = await weft(['run', 'travel', '--redis', redis.url, '--redis-prefix', 'hint', '--queue', 'travel-q', '--dir', dir('hint-runtime'), '--json']);
    expect(r.code, r.stderr).toBe(0);
    const hint = /start `(weft worker [^`]+)`/.exec(r.stderr)?.[1];
    expect(hint, r.stderr).toBe(`weft worker --domain travel --redis ${redis.url} --redis-prefix hint --queue travel-q`);
    // Run it as printed (from a folder of its own): it consumes the very queue the run would use.
    const printed = spawnNode(weftBin, hint!.split(' ').slice(1), {}, mkdtempSync(path.join(root, 'hint-cwd-')));
    try {
      await waitFor('the printed worker to be ready', () => /— ready/.test(printed.stderr()), 60_000);
      expect(await workersOn('hint', 'travel-q')).toBe(1);
    } finally {
      printed.signal('SIGTERM');
      await printed.done;
    }
    // Without --queue and --redis-prefix, the notice has neither (the worker's defaults are the run's):
    // the same notice, from the same dispatch choice, of a run made in this process.
    const notices: string[] = [];
    const plain = await runOnRedis('travel', { redis: redis.url, prefix: 'weft', dir: dir('hint-runtime-2'), notices });
    expect(plain.status).toBe('completed');
    expect(/start `(weft worker [^`]+)`/.exec(notices.join('\n'))?.[1], notices.join('\n')).toBe(`weft worker --domain travel --redis ${redis.url}`);
  });

  // Last: it stops the shared travel worker (the other tests are done with it).
  test('weft worker: SIGTERM while idle exits 0 promptly', async () => {
    const w = travelWorker;
    const started = Date.now();
    const r = await w.stop();
    expect(r.code, r.stderr).toBe(0);
    expect(r.signal).toBeNull();
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(r.stderr).toContain('weft worker: SIGTERM: finishing the running jobs, then exiting');
  });
});
