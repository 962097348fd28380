/**
 * The invocation page read as a person reads it, in a real headless Chromium, on a workspace on disk
 * and on Redis (where the description and the journal come another way): every journal record has
 * a one-line summary and its body pretty-printed; an intent holding U+202E shows the escape `\u202e`
 * on the list and the page, never the override itself; a 500-character token wraps in its card at
 * 1024 and 1400 px; a journal that fails verification marks its status badge; a verified seal shows
 * its key's trust (a key you gave green, the store's amber, a bundle's own amber with "integrity
 * only"); a tenant's page shows no server path; `?token=` leaves the address bar; the timeline
 * draws epochs on one run-wide axis and zooms one on a click; time travel counts as the journal does.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, weft } from './support/cli.js';
import { launchBrowser, requireChromium } from './support/chromium.js';
import { openPage } from './support/inspect-viewer.js';
import { serveInspector, type ServedViewer as Viewer } from './support/inspector.js';
import { requireRedis, startRedis, type RedisServer } from './support/redis-server.js';
import { runInWorkspace, runOnRedis, type RedisRunLine } from './support/runs-here.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-inspect-readable-'));
const hasChromium = requireChromium();
let browser: Browser;

const LISBON = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';
const BIDI = 'Take me to Lisbon \u202eevil\u202c for the conference on the 12th, under 900 EUR';
const LONG = `Take me to Lisbon, reference ${'x'.repeat(500)}`;
const AS_OF = '2026-06-01T09:00:00Z';
const ALL = 'all-seeing-token-0123456789';
const ACME = 'acme-tenant-token-0123456789';
const RAW_BIDI = /[\u202a-\u202e\u2066-\u2069\u200e\u200f]/;

beforeAll(async () => {
  assertBuilt();
  if (hasChromium) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  rmSync(root, { recursive: true, force: true });
});

/** The invocation's page, once verified in it. */
async function openInvocation(viewer: Viewer, id: string, width = 1400): Promise<{ page: Page; errors: string[] }> {
  const opened = await openPage(browser);
  await opened.page.setViewportSize({ width, height: 900 });
  await opened.page.goto(new URL(`/invocations/${id}?token=${ALL}`, viewer.origin).href);
  await opened.page.locator('#verdict').waitFor({ timeout: 30_000 });
  await opened.page.locator('.journal li').first().waitFor();
  return opened;
}

/** The computed text colour of the first element `selector` names. */
const colourOf = (page: Page, selector: string) => page.evaluate<string>(`getComputedStyle(document.querySelector(${JSON.stringify(selector)})).color`);

const statusText = (page: Page) => page.locator('[data-field="status"] .status').textContent();

/** The checks both stores share: bidi escapes (list and page), summaries, the tampered badge. */
function sharedChecks(get: () => { viewer: Viewer; done: string; bidi: string; tampered: string }) {
  test('an intent holding U+202E shows its escape on the list and the page, never the override', async () => {
    const { viewer, bidi } = get();
    const { page, errors } = await openPage(browser);
    await page.goto(new URL(`/?token=${ALL}`, viewer.origin).href);
    await page.locator(`tr[data-id="${bidi}"]`).waitFor({ timeout: 30_000 });
    const row = (await page.locator(`tr[data-id="${bidi}"]`).textContent()) ?? '';
    expect(row).toContain('Lisbon \\u202eevil\\u202c for');
    expect(await page.evaluate<string>('document.body.innerText')).not.toMatch(RAW_BIDI);
    await page.close();
    const opened = await openInvocation(viewer, bidi);
    expect(await opened.page.locator('[data-field="intent"]').textContent()).toBe('Take me to Lisbon \\u202eevil\\u202c for the conference on the 12th, under 900 EUR');
    expect(await opened.page.locator('.journal li').first().locator('.record-summary').textContent()).toContain('\\u202eevil\\u202c');
    // Every text node and attribute of the page, the bodies in the journal's <pre> included.
    const raw = await opened.page.evaluate<string[]>(`(() => {
      const found = [];
      const bidi = /[\\u202a-\\u202e\\u2066-\\u2069]/;
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) if (bidi.test(n.nodeValue)) found.push(n.nodeValue.slice(0, 80));
      for (const e of document.querySelectorAll('*')) for (const a of e.attributes) if (bidi.test(a.value)) found.push(a.name + '=' + a.value.slice(0, 80));
      return found;
    })()`);
    expect(raw).toEqual([]);
    expect(opened.errors).toEqual([]);
    expect(errors).toEqual([]);
    await opened.page.close();
  });

  test('every record has a one-line summary, and its body pretty-printed under it', async () => {
    const { viewer, done } = get();
    const { page, errors } = await openInvocation(viewer, done);
    const rows = await page.locator('.journal li').evaluateAll((lis) => lis.map((li) => ({ kind: li.querySelector('.kind')?.textContent ?? '', summary: li.querySelector('.record-summary')?.textContent ?? '' })));
    expect(rows.length).toBeGreaterThan(20);
    expect(rows.filter((r) => r.summary.trim() === '')).toEqual([]);
    const dispatched = rows.find((r) => r.kind === 'step.dispatched')!;
    expect(dispatched.summary).toMatch(/^#0 → \S+\(.*\) · attempt 1$/);
    expect(rows.find((r) => r.kind === 'admission.decided')!.summary).toMatch(/: allow by /);
    const first = page.locator('.journal li').nth(1);
    await first.locator('summary').click();
    expect(await first.locator('pre').textContent()).toMatch(/^\{\n {2}"/);
    expect(errors).toEqual([]);
    await page.close();
  });

  test('a journal that fails verification marks the status badge; an intact one does not', async () => {
    const { viewer, done, tampered } = get();
    const bad = await openInvocation(viewer, tampered);
    await bad.page.locator('#verdict.bad').waitFor();
    expect(await statusText(bad.page)).toBe('completed — journal NOT verified');
    const badge = bad.page.locator('[data-field="status"] .status');
    expect(await badge.getAttribute('data-verified')).toBe('no');
    expect(await colourOf(bad.page, '[data-field="status"] .status')).toBe('rgb(180, 35, 24)');
    await bad.page.close();
    const good = await openInvocation(viewer, done);
    await good.page.locator('#verdict.ok').waitFor();
    expect(await statusText(good.page)).toBe('completed');
    await good.page.close();
  });
}

describe.runIf(hasChromium)('on a workspace on disk', { concurrent: true }, () => {
  const dir = path.join(root, 'w');
  let done: RedisRunLine;
  let bidi: string;
  let long: string;
  let tampered: string;
  let viewer: Viewer;
  let storeKeyed: Viewer;

  beforeAll(async () => {
    done = await runInWorkspace('travel', { dir, intent: LISBON, seed: '7', asOf: AS_OF, tenant: 'acme' });
    expect(done.status).toBe('completed');
    // The scripted model has no reply for these intents: they fail at once, their intents recorded.
    bidi = (await runInWorkspace('travel', { dir, intent: BIDI, seed: '8', asOf: AS_OF, tenant: 'acme' })).id;
    long = (await runInWorkspace('travel', { dir, intent: LONG, seed: '9', asOf: AS_OF, tenant: 'acme' })).id;
    const t = await runInWorkspace('travel', { dir, intent: LISBON, seed: '11', asOf: AS_OF, tenant: 'acme' });
    tampered = t.id;
    // One byte changed in the first record: its hash no longer holds.
    writeFileSync(t.journal, readFileSync(t.journal, 'utf8').replace('under 900 EUR', 'under 100 EUR'));
    viewer = await serveInspector(['--dir', dir, '--public-key', done.publicKey, '--token', ALL, '--tenant-token', `acme=${ACME}`]);
    storeKeyed = await serveInspector(['--dir', dir]); // no --public-key: the store's key checks the seal
  });
  afterAll(async () => {
    await viewer?.stop();
    await storeKeyed?.stop();
  });

  sharedChecks(() => ({ viewer, done: done.id, bidi, tampered }));

  test('a 500-character token wraps inside its card: no horizontal overflow at 1024 and 1400 px', async () => {
    for (const width of [1024, 1400]) {
      const { page, errors } = await openInvocation(viewer, long, width);
      await page.waitForTimeout(300);
      const { scrollWidth, innerWidth } = await page.evaluate<{ scrollWidth: number; innerWidth: number }>('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })');
      expect(scrollWidth, `at ${width} px`).toBeLessThanOrEqual(innerWidth);
      expect(await page.locator('[data-field="intent"]').textContent()).toContain('x'.repeat(500));
      expect(errors).toEqual([]);
      await page.close();
    }
  });

  test('three levels of trust: a key you gave (green), the store\'s key (amber), a bundle\'s own key (amber, integrity only)', async () => {
    const colour = colourOf;
    const given = await openInvocation(viewer, done.id);
    await given.page.locator('#verdict[data-trust="given"]').waitFor();
    expect(await given.page.locator('#verdict h2').textContent()).toBe('✓ verified in this page');
    expect(await colour(given.page, '#verdict h2')).toBe('rgb(6, 118, 71)');
    await given.page.close();

    const { page, errors } = await openPage(browser);
    await page.goto(new URL(`/invocations/${done.id}`, storeKeyed.origin).href);
    await page.locator('#verdict[data-trust="store"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('#verdict h2').textContent()).toContain("by the store's own key, not independent");
    expect(await colour(page, '#verdict h2')).toBe('rgb(181, 71, 8)');

    const exported = await weft(['export', done.id, '--dir', dir]);
    expect(exported.code, exported.stderr).toBe(0);
    const bundle = path.join(root, 'bundle.json');
    writeFileSync(bundle, exported.stdout);
    // On the list page, which has no key of its own here: the bundle is checked with the key it carries.
    await page.goto(new URL('/', storeKeyed.origin).href);
    await page.locator('#drop').waitFor();
    await page.setInputFiles('#drop-file', bundle);
    const dropped = page.locator('#drop-result #verdict');
    await dropped.waitFor();
    expect(await dropped.getAttribute('data-trust')).toBe('bundle');
    expect(await dropped.locator('h2').textContent()).toBe("✓ integrity only — sealed by the bundle's own key");
    expect(await dropped.textContent()).toContain('proves only integrity');
    expect(await dropped.textContent()).toContain('not authorship');
    expect(await colour(page, '#drop-result #verdict h2')).toBe('rgb(181, 71, 8)');
    expect(await page.locator('#drop-result #fingerprint').textContent()).toBe(done.fingerprint);
    expect(errors).toEqual([]);
    await page.close();
  });

  test("a tenant's page shows no server path; the all-seeing token's does", async () => {
    const seen = async (token: string) => {
      const { page, errors } = await openPage(browser);
      const bodies: string[] = [];
      page.on('response', (res) => void res.text().then((t) => bodies.push(t), () => undefined));
      await page.goto(new URL(`/invocations/${done.id}?token=${token}`, viewer.origin).href);
      await page.locator('#verdict').waitFor({ timeout: 30_000 });
      await page.locator('#where:not(:empty)').waitFor();
      await page.waitForTimeout(500);
      const shown = { where: await page.locator('#where').textContent(), text: await page.evaluate<string>('document.documentElement.outerHTML'), bodies: bodies.join('\n') };
      expect(errors).toEqual([]);
      await page.close();
      return shown;
    };
    const all = await seen(ALL);
    expect(all.where).toContain(dir); // the test can see a path when there is one to see
    const tenant = await seen(ACME);
    expect(tenant.where).toBe('tenant acme');
    expect(tenant.text).not.toContain(root);
    expect(tenant.bodies).not.toContain(root);
  });

  test('?token= leaves the address bar once the page loads, and the cookie carries on', async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(new URL(`/?token=${ALL}`, viewer.origin).href);
    await page.locator(`tr[data-id="${done.id}"]`).waitFor({ timeout: 30_000 });
    expect(page.url()).toBe(`${viewer.origin}/`);
    await page.goto(new URL(`/invocations/${done.id}?token=${ALL}#journal`, viewer.origin).href);
    await page.locator('#verdict').waitFor();
    expect(page.url()).toBe(`${viewer.origin}/invocations/${done.id}#journal`);
    await page.reload();
    await page.locator('#verdict.ok').waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  test('the timeline puts every epoch on one run-wide axis and zooms one to its own scale on a click; time travel counts as the journal does', async () => {
    const { page, errors } = await openInvocation(viewer, done.id);
    const epochs = await page.locator('#run-axis .tl-axis-epoch').count();
    expect(epochs).toBeGreaterThan(1);
    expect(await page.locator('.tl-epoch[data-scale="run"]').count()).toBe(epochs);
    // The last epoch (the shortest here) is a sliver on the run's scale, and fills more of the track zoomed.
    const widthOf = () => page.evaluate<number>(`[...document.querySelectorAll('.tl-epoch')].at(-1).querySelector('.tl-seg').getBoundingClientRect().width`);
    const onRun = await widthOf();
    await page.locator('#run-axis .tl-axis-epoch').last().click();
    await page.locator('.tl-epoch[data-scale="epoch"]').waitFor();
    expect(await widthOf()).toBeGreaterThan(onRun * 2);
    await page.locator('.tl-epoch[data-scale="epoch"] .tl-zoom').click();
    expect(await page.locator('.tl-epoch[data-scale="epoch"]').count()).toBe(0);

    const records = await page.locator('.journal li').count();
    expect(await page.locator('.journal h2').textContent()).toBe(`journal — ${records} records`);
    expect(await page.locator('#travel-readout').textContent()).toMatch(new RegExp(`^record ${records} of ${records} · seq ${records - 1} · invocation\\.sealed`));
    expect(errors).toEqual([]);
    await page.close();
  });
});

const redis = requireRedis();
describe.runIf(hasChromium && (redis || process.env.CI === 'true'))('on Redis', { concurrent: true }, () => {
  let server: RedisServer;
  let viewer: Viewer;
  let done: RedisRunLine;
  let bidi: string;
  let tampered: string;
  const prefix = `readable-${process.pid}`;

  beforeAll(async () => {
    server = await startRedis();
    const on = { dir: path.join(root, 'r'), redis: server.url, prefix, dispatch: 'in-process' as const, asOf: AS_OF, tenant: 'acme' };
    done = await runOnRedis('travel', { ...on, intent: LISBON, seed: '7' });
    expect(done.status).toBe('completed');
    bidi = (await runOnRedis('travel', { ...on, intent: BIDI, seed: '8' })).id;
    tampered = (await runOnRedis('travel', { ...on, intent: LISBON, seed: '11' })).id;
    const admin = new Redis(server.url);
    try {
      const key = `${prefix}:{${tampered}}:journal`;
      const line = (await admin.lindex(key, 0))!;
      await admin.lset(key, 0, line.replace('under 900 EUR', 'under 100 EUR'));
    } finally {
      admin.disconnect();
    }
    viewer = await serveInspector(['--redis', server.url, '--redis-prefix', prefix, '--public-key', done.publicKey, '--token', ALL, '--tenant-token', `acme=${ACME}`]);
  });
  afterAll(async () => {
    await viewer?.stop();
    await server?.stop();
  });

  sharedChecks(() => ({ viewer, done: done.id, bidi, tampered }));

  test("a tenant's page does not name the Redis server", async () => {
    const { page, errors } = await openPage(browser);
    const bodies: string[] = [];
    page.on('response', (res) => void res.text().then((t) => bodies.push(t), () => undefined));
    await page.goto(new URL(`/invocations/${done.id}?token=${ACME}`, viewer.origin).href);
    await page.locator('#verdict').waitFor({ timeout: 30_000 });
    await page.locator('#where:not(:empty)').waitFor();
    await page.waitForTimeout(500);
    expect(await page.locator('#where').textContent()).toBe('tenant acme');
    const port = String(server.port);
    expect(await page.evaluate<string>('document.documentElement.outerHTML')).not.toContain(`:${port}`);
    expect(bodies.join('\n')).not.toContain(`127.0.0.1:${port}`);
    expect(errors).toEqual([]);
    await page.close();
  });
});
