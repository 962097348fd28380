/**
 * The viewer's security, in a real headless Chromium where a page is involved:
 *
 * - Tenant tokens: a viewer with `--token` (sees all) and `--tenant-token acme=…`, `globex=…`. A
 *   tenant's token sees only its tenant's invocations — in the list, the search, every route about
 *   one invocation (another tenant's id is a 404 worded as an unknown id's, so ids do not leak) and
 *   the WebSocket (rows and journals); its decision on another tenant's invocation is a 404 and
 *   writes nothing, while that tenant's own token decides it. The cookie set from ?token= carries
 *   the token it came from.
 * - Redaction: a user domain (test/support/private-travel.ts) marks the card of `card.charge` and the
 *   address `message.send` wrote to. Every HTTP body and WebSocket frame the browser receives while
 *   the list and the invocation pages are open — one run completed, one run watched live — and
 *   every API route fetched directly hold neither value, though the journals on disk do; the page
 *   says the server verified the journal (the page cannot: its bytes changed).
 * - The same over a Redis store (the marks travel in its metadata, the viewer has no --domain).
 * - Without a browser, the leaks a review found: a mark keyed by OPERATOR (the amount charged, a
 *   number) is kept under its actuator at start, so the journal's dispatch is redacted; a plan tree
 *   gives args by position, and the charge's amount and card are redacted there, dispatched or not,
 *   with the amount taken out wherever a whole JSON value equals it; metadata the store cannot read
 *   is not "no marks" — every route answers 503 and a followed journal's WebSocket is closed with
 *   the reason; a failed verdict's problem (quoting a line) is redacted.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { MemoryStore } from '../stores/memory.js';
import { DATA, redactRecords, redactValue, REDACTED, STRUCTURAL, type RedactionMarks } from '../journal/redaction.js';
import type { JournalRecord } from '../journal/records.js';
import type { JournalStore } from '../journal/store.js';
import { FileStore } from '../stores/file.js';
import { scopeOf, visible } from '../inspector/access.js';
import { evaluablesFrom, loadPlanTrees, type PlanNodeView, type PlansView } from '../inspector/plan-trees.js';
import { createInspectorServer } from '../inspector/server.js';
import { assertBuilt, weft } from './support/cli.js';
import { launchBrowser, requireChromium, pageScreenshot } from './support/chromium.js';
import { openPage, startViewer } from './support/inspect-viewer.js';
import { serveInspector, type ServedViewer as Viewer } from './support/inspector.js';
import { PRIVATE_CARD, PRIVATE_EMAIL, writePrivateTravelDomain } from './support/private-travel.js';
import { requireRedis, startRedis, type RedisServer } from './support/redis-server.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';
import { runInWorkspace, type RunLine } from './support/runs-here.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-inspect-security-'));
const dir = path.join(root, 'ws');
const hasChromium = requireChromium();
let browser: Browser;

const ALL = 'all-seeing-token-0123456789';
const ACME = 'acme-tenant-token-0123456789';
const GLOBEX = 'globex-tenant-token-0123456789';

const last = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as RunLine;

/** `weft run … --dir D --json` as a child: a run from another process the list pages see arrive, and the runs into Redis. */
async function run(args: string[], env: Record<string, string> = {}, where = dir): Promise<RunLine> {
  const result = await weft(['run', ...args, '--dir', where, '--json'], env);
  const line = last(result.stdout);
  expect(['completed', 'awaiting_approval'], result.stderr).toContain(line.status);
  return line;
}

/** The same run made in this process (test/support/runs-here.ts): the fixtures the viewer shows. */
async function made(domain: string, options: { tenant: string; seed?: string; observeGate?: Promise<void> }, where = dir): Promise<RunLine> {
  const line = await runInWorkspace(domain, { dir: where, ...options });
  expect(['completed', 'awaiting_approval'], line.reason ?? '').toContain(line.status);
  return line;
}

/** The invocations: acme's with marks (completed; awaiting approval), globex's plain travel (completed; awaiting approval). */
let acmeDone: RunLine;
let acmeWaiting: RunLine;
let globexDone: RunLine;
/** A workspace holding only invocations with marks (the travel world is the same in every run: an unmarked one shows the card). */
const privateDir = path.join(root, 'private');
let privateDone: RunLine;
let privateWaiting: RunLine;
let privateViewer: Viewer;
let globexWaiting: RunLine;
let privateDomain: string;
let viewer: Viewer;

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
async function get(path: string, token: string, from: Viewer = viewer): Promise<{ status: number; text: string }> {
  const res = await fetch(`${from.origin}${path}`, { headers: bearer(token), signal: AbortSignal.timeout(60_000) });
  return { status: res.status, text: await res.text() };
}
const ids = async (token: string, query = '') => {
  const answer = JSON.parse((await get(`/api/invocations${query}`, token)).text) as Array<{ id: string }> | { rows: Array<{ id: string }> };
  return (Array.isArray(answer) ? answer : answer.rows).map((r) => r.id).sort(); // the whole list, or a page of it
};

beforeAll(async () => {
  assertBuilt();
  if (!hasChromium) return;
  browser = await launchBrowser();
  privateDomain = writePrivateTravelDomain(mkdtempSync(path.join(root, 'domain-')));
  const privateStrict = writePrivateTravelDomain(mkdtempSync(path.join(root, 'domain-')), { limit: 100, version: 'private-strict' });
  const strict = writeStrictTravelDomain(mkdtempSync(path.join(root, 'domain-')), { version: 'security' });
  acmeDone = await made(privateDomain, { tenant: 'acme' });
  acmeWaiting = await made(privateStrict, { tenant: 'acme', seed: '2' });
  globexDone = await made('travel', { tenant: 'globex' });
  globexWaiting = await made(strict, { tenant: 'globex', seed: '3' });
  privateDone = await made(privateDomain, { tenant: 'acme' }, privateDir);
  privateWaiting = await made(privateStrict, { tenant: 'acme', seed: '2' }, privateDir);
  expect([acmeWaiting.status, globexWaiting.status]).toEqual(['awaiting_approval', 'awaiting_approval']);
  viewer = await serveInspector(['--dir', dir, '--public-key', acmeDone.publicKey, '--token', ALL, '--tenant-token', `acme=${ACME}`, '--tenant-token', `globex=${GLOBEX}`]);
  privateViewer = await serveInspector(['--dir', privateDir, '--public-key', privateDone.publicKey, '--token', ALL, '--tenant-token', `acme=${ACME}`]);
}, 240_000);

afterAll(async () => {
  await viewer?.stop();
  await privateViewer?.stop();
  await browser?.close();
  rmSync(root, { recursive: true, force: true });
});

/** An upgrade request to `/live?query`: its HTTP status (101 when accepted). */
function upgradeStatus(token: string, query: string, to: Viewer = viewer): Promise<number> {
  const { port } = new URL(to.origin);
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port: Number(port),
      path: `/live?${query}`,
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', host: `127.0.0.1:${port}`, ...bearer(token) },
    });
    req.on('upgrade', (res, socket) => (socket.destroy(), resolve(res.statusCode ?? 0)));
    req.on('response', (res) => (res.resume(), resolve(res.statusCode ?? 0)));
    req.on('error', reject);
    req.end();
  });
}

/** Everything a page receives and sends: response bodies and WebSocket frames, as text. */
function capture(page: Page): { payloads: string[]; settle: () => Promise<void> } {
  const payloads: string[] = [];
  const pending: Array<Promise<void>> = [];
  page.on('response', (res) => {
    pending.push(
      res.text().then(
        (text) => void payloads.push(`${res.url()}\n${text}`),
        () => undefined, // a body gone with a navigation
      ),
    );
  });
  page.on('websocket', (ws) => {
    ws.on('framereceived', (f) => void payloads.push(`ws< ${ws.url()}\n${f.payload.toString()}`));
    ws.on('framesent', (f) => void payloads.push(`ws> ${ws.url()}\n${f.payload.toString()}`));
  });
  // A body cut off by a navigation may never settle in Playwright (the page never received it
  // whole either): each is waited for at most 15 s, so a cut request cannot hang the test.
  const settled = (p: Promise<void>) => Promise.race([p, new Promise<void>((resolve) => setTimeout(resolve, 15_000).unref())]);
  return { payloads, settle: async () => void (await Promise.all(pending.map(settled))) };
}

/** The payloads that hold a marked value: where they came from, and the text around it. */
const leaks = (payloads: readonly string[]) =>
  payloads.flatMap((p) => {
    const at = Math.max(p.indexOf(PRIVATE_CARD), p.indexOf(PRIVATE_EMAIL));
    return at < 0 ? [] : [`${p.split('\n')[0]} … ${p.slice(Math.max(0, at - 200), at + 40)}`];
  });

describe.runIf(hasChromium)('tenant tokens', () => {
  test("a tenant's token lists, searches and opens only its tenant's invocations; another's id is a 404 like an unknown one", async () => {
    expect(await ids(ALL)).toEqual([acmeDone.id, acmeWaiting.id, globexDone.id, globexWaiting.id].sort());
    expect(await ids(ACME)).toEqual([acmeDone.id, acmeWaiting.id].sort());
    expect(await ids(GLOBEX)).toEqual([globexDone.id, globexWaiting.id].sort());
    expect(await ids(ACME, '?tenant=globex')).not.toContain(globexDone.id); // a query cannot widen the scope
    // The server's search (a page of the list) looks only at what the token may see, and says nothing of the rest.
    expect(await ids(ACME, `?q=${globexDone.id}`)).toEqual([]);
    expect(await ids(GLOBEX, `?q=${globexDone.id.slice(4, 16)}`)).toEqual([globexDone.id]);
    const acmePage = JSON.parse((await get('/api/invocations?limit=10', ACME)).text) as { all: number; tenants: string[] };
    expect(acmePage).toMatchObject({ all: 2, tenants: ['acme'] });
    for (const suffix of ['', '/journal', '/verdict', '/trail', '/plans', '/decision']) {
      const other = await get(`/api/invocations/${globexDone.id}${suffix}`, ACME);
      expect(other.status, suffix).toBe(404);
      expect(other.text).not.toContain('globex');
      const unknown = await get(`/api/invocations/inv-nobody${suffix}`, ACME);
      expect(other.text.replace(globexDone.id, 'X'), suffix).toBe(unknown.text.replace('inv-nobody', 'X'));
    }
    for (const suffix of ['', '/journal', '/verdict']) expect((await get(`/api/invocations/${globexDone.id}${suffix}`, GLOBEX)).status, suffix).toBe(200);
    expect((await get(`/api/invocations/${acmeDone.id}`, GLOBEX)).status).toBe(404);
    expect((await get(`/invocations/${globexDone.id}`, ACME)).status).toBe(404);
    expect((await get('/api/invocations', 'a-wrong-token-of-enough-length')).status).toBe(401);
    expect((await fetch(`${viewer.origin}/api/invocations`)).status).toBe(401);

    // The search box in the page searches what the server sent: acme's page finds no globex id.
    const { page, errors } = await openPage(browser);
    await page.goto(`${viewer.origin}/?token=${ACME}`);
    await page.locator('table.invocations tr[data-id]').first().waitFor();
    expect((await page.locator('tr[data-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')))).sort()).toEqual([acmeDone.id, acmeWaiting.id].sort());
    expect(await page.locator('#filter-tenant option').allTextContents()).toEqual(['every tenant', 'acme']);
    await page.fill('#search', globexDone.id.slice(0, 12));
    await page.locator('td.empty', { hasText: 'nothing matches' }).waitFor();
    // The cookie set from ?token= is acme's: the page's own requests (no header) see acme's scope.
    const cookies = await page.context().cookies();
    expect(cookies.find((c) => c.name === 'weft_inspect_token')?.value).toBe(ACME);
    const viaCookie = await page.context().request.get(`${viewer.origin}/api/invocations`);
    expect(((await viaCookie.json()) as Array<{ id: string }>).map((r) => r.id).sort()).toEqual([acmeDone.id, acmeWaiting.id].sort());
    expect(errors).toEqual([]);
    await page.close();
  });

  test("the WebSocket: another tenant's journal is refused (404), and a list socket gets only its tenant's rows", async () => {
    expect(await upgradeStatus(ACME, `follow=${globexDone.id}&from=0`)).toBe(404);
    expect(await upgradeStatus(ACME, `follow=${acmeDone.id}&from=0`)).toBe(101);
    expect(await upgradeStatus(GLOBEX, `follow=${globexDone.id}&from=0`)).toBe(101);
    expect(await upgradeStatus(ALL, `follow=${globexDone.id}&from=0`)).toBe(101);

    const { page: acmePage } = await openPage(browser);
    const acmeSeen = capture(acmePage);
    const { page: allPage } = await openPage(browser);
    for (const [page, token] of [[acmePage, ACME], [allPage, ALL]] as const) {
      await page.goto(`${viewer.origin}/?token=${token}`);
      await page.locator('body[data-live="live"]').waitFor({ state: 'attached' });
    }
    // A new globex run and a new acme run while both list pages are open.
    const globexNew = await made('travel', { tenant: 'globex', seed: '11' });
    const acmeNew = await run([privateDomain, '--tenant', 'acme', '--seed', '12']);
    // The all-seeing page gets both rows; the acme page gets its own (so rows were sent to both sockets).
    await allPage.locator(`tr[data-id="${globexNew.id}"][data-status="completed"]`).waitFor({ timeout: 30_000 });
    await allPage.locator(`tr[data-id="${acmeNew.id}"][data-status="completed"]`).waitFor({ timeout: 30_000 });
    await acmePage.locator(`tr[data-id="${acmeNew.id}"][data-status="completed"]`).waitFor({ timeout: 30_000 });
    await acmeSeen.settle();
    const frames = acmeSeen.payloads.filter((p) => p.startsWith('ws<'));
    expect(frames.some((f) => f.includes(acmeNew.id))).toBe(true);
    expect(acmeSeen.payloads.filter((p) => p.includes(globexNew.id) || p.includes('globex'))).toEqual([]);
    expect(await acmePage.locator(`tr[data-id="${globexNew.id}"]`).count()).toBe(0);
    await acmePage.close();
    await allPage.close();
  });

  test("a decision on another tenant's invocation is refused (404) and writes nothing; its own tenant's token decides it", async () => {
    const inbox = path.join(dir, 'invocations', globexWaiting.id, 'inbox.json');
    const post = (token: string) =>
      fetch(`${viewer.origin}/api/invocations/${globexWaiting.id}/decision`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: viewer.origin, ...bearer(token) },
        body: JSON.stringify({ decision: 'approved', by: 'mallory' }),
      });
    const journalBefore = readFileSync(globexWaiting.journal, 'utf8');
    expect((await post(ACME)).status).toBe(404);
    expect(existsSync(inbox)).toBe(false);
    expect(readFileSync(globexWaiting.journal, 'utf8')).toBe(journalBefore); // the journal's records, byte for byte
    expect((await post(GLOBEX)).status).toBe(200);
    expect(JSON.parse(readFileSync(inbox, 'utf8'))).toMatchObject({ decision: 'approved', by: 'mallory' });
  });
});

describe.runIf(hasChromium)('redaction', () => {
  test('a marked field reaches no HTTP body and no WebSocket frame, in the browser or from any route; the page says the server verified the journal', async () => {
    // What is hidden is there: the journals on disk hold both values (this test could fail).
    const onDisk = readFileSync(privateDone.journal, 'utf8');
    expect(onDisk).toContain(PRIVATE_CARD);
    expect(onDisk).toContain(PRIVATE_EMAIL);
    expect(readFileSync(privateWaiting.journal, 'utf8')).toContain(PRIVATE_CARD);

    const { page, errors } = await openPage(browser);
    const seen = capture(page);
    // The list, then the completed run's page.
    await page.goto(`${privateViewer.origin}/?token=${ALL}`);
    await page.locator(`tr[data-id="${privateDone.id}"]`).waitFor();
    await page.goto(`${privateViewer.origin}/invocations/${privateDone.id}`);
    await page.locator('#verdict h2').waitFor();
    expect(await page.locator('#verdict h2').textContent()).toBe('✓ verified by the server');
    expect(await page.locator('#verdict-source').textContent()).toBe('verified by the server (this journal has redacted fields, so the page cannot check it itself)');
    const fingerprint = (await page.locator('#fingerprint').textContent())!;
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect((await weft(['verify', privateDone.journal, '--public-key', privateDone.publicKey, '--json'])).stdout).toContain(fingerprint);
    expect(await page.locator('main').textContent()).toContain('[redacted]');
    await pageScreenshot(page, 'weft-inspect-redacted.png');
    // The one awaiting approval: its asked steps and its observations.
    await page.goto(`${privateViewer.origin}/invocations/${privateWaiting.id}`);
    await page.locator('#verdict h2').waitFor();
    await page.locator('#next table.asked').waitFor();
    // A run watched live: its records arrive over the WebSocket while the page is open.
    const { page: list } = await openPage(browser);
    const listSeen = capture(list);
    await list.goto(`${privateViewer.origin}/?token=${ALL}`);
    await list.locator('body[data-live="live"]').waitFor({ state: 'attached' });
    // Held before it observes the world until its page is open (an event, not a delay): the rest of its records arrive live.
    let release!: () => void;
    const observeGate = new Promise<void>((resolve) => (release = resolve));
    onTestFinished(() => release());
    const running = made(privateDomain, { tenant: 'acme', seed: '21', observeGate }, privateDir);
    const fresh = list.locator('tr[data-status="running"]').first();
    await fresh.waitFor({ timeout: 60_000 });
    const liveId = (await fresh.getAttribute('data-id'))!;
    await page.goto(`${privateViewer.origin}/invocations/${liveId}`);
    await page.locator('#verdict').waitFor();
    release();
    const done = await running;
    expect(done.id).toBe(liveId);
    await page.locator('#verdict h2', { hasText: '✓ verified by the server' }).waitFor({ timeout: 60_000 });
    await page.locator('.summary .status', { hasText: 'completed' }).waitFor({ timeout: 30_000 });
    expect(readFileSync(done.journal, 'utf8')).toContain(PRIVATE_EMAIL);
    await seen.settle();
    await listSeen.settle();
    const frames = [...seen.payloads, ...listSeen.payloads].filter((p) => p.startsWith('ws<'));
    expect(frames.some((f) => f.includes('"type":"records"') && f.includes('[redacted]'))).toBe(true); // records did arrive live, redacted
    expect(leaks([...seen.payloads, ...listSeen.payloads])).toEqual([]);
    expect(errors).toEqual([]);
    await list.close();
    await page.close();

    // Every route, fetched directly, with each token that may see it.
    const direct: string[] = [];
    for (const token of [ALL, ACME]) {
      for (const route of ['/api/invocations', '/api/approvals', '/api/trusted-key', '/api/viewer']) direct.push((await get(route, token, privateViewer)).text);
      for (const id of [privateDone.id, privateWaiting.id, liveId]) {
        for (const suffix of ['', '/journal', '/verdict']) {
          const res = await get(`/api/invocations/${id}${suffix}`, token, privateViewer);
          expect(res.status, `${id}${suffix}`).toBe(200);
          direct.push(res.text);
        }
      }
    }
    expect(leaks(direct)).toEqual([]);
    expect(direct.join('\n')).toContain('[redacted]');
    // The awaiting one's asked steps are there, their card redacted.
    const waiting = JSON.parse((await get(`/api/invocations/${privateWaiting.id}`, ALL, privateViewer)).text) as { waiting: { steps: Array<{ actuator: string; args: Record<string, unknown> }> } };
    expect(waiting.waiting.steps.find((s) => s.actuator === 'card.charge')?.args.card).toBe('[redacted]');
    // An invocation without marks is sent as it is, and verified by the page itself.
    expect((await get(`/api/invocations/${globexDone.id}/journal`, ALL)).text).toBe(readFileSync(globexDone.journal, 'utf8'));
  }, 240_000);
});

const redis = requireRedis();

describe.runIf(hasChromium && (redis || process.env.CI === 'true'))('over a Redis store', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => server?.stop());

  test("a tenant's token sees only its tenant's; marked fields reach no payload; the page says the server verified the journal", async () => {
    const keysDir = path.join(root, 'redis-keys');
    const onRedis = (args: string[]) => run([...args, '--redis', server.url], {}, keysDir);
    const mine = await onRedis([privateDomain, '--tenant', 'acme', '--seed', '31']);
    const theirs = await onRedis(['travel', '--tenant', 'globex', '--seed', '32']);
    const r = await serveInspector(['--redis', server.url, '--public-key', mine.publicKey, '--token', ALL, '--tenant-token', `acme=${ACME}`]);
    try {
      const list = JSON.parse((await get('/api/invocations', ACME, r)).text) as Array<{ id: string }>;
      expect(list.map((row) => row.id)).toEqual([mine.id]);
      expect((await get(`/api/invocations/${theirs.id}`, ACME, r)).status).toBe(404);
      expect((await get(`/api/invocations/${theirs.id}/journal`, ACME, r)).status).toBe(404);
      expect(await upgradeStatus(ACME, `follow=${theirs.id}&from=0`, r)).toBe(404);
      const direct: string[] = [];
      for (const suffix of ['', '/journal', '/verdict']) {
        const res = await get(`/api/invocations/${mine.id}${suffix}`, ACME, r);
        expect(res.status, suffix).toBe(200);
        direct.push(res.text);
      }
      expect(direct.join('\n')).toContain('[redacted]');
      expect(leaks(direct)).toEqual([]);
      const { page, errors } = await openPage(browser);
      const seen = capture(page);
      await page.goto(`${r.origin}/?token=${ACME}`);
      await page.locator(`tr[data-id="${mine.id}"]`).waitFor();
      await page.goto(`${r.origin}/invocations/${mine.id}`);
      await page.locator('#verdict h2', { hasText: '✓ verified by the server' }).waitFor();
      expect(await page.locator('#verdict-source').textContent()).toBe('verified by the server (this journal has redacted fields, so the page cannot check it itself)');
      await seen.settle();
      expect(seen.payloads.length).toBeGreaterThan(3);
      expect(leaks(seen.payloads)).toEqual([]);
      expect(seen.payloads.filter((p) => p.includes(theirs.id))).toEqual([]);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await r.stop();
    }
  }, 180_000);
});

describe('redaction marks and scopes, without a browser', () => {
  const marks: RedactionMarks = { args: { 'card.charge': ['card'] }, results: { 'message.send': ['to'] }, observations: ['facts.[0=card-of].2'] };
  const rec = (seq: number, kind: string, body: Record<string, unknown>) => ({ seq, kind, epoch: 1, body, prev: '0', hash: '0' }) as unknown as JournalRecord;

  test('a completion is redacted by the actuator its key was dispatched to; the values removed are cut out of the rest', () => {
    const { records } = redactRecords(
      [
        rec(0, 'state.observed', { actuator: 'obs', key: 'o', state: { facts: [['card-of', 'me', 'card-1234'], ['home', 'me', 'london']] } }),
        rec(1, 'model.requested', { purpose: 'parse', attempt: 1, request: 'pay with card-1234 please' }),
        rec(2, 'step.dispatched', { step: 0, actuator: 'message.send', args: { to: 'me' }, key: 'k1', attempt: 1 }),
        rec(3, 'step.completed', { step: 0, key: 'k1', attempt: 1, result: { to: 'someone@example.com', subject: 'hi' } }),
        rec(4, 'step.dispatched', { step: 1, actuator: 'card.charge', args: { card: 'card-1234', amount: 5 }, key: 'k2', attempt: 1 }),
      ],
      marks,
    );
    const bodies = records.map((r) => r.body as Record<string, any>);
    expect(bodies[0]!.state.facts).toEqual([['card-of', 'me', REDACTED], ['home', 'me', 'london']]);
    expect(bodies[1]!.request).toBe(`pay with ${REDACTED} please`);
    expect(bodies[2]!.args).toEqual({ to: 'me' }); // message.send's ARGS are not marked, its result is
    expect(bodies[3]!.result).toEqual({ to: REDACTED, subject: 'hi' });
    expect(bodies[4]!.args).toEqual({ card: REDACTED, amount: 5 });
    expect(JSON.stringify(records)).not.toMatch(/card-1234|someone@example/);
  });

  test('derived JSON: steps with an actuator (or an operator) and args or a result are redacted wherever they sit', () => {
    const description = { epochs: [{ steps: [{ operator: 'charge_card', actuator: 'card.charge', args: { card: 'card-9999', amount: 1 }, result: null }] }], waiting: { steps: [{ actuator: 'card.charge', args: { card: 'card-9999' } }] }, note: 'paid by card-9999' };
    const out = redactValue(description, marks);
    expect(out.epochs[0]!.steps[0]!.args).toEqual({ card: REDACTED, amount: 1 });
    expect(out.waiting.steps[0]!.args.card).toBe(REDACTED);
    expect(out.note).toBe(`paid by ${REDACTED}`);
  });

  test("the marks travel in the store's metadata, normalized; malformed marks are refused on write and read as none", async () => {
    const store = new MemoryStore();
    const library = 'a'.repeat(64);
    await store.putMetadata('m', { library, domain: 'private-travel', redact: { results: { 'message.send': ['to', 'to'] }, args: {} } });
    expect(await store.getMetadata('m')).toEqual({ library, domain: 'private-travel', redact: { args: {}, results: { 'message.send': ['to'] } } });
    await store.putMetadata('n', { library, redact: {} });
    expect(await store.getMetadata('n')).toEqual({ library }); // marks that mark nothing are not kept
    await expect(store.putMetadata('x', { library, redact: { args: { a: 'card' } } as never })).rejects.toThrow(TypeError);
  });

  test('one access decision: the all-seeing token, a tenant token, or none (401)', () => {
    const tokens = { token: ALL, tenantTokens: [{ tenant: 'acme', token: ACME }] };
    expect(scopeOf(tokens, ALL)).toEqual({ kind: 'all' });
    expect(scopeOf(tokens, ACME)).toEqual({ kind: 'tenant', tenant: 'acme' });
    expect(scopeOf(tokens, GLOBEX)).toBeUndefined();
    expect(scopeOf(tokens, undefined)).toBeUndefined();
    expect(scopeOf({}, undefined)).toEqual({ kind: 'all' }); // a loopback viewer without tokens
    expect(visible({ kind: 'tenant', tenant: 'acme' }, { tenant: 'acme' })).toBe(true);
    expect(visible({ kind: 'tenant', tenant: 'acme' }, { tenant: 'globex' })).toBe(false);
    expect(visible({ kind: 'tenant', tenant: 'acme' }, null)).toBe(false);
  });

  test('the CLI: a non-loopback bind takes a tenant token alone; a malformed or short one is a usage error', async () => {
    const short = await weft(['inspect', '--dir', dir, '--port', '0', '--tenant-token', 'acme=short']);
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('at least 16 characters');
    const malformed = await weft(['inspect', '--dir', dir, '--port', '0', '--tenant-token', 'no-equals-sign-here-at-all']);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('TENANT=TOKEN');
    const bare = await weft(['inspect', '--dir', dir, '--port', '0', '--host', '0.0.0.0']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('--tenant-token');
    const tenantOnly = await startViewer(['--dir', dir, '--host', '0.0.0.0', '--tenant-token', `acme=${ACME}`]);
    try {
      expect((await fetch(`${tenantOnly.origin.replace('0.0.0.0', '127.0.0.1')}/api/invocations`)).status).toBe(401);
      expect((await fetch(`${tenantOnly.origin.replace('0.0.0.0', '127.0.0.1')}/api/invocations`, { headers: bearer(ACME) })).status).toBe(200);
    } finally {
      await tenantOnly.stop();
    }
  });
});

/** The viewer's server in this process over `store` (no token, loopback): its origin, and how to stop it. */
async function serveStore(store: JournalStore): Promise<{ origin: string; server: Server; close: () => Promise<void> }> {
  const server = createInspectorServer({ store });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, server, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Where a JSON value holds a leaf equal (as text) to `value`, outside the structural members (seq, epoch, …) that are not in a domain's data. */
function leavesEqual(json: unknown, value: string | number, at = '$', data = false): string[] {
  if (typeof json === 'string' || typeof json === 'number' || typeof json === 'boolean') return String(json) === String(value) ? [at] : [];
  if (Array.isArray(json)) return json.flatMap((v, i) => leavesEqual(v, value, `${at}[${i}]`, data));
  if (typeof json === 'object' && json !== null) return Object.entries(json).flatMap(([k, v]) => (!data && STRUCTURAL.has(k) ? [] : leavesEqual(v, value, `${at}.${k}`, data || DATA.has(k))));
  return [];
}
/** A body as JSON values: one, or one per NDJSON line (lines that are not JSON left out). */
const jsonOf = (text: string): unknown[] => {
  try {
    return [JSON.parse(text)];
  } catch {
    return text.split('\n').flatMap((line) => {
      try {
        return [JSON.parse(line)];
      } catch {
        return [];
      }
    });
  }
};

/** The plan tree's nodes for operator `task`, in every epoch. */
const nodesOf = (plans: PlansView, task: string): PlanNodeView[] => {
  const out: PlanNodeView[] = [];
  const walk = (n: PlanNodeView) => (n.task === task && out.push(n), n.children.forEach(walk));
  for (const e of plans.epochs) if (e.tree) walk(e.tree);
  return out;
};

/** The first WebSocket frame a follow of `id` gets: its opcode, and for a close frame its code and reason. */
function firstFrame(origin: string, query: string): Promise<{ opcode: number; code?: number; reason?: string; text?: string }> {
  const { port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: Number(port), path: `/live?${query}`, headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' } });
    req.on('upgrade', (_res, socket, head) => {
      let buf = Buffer.from(head);
      const tryParse = () => {
        if (buf.length < 2) return;
        const opcode = buf[0]! & 0x0f;
        let len = buf[1]! & 0x7f;
        let off = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          off = 4;
        } else if (len === 127) {
          if (buf.length < 10) return;
          len = Number(buf.readBigUInt64BE(2));
          off = 10;
        }
        if (buf.length < off + len) return;
        const payload = buf.subarray(off, off + len);
        socket.destroy();
        resolve(opcode === 0x8 ? { opcode, code: payload.readUInt16BE(0), reason: payload.subarray(2).toString('utf8') } : { opcode, text: payload.toString('utf8') });
      };
      socket.on('data', (chunk: Buffer) => ((buf = Buffer.concat([buf, chunk])), tryParse()));
      tryParse();
    });
    req.on('response', (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
    req.on('error', reject);
    req.end();
  });
}

describe("redaction: the reviewer's leaks, without a browser", () => {
  const leakDir = path.join(root, 'leaks');
  let done: RunLine;
  let waiting: RunLine;
  let damaged: RunLine;
  let store: FileStore;
  let viewerOf: Awaited<ReturnType<typeof serveStore>>;
  /** The amount each one charged (or will charge), read from what is stored unredacted. */
  const amount = new Map<string, number>();

  beforeAll(async () => {
    assertBuilt();
    const domain = writePrivateTravelDomain(mkdtempSync(path.join(root, 'domain-')));
    const strict = writePrivateTravelDomain(mkdtempSync(path.join(root, 'domain-')), { limit: 100, version: 'private-strict' });
    done = await made(domain, { tenant: 'acme', seed: '41' }, leakDir);
    waiting = await made(strict, { tenant: 'acme', seed: '42' }, leakDir);
    damaged = await made(domain, { tenant: 'acme', seed: '43' }, leakDir);
    expect([done.status, waiting.status]).toEqual(['completed', 'awaiting_approval']);
    store = new FileStore(leakDir);
    viewerOf = await serveStore(store);
    for (const line of [done, waiting]) {
      // The tree as the viewer derives it before redaction: the charge's amount (the 5th param of charge_card).
      const plans = await loadPlanTrees(store, await store.read(line.id), evaluablesFrom(undefined));
      const [charge] = nodesOf(plans, 'charge_card');
      expect(typeof charge?.args[4]).toBe('number');
      amount.set(line.id, charge!.args[4] as number);
    }
  }, 120_000);
  afterAll(async () => viewerOf?.close());

  const fetchText = async (origin: string, route: string) => {
    const res = await fetch(`${origin}${route}`);
    return { status: res.status, text: await res.text() };
  };

  test("a mark keyed by operator is kept under its actuator at start: the journal's charge has its amount redacted, and no payload holds it", async () => {
    const meta = await store.getMetadata(done.id);
    expect(meta?.redact?.args).toMatchObject({ charge_card: ['amount'], 'card.charge': ['amount', 'card'] });
    // On disk the charge carries the amount (this test could fail).
    const onDisk = (await store.read(done.id)).find((r) => r.kind === 'step.dispatched' && (r.body as { actuator: string }).actuator === 'card.charge');
    expect((onDisk!.body as unknown as { args: { amount: unknown } }).args.amount).toBe(amount.get(done.id));
    const journal = await fetchText(viewerOf.origin, `/api/invocations/${done.id}/journal`);
    const charge = jsonOf(journal.text).find((r) => (r as JournalRecord).kind === 'step.dispatched' && ((r as JournalRecord).body as { actuator: string }).actuator === 'card.charge') as JournalRecord;
    expect((charge.body as { args: Record<string, unknown> }).args).toMatchObject({ amount: REDACTED, card: REDACTED });
    for (const id of [done.id, waiting.id]) {
      for (const suffix of ['', '/journal', '/trail', '/plans', '/verdict']) {
        const res = await fetchText(viewerOf.origin, `/api/invocations/${id}${suffix}`);
        expect(res.status, `${id}${suffix}`).toBe(200);
        expect(leaks([res.text]), `${id}${suffix}`).toEqual([]);
        expect(jsonOf(res.text).flatMap((v) => leavesEqual(v, amount.get(id)!)), `${id}${suffix}`).toEqual([]);
      }
    }
  });

  test('a plan tree: the charge (dispatched, or awaiting approval and never dispatched) has its card and amount redacted by position, and the amount nowhere', async () => {
    expect((await store.read(waiting.id)).some((r) => r.kind === 'step.dispatched' && (r.body as { actuator: string }).actuator === 'card.charge')).toBe(false);
    for (const id of [done.id, waiting.id]) {
      const res = await fetchText(viewerOf.origin, `/api/invocations/${id}/plans`);
      const plans = JSON.parse(res.text) as PlansView;
      const charges = nodesOf(plans, 'charge_card');
      expect(charges.length, id).toBeGreaterThan(0);
      for (const charge of charges) {
        expect(charge.args[1], id).toBe(REDACTED); // ?k, the card
        expect(charge.args[4], id).toBe(REDACTED); // ?amount
        expect(charge.args[0], id).not.toBe(REDACTED); // the traveller is not marked
      }
      expect(plans.epochs.some((e) => e.verdict.kind === 'matches')).toBe(true); // still re-derived and checked
      expect(leavesEqual(plans, amount.get(id)!)).toEqual([]);
      expect(leaks([res.text])).toEqual([]);
    }
  });

  test("metadata the store cannot read is not \"no marks\": every route answers 503 (try again), a followed journal's socket closes with the reason", async () => {
    const failing = (what: 'getMetadata' | 'getSnapshot', how: () => Promise<unknown>) =>
      new Proxy(store, {
        get(target, p) {
          if (p === what) return how;
          const v = Reflect.get(target, p, target) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      }) as JournalStore;
    const broken = await serveStore(failing('getMetadata', async () => Promise.reject(new Error('EIO: i/o error reading meta.json'))));
    try {
      for (const id of [done.id, waiting.id]) {
        for (const suffix of ['', '/journal', '/trail', '/plans', '/verdict']) {
          const res = await fetchText(broken.origin, `/api/invocations/${id}${suffix}`);
          expect(res.status, `${id}${suffix}`).toBe(503);
          expect(JSON.parse(res.text).error, `${id}${suffix}`).toMatch(/redaction marks .* could not be read .*try again/);
          expect(res.text).not.toContain(PRIVATE_CARD);
        }
      }
      const frame = await firstFrame(broken.origin, `follow=${done.id}&from=0`);
      expect(frame).toMatchObject({ opcode: 0x8, code: 1013 });
      expect(frame.reason).toContain('redaction marks could not be read');
    } finally {
      await broken.close();
    }
    // A snapshot the secrets are learnt from, unreadable: refused too.
    const noSnapshot = await serveStore(failing('getSnapshot', async () => Promise.reject(new Error('EIO: snapshot'))));
    try {
      expect((await fetchText(noSnapshot.origin, `/api/invocations/${waiting.id}`)).status).toBe(503);
    } finally {
      await noSnapshot.close();
    }
    // No metadata at all is another thing: nothing is marked (the journal is sent, the page verifies it).
    const none = await serveStore(failing('getMetadata', async () => undefined));
    try {
      const res = await fetchText(none.origin, `/api/invocations/${done.id}/journal`);
      expect(res.status).toBe(200);
      expect(res.text).toBe(readFileSync(done.journal, 'utf8'));
    } finally {
      await none.close();
    }
    // And the working store follows the journal: its records arrive.
    expect((await firstFrame(viewerOf.origin, `follow=${done.id}&from=0`)).text).toContain('"type":"records"');
  });

  test('a damaged meta.json is not "no marks": the store says it is damaged, and the viewer answers 503 without the data', async () => {
    const metaFile = path.join(leakDir, 'invocations', done.id, 'meta.json');
    const good = readFileSync(metaFile, 'utf8');
    try {
      for (const bad of ['{"library": "not json', JSON.stringify({ library: 'x', redact: 'everything' })]) {
        writeFileSync(metaFile, bad);
        await expect(store.getMetadata(done.id)).rejects.toMatchObject({ name: 'DamagedMetadataError', code: 'store.metadata_damaged' });
        await expect(store.getMetadata(done.id)).rejects.toThrow(/restore it from a backup, or move it aside/);
        for (const suffix of ['', '/journal', '/plans']) {
          const res = await fetchText(viewerOf.origin, `/api/invocations/${done.id}${suffix}`);
          expect(res.status, `${suffix} with meta.json ${bad}`).toBe(503);
          expect(res.text).not.toContain(PRIVATE_CARD);
          expect(leavesEqual(jsonOf(res.text), amount.get(done.id)!)).toEqual([]);
        }
      }
    } finally {
      writeFileSync(metaFile, good);
    }
    expect((await fetchText(viewerOf.origin, `/api/invocations/${done.id}/journal`)).status).toBe(200);
  });

  test("a failed verdict's problem, which quotes the bad line, is redacted", async () => {
    const lines = readFileSync(damaged.journal, 'utf8').split('\n');
    lines[lines.length - 2] = `${PRIVATE_CARD} x`; // the last record (the seal) replaced by a line that is not JSON
    writeFileSync(damaged.journal, lines.join('\n'));
    const res = await fetchText(viewerOf.origin, `/api/invocations/${damaged.id}/verdict`);
    expect(res.status).toBe(200);
    const { verdict } = JSON.parse(res.text) as { verdict: { kind: string; problem?: string } };
    expect(verdict.kind).toBe('failed');
    expect(verdict.problem).toContain(REDACTED);
    expect(leaks([res.text])).toEqual([]);
    expect(leaks([(await fetchText(viewerOf.origin, `/api/invocations/${damaged.id}/journal`)).text])).toEqual([]);
  });
});
