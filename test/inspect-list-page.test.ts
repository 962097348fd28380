/**
 * The invocations page over a store with more invocations than it draws at once (page/list.ts): it
 * draws the first 200 and says how many there are, "show more" draws the next ones, and the search
 * and filters look at every invocation, not only the drawn ones. In a real headless Chromium, over a
 * workspace filled with 250 ended invocations (the list benchmark's fixture).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import '../journal/ed25519-node.js';
import { FileStore } from '../stores/file.js';
import { fillEnded } from '../bench/list-fixture.js';
import { assertBuilt } from './support/cli.js';
import { launchBrowser, requireChromium } from './support/chromium.js';
import { openPage, startViewer, type Viewer } from './support/inspect-viewer.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-inspect-list-'));
const hasChromium = requireChromium();
let browser: Browser;
let viewer: Viewer;
let ids: string[];

beforeAll(async () => {
  assertBuilt();
  ids = await fillEnded([new FileStore(path.join(root, 'w'))], 250);
  if (hasChromium) {
    browser = await launchBrowser();
    viewer = await startViewer(['--dir', path.join(root, 'w')]);
  }
});
afterAll(async () => {
  await viewer?.stop();
  await browser?.close();
  rmSync(root, { recursive: true, force: true });
});

describe.runIf(hasChromium)('a list longer than a page', () => {
  test('200 rows drawn, the count says so; show more draws the rest; the search finds one not drawn', async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(viewer.url);
    const rows = page.locator('tbody tr[data-id]');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(200);
    expect(await page.locator('.count').textContent()).toBe('showing 200 of 250');
    await page.click('#show-more');
    await rows.nth(249).waitFor(); // (page functions as strings would need eval, which the page's CSP forbids)
    expect(await page.locator('#show-more').isHidden()).toBe(true);
    expect(await page.locator('.count').textContent()).toBe('250 invocations');

    await page.reload();
    await rows.first().waitFor();
    const drawn = new Set(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id'))));
    const notDrawn = ids.find((id) => !drawn.has(id))!;
    expect(notDrawn).toBeDefined();
    await page.fill('#search', notDrawn);
    await expect.poll(() => rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id')).join()), { timeout: 30_000 }).toBe(notDrawn);
    expect(await page.locator('.count').textContent()).toBe('1 of 250');
    // A tenant filter narrows all 250 (the fixture spreads them over ten tenants), then pages again.
    await page.fill('#search', '');
    await page.selectOption('#filter-tenant', 't3');
    await page.locator('.count', { hasText: /^25 of 250$/ }).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });
});
