/**
 * `weft inspect` as a separate process, its pages rendered by a real headless Chromium: the list
 * shows a completed travel run linked to its page; that page verifies the journal in the browser
 * against --public-key and shows the fingerprint; a tampered journal names its first bad seq; an
 * intent carrying markup shows as text and runs nothing; beyond loopback without --token is
 * refused, and with a token a request without it gets 401; a Redis store the writers would refuse
 * (no AOF) is read all the same.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, weft } from './support/cli.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';
import { launchBrowser, NO_CHROMIUM_MESSAGE, requireChromium } from './support/chromium.js';
import { openPage, startViewer } from './support/inspect-viewer.js';
import { serveInspector, type ServedViewer as Viewer } from './support/inspector.js';
import { runInWorkspace, type RunLine } from './support/runs-here.js';
import { requireRedis, startRedis, type RedisServer } from './support/redis-server.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-inspect-'));
const hasChromium = requireChromium();
let browser: Browser;

const last = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as RunLine;
const LISBON = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';
const TRAVEL = ['--seed', '7', '--as-of', '2026-06-01T09:00:00Z'];
/** The same run made in this process (test/support/runs-here.ts): a fixture the viewer shows. */
const travelIn = (dir: string, intent = LISBON) => runInWorkspace('travel', { dir, intent, seed: '7', asOf: '2026-06-01T09:00:00Z' });




beforeAll(async () => {
  assertBuilt();
  if (hasChromium) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  rmSync(root, { recursive: true, force: true });
});

test.runIf(!hasChromium && process.env.CI === 'true')('chromium is installed', () => {
  throw new Error(NO_CHROMIUM_MESSAGE);
});

describe.runIf(hasChromium)('weft inspect over a workspace on disk', () => {
  const dir = path.join(root, 'w');
  let run: RunLine;
  let evilRun: RunLine;
  let viewer: Viewer;
  const evil = 'Lisbon <img src=x onerror="window.__pwned=1;alert(1)"><script>window.__pwned=2</script> trip';

  beforeAll(async () => {
    run = await travelIn(dir);
    expect(run.status).toBe('completed');
    // The scripted model has no reply for this intent: the run fails at once, with the intent recorded.
    evilRun = await travelIn(dir, evil);
    viewer = await startViewer(['--dir', dir, '--public-key', run.publicKey]);
  });
  afterAll(async () => viewer?.stop());

  test('it binds 127.0.0.1 and the list shows the completed run, linked to its page', async () => {
    expect(viewer.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const { page, errors } = await openPage(browser);
    await page.goto(viewer.url);
    const row = page.locator(`tr[data-id="${run.id}"]`);
    await row.waitFor();
    expect(await row.locator('.status').textContent()).toBe('completed');
    expect(await row.locator('td.intent').textContent()).toBe(LISBON);
    expect(await row.locator('a').getAttribute('href')).toBe(`/invocations/${run.id}`);
    // The filters and the search work in the page (asked of the server: the answer comes a moment later).
    const drawn = () => page.locator('tbody tr[data-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')));
    await page.selectOption('#filter-status', 'failed');
    await expect.poll(drawn, { timeout: 30_000 }).toEqual([evilRun.id]);
    await page.selectOption('#filter-status', '');
    await page.fill('#search', 'conference');
    await expect.poll(drawn, { timeout: 30_000 }).toEqual([run.id]);
    await page.fill('#search', run.id.slice(4, 14));
    await expect.poll(drawn, { timeout: 30_000 }).toEqual([run.id]);
    expect(errors).toEqual([]);
    await page.close();
  });

  test('its page verifies the journal in the browser against --public-key and shows the fingerprint', async () => {
    const { page, errors } = await openPage(browser);
    const scripts: string[] = [];
    page.on('request', (req) => {
      if (req.resourceType() === 'script') scripts.push(new URL(req.url()).pathname);
    });
    await page.goto(`${viewer.url}invocations/${run.id}`);
    await page.locator('#verdict').waitFor();
    expect(await page.locator('#verdict h2').textContent()).toBe('✓ verified in this page');
    expect(await page.locator('#fingerprint').textContent()).toBe(run.fingerprint);
    expect(await page.locator('#verdict').textContent()).toContain(`${run.publicKey} (given with --public-key)`);
    // The page ran the pure journal code itself, on the @noble reference implementations, never the Node fast paths.
    expect(scripts).toContain('/assets/journal/verify-bytes.js');
    expect(scripts).toContain('/vendor/@noble/curves/ed25519.js');
    expect(scripts.filter((s) => /-node\.js$/.test(s))).toEqual([]);
    expect(scripts.every((s) => s.startsWith('/assets/') || s.startsWith('/vendor/'))).toBe(true);
    // The timeline and the journal are rendered; a record expands to its body, hash and prev.
    expect(await page.locator('section.epoch').count()).toBe(3);
    const records = page.locator('details.record');
    expect(await records.count()).toBe(readFileSync(run.journal, 'utf8').trim().split('\n').length);
    await records.nth(0).locator('summary').click();
    expect(await records.nth(0).textContent()).toContain('invocation.pinned');
    expect(errors).toEqual([]);
    await page.close();
  });

  test('an intent carrying markup is shown as text, in the list and on its page, and runs nothing', async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(viewer.url);
    const row = page.locator(`tr[data-id="${evilRun.id}"]`);
    await row.waitFor();
    expect(await row.locator('td.intent span').getAttribute('title')).toBe(evil); // cut in the cell, whole in its title
    expect(await page.locator('tbody img, tbody script').count()).toBe(0);
    await page.goto(`${viewer.url}invocations/${evilRun.id}`);
    await page.locator('#verdict').waitFor();
    expect(await page.locator('.summary dd[data-field="intent"]').textContent()).toBe(evil);
    expect(await page.locator('main img, main script').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(errors).toEqual([]);
    await page.close();
  });

  test('a key the journal was not sealed by: the page names the seal as not the trusted key\'s', async () => {
    const other = path.join(root, 'other-key');
    expect((await weft(['keygen', '--out', other])).code).toBe(0);
    const wrong = await serveInspector(['--dir', dir, '--public-key', path.join(other, 'weft.pub')]);
    try {
      const { page, errors } = await openPage(browser);
      await page.goto(`${wrong.url}invocations/${run.id}`);
      await page.locator('#verdict').waitFor();
      const sealSeq = readFileSync(run.journal, 'utf8').trim().split('\n').length - 1;
      expect(await page.locator('#verdict h2').textContent()).toBe(`✗ seal signature mismatch at seq ${sealSeq}`);
      expect(await page.locator('#verdict').textContent()).not.toContain('verified in this page');
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await wrong.stop();
    }
  });

  test('awaiting approval: the journal holds but is not sealed yet (not a failure), and the page shows what is asked and the command with --dir', async () => {
    const waiting = await runInWorkspace(writeStrictTravelDomain(root), { dir, seed: '3' });
    expect(waiting.status).toBe('awaiting_approval');
    const { page, errors } = await openPage(browser);
    await page.goto(`${viewer.url}invocations/${waiting.id}`);
    await page.locator('#verdict').waitFor();
    expect(await page.locator('#verdict h2').textContent()).toBe('chain intact; not sealed yet');
    const next = page.locator('#next');
    expect(await next.locator('p').first().textContent()).toBe("waiting for a person's approval: the epoch spends 780, above the 100 limit");
    expect(await next.locator('table.asked tbody tr').count()).toBe(5);
    expect(await next.locator('dd', { hasText: 'weft approve' }).first().textContent()).toBe(`weft approve ${waiting.id} --by "$USER" --dir ${dir}`);
    expect(errors).toEqual([]);
    await page.close();
  });

  test('a tampered journal: the page names its first bad seq, and does not say verified', async () => {
    const tampered = path.join(root, 'tampered');
    const done = await travelIn(tampered);
    const original = readFileSync(done.journal, 'utf8').split('\n');
    // The first step result with a price: made cheaper, its hash left as it was.
    const seq = original.findIndex((line) => line.includes('"kind":"step.completed"') && /"price":\d+/.test(line));
    expect(seq).toBeGreaterThan(0);
    const lines = [...original];
    lines[seq] = lines[seq]!.replace(/"price":(\d+)/, (_, n: string) => `"price":${Number(n) - 1}`);
    expect(lines[seq]).not.toBe(original[seq]);
    writeFileSync(done.journal, lines.join('\n'));
    const other = await serveInspector(['--dir', tampered, '--public-key', done.publicKey]);
    try {
      const { page, errors } = await openPage(browser);
      await page.goto(`${other.url}invocations/${done.id}`);
      await page.locator('#verdict').waitFor();
      expect(await page.locator('#verdict h2').textContent()).toBe(`✗ verification failed at seq ${seq}`);
      expect(await page.locator('#bad-seq').getAttribute('data-seq')).toBe(String(seq));
      expect(await page.locator('#bad-seq').textContent()).toMatch(new RegExp(`^seq ${seq}: .*hash`));
      expect(await page.locator('#verdict').textContent()).not.toContain('verified in this page');
      expect(await page.locator('details.record.bad .seq').textContent()).toBe(String(seq));
      // The same file dropped on the list page is verified there, with no server data, to the same seq.
      await page.goto(other.url);
      await page.locator('#drop').waitFor();
      await page.setInputFiles('#drop-file', done.journal);
      await page.locator('#drop-result #verdict').waitFor();
      expect(await page.locator('#drop-result #verdict h2').textContent()).toBe(`✗ verification failed at seq ${seq}`);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await other.stop();
    }
  });
});

describe.runIf(hasChromium)('weft inspect, who may connect', () => {
  const dir = path.join(root, 'w');

  test('a bind beyond loopback without --token is refused (exit 2, naming --token), and serves nothing', async () => {
    const refused = await weft(['inspect', '--dir', dir, '--host', '0.0.0.0', '--port', '0']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--token');
    expect(refused.stdout).toBe('');
  });

  test('a loopback viewer answers only requests addressed to loopback (a rebound name gets 403), and a bad id is a 400', async () => {
    const viewer = await startViewer(['--dir', dir]);
    try {
      const { port } = new URL(viewer.url);
      const get = (host: string, p = '/api/invocations') =>
        new Promise<number>((resolve, reject) => {
          request({ host: '127.0.0.1', port: Number(port), path: p, headers: { host } }, (res) => (res.resume(), resolve(res.statusCode ?? 0))).on('error', reject).end();
        });
      expect(await get('evil.example')).toBe(403);
      expect(await get(`evil.example:${port}`)).toBe(403);
      expect(await get(`127.0.0.1:${port}`)).toBe(200);
      expect(await get(`localhost:${port}`)).toBe(200);
      expect(await get(`localhost:${port}`, '/api/invocations/%E0%A4%A')).toBe(400);
      expect(await get(`localhost:${port}`, '/api/invocations/..%2Fx')).toBe(400);
      expect(await get(`localhost:${port}`, '/api/invocations/inv-nobody')).toBe(404);
    } finally {
      await viewer.stop();
    }
  });

  test('with a token, a request without it gets 401; the printed URL carries it, and the page works with it (and verifies a dropped bundle)', async () => {
    const completed = await travelIn(dir); // the same pin and seed: the invocation already there
    expect(completed.status).toBe('completed');
    const token = 'a-token-nobody-guesses-1234';
    const viewer = await startViewer(['--dir', dir, '--token', token]);
    try {
      const base = new URL(viewer.url);
      expect(base.searchParams.get('token')).toBe(token);
      const origin = `${base.protocol}//${base.host}`;
      for (const p of ['/', '/api/invocations', '/api/trusted-key', '/assets/inspector/page/list.js', '/invocations/x']) {
        expect((await fetch(`${origin}${p}`)).status, p).toBe(401);
        expect((await fetch(`${origin}${p}`, { headers: { authorization: 'Bearer wrong-token-of-some-length' } })).status, p).toBe(401);
      }
      expect((await fetch(`${origin}/api/invocations`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      const { page, errors } = await openPage(browser);
      await page.goto(viewer.url);
      await page.locator('tbody tr[data-id]').first().waitFor();
      const id = await page.locator('tbody tr[data-id]').first().getAttribute('data-id');
      await page.locator(`tr[data-id="${id}"] a`).click();
      await page.locator('#verdict').waitFor();
      // No --public-key: a sealed journal is checked against the store's own key, labelled as not independent.
      const verdict = (await page.locator('#verdict').textContent()) ?? '';
      if (!/not sealed yet/.test(verdict)) expect(verdict).toMatch(/verified in this page[\s\S]*from the store[\s\S]*not independent/);
      // A bundle from weft export, chosen on the list page: verified in the page against the key it carries, labelled as such (amber: integrity only).
      const exported = await weft(['export', completed.id, '--dir', dir]);
      expect(exported.code, exported.stderr).toBe(0);
      const bundle = path.join(root, 'bundle.json');
      writeFileSync(bundle, exported.stdout);
      await page.goto(viewer.url);
      await page.locator('#drop').waitFor();
      await page.setInputFiles('#drop-file', bundle);
      await page.locator('#drop-result #verdict').waitFor();
      expect(await page.locator('#drop-result #verdict h2').textContent()).toBe("✓ integrity only — sealed by the bundle's own key");
      expect(await page.locator('#drop-result #fingerprint').textContent()).toBe(completed.fingerprint);
      expect(await page.locator('#drop-result #verdict').textContent()).toContain('the key carried in the bundle — from the file, not independent');
      expect(await page.locator('#drop-result .dropped').textContent()).toBe(`bundle.json — bundle of ${completed.id}`);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await viewer.stop();
    }
  });
});

const redis = requireRedis();
describe.runIf(hasChromium && (redis || process.env.CI === 'true'))('weft inspect over Redis', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis({ aof: false }); // a server the writers refuse without --redis-durability relaxed
  });
  afterAll(async () => server?.stop());

  test('a viewer reads a Redis store that fails the writers\' durability check, and verifies its journal', async () => {
    const run = last((await weft(['run', 'travel', LISBON, ...TRAVEL, '--redis', server.url, '--redis-durability', 'relaxed', '--dir', path.join(root, 'r'), '--json'])).stdout);
    expect(run.status).toBe('completed');
    const viewer = await startViewer(['--redis', server.url, '--public-key', run.publicKey]);
    try {
      const { page, errors } = await openPage(browser);
      await page.goto(viewer.url);
      await page.locator(`tr[data-id="${run.id}"] .status`).waitFor();
      expect(await page.locator(`tr[data-id="${run.id}"] .status`).textContent()).toBe('completed');
      await page.goto(`${viewer.url}invocations/${run.id}`);
      await page.locator('#verdict').waitFor();
      expect(await page.locator('#verdict h2').textContent()).toBe('✓ verified in this page');
      expect(await page.locator('#fingerprint').textContent()).toBe(run.fingerprint);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await viewer.stop();
    }
  });
});
