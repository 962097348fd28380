/**
 * `weft inspect`'s live updates, in a real headless Chromium: pages opened before a run starts (on
 * the file store, a run in this process held before it observes until the page has seen it in
 * flight; on Redis, a `weft run` child with a slowed observer) show its row appear and change, and its records arrive over
 * the WebSocket — each seq once, in order — until it ends `completed`, verified against
 * --public-key; on the file store (the journal's tail followed) and on Redis (the store's nudges).
 * A nudge carries the invocation id and the new length, never record data. The WebSocket passes the
 * same gates as every request: no token → 401, a foreign Host or Origin → 403.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, repoRoot, weft } from './support/cli.js';
import { launchBrowser, NO_CHROMIUM_MESSAGE, requireChromium } from './support/chromium.js';
import { followARun as follow, lastLine as last, type RunLine } from './support/inspect-flows.js';
import { startViewer } from './support/inspect-viewer.js';
import { serveInspector } from './support/inspector.js';
import { runInWorkspace } from './support/runs-here.js';
import { requireRedis, startRedis, type RedisServer } from './support/redis-server.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-inspect-live-'));
const hasChromium = requireChromium();
let browser: Browser;

const SLOW_TRAVEL = path.join(repoRoot, 'test', 'support', 'slow-travel-domain.mjs');
const LISBON = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';
const TRAVEL = ['--seed', '7', '--as-of', '2026-06-01T09:00:00Z'];
const TRAVEL_START = { intent: LISBON, seed: '7', asOf: '2026-06-01T09:00:00Z' };
/**
 * Long enough for the page to be opened on the run while it is in flight — on a loaded 2-core CI
 * machine too: 8 s once let the run end before the page had drawn its first records.
 */
const OBSERVE_DELAY_MS = 15_000;
/** A key pair made by a run in a scratch workspace: the slowed runs sign with it, the viewer trusts its public half. */
let keys: { key: string; pub: string };

const followARun = (store: string, viewerUrl: string, start: () => Promise<RunLine>) => follow(browser, store, viewerUrl, start);

beforeAll(async () => {
  assertBuilt();
  if (!hasChromium) return;
  browser = await launchBrowser();
  const scratch = path.join(root, 'scratch');
  const warm = await runInWorkspace('travel', { dir: scratch, ...TRAVEL_START }); // made in this process, as weft run makes it
  keys = { key: path.join(path.dirname(warm.publicKey), 'weft.key'), pub: warm.publicKey };
});
afterAll(async () => {
  await browser?.close();
  rmSync(root, { recursive: true, force: true });
});

test.runIf(!hasChromium && process.env.CI === 'true')('chromium is installed', () => {
  throw new Error(NO_CHROMIUM_MESSAGE);
});

describe.runIf(hasChromium)('weft inspect live, on the file store', () => {
  test('pages opened on an empty workspace follow a run started after them to completed, verified, each record shown once', async () => {
    const dir = path.join(root, 'files'); // not there yet: the viewer watches for it
    const viewer = await serveInspector(['--dir', dir, '--public-key', keys.pub]);
    // The run waits before it observes until the page has shown it in flight (an event, not a delay).
    let release!: () => void;
    const observeGate = new Promise<void>((resolve) => (release = resolve));
    try {
      const { run, shownWhileRunning, seqs } = await follow(
        browser,
        'files',
        viewer.url,
        async () => (await runInWorkspace('travel', { dir, ...TRAVEL_START, signingKey: keys.key, observeGate })) as RunLine,
        async () => release(),
      );
      const lines = readFileSync(run.journal, 'utf8').trimEnd().split('\n').length;
      expect(shownWhileRunning).toBeGreaterThan(0);
      expect(shownWhileRunning).toBeLessThan(lines);
      expect(seqs).toEqual([...Array(lines).keys()]);
    } finally {
      release();
      await viewer.stop();
    }
  });
});

/** An upgrade request to `/live` on the viewer at `url`: the HTTP status it gets (101 when accepted). */
function upgradeStatus(url: string, headers: Record<string, string>, query = 'list=1'): Promise<number> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port: Number(port),
      path: `/live?${query}`,
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', host: `127.0.0.1:${port}`, ...headers },
    });
    req.on('upgrade', (res, socket) => (socket.destroy(), resolve(res.statusCode ?? 0)));
    req.on('response', (res) => (res.resume(), resolve(res.statusCode ?? 0)));
    req.on('error', reject);
    req.end();
  });
}

describe.runIf(hasChromium)('weft inspect live, who may open the WebSocket', () => {
  const dir = path.join(root, 'gates');

  test('with a token, a WebSocket without it gets 401 (with it: 101)', async () => {
    const token = 'a-token-nobody-guesses-5678';
    const viewer = await serveInspector(['--dir', dir, '--token', token]);
    try {
      expect(await upgradeStatus(viewer.url, {})).toBe(401);
      expect(await upgradeStatus(viewer.url, { authorization: 'Bearer wrong-token-of-some-length' })).toBe(401);
      expect(await upgradeStatus(viewer.url, {}, `list=1&token=${token}`)).toBe(101);
      expect(await upgradeStatus(viewer.url, { authorization: `Bearer ${token}` })).toBe(101);
    } finally {
      await viewer.stop();
    }
  });

  test('a loopback viewer refuses a WebSocket addressed to another host, or opened by a page of another origin (403)', async () => {
    const viewer = await startViewer(['--dir', dir]);
    try {
      const { port } = new URL(viewer.url);
      expect(await upgradeStatus(viewer.url, { origin: `http://127.0.0.1:${port}` })).toBe(101);
      expect(await upgradeStatus(viewer.url, { host: `evil.example:${port}` })).toBe(403);
      expect(await upgradeStatus(viewer.url, { origin: 'http://evil.example' })).toBe(403);
      expect(await upgradeStatus(viewer.url, {}, 'follow=..%2Fx&from=0')).toBe(400);
      expect(await upgradeStatus(viewer.url, {}, 'follow=inv-x&from=-1')).toBe(400);
    } finally {
      await viewer.stop();
    }
  });
});

const redis = requireRedis();
describe.runIf(hasChromium && (redis || process.env.CI === 'true'))('weft inspect live, on Redis', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => server?.stop());

  test('pages follow a run started after them to completed, verified; the nudges carry only the id and the new length', async () => {
    const viewer = await startViewer(['--redis', server.url, '--public-key', keys.pub]);
    const listener = new Redis(server.url);
    listener.on('error', () => undefined);
    const nudges: string[] = [];
    try {
      await listener.subscribe('weft:appended');
      listener.on('message', (_channel: string, message: string) => nudges.push(message));
      const { run, shownWhileRunning, seqs } = await followARun('redis', viewer.url, async () =>
        last((await weft(['run', '--domain', SLOW_TRAVEL, LISBON, ...TRAVEL, '--redis', server.url, '--dir', path.join(root, 'r'), '--json'], { WEFT_SIGNING_KEY: keys.key, WEFT_TEST_OBSERVE_DELAY_MS: String(OBSERVE_DELAY_MS) })).stdout),
      );
      const reader = new Redis(server.url);
      const length = await reader.llen(`weft:{${run.id}}:journal`);
      reader.disconnect();
      expect(shownWhileRunning).toBeGreaterThan(0);
      expect(shownWhileRunning).toBeLessThan(length);
      expect(seqs).toEqual([...Array(length).keys()]);
      // One nudge per append, each {id, length} and nothing else: no record, no body, no hash.
      expect(nudges.length).toBeGreaterThan(1);
      const parsed = nudges.map((n) => JSON.parse(n) as Record<string, unknown>);
      for (const [i, n] of parsed.entries()) {
        expect(Object.keys(n).sort(), nudges[i]).toEqual(['id', 'length']);
        expect(n.id).toBe(run.id);
      }
      const lengths = parsed.map((n) => n.length as number);
      expect(lengths).toEqual([...lengths].sort((a, b) => a - b));
      expect(lengths.at(-1)).toBe(length);
      for (const n of nudges) expect(n).not.toMatch(/kind|hash|body|Lisbon/);
    } finally {
      listener.disconnect();
      await viewer.stop();
    }
  });
});
