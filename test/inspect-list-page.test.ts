/**
 * The invocations page over a store with more invocations than it draws at once (page/list.ts),
 * over the file store and over Redis, in a real headless Chromium: it pages newest first (200
 * rows, the count says so, "show more" draws the rest in the same order); a sort by another column
 * pages in that column's order; the search and the filters, from the URL or typed, look at every
 * invocation, not only the drawn ones; and a run that starts after the viewer did is on the list —
 * the pages are cut from a listing the viewer keeps as the store changes (inspector/listing.ts),
 * not from the store listed once. The store holds 300 ended invocations (the list benchmark's
 * fixture, bench/list-fixture.ts), started a second apart in id order.
 */
import { mkdtempSync, rmSync } from 'node:fs';
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

const root = mkdtempSync(path.join(tmpdir(), 'weft-inspect-list-'));
const hasChromium = requireChromium();
const hasRedis = requireRedis();
const COUNT = 300;
const idOf = (i: number) => `list-${String(i).padStart(6, '0')}`;
/** Newest first: the last filled first. */
const NEWEST_FIRST = Array.from({ length: COUNT }, (_, i) => idOf(COUNT - 1 - i));
let browser: Browser;

beforeAll(async () => {
  assertBuilt();
  if (hasChromium) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  rmSync(root, { recursive: true, force: true });
});

const rowIds = (page: Page) => page.locator('tbody tr[data-id]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id')));

interface Mode {
  name: string;
  available: boolean;
  /** The store, filled; the viewer's flags for it; how to stop what it started. */
  setUp(): Promise<{ store: JournalStore; viewerArgs: string[]; stop(): Promise<void> }>;
}

const modes: Mode[] = [
  {
    name: 'file store',
    available: true,
    async setUp() {
      const dir = path.join(root, 'w');
      const store = new FileStore(dir);
      await fillEnded([store], COUNT, { spreadMs: 1_000, concurrency: 4 });
      return { store, viewerArgs: ['--dir', dir], stop: async () => undefined };
    },
  },
  {
    name: 'Redis',
    available: hasRedis || process.env.CI === 'true',
    async setUp() {
      const server: RedisServer = await startRedis({ aof: false });
      const store = new RedisStore({ redis: server.url });
      await fillEnded([store], COUNT, { spreadMs: 1_000, concurrency: 8 });
      return {
        store,
        viewerArgs: ['--redis', server.url],
        stop: async () => {
          await store.close();
          await server.stop();
        },
      };
    },
  },
];

describe.each(modes)('a list longer than a page, over the $name', (mode) => {
  let viewer: Viewer;
  let store: JournalStore;
  let stopStore: () => Promise<void> = async () => undefined;
  const run = hasChromium && mode.available;
  beforeAll(async () => {
    if (!run) return;
    const set = await mode.setUp();
    store = set.store;
    stopStore = set.stop;
    viewer = await startViewer(set.viewerArgs);
  });
  afterAll(async () => {
    await viewer?.stop();
    await stopStore();
  });
  const at = (query: string) => {
    const u = new URL(viewer.url);
    for (const [k, v] of new URLSearchParams(query)) u.searchParams.set(k, v);
    return u.href;
  };

  test.runIf(run)('newest first, 200 at a time: the count says so, and show more draws the rest in the same order', async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(viewer.url);
    const rows = page.locator('tbody tr[data-id]');
    await rows.first().waitFor();
    expect(await rowIds(page)).toEqual(NEWEST_FIRST.slice(0, 200));
    expect(await page.locator('.count').textContent()).toBe(`showing 200 of ${COUNT}`);
    await page.click('#show-more');
    await rows.nth(COUNT - 1).waitFor();
    expect(await rowIds(page)).toEqual(NEWEST_FIRST);
    expect(await page.locator('#show-more').isHidden()).toBe(true);
    expect(await page.locator('.count').textContent()).toBe(`${COUNT} invocations`);
    expect(errors).toEqual([]);
    await page.close();
  });

  test.runIf(run)("a sort by another column pages in that column's order; filters and a search from the URL look at every invocation", async () => {
    const { page, errors } = await openPage(browser);
    const rows = page.locator('tbody tr[data-id]');
    // By id, A–Z: the oldest ids first, and the second page goes on from the first.
    await page.goto(at('sort=id&dir=asc'));
    await rows.first().waitFor();
    expect(await rowIds(page)).toEqual([...NEWEST_FIRST].reverse().slice(0, 200));
    await page.click('#show-more');
    await rows.nth(COUNT - 1).waitFor();
    expect(await rowIds(page)).toEqual([...NEWEST_FIRST].reverse());
    // A tenant (every tenth) and a search in the URL: every invocation is looked at, newest first.
    await page.goto(at('tenant=t3&q=list-0001'));
    await rows.first().waitFor();
    expect(await rowIds(page)).toEqual(['list-000193', 'list-000183', 'list-000173', 'list-000163', 'list-000153', 'list-000143', 'list-000133', 'list-000123', 'list-000113', 'list-000103']);
    expect(await page.locator('.count').textContent()).toBe(`10 of ${COUNT}`);
    expect(await page.inputValue('#filter-tenant')).toBe('t3');
    expect(await page.inputValue('#search')).toBe('list-0001');
    // Typed: one the first page does not draw is found.
    await page.goto(viewer.url);
    await rows.first().waitFor();
    await page.fill('#search', idOf(7));
    await expect.poll(() => rowIds(page), { timeout: 30_000 }).toEqual([idOf(7)]);
    expect(await page.locator('.count').textContent()).toBe(`1 of ${COUNT}`);
    expect(errors).toEqual([]);
    await page.close();
  });

  test.runIf(run)('a run that starts after the viewer did is on the list, newest first', async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(viewer.url);
    await page.locator('tbody tr[data-id]').first().waitFor();
    const id = 'list-late';
    await putJournal(store, id, relinked(await endedJournal(TEMPLATE_ID, 't0'), id, 't0', 60_000));
    // The open page asks for a fresh page when a row it has not drawn changes (page/list.ts); a reload would show it too.
    await expect.poll(async () => (await rowIds(page))[0], { timeout: 30_000 }).toBe(id);
    expect(await page.locator('.count').textContent()).toBe(`showing 200 of ${COUNT + 1}`);
    await page.goto(at('q=list-late'));
    await page.locator('tbody tr[data-id]').first().waitFor();
    expect(await rowIds(page)).toEqual([id]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
