/**
 * A fork's lineage in `weft inspect`, in a real headless Chromium: a travel run hibernated at its
 * first boundary (`weft run travel … --hibernate`), forked at epoch 1 (`weft fork … --at-epoch 1`),
 * and the viewer on that folder:
 *
 * - the list shows the fork's row "fork of <parent> at epoch 1" and the parent's "superseded by fork
 *   <fork>", each id a link that opens the other's page;
 * - the fork's page says "fork of <parent> at epoch 1 (parent's record hash <short>)" — the hash its
 *   first record names — linking to the parent, and the parent's page "superseded by fork <fork>";
 * - tenant tokens: the ids a row or a description may link are those the token may open
 *   (inspector/lineage-links.ts): acme's token gets both (a fork keeps its parent's tenant), globex's
 *   lists neither row; an id of another tenant's invocation, or one that is not an id, is never
 *   offered; and a page whose answer offers no link shows the id as text, not as a link.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { JournalRecord } from '../journal/records.js';
import { FileStore } from '../stores/file.js';
import { openableFor, rowsWithLineageLinks, withLineageLinks } from '../inspector/lineage-links.js';
import { assertBuilt, weft } from './support/cli.js';
import { launchBrowser, NO_CHROMIUM_MESSAGE, requireChromium } from './support/chromium.js';
import { openPage } from './support/inspect-viewer.js';
import { serveInspector, type ServedViewer as Viewer } from './support/inspector.js';
import { runInWorkspace } from './support/runs-here.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-inspect-lineage-'));
const dir = path.join(root, 'w');
const hasChromium = requireChromium();
let browser: Browser;

const LISBON = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';
const TRAVEL_START = { seed: '7', asOf: '2026-06-01T09:00:00Z' };
const ALL = 'lineage-all-token-0123456789abcdef';
const ACME = 'lineage-acme-token-0123456789abcdef';
const GLOBEX = 'lineage-globex-token-0123456789abcd';
/** What the list shows of an id (inspector/page/lineage.ts shortId). */
const short = (id: string) => `${id.slice(0, 12)}…`;
const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as { id: string; status: string; parent?: string };

let parent: string;
let fork: string;
let other: string;
let parentHash: string;

beforeAll(async () => {
  assertBuilt();
  // The runs are fixtures made in this process as `weft run` makes them (test/support/runs-here.ts); the fork is weft fork's.
  const ran = await runInWorkspace('travel', { dir, intent: LISBON, ...TRAVEL_START, tenant: 'acme', hibernate: true });
  parent = ran.id;
  expect(ran.status).toBe('hibernated');
  const forked = await weft(['fork', parent, '--at-epoch', '1', '--dir', dir, '--json']);
  expect(forked.code, forked.stderr).toBe(0);
  fork = lastJson(forked.stdout).id;
  expect(lastJson(forked.stdout)).toMatchObject({ status: 'completed', parent });
  const elsewhere = await runInWorkspace('travel', { dir, intent: LISBON, ...TRAVEL_START, tenant: 'globex' });
  expect(elsewhere.status, elsewhere.reason ?? '').toBe('completed');
  other = elsewhere.id;
  const [pinned] = (await new FileStore(dir).read(fork, 0, 1)) as Array<JournalRecord<'invocation.pinned'>>;
  expect(pinned!.body.tenant).toBe('acme'); // a fork keeps its parent's tenant
  parentHash = pinned!.body.forkOf!.parentHash;
  expect(parentHash).toMatch(/^[0-9a-f]{64}$/);
  if (hasChromium) browser = await launchBrowser();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  rmSync(root, { recursive: true, force: true });
});

test.runIf(!hasChromium && process.env.CI === 'true')('chromium is installed', () => {
  throw new Error(NO_CHROMIUM_MESSAGE);
});

describe('the lineage ids a token may open (inspector/lineage-links.ts)', () => {
  test("a tenant's scope is offered its own invocations only; an id that is not one is never offered", async () => {
    const store = new FileStore(dir);
    const acme = openableFor(store, { kind: 'tenant', tenant: 'acme' });
    const all = openableFor(store, { kind: 'all' });
    expect(await withLineageLinks({ id: fork, forkOf: { parent, atEpoch: 1 } }, acme)).toMatchObject({ lineageLinks: [parent] });
    expect(await withLineageLinks({ id: parent, supersededBy: fork }, acme)).toMatchObject({ lineageLinks: [fork] });
    // As if a journal named another tenant's invocation as its parent or its fork: named, never linked.
    expect(await withLineageLinks({ id: fork, forkOf: { parent: other, atEpoch: 1 }, supersededBy: other }, acme)).toMatchObject({ lineageLinks: [] });
    expect(await withLineageLinks({ id: fork, forkOf: { parent: other, atEpoch: 1 } }, all)).toMatchObject({ lineageLinks: [other] });
    expect(await withLineageLinks({ id: fork, lineage: { forkOf: { parent: '../../etc', atEpoch: 1 }, supersededBy: 'inv-nobody' } }, all)).toMatchObject({ lineageLinks: ['inv-nobody'] });
    expect(await withLineageLinks({ id: fork, lineage: { forkOf: null, supersededBy: 'inv-nobody' } }, acme)).toMatchObject({ lineageLinks: [] });
    // A row that names no lineage is passed as it is.
    const plain = { id: other, tenant: 'globex' };
    expect((await rowsWithLineageLinks([plain], acme))[0]).toBe(plain);
  });
});

describe.runIf(hasChromium)('a fork and its parent in weft inspect', () => {
  let viewer: Viewer;

  beforeAll(async () => {
    viewer = await serveInspector(['--dir', dir, '--token', ALL, '--tenant-token', `acme=${ACME}`, '--tenant-token', `globex=${GLOBEX}`]);
  }, 90_000);
  afterAll(async () => viewer?.stop());

  const open = async (token: string, where = '/') => {
    const { page, errors } = await openPage(browser);
    await page.goto(`${viewer.origin}${where}${where.includes('?') ? '&' : '?'}token=${token}`);
    return { page, errors };
  };
  const row = (page: Page, id: string) => page.locator(`tr[data-id="${id}"]`);
  const text = (page: Page, selector: string) => page.locator(selector).first().evaluate((n) => (n.textContent ?? '').replace(/\s+/g, ' ').trim());

  async function listShowsLineage(page: Page): Promise<void> {
    const forkLine = row(page, fork).locator('.lineage-fork-of');
    const parentLine = row(page, parent).locator('.lineage-superseded-by');
    await forkLine.waitFor({ timeout: 30_000 });
    await parentLine.waitFor({ timeout: 30_000 });
    expect(await text(page, `tr[data-id="${fork}"] .lineage-fork-of`)).toBe(`fork of ${short(parent)} at epoch 1`);
    expect(await text(page, `tr[data-id="${parent}"] .lineage-superseded-by`)).toBe(`superseded by fork ${short(fork)}`);
    expect(await forkLine.locator('a').getAttribute('href')).toBe(`/invocations/${parent}`);
    expect(await forkLine.locator('a').getAttribute('title')).toBe(parent);
    expect(await parentLine.locator('a').getAttribute('href')).toBe(`/invocations/${fork}`);
    expect(await row(page, fork).locator('.status').textContent()).toBe('completed');
    expect(await row(page, parent).locator('.status').textContent()).toBe('superseded');
    // A run that is neither a fork nor superseded says nothing of lineage.
    const others = page.locator('tr[data-id] .lineage');
    expect(await others.count()).toBe(2);
  }

  /** The fork's page: its header names the parent, the epoch and the hash, the parent linked. */
  async function forkPageShowsParent(page: Page): Promise<void> {
    await page.waitForURL(`**/invocations/${fork}`, { timeout: 30_000 });
    const line = page.locator('dd[data-field="lineage"] .lineage-fork-of');
    await line.waitFor({ timeout: 30_000 });
    expect(await text(page, 'dd[data-field="lineage"] .lineage-fork-of')).toBe(`fork of ${parent} at epoch 1 (parent's record hash ${parentHash.slice(0, 12)}…)`);
    expect(await line.locator(`[title="${parentHash}"]`).count()).toBe(1);
    expect(await page.locator('dd[data-field="lineage"] .lineage-superseded-by').count()).toBe(0);
  }

  async function parentPageShowsFork(page: Page): Promise<void> {
    await page.waitForURL(`**/invocations/${parent}`, { timeout: 30_000 });
    const line = page.locator('dd[data-field="lineage"] .lineage-superseded-by');
    await line.waitFor({ timeout: 30_000 });
    expect(await text(page, 'dd[data-field="lineage"] .lineage-superseded-by')).toBe(`superseded by fork ${fork}`);
    expect(await page.locator('dd[data-field="lineage"] .lineage-fork-of').count()).toBe(0);
  }

  test('the list shows both lineage lines; each link opens the other invocation, whose page shows its own line', async () => {
    const { page, errors } = await open(ALL);
    await listShowsLineage(page);
    // The fork's row links to the parent's page, which says which fork superseded it …
    await row(page, fork).locator('.lineage-fork-of a').click();
    await parentPageShowsFork(page);
    // … and that link leads to the fork's page, which names its parent and links back.
    await page.locator('dd[data-field="lineage"] .lineage-superseded-by a').click();
    await forkPageShowsParent(page);
    await page.locator('dd[data-field="lineage"] .lineage-fork-of a').click();
    await parentPageShowsFork(page);
    // From the list again: the parent's row links to the fork.
    await page.goto(`${viewer.origin}/`);
    await row(page, parent).locator('.lineage-superseded-by a').waitFor({ timeout: 30_000 });
    await row(page, parent).locator('.lineage-superseded-by a').click();
    await forkPageShowsParent(page);
    expect(errors).toEqual([]);
    await page.close();
  });

  test("acme's token sees the same links (one tenant by construction); globex's lists neither row", async () => {
    const { page, errors } = await open(ACME);
    await listShowsLineage(page);
    expect(await page.locator(`tr[data-id="${other}"]`).count()).toBe(0);
    await page.goto(`${viewer.origin}/invocations/${fork}`);
    await forkPageShowsParent(page);
    expect(await page.locator('dd[data-field="lineage"] .lineage-fork-of a').getAttribute('href')).toBe(`/invocations/${parent}`);
    expect(errors).toEqual([]);
    await page.close();

    const globex = await open(GLOBEX);
    await globex.page.locator(`tr[data-id="${other}"]`).waitFor({ timeout: 30_000 });
    expect(await globex.page.locator('tr[data-id] .lineage').count()).toBe(0);
    const rows = (await (await globex.page.context().request.get(`${viewer.origin}/api/invocations`)).json()) as Array<{ id: string }>;
    expect(rows.map((r) => r.id)).toEqual([other]);
    expect(globex.errors).toEqual([]);
    await globex.page.close();
  });

  test('an id the answer does not offer as a link is shown as text', async () => {
    const { page, errors } = await openPage(browser);
    // As a tenant's token would be answered for a parent of another tenant: no lineageLinks.
    const strip = (body: string) => body.replace(/,"lineageLinks":\[[^\]]*\]/g, '');
    await page.route(/\/api\/invocations(\?.*)?$/, async (route) => {
      const res = await route.fetch();
      await route.fulfill({ response: res, body: strip(await res.text()) });
    });
    await page.route(new RegExp(`/api/invocations/${fork}$`), async (route) => {
      const res = await route.fetch();
      await route.fulfill({ response: res, body: strip(await res.text()) });
    });
    await page.goto(`${viewer.origin}/?token=${ALL}`);
    const forkLine = row(page, fork).locator('.lineage-fork-of');
    await forkLine.waitFor({ timeout: 30_000 });
    expect(await text(page, `tr[data-id="${fork}"] .lineage-fork-of`)).toBe(`fork of ${short(parent)} at epoch 1`);
    expect(await forkLine.locator('a').count()).toBe(0);
    expect(await row(page, parent).locator('.lineage-superseded-by a').count()).toBe(0);
    await page.goto(`${viewer.origin}/invocations/${fork}`);
    const header = page.locator('dd[data-field="lineage"] .lineage-fork-of');
    await header.waitFor({ timeout: 30_000 });
    expect(await header.locator('a').count()).toBe(0);
    expect(await header.locator(`span[data-lineage-id="${parent}"]`).textContent()).toBe(parent);
    expect(errors).toEqual([]);
    await page.close();
  });
});
