/**
 * `weft show <id>` over a workspace on disk and over a private Redis: a
 * completed travel run is shown with its status, epochs, steps and the commands that act on it
 * (with the same location flags); an invocation awaiting approval shows the policy's reason and the
 * steps asked for, as `ls`, `ls --json` and `run --json` now do too; an intent holding terminal
 * escape sequences is shown inert, as text and as JSON; a bad id is a usage error, an unknown one
 * says where to look.
 *
 * A real `weft show` process for each output (text and --json, in each store), the inert intent and
 * the refusals' exit codes; the other texts by the command's own module in this process (`here`:
 * test/support/command-in-process.ts, the code the process runs). The runs shown are fixtures made in this
 * process — as `weft run --dir D --json` makes one (test/support/runs-here.ts), or by the run
 * command's module (with --deadline, or with Redis) — except the run whose --json line is asserted.
 */
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Redis } from 'ioredis';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, weft, type CliResult } from './support/cli.js';
import { weftHere as here } from './support/command-in-process.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';
import { runInWorkspace } from './support/runs-here.js';
import { requireRedis, startRedis, type RedisServer } from './support/redis-server.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-cli-show-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
beforeAll(() => assertBuilt());

interface Line {
  id: string;
  status: string;
  reason: string | null;
}
const last = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Line;
/** The id and status a run printed as text (cli/follow.ts printOutcome). */
const ranText = (r: CliResult): Line => {
  expect(r.code, r.stderr).toBe(0);
  const [, id] = /^invocation +(\S+)$/m.exec(r.stdout)!;
  const [, status, reason] = /^status +(\S+)(?: — (.*))?$/m.exec(r.stdout)!;
  return { id: id!, status: status!, reason: reason ?? null };
};


/** Nothing in `text` that a terminal would act on: no ESC, no C1 control, no bidi override. */
function expectInert(text: string): void {
  expect(text).not.toMatch(/[\u001b\u0007\u0080-\u009f\u202a-\u202e\u2066-\u2069]/);
}

describe('weft show, workspace on disk', () => {
  test('a completed travel run: a line with "completed", every epoch and step, and the next commands with --dir', async () => {
    const dir = path.join(root, 'done');
    const run = await runInWorkspace('travel', { dir }); // made in this process as weft run makes it: show is what is tested
    expect(run.status).toBe('completed');
    const shown = await here(['show', run.id, '--dir', dir]);
    expect(shown.code, shown.stderr).toBe(0);
    const lines = shown.stdout.split('\n');
    expect(lines).toContain(`invocation  ${run.id}`);
    expect(lines).toContain('status      completed');
    expect(lines).toContain('            spends card.charge (amount), taxi.book (amount)');
    expect(lines.filter((l) => l.startsWith('epoch '))).toEqual([
      'epoch 1  find_options("me", "lisbon", 12)  htn plan, completed',
      'epoch 2  book_trip("me", "lisbon", 12, 900)  htn plan, completed',
      'epoch 3  share_itinerary("me", "lisbon")  htn plan, completed',
    ]);
    expect(lines).toContain('  #2  card.charge {"amount":780,"card":"card-visa-4242","flight":"f-tp1353","hotel":"h-alfama","traveller":"me"}  ok, 1 attempt');
    expect(lines).toContain(`  weft replay ${run.id} --dir ${dir}`);

    const json = await weft(['show', run.id, '--dir', dir, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const d = JSON.parse(json.stdout) as { status: string; epochs: unknown[]; seal: { fingerprint: string }; pin: { deadline: string | null; limits: Record<string, number> } };
    expect(d).toMatchObject({ status: 'completed', epochs: [{}, {}, {}] });
    // No deadline or step timeout pinned: neither is printed, and the JSON says null.
    expect(lines.some((l) => /deadline|step timeout/.test(l))).toBe(false);
    expect(d.pin.deadline).toBeNull();
    expect(d.pin.limits).not.toHaveProperty('stepTimeoutMs');
  });

  test('a pinned deadline and step timeout are shown in the pin section (text and JSON)', async () => {
    const dir = path.join(root, 'bounded');
    const run = ranText(await here(['run', 'travel', '--deadline', '1h', '--step-timeout-ms', '500', '--dir', dir]));
    expect(run.status).toBe('completed');
    const shown = await here(['show', run.id, '--dir', dir]);
    expect(shown.code, shown.stderr).toBe(0);
    const lines = shown.stdout.split('\n');
    const pin = lines.findIndex((l) => l.startsWith('pin '));
    const bounds = lines.findIndex((l) => l.startsWith('            deadline '));
    expect(bounds).toBeGreaterThan(pin);
    expect(bounds).toBeLessThan(lines.findIndex((l) => l.startsWith('journal ')));
    expect(lines[bounds]).toMatch(/^ {12}deadline \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z {2}step timeout 500 ms$/);
    const json = await weft(['show', run.id, '--dir', dir, '--json']);
    const d = JSON.parse(json.stdout) as { pin: { deadline: string | null; limits: Record<string, number> } };
    expect(lines[bounds]).toContain(`deadline ${d.pin.deadline}`);
    expect(Date.parse(d.pin.deadline!)).toBeGreaterThan(Date.now());
    expect(d.pin.limits.stepTimeoutMs).toBe(500);
  });

  test('awaiting approval: the reason and the steps asked for, in show, ls, ls --json and run --json', async () => {
    const dir = path.join(root, 'strict');
    const reason = 'the epoch spends 780, above the 100 limit';
    const run = last((await weft(['run', writeStrictTravelDomain(root), '--dir', dir, '--json'])).stdout);
    expect(run).toMatchObject({ status: 'awaiting_approval', reason });

    const shown = await here(['show', run.id, '--dir', dir]);
    expect(shown.code, shown.stderr).toBe(0);
    const lines = shown.stdout.split('\n');
    expect(lines).toContain(`status      awaiting_approval — ${reason}`);
    expect(lines).toContain(`waiting     for a person's approval: ${reason}`);
    expect(lines).toContain('    #2  charge_card → card.charge {"amount":780,"card":"card-visa-4242","flight":"f-tp1353","hotel":"h-alfama","traveller":"me"}');
    expect(lines).toContain(`  weft approve ${run.id} --by ${userInfo().username} --dir ${dir}`); // a name that runs as printed (cli/hints.ts approverWord)

    const rows = JSON.parse((await weft(['ls', '--dir', dir, '--json'])).stdout) as Array<{ id: string; reason?: string; approvalSteps?: Array<{ operator: string }> }>;
    expect(rows[0]).toMatchObject({ id: run.id, reason });
    expect(rows[0]!.approvalSteps!.map((s) => s.operator)).toEqual(['hold_flight', 'hold_hotel', 'charge_card', 'confirm_flight', 'confirm_hotel']);
    const listed = (await here(['ls', '--dir', dir])).stdout.split('\n');
    expect(listed[listed.findIndex((l) => l.startsWith(run.id)) + 1]).toBe(`    ${reason}`);
  });

  test('a journal with a torn tail: its good records are described, it says where it stops, and next names --dir', async () => {
    const dir = path.join(root, 'torn');
    const run = await runInWorkspace('travel', { dir });
    const journal = path.join(dir, 'invocations', run.id, 'journal.jsonl');
    const good = readFileSync(journal, 'utf8').split('\n').length - 1;
    appendFileSync(journal, '{"seq":99,"kind":"to'); // a crash mid-append
    const shown = await here(['show', run.id, '--dir', dir]);
    expect(shown.code, shown.stderr).toBe(0);
    const lines = shown.stdout.split('\n');
    expect(lines.find((l) => l.startsWith('journal '))).toMatch(new RegExp(`^journal {5}${good} records, verified up to here; then: seq ${good}: torn final record`));
    expect(lines.filter((l) => l.startsWith('epoch ')).length).toBe(3);
    expect(lines).toContain(`next        → weft resume ${run.id} --quarantine-torn --dir ${dir}`);
    const json = JSON.parse((await weft(['show', run.id, '--dir', dir, '--json'])).stdout) as { records: number; journal: { verified: boolean } };
    expect(json).toMatchObject({ records: good, journal: { verified: false } });
  });

  test('an intent with terminal escape sequences is shown inert, as text and as JSON', async () => {
    const dir = path.join(root, 'evil');
    const intent = 'Lisbon \u001b]0;pwned\u0007\u001b[2J \u009b31m red \u202e evil';
    const run = await runInWorkspace('travel', { dir, intent });
    const shown = await weft(['show', run.id, '--dir', dir]);
    expect(shown.code, shown.stderr).toBe(0);
    expectInert(shown.stdout);
    expect(shown.stdout).toContain('intent      "Lisbon \\u001b]0;pwned\\u0007\\u001b[2J \\u009b31m red \\u202e evil"');
    const json = await weft(['show', run.id, '--dir', dir, '--json']);
    expectInert(json.stdout);
    expect((JSON.parse(json.stdout) as { intent: string }).intent).toBe(intent); // the same value once parsed
  });

  test('a bad id is a usage error (exit 2); an unknown one says weft ls lists them (exit 2, invocation.not_found: cli/exit-codes.ts); nothing is written; --help', async () => {
    const dir = path.join(root, 'empty');
    const bad = await here(['show', '../x', '--dir', dir]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('is not an invocation id');
    const unknown = await weft(['show', 'nobody', '--dir', dir]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^weft show: no invocation nobody in .*; weft ls --dir \S+ lists them\n$/);
    expect(unknown.stdout).toBe('');
    expect(existsSync(dir)).toBe(false);
    const refused = await weft(['show', 'nobody', '--dir', dir, '--json']);
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stdout)).toMatchObject({ id: 'nobody', status: null, refused: 'invocation.not_found' });
    const help = await here(['show', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: weft show <id> \[--dir D\]/);
  });
});

const redis = requireRedis();
describe.runIf(redis || process.env.CI === 'true')('weft show, Redis store', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis({ aof: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('a completed travel run in Redis: shown with its status, and the next commands with --redis and --redis-prefix', async () => {
    const on = ['--redis', server.url, '--redis-prefix', 'showtest'];
    const run = ranText(await here(['run', 'travel', ...on, '--dispatch', 'in-process', '--dir', path.join(root, 'redis')]));
    expect(run.status).toBe('completed');
    const shown = await weft(['show', run.id, ...on]);
    expect(shown.code, shown.stderr).toBe(0);
    const lines = shown.stdout.split('\n');
    expect(lines).toContain('status      completed');
    expect(lines.filter((l) => l.startsWith('epoch ')).length).toBe(3);
    expect(lines).toContain(`  weft replay ${run.id} --redis ${server.url} --redis-prefix showtest`);
    const json = JSON.parse((await weft(['show', run.id, ...on, '--json'])).stdout) as { status: string; records: number; journal: { verified: boolean } };
    expect(json).toMatchObject({ status: 'completed', journal: { verified: true } });
    // Another prefix holds nothing of it.
    expect((await here(['show', run.id, '--redis', server.url, '--redis-prefix', 'other'])).code).toBe(2);
  });

  test('a journal with a stored line that is not JSON: the records before it are described, with where it stops', async () => {
    const on = ['--redis', server.url, '--redis-prefix', 'showbad'];
    const run = ranText(await here(['run', 'travel', ...on, '--dispatch', 'in-process', '--dir', path.join(root, 'redis-bad')]));
    const raw = new Redis(server.url);
    try {
      const [key] = await raw.keys(`showbad:*${run.id}*journal`);
      await raw.lset(key!, 15, '{ not json');
    } finally {
      raw.disconnect();
    }
    const shown = await here(['show', run.id, ...on]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout.split('\n').find((l) => l.startsWith('journal '))).toMatch(/^journal {5}15 records, verified up to here; then: seq 15: /);
    expect(shown.stdout).toContain('epoch 1  find_options');
  });
});
