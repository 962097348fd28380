/**
 * Which key the viewer's page checks a seal against, said beside the verdict (inspector/page/trusted-key.ts):
 * without --public-key, the key the store itself holds is used and labelled "from the store, not
 * independent"; a weft.pub dropped onto the page becomes the trusted key for the session (every page
 * uses it, until forgotten); another key's weft.pub makes the seal a mismatch; a secret key file
 * dropped on the page is refused and not kept. In a real headless Chromium.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, weft } from './support/cli.js';
import { launchBrowser, requireChromium } from './support/chromium.js';
import { openPage, startViewer, type Viewer } from './support/inspect-viewer.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-inspect-key-'));
const hasChromium = requireChromium();
let browser: Browser;

const LISBON = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';
const TRAVEL = ['--seed', '7', '--as-of', '2026-06-01T09:00:00Z'];
const last = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as { id: string; status: string; fingerprint: string; publicKey: string };

beforeAll(async () => {
  assertBuilt();
  if (hasChromium) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  rmSync(root, { recursive: true, force: true });
});

describe.runIf(hasChromium)('the key a seal is checked against', () => {
  let run: ReturnType<typeof last>;
  let otherPub: string;
  let viewer: Viewer;

  beforeAll(async () => {
    run = last((await weft(['run', 'travel', LISBON, ...TRAVEL, '--dir', path.join(root, 'w'), '--json'])).stdout);
    expect(run.status).toBe('completed');
    // Another workspace's key: a key that did not seal this journal.
    otherPub = last((await weft(['run', 'travel', LISBON, ...TRAVEL, '--dir', path.join(root, 'other'), '--json'])).stdout).publicKey;
    viewer = await startViewer(['--dir', path.join(root, 'w')]); // no --public-key
  });
  afterAll(async () => viewer?.stop());

  const verdictOf = async (page: import('playwright-core').Page) => {
    await page.locator('#verdict').waitFor();
    return (await page.locator('#verdict').textContent()) ?? '';
  };

  test('without --public-key the store\'s own key is used, labelled "from the store, not independent"; a dropped weft.pub takes over, on every page of the session', async () => {
    const { page, errors } = await openPage(browser);
    const pageUrl = new URL(`/invocations/${run.id}`, viewer.url).href;
    await page.goto(pageUrl);
    let verdict = await verdictOf(page);
    expect(verdict).toContain('verified');
    expect(verdict).toContain('from the store');
    expect(verdict).toContain('not independent');
    expect(await page.locator('#fingerprint').textContent()).toBe(run.fingerprint);

    // The person's own key, dropped on the page (the file chooser is the drop's twin).
    await page.setInputFiles('#drop-file', run.publicKey);
    await page.locator('#verdict', { hasText: 'dropped onto this page' }).waitFor();
    verdict = await verdictOf(page);
    expect(verdict).toContain('verified');
    expect(verdict).not.toContain('not independent');
    expect(await page.locator('#dropped-key').getAttribute('data-key-id')).toBe(JSON.parse(readFileSync(run.publicKey, 'utf8')).keyId);

    // Kept for the session: the list page's drop panel and a reload use it too.
    await page.reload();
    expect(await verdictOf(page)).toContain('dropped onto this page');

    // A key that did not seal the journal: a mismatch, named as such.
    await page.setInputFiles('#drop-file', otherPub);
    await page.locator('#verdict.bad').waitFor();
    expect(await verdictOf(page)).toMatch(/seal signature mismatch/);

    // Forgotten: back to the store's key, labelled.
    await page.click('#forget-key');
    await page.locator('#verdict', { hasText: 'not independent' }).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  test('a secret key file dropped on the page is refused and not kept', async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(new URL(`/invocations/${run.id}`, viewer.url).href);
    await verdictOf(page);
    const secret = path.join(path.dirname(run.publicKey), 'weft.key');
    const copy = path.join(root, 'weft.key');
    writeFileSync(copy, readFileSync(secret));
    await page.setInputFiles('#drop-file', copy);
    await page.locator('#drop-problem').waitFor();
    expect(await page.locator('#drop-problem').textContent()).toContain('secret key');
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    expect(await verdictOf(page)).toContain('not independent');
    expect(errors).toEqual([]);
    await page.close();
  });
});
