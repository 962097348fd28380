/**
 * `weft ls` over a workspace holding every kind of invocation, each a run made in this process as
 * `weft run --id ID [--hibernate] --json` makes it (test/support/runs-here.ts: the runs are
 * fixtures here; `weft run` has its own end-to-end tests in cli-runtime.test.ts) or a file laid
 * down as a crash would leave it: a completed run; a run whose journal ends in a
 * torn record; an empty journal beside a snapshot, and one alone; a journal whose first line is
 * not JSON; a run suspended by its snapshot (bad model key) and one suspended by the runtime's
 * status note (endpoint down); a folder holding only a status note, and a stray file. `ls` lists
 * every invocation, exits 0, and names for each damaged or suspended one what is wrong and the
 * command to run; `--json` carries the same as fields. The commands under test — `ls`, and the
 * `resume` each fix names, and a run killed mid-epoch — are real processes; an empty workspace's
 * one line is the command's module in this process (test/support/command-in-process.ts), and the
 * listing after the torn run's resume is the runtime's (runtime/list.ts, what `ls --json` prints).
 */
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FileStore } from '../stores/file.js';
import type { InvocationSummary } from '../runtime/list.js';
import { assertBuilt, weft } from './support/cli.js';
import { runInWorkspace } from './support/runs-here.js';
import { weftHere } from './support/command-in-process.js';
import { commandModules } from './support/commands-here.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-cli-ls-'));
const dir = path.join(root, 'ws');
const inv = (id: string, file = '') => path.join(dir, 'invocations', id, file);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** `weft run travel --dir D --json --id ID [--hibernate]`, in this process. */
const run = (id: string, hibernate = false) => runInWorkspace('travel', { dir, id, hibernate });

let tornRecords = 0;

beforeAll(async () => {
  assertBuilt();
  // Sequential: the runs share the workspace's keys, created by the first.
  expect((await run('good')).status).toBe('completed');
  const torn = await run('torn', true);
  tornRecords = readFileSync(torn.journal, 'utf8').trim().split('\n').length;
  appendFileSync(torn.journal, '{"body":{"step":0,"key":"half-writ'); // a crash in the middle of a write
  expect((await run('susp', true)).status).toBe('hibernated');
  expect((await run('noted', true)).status).toBe('hibernated');

  // The model refused the key: the runtime suspended the invocation in its snapshot.
  const snapshotFile = inv('susp', 'snapshot.json');
  const snapshot = JSON.parse(readFileSync(snapshotFile, 'utf8')) as { data: { value: string; context: Record<string, unknown> } };
  snapshot.data.value = 'suspended';
  snapshot.data.context.suspension = { state: 'parse', class: 'credentials', code: 'model.credentials', message: 'HTTP 401' };
  writeFileSync(snapshotFile, JSON.stringify(snapshot));

  const store = new FileStore(dir);
  // The runtime could not reach the model endpoint and said so in the status index only.
  await store.putStatus('noted', { status: 'suspended', class: 'endpoint', code: 'model.unreachable', reason: 'connect ECONNREFUSED 127.0.0.1:9', at: Date.now(), writer: 'test' });
  // A note alone is not an invocation; a corrupt note on a good run is no note.
  await store.putStatus('ghost', { status: 'suspended', reason: 'nothing here', at: Date.now() });
  writeFileSync(inv('good', 'status.json'), '{"status":"susp');
  await store.close();

  // Crashed before the first record was written: an empty journal beside a snapshot, and one alone.
  mkdirSync(inv('empty'), { recursive: true });
  writeFileSync(inv('empty', 'journal.jsonl'), '');
  writeFileSync(inv('empty', 'snapshot.json'), JSON.stringify({ seq: 0, hash: '0'.repeat(64), data: { value: 'hibernated' } }));
  mkdirSync(inv('empty-alone'), { recursive: true });
  writeFileSync(inv('empty-alone', 'journal.jsonl'), '');
  // A journal that is not JSON at all, and a stray file that is no invocation folder.
  mkdirSync(inv('garbage'), { recursive: true });
  writeFileSync(inv('garbage', 'journal.jsonl'), 'this is not json\n');
  writeFileSync(path.join(dir, 'invocations', 'notes.txt'), 'a file, not a folder');
});

describe('weft ls', () => {
  test('--json lists every invocation, with the status, the reason and the command to run', async () => {
    const r = await weft(['ls', '--dir', dir, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const rows = JSON.parse(r.stdout) as InvocationSummary[];
    expect(rows.map((row) => row.id)).toEqual(['empty', 'empty-alone', 'garbage', 'good', 'noted', 'susp', 'torn']);
    const byId = Object.fromEntries(rows.map((row) => [row.id, row]));
    expect(byId.good).toMatchObject({ status: 'completed', tenant: 'default' });
    expect(byId.good!.fix).toBeUndefined();
    expect(byId.torn).toMatchObject({ status: 'damaged', records: tornRecords, problem: expect.stringMatching(/torn final record at seq \d+/), fix: `weft resume torn --quarantine-torn --dir ${dir}` });
    for (const id of ['empty', 'empty-alone']) {
      expect(byId[id]).toMatchObject({ status: 'damaged', records: 0, problem: 'the journal is empty (its first record was never written)' });
      expect(byId[id]!.fix).toMatch(/move its folder aside .*mv .*invocations\/empty.* cannot be resumed \(nothing was recorded\)/);
    }
    expect(byId.garbage).toMatchObject({ status: 'damaged', problem: expect.stringContaining('not valid JSON'), fix: expect.stringContaining('weft verify') });
    expect(byId.susp).toMatchObject({ status: 'suspended', reason: 'HTTP 401', fix: `fix the model key, then weft resume susp --dir ${dir}`, tenant: 'default' });
    expect(byId.noted).toMatchObject({ status: 'suspended', reason: 'connect ECONNREFUSED 127.0.0.1:9', fix: `fix the model endpoint (--model-url), then weft resume noted --dir ${dir}` });
  });

  test('prints one row per invocation and, under a damaged or suspended one, why and "→ <command>"; exits 0', async () => {
    const r = await weft(['ls', '--dir', dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const out = r.stdout.split('\n');
    const block = (id: string) => {
      const at = out.findIndex((line) => line.startsWith(`${id}  `));
      expect(at, `a row for ${id} in:\n${r.stdout}`).toBeGreaterThanOrEqual(0);
      const rest = out.slice(at + 1);
      const end = rest.findIndex((line) => !line.startsWith('    '));
      return [out[at]!, ...rest.slice(0, end)];
    };
    expect(block('good')).toEqual([expect.stringMatching(/^good {2}completed +\d+ records {2}default {2}"/)]);
    expect(block('torn')).toEqual([expect.stringMatching(/^torn {2}damaged /), expect.stringContaining('torn final record'), `    → weft resume torn --quarantine-torn --dir ${dir}`]);
    expect(block('susp')).toEqual([expect.stringMatching(/^susp {2}suspended /), '    HTTP 401', `    → fix the model key, then weft resume susp --dir ${dir}`]);
    expect(block('noted')).toEqual([expect.stringMatching(/^noted {2}suspended /), '    connect ECONNREFUSED 127.0.0.1:9', `    → fix the model endpoint (--model-url), then weft resume noted --dir ${dir}`]);
    expect(block('empty')).toEqual([expect.stringMatching(/^empty {2}damaged +0 records/), '    the journal is empty (its first record was never written)', expect.stringMatching(/^ {4}→ move its folder aside/)]);
    expect(block('garbage')[2]).toBe(`    → weft verify garbage --dir ${dir} names the first bad record; move the journal aside to set it apart`);
    expect(r.stdout).not.toMatch(/^ghost|^notes\.txt/m);
  });

  test('a Redis that cannot be reached is named by its URL, not by the workspace folder (exit 1, within the give-up budget)', async () => {
    const r = await weft(['ls', '--redis', 'redis://127.0.0.1:1', '--dir', path.join(root, 'nothing')], { WEFT_REDIS_GIVE_UP_MS: '300' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^weft ls: cannot list redis:\/\/127\.0\.0\.1:1\/0: Redis at redis:\/\/127\.0\.0\.1:1\/0 is unreachable/);
    expect(r.stderr).not.toContain(path.join(root, 'nothing'));
  });

  test('a workspace with no invocations says so and exits 0', async () => {
    const r = await weftHere(['ls', '--dir', path.join(root, 'nothing')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^no invocations in /);
  });

  test('the torn one resumes with the fix ls names, and is then listed as completed', async () => {
    const resumed = await weft(['resume', 'torn', '--dir', dir, '--quarantine-torn', '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ id: 'torn', status: 'completed' });
    // The listing `weft ls --json` prints (runtime/list.ts, in this process; the command ran end to end above).
    const { listInvocations, FileStore: DistFileStore } = await commandModules();
    const rows = await listInvocations(new DistFileStore(dir));
    expect(rows.find((row) => row.id === 'torn')).toMatchObject({ status: 'completed' });
    expect(rows).toHaveLength(7);
  });

  test('a run whose process was killed mid-epoch is listed as interrupted, with the command that continues it', async () => {
    const killedDir = path.join(root, 'killed');
    const killed = await weft(['run', 'travel', '--dir', killedDir, '--id', 'killed', '--json'], { WEFT_CRASH_AFTER_APPEND: '6' });
    expect(killed.signal).toBe('SIGKILL');
    const rows = JSON.parse((await weft(['ls', '--dir', killedDir, '--json'])).stdout) as InvocationSummary[];
    expect(rows).toEqual([expect.objectContaining({ id: 'killed', status: 'interrupted', reason: expect.stringMatching(/stopped without resting it/), fix: expect.stringMatching(/^weft resume killed/) })]);
    const resumed = await weft(['resume', 'killed', '--dir', killedDir, '--json']);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ id: 'killed', status: 'completed' });
  });
});
