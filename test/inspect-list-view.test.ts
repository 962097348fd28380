/**
 * The invocations page as a person keeps it open (page/list.ts, list-page.ts), in a real headless
 * Chromium, over the file store and over Redis: newest first with started, last-activity and
 * duration columns; one-line rows with no horizontal overflow at 1024 and 1400 px (a 600-character
 * intent is cut, whole on hover); sorting by a header's click (aria-sort), kept in the URL; the
 * search and filters read from the URL (`/?q=<id>` shows that run alone) and written back to it; an
 * older search's slow answer never drawn over a newer one's; and a journal that fails verification
 * marked on its row. The store is filled by the list benchmark's fixture (bench/list-fixture.ts),
 * 30 ended invocations started a minute apart, plus one with a long intent started before them all.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import '../journal/ed25519-node.js';
import type { JournalStore } from '../journal/store.js';
import { FileStore } from '../stores/file.js';
import { RedisStore } from '../stores/redis.js';
import { endedJournal, fillEnded, putJournal, relinked, TEMPLATE_ID } from '../bench/list-fixture.js';
import { assertBuilt } from './support/cli.js';
import { launchBrowser, requireChromium } from './support/chromium.js';
import { openPage, startViewer, type Viewer } from './support/inspect-viewer.js';
import { requireRedis, startRedis, type RedisServer } from './support/redis-server.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-inspect-list-view-'));
const hasChromium = requireChromium();
const hasRedis = requireRedis();
const COUNT = 30;
const SPREAD_MS = 60_000;
const LONG_ID = 'list-long';
/** A bidi override, a long unbroken token and more words: cut to one line on the list. */
const LONG_INTENT = `\u202eevil\u202c then ${'x'.repeat(600)} and ${'many words '.repeat(30)}`;
/** The fixture's newest first: list-000029 … list-000000, then the long one (started before them all). */
const NEWEST_FIRST = [...Array.from({ length: COUNT }, (_, i) => `list-${String(COUNT - 1 - i).padStart(6, '0')}`), LONG_ID];
const TAMPERED = 'list-000027';
let browser: Browser;

beforeAll(async () => {
  assertBuilt();
  if (hasChromium) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Fill `store` (see the header). */
async function fill(store: JournalStore): Promise<void> {
  await fillEnded([store], COUNT, { spreadMs: SPREAD_MS, concurrency: 4 });
  const template = await endedJournal(TEMPLATE_ID, 't0');
  await putJournal(store, LONG_ID, relinked(template, LONG_ID, 't0', -(COUNT + 5) * SPREAD_MS, LONG_INTENT));
}

/** One record's body changed in the stored journal of `id` (its hash no longer holds). */
function tamperedLine(line: string): string {
  const changed = line.replace('"task":"touch_all"', '"task":"touch_al1"');
  if (changed === line) throw new Error('the fixture journal has no record to tamper with');
  return changed;
}

const rowIds = (page: Page) => page.locator('tbody tr[data-id]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id')));

interface Mode {
  name: string;
  available: boolean;
  setUp(): Promise<{ viewerArgs: string[]; stop(): Promise<void> }>;
}

const modes: Mode[] = [
  {
    name: 'file store',
    available: true,
    async setUp() {
      const dir = path.join(root, 'w');
      await fill(new FileStore(dir));
      const journal = path.join(dir, 'invocations', TAMPERED, 'journal.jsonl');
      const lines = readFileSync(journal, 'utf8').split('\n');
      const at = lines.findIndex((l) => l.includes('"task":"touch_all"'));
      lines[at] = tamperedLine(lines[at]!);
      writeFileSync(journal, lines.join('\n'));
      return { viewerArgs: ['--dir', dir], stop: async () => undefined };
    },
  },
  {
    name: 'Redis',
    available: hasRedis || process.env.CI === 'true',
    async setUp() {
      const server: RedisServer = await startRedis({ aof: false });
      const store = new RedisStore({ redis: server.url });
      try {
        await fill(store);
        const redis = await store.connection();
        const key = store.keys(TAMPERED).journal;
        const lines = await redis.lrange(key, 0, -1);
        const at = lines.findIndex((l) => l.includes('"task":"touch_all"'));
        await redis.lset(key, at, tamperedLine(lines[at]!));
      } finally {
        await store.close();
      }
      return { viewerArgs: ['--redis', server.url], stop: () => server.stop() };
    },
  },
];

describe.each(modes)('the invocations list over the $name', (mode) => {
  let viewer: Viewer;
  let stopStore: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    if (!hasChromium || !mode.available) return;
    const { viewerArgs, stop } = await mode.setUp();
    stopStore = stop;
    viewer = await startViewer(viewerArgs);
  });
  afterAll(async () => {
    await viewer?.stop();
    await stopStore();
  });
  const base = () => new URL('/', viewer.url).href;

  test.runIf(hasChromium && mode.available)('newest first with started, last activity and duration; one-line rows and no horizontal overflow at 1024 and 1400 px', async () => {
    for (const width of [1024, 1400]) {
      const { page, errors } = await openPage(browser);
      await page.setViewportSize({ width, height: 900 });
      await page.goto(viewer.url);
      await page.locator('tbody tr[data-id]').first().waitFor();
      expect(await rowIds(page)).toEqual(NEWEST_FIRST);
      const heads = await page.locator('thead th').allTextContents();
      expect(heads.map((h) => h.replace(/[▲▼]/g, '').trim())).toEqual(expect.arrayContaining(['started', 'last activity', 'duration']));
      expect(await page.locator('thead th[data-sort="started"]').getAttribute('aria-sort')).toBe('descending');
      // Each row says when it started, when it was last active and for how long (the fixture's run: 0.1–2 s).
      const first = page.locator('tbody tr[data-id]').first();
      expect(await first.locator('td.started span').getAttribute('title')).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(await first.locator('td.started').textContent()).not.toBe('');
      expect(await first.locator('td.activity').textContent()).toContain('invocation.sealed');
      expect(await first.locator('td.duration').textContent()).toMatch(/^\d+(\.\d+)? m?s$/);
      // (The test's typecheck has no DOM library: the page's globals are reached through globalThis.)
      const fit = await page.evaluate(() => {
        const g = globalThis as unknown as { innerWidth: number; document: { documentElement: { scrollWidth: number }; querySelector(s: string): { scrollWidth: number; clientWidth: number }; querySelectorAll(s: string): Iterable<{ getBoundingClientRect(): { height: number } }> } };
        return {
          page: g.document.documentElement.scrollWidth - g.innerWidth,
          table: g.document.querySelector('table.invocations').scrollWidth - g.document.querySelector('.table-frame').clientWidth,
          heights: [...g.document.querySelectorAll('tbody tr')].map((tr) => Math.round(tr.getBoundingClientRect().height)),
        };
      });
      expect(fit.page, `the page overflows ${width} px`).toBeLessThanOrEqual(0);
      expect(fit.table, `the table overflows its frame at ${width} px`).toBeLessThanOrEqual(0);
      // One line each: the long intent's row is as tall as the others.
      expect(new Set(fit.heights).size, `row heights at ${width} px: ${[...new Set(fit.heights)].join(', ')}`).toBe(1);
      expect(fit.heights[0]).toBeLessThan(44);
      const long = page.locator(`tr[data-id="${LONG_ID}"] td.intent span`);
      // The title holds what the listing holds: the whole intent (file store), or the index's first 120 characters (Redis); all of it is on the invocation's page.
      expect(await long.getAttribute('title')).toContain('x'.repeat(100));
      expect(await long.textContent()).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
      expect(await long.textContent()).toContain('\\u202e');
      expect(errors).toEqual([]);
      await page.close();
    }
  });

  test.runIf(hasChromium && mode.available)('a header click sorts the whole list, shows its direction, and the URL keeps it', async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(viewer.url);
    await page.locator('tbody tr[data-id]').first().waitFor();
    await page.click('thead th[data-sort="id"] button');
    await expect.poll(() => rowIds(page), { timeout: 15_000 }).toEqual([...NEWEST_FIRST.slice(0, COUNT)].reverse().concat(LONG_ID));
    expect(await page.locator('thead th[data-sort="id"]').getAttribute('aria-sort')).toBe('ascending');
    expect(await page.locator('thead th[data-sort="started"]').getAttribute('aria-sort')).toBeNull();
    expect(new URL(page.url()).searchParams.get('sort')).toBe('id');
    expect(new URL(page.url()).searchParams.get('dir')).toBe('asc');
    await page.click('thead th[data-sort="id"] button');
    await expect.poll(() => rowIds(page), { timeout: 15_000 }).toEqual([LONG_ID, ...NEWEST_FIRST.slice(0, COUNT)]);
    expect(await page.locator('thead th[data-sort="id"]').getAttribute('aria-sort')).toBe('descending');
    // Opened again from its URL, the page sorts as it was left.
    await page.reload();
    await page.locator('tbody tr[data-id]').first().waitFor();
    expect(await rowIds(page)).toEqual([LONG_ID, ...NEWEST_FIRST.slice(0, COUNT)]);
    // Oldest first by started.
    await page.goto(`${base()}?sort=started&dir=asc`);
    await page.locator('tbody tr[data-id]').first().waitFor();
    expect(await rowIds(page)).toEqual([...NEWEST_FIRST].reverse());
    expect(await page.locator('thead th[data-sort="started"]').getAttribute('aria-sort')).toBe('ascending');
    expect(errors).toEqual([]);
    await page.close();
  });

  test.runIf(hasChromium && mode.available)('a search and filters in the URL apply as the page opens; a change is written back', async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(`${base()}?q=list-000007`);
    await page.locator('tbody tr[data-id]').first().waitFor();
    expect(await rowIds(page)).toEqual(['list-000007']);
    expect(await page.inputValue('#search')).toBe('list-000007');
    // A filter changed: the URL says so, and the list is what the URL says.
    await page.selectOption('#filter-tenant', 't3');
    await page.locator('td.empty', { hasText: 'nothing matches' }).waitFor();
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toMatchObject({ q: 'list-000007', tenant: 't3' });
    await page.fill('#search', '');
    await expect.poll(() => rowIds(page), { timeout: 15_000 }).toEqual(['list-000023', 'list-000013', 'list-000003']);
    expect(new URL(page.url()).searchParams.has('q')).toBe(false);
    await page.goto(`${base()}?tenant=t3&sort=started&dir=asc`);
    await page.locator('tbody tr[data-id]').first().waitFor();
    expect(await rowIds(page)).toEqual(['list-000003', 'list-000013', 'list-000023']);
    expect(await page.inputValue('#filter-tenant')).toBe('t3');
    expect(errors).toEqual([]);
    await page.close();
  });

  test.runIf(hasChromium && mode.available)("a search shows it is loading, and an older search's slow answer is never drawn over a newer one's", async () => {
    const { page, errors } = await openPage(browser);
    // The answer to the first search is held 2 s in the network; the second one's is not.
    let slowDone!: () => void;
    const slowAnswered = new Promise<void>((resolve) => (slowDone = resolve));
    await page.route('**/api/invocations?**', async (route) => {
      if (new URL(route.request().url()).searchParams.get('q') !== 'list-00001') return route.continue();
      const response = await route.fetch();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await route.fulfill({ response });
      slowDone();
    });
    await page.goto(viewer.url);
    await page.locator('tbody tr[data-id]').first().waitFor();
    const slowAsked = page.waitForRequest((r) => new URL(r.url()).searchParams.get('q') === 'list-00001');
    await page.fill('#search', 'list-00001');
    // While it is awaited: no row of the old list is shown as its result, and the page says it is searching.
    expect(await page.locator('tbody tr[data-id]').count()).toBe(0);
    expect(await page.locator('tbody td.loading').textContent()).toBe('searching…');
    expect(await page.locator('body').getAttribute('data-list-state')).toBe('loading');
    await slowAsked;
    await page.fill('#search', 'list-000025');
    await expect.poll(() => rowIds(page), { timeout: 15_000 }).toEqual(['list-000025']);
    await slowAnswered;
    await page.waitForTimeout(500); // time for the page to have drawn the slow answer, were it to
    expect(await rowIds(page)).toEqual(['list-000025']);
    expect(await page.locator('.count').textContent()).toBe(`1 of ${COUNT + 1}`);
    expect(new URL(page.url()).searchParams.get('q')).toBe('list-000025');
    expect(errors).toEqual([]);
    await page.close();
  });

  test.runIf(hasChromium && mode.available)('a journal that fails verification is marked on its row; an intact one is checked', async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(viewer.url);
    const tampered = page.locator(`tr[data-id="${TAMPERED}"]`);
    await expect.poll(() => tampered.getAttribute('data-verdict'), { timeout: 60_000 }).toBe('failed');
    expect(await tampered.locator('.verdict-failed').textContent()).toContain('✗');
    expect(await tampered.locator('.verdict-failed').getAttribute('title')).toMatch(/fails verification in this page at record \d+/);
    await expect.poll(() => page.locator('tr[data-id="list-000028"]').getAttribute('data-verdict'), { timeout: 60_000 }).toBe('chain-only');
    // Intact but checked by no trusted key (this viewer has none): the amber mark, never the trusted green.
    expect(await page.locator('tr[data-id="list-000028"] .verdict-chain').count()).toBe(1);
    expect(await page.locator('tr[data-id="list-000028"] .verdict-ok').count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });
});
