/**
 * A refusal is not an attempt (issue 30, defect 4; behaviour flag 13), with real processes: one
 * private redis-server for the file and `weft worker` processes, each scenario under its own
 * `--redis-prefix`; the scenarios run side by side (each mostly waits on its refusal waits). The runs
 * that drive the workers are made in the test's process as `weft run|resume|replay|ls --redis …` make
 * them (test/support/runs-here.ts: the same JSON line, the same reason); `weft show`, the resume
 * killed mid-wait, `weft cancel` and the worker that refuses to start stay `weft` processes. The
 * embedded reference is made in-process too (test/support/runs-here.ts).
 *
 * - A worker started with `--queue` naming travel's queue runs another domain (helpdesk): it refuses
 *   every travel job (`worker.wrong_domain`). Each refusal is recorded (`step.refused`, naming the
 *   worker), no attempt is spent and nothing is observed or dispatched on it; after the bounded wait
 *   (`--refusal-wait-ms`, short here) the run rests `suspended` — never failed, never handed off —
 *   with a reason (run --json, ls, show) that names the worker and the command that fixes it. The
 *   wrong worker stopped and a travel worker started, `weft resume` completes it: every effect
 *   applied once, every dispatch attempt 1, and the journal is the embedded run's with the refusals
 *   between. The queue is recorded as travel's, so a helpdesk worker asked to consume
 *   it again refuses to start, naming the owner and the right command.
 * - An old worker left running during a rolling upgrade (its build lacks `airline.hold`): that
 *   step's job is refused (`worker.no_actuator`) after `step.dispatched`, attempt 1 stays attempt 1,
 *   the run rests suspended naming the worker. A resume killed in the middle of the refusal wait
 *   (right after a refusal is durable, before the job goes back on the queue), then a resume once
 *   the worker is upgraded: the step is neither lost nor dispatched twice — its
 *   refused jobs (`<key>.a1`, `<key>.a1.x<n>`) never ran, the last one completed, applied once;
 *   replay reads the refusals back. A cancel of such a suspended run is seen right after the
 *   refusals read back, before the job goes back on the queue: it ends cancelled, the step never ran.
 *
 * Needs `redis-server` on PATH (under CI=true its absence fails; elsewhere skipped loudly) and the
 * build (`npm run build`).
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signingKeyFromSecret } from '../journal/seal.js';
import { writeKeyPair } from '../runtime/keys.js';
import { assertBuilt, repoRoot, weft, type CliResult } from './support/cli.js';
import { fileRedis } from './support/file-redis.js';
import { listOnRedis, replayById, resumeOnRedis, runInWorkspace, runOnRedis, type RedisRunLine } from './support/runs-here.js';
import { startWeftWorker, type WorkerProcess } from './support/weft-processes.js';

const HELPDESK = path.join(repoRoot, 'examples', 'helpdesk', 'helpdesk-domain.js');
const OLD_TRAVEL = path.join(repoRoot, 'test', 'support', 'old-travel-domain.mjs');
const QUEUE = 'weft-effects-travel';

interface Rec {
  seq: number;
  kind: string;
  epoch: number;
  body: Record<string, unknown> & { key?: string; attempt?: number; code?: string; worker?: string; actuator?: string; step?: number };
}
interface Ledger {
  [key: string]: { actuator: string; attempts: number; applied: number };
}
interface RunJson {
  id: string;
  status: string;
  reason?: string;
}

/** The file's private Redis (AOF, fsync always); each scenario under its own --redis-prefix. */
const redis = fileRedis();
const redisOk = redis.available;
const root = mkdtempSync(path.join(tmpdir(), 'weft-refusals-'));
/** The embedded run of travel: its journal and the effects its world applied. */
let reference: { id: string; records: Rec[]; applied: string[] };
const workers: WorkerProcess[] = [];

// One signing key for every folder: a resume from another folder seals with the key the run started with.
const sharedKeys = path.join(root, 'shared-keys');
await writeKeyPair(sharedKeys, signingKeyFromSecret(new Uint8Array(32).fill(13)));
function dir(name: string): string {
  const folder = path.join(root, name);
  if (!existsSync(path.join(folder, 'keys'))) cpSync(sharedKeys, path.join(folder, 'keys'), { recursive: true });
  return folder;
}
const readJsonl = (file: string) => readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Rec);

beforeAll(async () => {
  if (!redisOk) return;
  assertBuilt();
  const out = await runInWorkspace('travel', { dir: path.join(root, 'reference') });
  expect(out.status).toBe('completed');
  const world = JSON.parse(readFileSync(path.join(root, 'reference', 'state', 'travel', out.id, 'providers.json'), 'utf8')) as { ledger: Ledger };
  reference = { id: out.id, records: readJsonl(out.journal), applied: Object.keys(world.ledger).sort() };
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  rmSync(root, { recursive: true, force: true });
});

// ── helpers ─────────────────────────────────────────────────────────────────────────────────

async function worker(prefix: string, name: string, domain: string, args: string[] = []): Promise<WorkerProcess> {
  const w = await startWeftWorker(['--domain', domain, '--redis', redis.url, '--redis-prefix', prefix, '--dir', dir(name), ...args]);
  workers.push(w);
  return w;
}
const at = (prefix: string, name: string) => ['--redis', redis.url, '--redis-prefix', prefix, '--dir', dir(name)];
/** `weft run travel --redis … --dispatch bullmq --refusal-wait-ms MS --json`, made in this process. */
const runOnWorkers = (prefix: string, name: string, waitMs: number) => runOnRedis('travel', { redis: redis.url, prefix, dir: dir(name), dispatch: 'bullmq', refusalWaitMs: waitMs });
/** `weft resume ID --redis … --dispatch bullmq --refusal-wait-ms MS --json`, made in this process. */
const resumeOnWorkers = (prefix: string, name: string, id: string, waitMs: number) => resumeOnRedis(id, { redis: redis.url, prefix, dir: dir(name), dispatch: 'bullmq', refusalWaitMs: waitMs });
/** `weft replay ID --redis … --json` made in this process: it ends (a divergence throws, where the command exits 1). */
const replayOf = (prefix: string, name: string, id: string) => replayById(id, { redis: redis.url, prefix, dir: dir(name) });
/** What a run's JSON line says, checked against the command's exit code for it (1 for suspended, 0 for completed). */
function lineOf(line: RedisRunLine, code: number): RunJson {
  expect(line.status === 'failed' || line.status === 'suspended' ? 1 : 0, `status ${line.status}: ${line.reason}`).toBe(code);
  return line as RunJson;
}
const resumeArgs = (prefix: string, name: string, id: string, waitMs: number) => ['resume', id, ...at(prefix, name), '--dispatch', 'bullmq', '--refusal-wait-ms', String(waitMs), '--json'];

function outOf(r: CliResult, code: number): RunJson {
  expect(r.code, `exit ${r.code} / ${r.signal}; stderr:\n${r.stderr}`).toBe(code);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as RunJson;
}
const journalOf = async (prefix: string, id: string) => (await redis.admin.lrange(`${prefix}:{${id}}:journal`, 0, -1)).map((l) => JSON.parse(l) as Rec);
async function ledgerOf(prefix: string, id: string): Promise<Ledger> {
  const text = await redis.admin.get(`${prefix}:travel:{${id}}:providers`);
  return text === null ? {} : (JSON.parse(text) as { ledger: Ledger }).ledger;
}
const idOf = (w: WorkerProcess) => `${hostname()}:${w.pid}`;
const kinds = (records: Rec[], kind: string) => records.filter((r) => r.kind === kind);

/** What the journal holds once the refusals are set aside: (kind, epoch, body) of every record but the seal. */
const content = (records: Rec[]) => records.filter((r) => r.kind !== 'step.refused' && r.kind !== 'invocation.sealed').map((r) => ({ kind: r.kind, epoch: r.epoch, body: r.body }));

/** The finished run: completed, every attempt the first, no failure, every effect applied once, and the embedded run's journal once its refusals are set aside. */
async function expectCompletedOnce(prefix: string, id: string): Promise<Rec[]> {
  const records = await journalOf(prefix, id);
  expect(kinds(records, 'step.failed'), 'no refusal became a failure').toEqual([]);
  for (const d of kinds(records, 'step.dispatched')) expect(d.body.attempt, `${d.body.key} dispatched as attempt 1`).toBe(1);
  expect(content(records)).toEqual(content(reference.records));
  const ledger = await ledgerOf(prefix, id);
  for (const [key, e] of Object.entries(ledger)) expect(e, `effect ${key} (${e.actuator})`).toMatchObject({ applied: 1 });
  expect(Object.keys(ledger).sort()).toEqual(reference.applied);
  return records;
}

// ── the tests ───────────────────────────────────────────────────────────────────────────────

describe.skipIf(!redisOk).concurrent('a refusal is not an attempt', () => {
  test('a worker of another domain on travel’s queue: refusals recorded, no attempt spent, suspended naming it; a travel worker and a resume complete the run once; the queue is travel’s from then on', async () => {
    const wrong = await worker('wq', 'wq-helpdesk', HELPDESK, ['--queue', QUEUE]);
    const run = lineOf(await runOnWorkers('wq', 'wq-a', 1_500), 1);
    expect(run).toMatchObject({ id: reference.id, status: 'suspended' });
    // The reason names the refusing worker, why, and the command that fixes it.
    expect(run.reason).toContain(idOf(wrong));
    expect(run.reason).toContain('worker.wrong_domain');
    expect(run.reason).toContain(`start \`weft worker --domain travel --redis ${redis.url} --redis-prefix wq\``);
    expect(run.reason).toContain(`weft resume ${reference.id}`);

    // Every job was refused: each refusal recorded, naming the worker; nothing observed, nothing failed.
    const suspended = await journalOf('wq', reference.id);
    const refused = kinds(suspended, 'step.refused');
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) expect(r.body).toMatchObject({ key: `${reference.id}.1.0.observe`, attempt: 1, code: 'worker.wrong_domain', worker: idOf(wrong) });
    expect(suspended.at(-1)!.kind).toBe('step.refused');
    expect(kinds(suspended, 'state.observed')).toEqual([]);
    expect(kinds(suspended, 'step.failed')).toEqual([]);
    expect(kinds(suspended, 'step.dispatched')).toEqual([]);
    expect(await ledgerOf('wq', reference.id)).toEqual({});

    // ls and show say why, from the store.
    const listed = await listOnRedis({ redis: redis.url, prefix: 'wq', dir: dir('wq-ls') });
    expect(listed.find((row) => row.id === reference.id)).toMatchObject({ status: 'suspended', reason: expect.stringContaining(idOf(wrong)) });
    const shown = await weft(['show', reference.id, ...at('wq', 'wq-ls')]);
    expect(shown.stdout).toContain(idOf(wrong));
    expect(shown.stdout).toContain('weft worker --domain travel');

    // The fix the reason names: the wrong worker goes, a travel worker starts; the resume completes the run.
    await wrong.stop();
    await worker('wq', 'wq-travel', 'travel');
    const resumed = lineOf(await resumeOnWorkers('wq', 'wq-b', reference.id, 120_000), 0);
    expect(resumed).toMatchObject({ id: reference.id, status: 'completed' });
    const records = await expectCompletedOnce('wq', reference.id);
    expect(records.slice(0, suspended.length), 'the refusals were read back as they were, never re-derived').toEqual(suspended);
    expect(await replayOf('wq', 'wq-replay', reference.id)).toMatchObject({ id: reference.id, status: 'completed' });

    // The first runtime recorded the queue as travel's: a helpdesk worker no longer starts on it.
    expect(await redis.admin.hget('wq:bull:queue-domains', QUEUE)).toBe('travel');
    const again = await weft(['worker', '--domain', HELPDESK, '--queue', QUEUE, ...at('wq', 'wq-helpdesk-2')]);
    expect(again.code, again.stderr).toBe(2);
    expect(again.stderr).toContain(`queue ${QUEUE} belongs to domain travel`);
    expect(again.stderr).toContain('this worker runs domain helpdesk');
    expect(again.stderr).toContain(`weft worker --domain helpdesk --redis ${redis.url} --redis-prefix wq`);
    expect(again.stderr).toContain(`weft worker --domain travel --redis ${redis.url} --redis-prefix wq`);
  });

  test('an old worker during an upgrade lacks an actuator: its refusals spend no attempt, the run rests suspended naming it; a resume killed mid-wait, then one with an upgraded worker, neither loses the step nor dispatches it twice', async () => {
    const old = await worker('up', 'up-old', OLD_TRAVEL);
    const run = lineOf(await runOnWorkers('up', 'up-a', 1_500), 1);
    expect(run).toMatchObject({ id: reference.id, status: 'suspended' });
    expect(run.reason).toContain(idOf(old));
    expect(run.reason).toContain('worker.no_actuator: its build lacks the actuator: upgrade it');
    expect(run.reason).toContain('(airline.hold)');

    // The step was dispatched once, as attempt 1, and refused after it; the effects before it ran on the old worker.
    const suspended = await journalOf('up', reference.id);
    const dispatched = kinds(suspended, 'step.dispatched').filter((r) => r.body.actuator === 'airline.hold');
    expect(dispatched).toHaveLength(1);
    const key = dispatched[0]!.body.key!;
    expect(dispatched[0]!.body.attempt).toBe(1);
    const after = suspended.slice(suspended.indexOf(dispatched[0]!) + 1);
    expect(after.length).toBeGreaterThanOrEqual(1);
    for (const r of after) expect(r).toMatchObject({ kind: 'step.refused', body: { key, attempt: 1, code: 'worker.no_actuator', worker: idOf(old) } });
    expect(kinds(suspended, 'step.failed')).toEqual([]);
    expect((await ledgerOf('up', reference.id))[key], 'the refused step never reached the world').toBeUndefined();

    // A resume (still only the old worker) is killed in the middle of its wait: right after the refusal
    // it records is durable, before the attempt goes back on the queue as job `<key>.a1.x<refusals>`.
    const killed = await weft(resumeArgs('up', 'up-b', reference.id, 120_000), { WEFT_CRASH_AFTER: 'step.refused:1', WEFT_LEASE_TTL_MS: '1500' });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const crashed = await journalOf('up', reference.id);
    expect(crashed.slice(0, suspended.length)).toEqual(suspended);
    expect(crashed.slice(suspended.length).map((r) => r.kind)).toEqual(['step.refused']);
    const refusals = kinds(crashed, 'step.refused').length;
    expect(await redis.admin.exists(`up:bull:${QUEUE}:${key}.a1.x${refusals}`), 'the crash came before the job went back on the queue').toBe(0);

    // The old worker is upgraded (stopped, a new build started): the step completes as attempt 1, applied once.
    await old.stop();
    await worker('up', 'up-new', 'travel');
    const resumed = lineOf(await resumeOnWorkers('up', 'up-c', reference.id, 120_000), 0);
    expect(resumed).toMatchObject({ id: reference.id, status: 'completed' });
    const records = await expectCompletedOnce('up', reference.id);
    expect(kinds(records, 'step.dispatched').filter((r) => r.body.key === key)).toHaveLength(1);
    expect(kinds(records, 'step.completed').filter((r) => r.body.key === key)).toEqual([expect.objectContaining({ body: expect.objectContaining({ attempt: 1 }) })]);
    const total = kinds(records, 'step.refused').filter((r) => r.body.key === key).length;
    expect(total).toBeGreaterThanOrEqual(refusals);
    expect((await ledgerOf('up', reference.id))[key]).toMatchObject({ actuator: 'airline.hold', attempts: 1, applied: 1 });
    // One job per recorded refusal, each failed (refused, never run), and the one after the last completed.
    const failedJobs = new Set(await redis.admin.zrange(`up:bull:${QUEUE}:failed`, '0', '-1'));
    const completedJobs = new Set(await redis.admin.zrange(`up:bull:${QUEUE}:completed`, '0', '-1'));
    for (let n = 0; n < total; n++) expect(failedJobs.has(`${key}.a1${n === 0 ? '' : `.x${n}`}`), `job ${n} of ${key} refused`).toBe(true);
    expect(completedJobs.has(`${key}.a1.x${total}`), 'the job after the last refusal completed').toBe(true);
    expect([...completedJobs].filter((id) => id.startsWith(`${key}.a`))).toEqual([`${key}.a1.x${total}`]);
    // Replay reads the refusals back (it asks no worker) and re-derives the rest byte for byte.
    expect(await replayOf('up', 'up-replay', reference.id)).toMatchObject({ id: reference.id, status: 'completed' });
  });

  test('a cancel of an invocation suspended in a refusal wait ends it cancelled: the refused step never ran, nothing was dispatched again', async () => {
    const old = await worker('cx', 'cx-old', OLD_TRAVEL);
    const run = lineOf(await runOnWorkers('cx', 'cx-a', 1_500), 1);
    expect(run).toMatchObject({ id: reference.id, status: 'suspended' });
    const suspended = await journalOf('cx', reference.id);
    const key = kinds(suspended, 'step.dispatched').find((r) => r.body.actuator === 'airline.hold')!.body.key!;

    const cancelled = outOf(await weft(['cancel', reference.id, '--by', 'ops', '--reason', 'no worker can hold seats', ...at('cx', 'cx-b'), '--json']), 0);
    expect(cancelled).toMatchObject({ id: reference.id, status: 'cancelled' });
    const records = await journalOf('cx', reference.id);
    expect(records.slice(0, suspended.length), 'what was recorded stays as it was').toEqual(suspended);
    // Right after the refusals read back, before the job went back on the queue: the cancel, then the end.
    expect(records[suspended.length]).toMatchObject({ kind: 'cancel.requested', body: { by: 'ops', reason: 'no worker can hold seats' } });
    expect(records.at(-2)).toMatchObject({ kind: 'invocation.cancelled', body: { by: 'ops' } });
    expect(kinds(records, 'step.dispatched').filter((r) => r.body.key === key)).toHaveLength(1);
    expect(records.filter((r) => r.body.key === key && r.kind !== 'step.dispatched' && r.kind !== 'step.refused')).toEqual([]);
    expect(kinds(records, 'step.failed')).toEqual([]);
    expect((await ledgerOf('cx', reference.id))[key], 'the refused step never reached the world').toBeUndefined();
    // Its jobs: one per recorded refusal, and at most the one the suspended run left queued (which the old
    // worker refuses in turn) — the cancel added none, and none completed.
    const refusedJobs = kinds(records, 'step.refused').filter((r) => r.body.key === key).length;
    const ids = Array.from({ length: refusedJobs + 1 }, (_, n) => `${key}.a1${n === 0 ? '' : `.x${n}`}`);
    const jobs = (await redis.admin.keys(`cx:bull:${QUEUE}:${key}.a*`)).map((k) => k.slice(`cx:bull:${QUEUE}:`.length)).filter((id) => !id.includes(':'));
    expect(ids.slice(0, refusedJobs).every((id) => jobs.includes(id))).toBe(true);
    expect(jobs.every((id) => ids.includes(id)), jobs.join(', ')).toBe(true);
    expect((await redis.admin.zrange(`cx:bull:${QUEUE}:completed`, '0', '-1')).filter((id) => id.startsWith(`${key}.a`))).toEqual([]);
    await old.stop();
  });
});
