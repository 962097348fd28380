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
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, weft } from './support/cli.js';
import { launchBrowser, requireChromium } from './support/chromium.js';
import { openPage, startViewer, type Viewer } from './support/inspect-viewer.js';
import { PRIVATE_CARD, PRIVATE_EMAIL, writePrivateTravelDomain } from './support/private-travel.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-inspect-security-'));
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

async function run(args: string[], env: Record<string, string> = {}): Promise<RunLine> {
  const result = await weft(['run', ...args, '--dir', dir, '--json'], env);
  const line = last(result.stdout);
  expect(['completed', 'awaiting_approval'], result.stderr).toContain(line.status);
  return line;
}

/** The invocations: acme's with marks (completed; awaiting approval), globex's plain travel (completed; awaiting approval). */
let acmeDone: RunLine;
let acmeWaiting: RunLine;
let globexDone: RunLine;
let globexWaiting: RunLine;
let privateDomain: string;
let viewer: Viewer;

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
async function get(path: string, token: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${viewer.origin}${path}`, { headers: bearer(token) });
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
  expect([acmeWaiting.status, globexWaiting.status]).toEqual(['awaiting_approval', 'awaiting_approval']);
  viewer = await startViewer(['--dir', dir, '--public-key', acmeDone.publicKey, '--token', ALL, '--tenant-token', `acme=${ACME}`, '--tenant-token', `globex=${GLOBEX}`]);
}, 240_000);

afterAll(async () => {
  await viewer?.stop();
  await browser?.close();
  rmSync(root, { recursive: true, force: true });
});

/** An upgrade request to `/live?query`: its HTTP status (101 when accepted). */
function upgradeStatus(token: string, query: string): Promise<number> {
  const { port } = new URL(viewer.origin);
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

const leaks = (payloads: readonly string[]) => payloads.filter((p) => p.includes(PRIVATE_CARD) || p.includes(PRIVATE_EMAIL)).map((p) => p.slice(0, 300));

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
    const onDisk = readFileSync(acmeDone.journal, 'utf8');
    expect(onDisk).toContain(PRIVATE_CARD);
    expect(onDisk).toContain(PRIVATE_EMAIL);
    expect(readFileSync(acmeWaiting.journal, 'utf8')).toContain(PRIVATE_CARD);

    const { page, errors } = await openPage(browser);
    const seen = capture(page);
    // The list, then the completed run's page.
    await page.goto(`${viewer.origin}/?token=${ALL}`);
    await page.locator(`tr[data-id="${acmeDone.id}"]`).waitFor();
    await page.goto(`${viewer.origin}/invocations/${acmeDone.id}`);
    await page.locator('#verdict h2').waitFor();
    expect(await page.locator('#verdict h2').textContent()).toBe('✓ verified by the server');
    expect(await page.locator('#verdict-source').textContent()).toBe('verified by the server (this journal has redacted fields, so the page cannot check it itself)');
    const fingerprint = (await page.locator('#fingerprint').textContent())!;
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect((await weft(['verify', acmeDone.journal, '--public-key', acmeDone.publicKey, '--json'])).stdout).toContain(fingerprint);
    expect(await page.locator('main').textContent()).toContain('[redacted]');
    // The one awaiting approval: its asked steps and its observations.
    await page.goto(`${viewer.origin}/invocations/${acmeWaiting.id}`);
    await page.locator('#verdict h2').waitFor();
    await page.locator('#next table.asked').waitFor();
    // A run watched live: its records arrive over the WebSocket while the page is open.
    const { page: list } = await openPage(browser);
    const listSeen = capture(list);
    await list.goto(`${viewer.origin}/?token=${ALL}`);
    await list.locator('body[data-live="live"]').waitFor({ state: 'attached' });
    const running = run([privateDomain, '--tenant', 'acme', '--seed', '21'], { WEFT_TEST_STEP_DELAY_MS: '400' });
    const fresh = list.locator('tr[data-status="running"]').first();
    await fresh.waitFor({ timeout: 60_000 });
    const liveId = (await fresh.getAttribute('data-id'))!;
    await page.goto(`${viewer.origin}/invocations/${liveId}`);
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
      for (const route of ['/api/invocations', '/api/approvals', '/api/trusted-key', '/api/viewer']) direct.push((await get(route, token)).text);
      for (const id of [acmeDone.id, acmeWaiting.id, liveId]) {
        for (const suffix of ['', '/journal', '/verdict']) {
          const res = await get(`/api/invocations/${id}${suffix}`, token);
          expect(res.status, `${id}${suffix}`).toBe(200);
          direct.push(res.text);
        }
      }
    }
    expect(leaks(direct)).toEqual([]);
    expect(direct.join('\n')).toContain('[redacted]');
    // The awaiting one's asked steps are there, their card redacted.
    const waiting = JSON.parse((await get(`/api/invocations/${acmeWaiting.id}`, ALL)).text) as { waiting: { steps: Array<{ actuator: string; args: Record<string, unknown> }> } };
    expect(waiting.waiting.steps.find((s) => s.actuator === 'card.charge')?.args.card).toBe('[redacted]');
    // An invocation without marks is sent as it is, and verified by the page itself.
    expect((await get(`/api/invocations/${globexDone.id}/journal`, ALL)).text).toBe(readFileSync(globexDone.journal, 'utf8'));
  }, 240_000);
});
