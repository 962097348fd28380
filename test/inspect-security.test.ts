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
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MemoryStore } from '../journal/stores/memory.js';
import { redactRecords, redactValue, REDACTED, type RedactionMarks } from '../journal/redaction.js';
import type { JournalRecord } from '../journal/records.js';
import { scopeOf, visible } from '../inspector/access.js';
import { assertBuilt, weft } from './support/cli.js';
import { launchBrowser, requireChromium } from './support/chromium.js';
import { openPage, startViewer, type Viewer } from './support/inspect-viewer.js';
import { PRIVATE_CARD, PRIVATE_EMAIL, writePrivateTravelDomain } from './support/private-travel.js';
import { requireRedis, startRedis, type RedisServer } from './support/redis-server.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-inspect-security-'));
/** Where the screenshots go (kept after the run, not committed): WEFT_TEST_ARTIFACTS, or the temporary folder. */
const ARTIFACTS = process.env.WEFT_TEST_ARTIFACTS ?? tmpdir();
const dir = path.join(root, 'ws');
const hasChromium = requireChromium();
let browser: Browser;

const ALL = 'all-seeing-token-0123456789';
const ACME = 'acme-tenant-token-0123456789';
const GLOBEX = 'globex-tenant-token-0123456789';

interface RunLine {
  id: string;
  status: string;
  publicKey: string;
  journal: string;
}
const last = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as RunLine;

async function run(args: string[], env: Record<string, string> = {}, where = dir): Promise<RunLine> {
  const result = await weft(['run', ...args, '--dir', where, '--json'], env);
  const line = last(result.stdout);
  expect(['completed', 'awaiting_approval'], result.stderr).toContain(line.status);
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
  const res = await fetch(`${from.origin}${path}`, { headers: bearer(token) });
  return { status: res.status, text: await res.text() };
}
const ids = async (token: string, query = '') => (JSON.parse((await get(`/api/invocations${query}`, token)).text) as Array<{ id: string }>).map((r) => r.id).sort();

beforeAll(async () => {
  assertBuilt();
  if (!hasChromium) return;
  browser = await launchBrowser();
  privateDomain = writePrivateTravelDomain(mkdtempSync(path.join(root, 'domain-')));
  const privateStrict = writePrivateTravelDomain(mkdtempSync(path.join(root, 'domain-')), { limit: 100, version: 'private-strict' });
  const strict = writeStrictTravelDomain(mkdtempSync(path.join(root, 'domain-')), { version: 'security' });
  acmeDone = await run([privateDomain, '--tenant', 'acme']);
  acmeWaiting = await run([privateStrict, '--tenant', 'acme', '--seed', '2']);
  globexDone = await run(['travel', '--tenant', 'globex']);
  globexWaiting = await run([strict, '--tenant', 'globex', '--seed', '3']);
  privateDone = await run([privateDomain, '--tenant', 'acme'], {}, privateDir);
  privateWaiting = await run([privateStrict, '--tenant', 'acme', '--seed', '2'], {}, privateDir);
  expect([acmeWaiting.status, globexWaiting.status]).toEqual(['awaiting_approval', 'awaiting_approval']);
  viewer = await startViewer(['--dir', dir, '--public-key', acmeDone.publicKey, '--token', ALL, '--tenant-token', `acme=${ACME}`, '--tenant-token', `globex=${GLOBEX}`]);
  privateViewer = await startViewer(['--dir', privateDir, '--public-key', privateDone.publicKey, '--token', ALL, '--tenant-token', `acme=${ACME}`]);
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
  return { payloads, settle: async () => void (await Promise.all(pending)) };
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
    const globexNew = await run(['travel', '--tenant', 'globex', '--seed', '11']);
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
    expect((await post(ACME)).status).toBe(404);
    expect(existsSync(inbox)).toBe(false);
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
    await page.screenshot({ path: path.join(ARTIFACTS, 'weft-inspect-redacted.png'), fullPage: true });
    // The one awaiting approval: its asked steps and its observations.
    await page.goto(`${privateViewer.origin}/invocations/${privateWaiting.id}`);
    await page.locator('#verdict h2').waitFor();
    await page.locator('#next table.asked').waitFor();
    // A run watched live: its records arrive over the WebSocket while the page is open.
    const { page: list } = await openPage(browser);
    const listSeen = capture(list);
    await list.goto(`${privateViewer.origin}/?token=${ALL}`);
    await list.locator('body[data-live="live"]').waitFor({ state: 'attached' });
    const running = run([privateDomain, '--tenant', 'acme', '--seed', '21'], { WEFT_TEST_STEP_DELAY_MS: '400' }, privateDir);
    const fresh = list.locator('tr[data-status="running"]').first();
    await fresh.waitFor({ timeout: 60_000 });
    const liveId = (await fresh.getAttribute('data-id'))!;
    await page.goto(`${privateViewer.origin}/invocations/${liveId}`);
    await page.locator('#verdict').waitFor();
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
    const r = await startViewer(['--redis', server.url, '--public-key', mine.publicKey, '--token', ALL, '--tenant-token', `acme=${ACME}`]);
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
