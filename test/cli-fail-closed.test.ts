/**
 * Fail closed (behaviour flag 1) through the real `weft` command, each command under test its own
 * process (dist/, built by `npm test`): a model endpoint that answers HTTP 500 leaves the invocation
 * suspended — one parseable --json line, a journal that ends with the recorded failure and verifies
 * unsealed, `weft ls` naming it with `weft resume` — and once the endpoint answers, `weft resume`
 * completes it sealed; a 404 before any reply and an empty intent fail sealed; rejecting an
 * approval (`weft approve --reject`) ends the invocation terminal and sealed, never left running.
 *
 * What only reads the outcome runs in this process (test/support/runs-here.ts, journals-here.ts): each journal's
 * check is `weft verify`'s own (its exit code, without its process; `weft verify` runs end to end in
 * cli-verify.test.ts), the listing after the end is the runtime's, and the run awaiting approval that
 * `weft approve --reject` ends is made as `weft run --json` makes it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TRAVEL_GOALS, TRAVEL_SUMMARY } from '../examples/travel/transcript.js';
import { assertBuilt, weft } from './support/cli.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';
import { inWorkspace, runInWorkspace } from './support/runs-here.js';
import { verifyJournal } from './support/journals-here.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-cli-fail-closed-'));
const LINE_KEYS = ['fingerprint', 'id', 'journal', 'publicKey', 'reason', 'status'];

interface Line {
  id: string;
  status: string | null;
  reason: string | null;
  journal: string;
  fingerprint: string | null;
  publicKey: string | null;
}

/** stdout must be exactly one JSON line with the documented keys. */
function oneLine(stdout: string): Line {
  const lines = stdout.trim().split('\n');
  expect(lines, stdout).toHaveLength(1);
  const line = JSON.parse(lines[0]!) as Line;
  expect(Object.keys(line).sort()).toEqual(LINE_KEYS);
  return line;
}

function journalRecords(file: string): Array<{ kind: string; body: Record<string, any> }> {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((text) => JSON.parse(text) as { kind: string; body: Record<string, any> });
}

// ── a local OpenAI-compatible endpoint whose behaviour a test switches ───────────────────────

type Mode = 'http-500' | 'http-404' | 'travel';
let mode: Mode = 'http-500';
let requests = 0;
let server: Server;
let url = '';

function travelContent(user: string): string {
  const epoch = Number(/Epoch: (\d+)/.exec(user)?.[1] ?? 0);
  const goals = [TRAVEL_GOALS.findOptions, TRAVEL_GOALS.bookTrip, TRAVEL_GOALS.shareItinerary];
  const g = goals[epoch - 1];
  return g ? JSON.stringify({ goal: { task: g.task, args: [...g.args] } }) : JSON.stringify({ done: true, summary: TRAVEL_SUMMARY });
}

beforeAll(async () => {
  assertBuilt();
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      requests++;
      if (mode === 'http-500') return void res.writeHead(500, { 'content-type': 'text/plain' }).end('upstream overloaded');
      if (mode === 'http-404') return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"model not found"}');
      const user = (JSON.parse(body) as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'user')!.content;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: travelContent(user) } }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(root, { recursive: true, force: true });
});

describe('defect 1 (CLI): a failing model endpoint suspends the invocation, recorded and resumable', () => {
  test('HTTP 500: one --json line, suspended; the journal ends with model.failed (transient), verifies unsealed; ls says weft resume; resume completes sealed', async () => {
    const dir = path.join(root, 'http-500');
    mode = 'http-500';
    requests = 0;
    const run = await weft(['run', 'travel', 'Take me to Lisbon for the conference on the 12th, under 900 EUR', '--model-url', url, '--model', 'm', '--json', '--dir', dir]);
    expect(run.stderr).not.toMatch(/at .*\.js:\d+/); // no stack trace: a recorded outcome, not a crash
    const line = oneLine(run.stdout);
    expect(run.code).toBe(1);
    expect(line).toMatchObject({ status: 'suspended', fingerprint: null });
    expect(line.reason).toMatch(/HTTP 500/);
    expect(path.isAbsolute(line.journal)).toBe(true);
    expect(requests).toBeGreaterThanOrEqual(2); // transient: retried before suspending

    const records = journalRecords(line.journal);
    const last = records.at(-1)!;
    expect(last.kind).toBe('model.failed');
    expect(last.body).toMatchObject({ purpose: 'parse', class: 'transient' });
    expect(records.filter((r) => r.kind === 'model.failed')).toHaveLength(requests);
    expect(records.map((r) => r.kind)).not.toContain('invocation.sealed');
    expect((await verifyJournal(line.journal, { noSignature: true })).code).toBe(0);

    const ls = await weft(['ls', '--dir', dir]);
    expect(ls.code, ls.stderr).toBe(0);
    const out = ls.stdout.split('\n');
    const row = out.findIndex((l) => l.startsWith(`${line.id}  `));
    expect(row, ls.stdout).toBeGreaterThanOrEqual(0);
    expect(out[row]).toMatch(new RegExp(`^${line.id} {2}suspended `));
    expect(out.slice(row + 1, row + 3).join('\n')).toMatch(new RegExp(`→ .*weft resume ${line.id}`));

    // The endpoint answers again: resume continues the same exchange to a sealed, signed journal.
    mode = 'travel';
    const resumed = await weft(['resume', line.id, '--dir', dir, '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const done = oneLine(resumed.stdout);
    expect(done).toMatchObject({ id: line.id, status: 'completed', journal: line.journal });
    expect(done.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    const after = journalRecords(line.journal);
    expect(after.at(-1)!.kind).toBe('invocation.sealed');
    expect(after.at(-1)!.body.fingerprint).toBe(done.fingerprint);
    expect((await verifyJournal(line.journal, { publicKey: done.publicKey! })).code).toBe(0);
    const listed = await inWorkspace(dir, (ws) => ws.runtime.list());
    expect(listed.find((r) => r.id === line.id)).toMatchObject({ status: 'completed' });
  });

  test('HTTP 404 before any reply: failed and sealed (a fingerprint, verifiable), saying to start a new run with the right model', async () => {
    const dir = path.join(root, 'http-404');
    mode = 'http-404';
    const run = await weft(['run', 'travel', '--model-url', url, '--model', 'no-such-model', '--json', '--dir', dir]);
    const line = oneLine(run.stdout);
    expect(run.code).toBe(1);
    expect(line.status).toBe('failed');
    expect(line.reason).toMatch(/start a new run with the right model/);
    expect(line.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    const records = journalRecords(line.journal);
    expect(records.at(-1)!.kind).toBe('invocation.sealed');
    expect(records.filter((r) => r.kind === 'model.failed')).toEqual([expect.objectContaining({ body: expect.objectContaining({ class: 'permanent', code: 'model.not_found' }) })]);
    expect((await verifyJournal(line.journal, { publicKey: line.publicKey! })).code).toBe(0);
  });

  test('an empty intent: failed and sealed (intent.empty) before the model is asked', async () => {
    const dir = path.join(root, 'empty');
    mode = 'travel';
    requests = 0;
    const run = await weft(['run', 'travel', '', '--model-url', url, '--model', 'm', '--json', '--dir', dir]);
    const line = oneLine(run.stdout);
    expect(line.status).toBe('failed');
    expect(line.reason).toMatch(/intent is empty/);
    expect(line.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(requests).toBe(0);
    const records = journalRecords(line.journal);
    expect(records.find((r) => r.kind === 'invocation.failed')!.body).toMatchObject({ code: 'intent.empty' });
    expect((await verifyJournal(line.journal, { publicKey: line.publicKey! })).code).toBe(0);
  });
});

describe('defect 1 (CLI): approve --reject ends the invocation terminal and sealed', () => {

  test('a rejected booking: the run goes on to a terminal, sealed, verifiable end — never left running', async () => {
    const dir = path.join(root, 'reject');
    const domain = writeStrictTravelDomain(root, { version: 'strict-fc' });
    const line = await runInWorkspace(domain, { dir });
    expect(line.status, line.reason ?? '').toBe('awaiting_approval');

    const rejected = await weft(['approve', line.id, '--by', 'ops', '--reject', '--note', 'too expensive', '--dir', dir, '--json']);
    expect(rejected.stderr).not.toMatch(/at .*\.js:\d+/);
    const end = oneLine(rejected.stdout);
    expect(['failed', 'handed_off']).toContain(end.status);
    expect(end.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(rejected.code).toBe(end.status === 'failed' ? 1 : 0);

    const records = journalRecords(line.journal);
    expect(records.find((r) => r.kind === 'approval.decided')!.body).toMatchObject({ decision: 'rejected', by: 'ops', note: 'too expensive' });
    expect(records.at(-1)!.kind).toBe('invocation.sealed');
    expect(records.map((r) => r.kind)).toContain(end.status === 'failed' ? 'invocation.failed' : 'invocation.handed_off');
    // Nothing the person rejected was charged.
    expect(records.filter((r) => r.kind === 'step.dispatched' && r.body.actuator === 'card.charge')).toHaveLength(0);
    expect((await verifyJournal(line.journal, { publicKey: end.publicKey! })).code).toBe(0);

    const listed = await inWorkspace(dir, (ws) => ws.runtime.list(), domain);
    expect(listed.find((r) => r.id === line.id)).toMatchObject({ status: end.status });
  });
});
