/**
 * A tenant-scoped viewer is told no server path and nothing of other tenants — over the `/live`
 * WebSocket and in the approver's answers (inspector/tenant-scrub.ts), where the HTTP routes
 * already were. Plain HTTP and WebSocket clients, no browser: a workspace with an acme run awaiting
 * approval and a globex run, a viewer with an all-seeing token and one token per tenant.
 *
 * - The socket: acme following globex's journal is refused as an unknown id, naming "the store",
 *   not its folder, and worded as an id that does not exist; when acme's snapshot is damaged, the
 *   row its list socket gets says how to fix it without the server's folder (the all-seeing
 *   socket's row names the folder), and it never gets a globex row.
 * - The approver: acme's decision on globex's invocation is a 404 worded as an unknown id's; its
 *   answers — why decisions are off (a store that takes no writes), a decision the store fails —
 *   name no server path to acme, where the all-seeing token's answers name it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { WeftError } from '../journal/errors.js';
import { createInspectorServer } from '../inspector/server.js';
import { FileStore } from '../stores/file.js';
import { assertBuilt } from './support/cli.js';
import { serveInspector, type ServedViewer } from './support/inspector.js';
import { runInWorkspace, type RunLine } from './support/runs-here.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-tenant-scrub-'));
const dir = path.join(root, 'ws');
const ALL = 'all-seeing-token-0123456789';
const ACME = 'acme-tenant-token-0123456789';
const GLOBEX = 'globex-tenant-token-0123456789';

let viewer: ServedViewer;
let acmeWaiting: RunLine;
let globexDone: RunLine;

beforeAll(async () => {
  assertBuilt();
  const strict = writeStrictTravelDomain(mkdtempSync(path.join(root, 'domain-')));
  acmeWaiting = await runInWorkspace(strict, { dir, tenant: 'acme', seed: '2' });
  expect(acmeWaiting.status).toBe('awaiting_approval');
  globexDone = await runInWorkspace('travel', { dir, tenant: 'globex', seed: '3' });
  expect(globexDone.status).toBe('completed');
  viewer = await serveInspector(['--dir', dir, '--token', ALL, '--tenant-token', `acme=${ACME}`, '--tenant-token', `globex=${GLOBEX}`]);
}, 180_000);

afterAll(async () => {
  await viewer?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** An upgrade to `/live?query` with `token`: its status and, when refused, the text of the refusal. */
function upgrade(token: string, query: string): Promise<{ status: number; text: string }> {
  const { port } = new URL(viewer.origin);
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port: Number(port),
      path: `/live?${query}`,
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', host: `127.0.0.1:${port}`, authorization: `Bearer ${token}` },
    });
    req.on('upgrade', (res, socket) => (socket.destroy(), resolve({ status: res.statusCode ?? 0, text: '' })));
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A list socket with `token`: every message it gets, and a wait for one that passes `test`. */
function listSocket(token: string): { messages: string[]; opened: Promise<void>; until(test: (m: string) => boolean): Promise<string>; close(): void } {
  const ws = new WebSocket(`${viewer.origin.replace(/^http/, 'ws')}/live?list=1`, { headers: { authorization: `Bearer ${token}` } });
  const messages: string[] = [];
  const waiters: Array<{ test: (m: string) => boolean; resolve: (m: string) => void }> = [];
  ws.on('message', (data) => {
    const text = String(data);
    messages.push(text);
    for (const w of [...waiters]) if (w.test(text)) (waiters.splice(waiters.indexOf(w), 1), w.resolve(text));
  });
  const opened = new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)));
  return {
    messages,
    opened,
    until: (test) => {
      const seen = messages.find(test);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ test, resolve }));
    },
    close: () => ws.close(),
  };
}

/** The snapshot file beside a run's journal in the workspace. */
const snapshotOf = (run: RunLine) => path.join(path.dirname(run.journal), 'snapshot.json');

async function decide(token: string, id: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${viewer.origin}/api/invocations/${id}/decision`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, origin: viewer.origin, 'content-type': 'application/json' },
    body: JSON.stringify({ decision: 'approved', by: 'auditor' }),
    signal: AbortSignal.timeout(60_000),
  });
  return { status: res.status, text: await res.text() };
}

describe("a tenant's viewer is told no server path and nothing of other tenants", () => {
  test('the WebSocket: a refusal names "the store", not its folder; a damaged row says how to fix it without the folder; no other tenant\'s row', async () => {
    const refused = await upgrade(ACME, `follow=${globexDone.id}&from=0`);
    expect(refused.status).toBe(404);
    expect(refused.text).toContain('in the store; weft ls lists them');
    expect(refused.text).not.toContain(root);
    expect(refused.text).not.toContain('globex');
    // Worded as an id that does not exist at all.
    const unknown = await upgrade(ACME, 'follow=inv-unknown-0000&from=0');
    expect(unknown.status).toBe(404);
    expect(unknown.text.replace('inv-unknown-0000', globexDone.id)).toBe(refused.text);

    const acme = listSocket(ACME);
    const all = listSocket(ALL);
    await Promise.all([acme.opened, all.opened]);
    // acme's resting snapshot damaged on the server: its row now says how to fix it — with the server's folder, to those who may see it.
    writeFileSync(snapshotOf(acmeWaiting), '{ damaged');
    const damaged = (m: string) => m.includes(acmeWaiting.id) && m.includes('"status":"damaged"');
    const [mine, operators] = await Promise.all([acme.until(damaged), all.until(damaged)]);
    expect(operators).toContain(root);
    expect(mine).not.toContain(root);
    expect(mine).toContain('the store');
    const row = (JSON.parse(mine) as { rows: Array<{ id: string; fix?: string }> }).rows.find((r) => r.id === acmeWaiting.id)!;
    expect(row.fix).toMatch(/^mv the store\/.*snapshot\.json/);
    expect(acme.messages.filter((m) => m.includes(globexDone.id) || m.includes('globex'))).toEqual([]);
    acme.close();
    all.close();
  });

  test("the approver: another tenant's id is a 404 worded as an unknown one", async () => {
    const theirs = await decide(ACME, globexDone.id);
    expect(theirs.status).toBe(404);
    expect(theirs.text).toContain('in the store; weft ls lists them');
    expect(theirs.text).not.toContain(root);
    expect(theirs.text).not.toContain('globex');
  });

  test("the approver's refusals and errors name no server path to a tenant (the all-seeing token's do)", async () => {
    // The viewer over the same store, with an approver whose store refuses writes and whose decision fails, each saying where.
    const store = new FileStore(path.dirname(path.dirname(path.dirname(acmeWaiting.journal))));
    const where = store.name.replace(/^file:/, '');
    let writable: { ok: true } | { ok: false; reason: string } = { ok: false, reason: `the store at ${where} is mounted read-only` };
    const approver = {
      get writable() {
        return writable;
      },
      resumes: 'serve' as const,
      decide: async (id: string) => {
        throw new WeftError('store.unavailable', 'transient', `cannot write ${path.join(where, 'invocations', id, 'inbox.json')}: the disk is full`);
      },
    };
    const server = createInspectorServer({ store, location: `--dir ${dir}`, token: ALL, tenantTokens: [{ tenant: 'acme', token: ACME }], approver });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const ask = async (token: string, init: RequestInit = {}, route = `/api/invocations/${acmeWaiting.id}/decision`) => {
        const res = await fetch(`${origin}${route}`, { ...init, headers: { authorization: `Bearer ${token}`, origin, 'content-type': 'application/json' }, signal: AbortSignal.timeout(60_000) });
        return { status: res.status, text: await res.text() };
      };
      const post = { method: 'POST', body: JSON.stringify({ decision: 'approved', by: 'auditor' }) };
      // What the page may do, and a decision refused because the store takes no writes.
      for (const [init, route, status] of [[{}, '/api/approvals', 200], [post, undefined, 409]] as const) {
        const operators = await ask(ALL, init, route);
        const mine = await ask(ACME, init, route);
        expect([operators.status, mine.status]).toEqual([status, status]);
        expect(operators.text).toContain(where);
        expect(mine.text).not.toContain(where);
        expect(mine.text).not.toContain(root);
        expect(mine.text).toContain('the store is mounted read-only');
      }
      // A decision the store fails: the error, without the folder.
      writable = { ok: true };
      const operators = await ask(ALL, post);
      const mine = await ask(ACME, post);
      expect([operators.status, mine.status]).toEqual([409, 409]);
      expect(operators.text).toContain(where);
      expect(mine.text).not.toContain(root);
      expect(JSON.parse(mine.text)).toEqual({ error: `cannot write the store/invocations/${acmeWaiting.id}/inbox.json: the disk is full`, code: 'store.unavailable' });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
