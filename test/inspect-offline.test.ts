/**
 * Offline audit in the viewer's page, in a real headless Chromium (one browser for the file, a page
 * per test): a `weft export` bundle dropped on the list page is verified first and then drawn as a
 * run — its summary, statechart, plans (with the sentence saying they are not re-derived offline),
 * timeline and journal — with no request about it to the server; a tampered bundle shows the
 * failure naming the changed record, the whole view marked untrusted and no trusted badge; and the
 * three levels of trust each show their colour and words: a key you gave (green), the store's key
 * (amber, on an invocation's page), the bundle's own key (amber: integrity, not who signed); a
 * fork's bundle shows its lineage — its parent, and the parent's journal it carries, checked.
 *
 * With WEFT_TEST_ARTIFACTS set, the offline view is shot as inspect-offline.png (and the tampered
 * one as inspect-offline-tampered.png): the docs' screenshots (docs/inspect.md).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, weft } from './support/cli.js';
import { launchBrowser, requireChromium, screenshotFolder } from './support/chromium.js';
import { openPage } from './support/inspect-viewer.js';
import { serveInspector, type ServedViewer } from './support/inspector.js';
import { runInWorkspace, type RunLine } from './support/runs-here.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-offline-'));
const dir = path.join(root, 'ws');
const hasChromium = requireChromium();
let browser: Browser;
let viewer: ServedViewer;
let run: RunLine;
/** The bundle `weft export` wrote, as dropped (a neutral name: it is shown on the page). */
let bundleFile: string;
let bundleText: string;

const GREEN = 'rgb(6, 118, 71)';
const AMBER = 'rgb(181, 71, 8)';
const colour = (page: Page, selector: string) => page.evaluate<string>(`getComputedStyle(document.querySelector(${JSON.stringify(selector)})).color`);

beforeAll(async () => {
  assertBuilt();
  if (!hasChromium) return;
  browser = await launchBrowser();
  run = await runInWorkspace('travel', { dir, seed: '7' });
  expect(run.status).toBe('completed');
  const exported = await weft(['export', run.id, '--dir', dir]);
  expect(exported.code, exported.stderr).toBe(0);
  bundleText = exported.stdout;
  bundleFile = path.join(mkdtempSync(path.join(root, 'drop-')), 'bundle.json');
  writeFileSync(bundleFile, bundleText);
  viewer = await serveInspector(['--dir', dir]); // no --public-key: the store's key on an invocation's page
}, 180_000);

afterAll(async () => {
  await viewer?.stop();
  await browser?.close();
  rmSync(root, { recursive: true, force: true });
});

/**
 * The top of the offline view (its verdict, summary, statechart and plans: what a reader meets
 * first), as `name` in WEFT_TEST_ARTIFACTS (nothing without it). The whole view, with every
 * journal record, is several thousand pixels tall.
 */
async function shotOfView(page: Page, name: string): Promise<void> {
  if (screenshotFolder === undefined) return;
  mkdirSync(screenshotFolder, { recursive: true });
  const box = (await page.locator('#drop-result').boundingBox())!;
  await page.screenshot({ path: path.join(screenshotFolder, name), fullPage: true, clip: { x: box.x, y: box.y, width: box.width, height: Math.min(box.height, 1500) } });
}

/** The list page, ready for a drop, and every request the page makes from then on. */
async function listPage(): Promise<{ page: Page; errors: string[]; requests: string[] }> {
  const { page, errors } = await openPage(browser);
  await page.setViewportSize({ width: 1400, height: 900 });
  await page.goto(viewer.url);
  await page.locator('#drop-file').waitFor({ state: 'attached', timeout: 30_000 });
  const requests: string[] = [];
  page.on('request', (req) => requests.push(req.url()));
  return { page, errors, requests };
}

describe.runIf(hasChromium)('a dropped bundle drawn as a run', () => {
  test('verified first, then its summary, statechart, plans (not re-derived offline, said so), timeline and journal — and nothing about it asked of the server', async () => {
    const { page, errors, requests } = await listPage();
    await page.setInputFiles('#drop-file', bundleFile);
    const view = page.locator('#drop-result #offline-run');
    await view.waitFor({ timeout: 30_000 });
    // The verdict heads the view: the bundle's own key, amber, saying what it does not prove.
    expect(await view.getAttribute('data-trusted')).toBe('bundle');
    expect(await view.locator('#verdict').getAttribute('data-trust')).toBe('bundle');
    expect(await page.locator('#drop-result #fingerprint').textContent()).toBe(run.fingerprint);
    expect(await view.locator('#offline-untrusted').count()).toBe(0);
    // The summary: the invocation, how it ended, its trust.
    expect(await view.locator('dd[data-field="invocation"]').textContent()).toBe(run.id);
    expect(await view.locator('dd[data-field="status"] .status').textContent()).toBe('completed');
    expect(await view.locator('dd[data-field="library"]').textContent()).toContain('carried in the bundle');
    // The statechart, lit where the run ended, and saying it was not replayed.
    await view.locator('#offline-statechart[data-ready="yes"]').waitFor({ timeout: 30_000 });
    expect(await view.locator('#offline-statechart svg.statechart-svg').getAttribute('data-current')).toBe('completed');
    expect(await view.locator('#offline-chart-caption').textContent()).toMatch(/^not replayed offline: .* lit from how its records end \(completed\)$/);
    // The plans: the sentence, and each epoch as recorded.
    expect(await view.locator('#plans-offline').textContent()).toContain('Plan trees are not re-derived offline');
    expect(await view.locator('#offline-plans .pt-epoch').count()).toBeGreaterThan(0);
    expect(await view.locator('#offline-plans .pt-epoch [data-verdict="offline"]').first().textContent()).toContain('recorded plan, not re-derived offline');
    expect(await view.locator('#offline-plans .pt-step').count()).toBeGreaterThan(0);
    // The timeline and the journal, from the file's lines.
    expect(await view.locator('#timeline .tl-epoch').count()).toBeGreaterThan(0);
    const lines = (JSON.parse(bundleText) as { journal: string }).journal.trimEnd().split('\n');
    expect(await view.locator('.journal li').count()).toBe(lines.length);
    expect(await view.locator('.journal details.record.bad').count()).toBe(0);
    // Nothing of the file went to the server: no request names the invocation, and the machine's layout is asked without a path.
    expect(requests.filter((url) => url.includes(run.id))).toEqual([]);
    expect(requests.filter((url) => new URL(url).pathname === '/api/machine').map((url) => new URL(url).search)).toEqual(['']);
    expect(requests.filter((url) => new URL(url).pathname.startsWith('/api/invocations/'))).toEqual([]);
    await shotOfView(page, 'inspect-offline.png');
    expect(errors).toEqual([]);
    await page.close();
  });

  test('a tampered bundle shows the failure naming the changed record, the view marked untrusted, and no trusted badge', async () => {
    const bundle = JSON.parse(bundleText) as { journal: string };
    const lines = bundle.journal.split('\n');
    const seq = lines.findIndex((line) => line.includes('"kind":"step.completed"'));
    expect(seq).toBeGreaterThan(0);
    // One byte of the record's body changed (its result), as an editor would.
    lines[seq] = lines[seq]!.replace(/"result":\{/, '"result":{"edited":true,');
    expect(lines[seq]).toContain('"edited":true');
    const tampered = path.join(path.dirname(bundleFile), 'tampered.json');
    writeFileSync(tampered, JSON.stringify({ ...bundle, journal: lines.join('\n') }));

    const { page, errors, requests } = await listPage();
    await page.setInputFiles('#drop-file', tampered);
    const view = page.locator('#drop-result #offline-run');
    await view.waitFor({ timeout: 30_000 });
    expect(await view.getAttribute('data-trusted')).toBe('no');
    expect(await view.getAttribute('class')).toContain('untrusted');
    expect(await view.locator('#verdict').getAttribute('class')).toContain('bad');
    expect(await view.locator('#verdict h2').textContent()).toBe(`✗ verification failed at seq ${seq}`);
    expect(await view.locator('#offline-untrusted').textContent()).toContain(`record seq ${seq} (step.completed) does not hold`);
    expect(await view.locator('#offline-untrusted').textContent()).toContain('Nothing below is to be trusted');
    // No trusted badge anywhere: not the verdict's, not the summary's.
    expect(await view.locator('#offline-trust').getAttribute('data-trust')).toBe('none');
    expect(await view.locator('#offline-trust').textContent()).toContain('NOT verified');
    expect(await view.locator('.trust-badge.ok, .trust-badge.partial, .verdict.ok, [data-trust="given"], [data-trust="bundle"], [data-trust="store"]').count()).toBe(0);
    expect(await view.locator('dd[data-field="status"] .status').textContent()).toBe('completed — journal NOT verified');
    // The changed record flagged in the journal, those after it too; the chart not lit.
    expect(await view.locator('.journal details.record.bad .seq').textContent()).toBe(String(seq));
    await view.locator('#offline-statechart[data-ready="yes"]').waitFor({ timeout: 30_000 });
    expect(await view.locator('#offline-chart-caption').textContent()).toContain('not lit: the journal does not verify');
    expect(requests.filter((url) => url.includes(run.id))).toEqual([]);
    await shotOfView(page, 'inspect-offline-tampered.png');
    expect(errors).toEqual([]);
    await page.close();
  });

  test('the three levels of trust, each with its colour and words: a key you gave (green), the store\'s key (amber), the bundle\'s own key (amber)', async () => {
    // The bundle's own key: amber, integrity only, not who signed.
    const { page, errors } = await listPage();
    await page.setInputFiles('#drop-file', bundleFile);
    const view = page.locator('#drop-result #offline-run');
    await view.locator('#verdict[data-trust="bundle"]').waitFor({ timeout: 30_000 });
    expect(await view.locator('#verdict h2').textContent()).toBe("✓ integrity only — sealed by the bundle's own key");
    expect(await view.locator('#verdict').textContent()).toContain("a bundle's own key proves only that the journal was not changed after signing, not who signed it");
    expect(await colour(page, '#offline-run #verdict h2')).toBe(AMBER);
    expect(await view.locator('#offline-trust').getAttribute('data-trust')).toBe('bundle');
    expect(await view.locator('#offline-trust').textContent()).toBe("✓ integrity only — checked against the bundle's own key");
    expect(await colour(page, '#offline-trust')).toBe(AMBER);

    // A key you gave: the workspace's weft.pub dropped on the page; the bundle is drawn again against it, green.
    await page.setInputFiles('#drop-file', run.publicKey);
    await view.locator('#verdict[data-trust="given"]').waitFor({ timeout: 30_000 });
    expect(await view.locator('#verdict h2').textContent()).toBe('✓ verified in this page');
    expect(await view.locator('#verdict').textContent()).toContain('a key you gave');
    expect(await colour(page, '#offline-run #verdict h2')).toBe(GREEN);
    expect(await view.locator('#offline-trust').textContent()).toBe('✓ sealed — checked against a key you gave');
    expect(await colour(page, '#offline-trust')).toBe(GREEN);
    expect(await page.locator('#dropped-key').getAttribute('data-key-id')).not.toBeNull();
    // Forgotten: back to the bundle's own key.
    await page.locator('#forget-key').click();
    await view.locator('#verdict[data-trust="bundle"]').waitFor({ timeout: 30_000 });

    // The store's key: an invocation's page of a viewer without --public-key, amber and "not independent".
    await page.goto(new URL(`/invocations/${run.id}`, viewer.url).href);
    await page.locator('#verdict[data-trust="store"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('#verdict h2').first().textContent()).toBe("✓ verified in this page — by the store's own key, not independent");
    expect(await page.locator('#verdict').first().textContent()).toContain('not whose key it is');
    expect(await colour(page, '#verdict h2')).toBe(AMBER);
    expect(errors).toEqual([]);
    await page.close();
  });

  test("a fork's bundle shows its lineage: the parent its pin names, and the parent's journal it carries, checked in the page", async () => {
    const ran = await runInWorkspace('travel', { dir, seed: '8', hibernate: true });
    expect(ran.status).toBe('hibernated');
    const forked = await weft(['fork', ran.id, '--at-epoch', '1', '--dir', dir, '--json']);
    expect(forked.code, forked.stderr).toBe(0);
    const fork = (JSON.parse(forked.stdout.trim().split('\n').at(-1)!) as { id: string }).id;
    const exported = await weft(['export', fork, '--dir', dir]);
    expect(exported.code, exported.stderr).toBe(0);
    const carried = (JSON.parse(exported.stdout) as { lineage?: Array<{ invocation: string; journal: string }> }).lineage ?? [];
    expect(carried.map((l) => l.invocation)).toEqual([ran.id]);
    const file = path.join(path.dirname(bundleFile), 'fork.json');
    writeFileSync(file, exported.stdout);

    const { page, errors, requests } = await listPage();
    await page.setInputFiles('#drop-file', file);
    const view = page.locator('#drop-result #offline-run');
    await view.locator('#verdict[data-trust="bundle"]').waitFor({ timeout: 30_000 });
    const lineage = view.locator('dd[data-field="lineage"]');
    expect(await lineage.locator('.lineage-fork-of').textContent()).toMatch(new RegExp(`^fork of ${ran.id} at epoch 1 \\(parent's record hash [0-9a-f]{12}…\\)$`));
    const parentLine = lineage.locator(`.lineage-carried[data-parent="${ran.id}"]`);
    expect(await parentLine.getAttribute('class')).toContain('ok');
    expect(await parentLine.textContent()).toBe(`parent's journal in the bundle: ${ran.id} — ${carried[0]!.journal.trimEnd().split('\n').length} records, chain intact`);
    // Neither id goes to the server: the parent is text, not a link to this viewer.
    expect(await lineage.locator('a').count()).toBe(0);
    expect(requests.filter((url) => url.includes(fork) || url.includes(ran.id))).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
