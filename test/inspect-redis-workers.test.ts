/**
 * `weft inspect --redis URL --public-key F` in the distributed mode, in a real headless Chromium:
 * one private Redis for the file (AOF, fsync always) and, per describe block under a prefix of its
 * own, two `weft worker` processes (and, where a decision is carried on, `weft serve`), every one a
 * separate process. The viewer is served in the test's process (test/support/inspector.ts: what the
 * command serves, without its start; the command's own start is inspect-viewer's subject), and the
 * runs that feed it are made in the test's process too, as `weft run --redis … --dispatch bullmq`
 * makes them (test/support/runs-here.ts) — their effects still go to the worker processes.
 *
 * - A travel run whose booking (card.charge) the workers run slowly, started with
 *   `--dispatch bullmq` so its effects go to the workers: the list shows its row arrive, the
 *   invocation page shows the steps, the state and the journal move while it runs (the booking
 *   dispatched, in flight on a worker, then ok) and ends `completed`, its fingerprint verified in the page against
 *   --public-key; every record shown once, in order; the jobs ran on the workers.
 * - An invocation awaiting approval, approved by a click in the page: the decision goes to its
 *   inbox (the viewer has no --domain), `weft serve` resumes it with the workers, and the page
 *   follows it to `completed`, verified. Rejected the same way, it ends sealed (failed or handed
 *   off) and nothing is charged.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signingKeyFromSecret } from '../journal/seal.js';
import { writeKeyPair } from '../runtime/keys.js';
import { assertBuilt, repoRoot } from './support/cli.js';
import { launchBrowser, NO_CHROMIUM_MESSAGE, requireChromium } from './support/chromium.js';
import { followARun, shownSeqs, type RunLine } from './support/inspect-flows.js';
import { openPage } from './support/inspect-viewer.js';
import { serveInspector } from './support/inspector.js';
import { fileRedis } from './support/file-redis.js';
import { runOnRedis } from './support/runs-here.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';
import { spawnWeft, startWeftWorker, waitFor, type Spawned, type WorkerProcess } from './support/weft-processes.js';

const hasChromium = requireChromium();
/** One private Redis (AOF, fsync always) for the file; each describe block under a prefix of its own. */
const redis = fileRedis();
const hasRedis = redis.available;
const root = mkdtempSync(path.join(tmpdir(), 'weft-inspect-workers-'));
const SLOW_EFFECT_TRAVEL = path.join(repoRoot, 'test', 'support', 'slow-effect-travel-domain.mjs');
const LISBON = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';
/** How long the workers take over the booking: long enough to open the page on the run in flight. */
/** The booking is held on its worker until the page has shown it in flight (RELEASE_CHARGE written), at most this long. */
const SLOW_MS = 90_000;

let browser: Browser;
/** The one key every process here seals with; the viewer trusts its public half (--public-key). */
let keys: { secret: string; pub: string };

beforeAll(async () => {
  if (!hasChromium || !hasRedis) return;
  assertBuilt();
  const made = await writeKeyPair(path.join(root, 'keys'), signingKeyFromSecret(new Uint8Array(32).fill(41)));
  keys = { secret: made.secretFile, pub: made.publicFile };
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  rmSync(root, { recursive: true, force: true });
});

test.runIf(process.env.CI === 'true' && !hasChromium)('chromium is installed', () => {
  throw new Error(NO_CHROMIUM_MESSAGE);
});

/**
 * Two workers of `domain` (and serve, with `withServe`) on the file's Redis under a prefix of their
 * own, for one describe block; stopped after it. `store` is the --redis and --redis-prefix arguments
 * of every command of the block.
 */
function distributed(name: string, domain: () => string, env: Record<string, string> = {}, withServe = false) {
  const prefix = redis.freshPrefix(name);
  const ctx = { prefix, store: [] as string[], workers: [] as WorkerProcess[], serve: undefined as unknown as Spawned };
  beforeAll(async () => {
    if (!hasChromium || !hasRedis) return;
    const store = (ctx.store = ['--redis', redis.url, '--redis-prefix', prefix]);
    ctx.workers = await Promise.all([1, 2].map((n) => startWeftWorker(['--domain', domain(), ...store, '--dir', path.join(root, `worker-${n}`)], env)));
    if (withServe) ctx.serve = spawnWeft(['serve', '--domain', domain(), ...store, '--dispatch', 'bullmq', '--dir', path.join(root, 'serve'), '--poll-ms', '200'], { WEFT_SIGNING_KEY: keys.secret, ...env });
  });
  afterAll(async () => {
    ctx.serve?.signal('SIGTERM');
    await ctx.serve?.done;
    await Promise.all(ctx.workers.map((w) => w.stop()));
  });
  return ctx;
}

/** The job lines the workers logged (one per job: `<key> attempt <n> <outcome> <ms>`) for `id`. */
const jobLines = (workers: readonly WorkerProcess[], id: string) => workers.map((w) => w.stdout().split('\n').filter((l) => l.startsWith(`${id}.`)));

describe.runIf(hasChromium && hasRedis)('weft inspect on Redis, two workers: a run followed live', () => {
  const releaseCharge = path.join(root, 'release-charge');
  const ctx = distributed('live', () => SLOW_EFFECT_TRAVEL, { WEFT_TEST_SLOW_ACTUATOR: 'card.charge', WEFT_TEST_SLOW_MS: String(SLOW_MS), WEFT_TEST_SLOW_UNTIL: releaseCharge });

  test('the page shows the steps, the state and the journal move while the workers run it, and ends completed, verified against --public-key', async () => {
    const viewer = await serveInspector([...ctx.store, '--public-key', keys.pub]);
    try {
      let inFlight = '';
      const { run, shownWhileRunning, seqs } = await followARun(
        browser,
        'redis-workers',
        viewer.url,
        async () => (await runOnRedis(SLOW_EFFECT_TRAVEL, { intent: LISBON, seed: '7', redis: redis.url, prefix: ctx.prefix, dispatch: 'bullmq', dir: path.join(root, 'runtime'), signingKey: keys.secret })) as RunLine,
        async (page) => {
          try {
            // The booking in flight on a worker: its step shows dispatched, the others before it completed.
            const booking = page.locator('tr.step-dispatched', { hasText: 'card.charge' });
            await booking.waitFor({ timeout: 30_000 });
            inFlight = (await booking.locator('td.num').first().textContent()) ?? '';
            expect(await page.locator('[data-field="status"] .status').textContent()).toBe('running');
          } finally {
            writeFileSync(releaseCharge, ''); // seen in flight (or given up on): the worker may go on
          }
        },
      );
      const length = await redis.admin.llen(`${ctx.prefix}:{${run.id}}:journal`);
      expect(shownWhileRunning).toBeGreaterThan(0);
      expect(shownWhileRunning).toBeLessThan(length);
      expect(seqs).toEqual([...Array(length).keys()]);
      expect(inFlight).toMatch(/^#\d+$/);
      // The same page, reloaded after the end: every step ok, none left in flight.
      const { page, errors } = await openPage(browser);
      await page.goto(`${viewer.url}invocations/${run.id}`);
      await page.locator('#verdict h2', { hasText: '✓ verified in this page' }).waitFor();
      expect(await page.locator('#verdict').textContent()).toContain(`${keys.pub} (given with --public-key)`);
      expect(await page.locator('tr.step-dispatched').count()).toBe(0);
      expect(await page.locator('tr.step-ok', { hasText: 'card.charge' }).count()).toBe(1);
      expect(await shownSeqs(page)).toEqual([...Array(length).keys()]);
      expect(errors).toEqual([]);
      await page.close();
      // The effects ran on the workers (one line per job), the booking among them.
      const lines = jobLines(ctx.workers, run.id).flat();
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.every((l) => / ok /.test(l)), lines.join('\n')).toBe(true);
    } finally {
      await viewer.stop();
    }
  });
});

describe.runIf(hasChromium && hasRedis)('weft inspect on Redis, two workers and serve: approvals from the page', () => {
  // The strict travel domain (a person approves any booking over 100), for the workers and serve;
  // each run writes its own copy of the same domain (awaitingApproval), so all share one pin.
  const VERSION = 'workers-page';
  const domain = hasChromium && hasRedis ? writeStrictTravelDomain(mkdtempSync(path.join(root, 'strict-')), { version: VERSION }) : '';
  const ctx = distributed('approvals', () => domain, {}, true);

  /** An invocation awaiting approval on the workers' Redis, decided by a click in its page and followed to its sealed end. */
  async function decideAndFollow(button: '#approve' | '#reject', note: string): Promise<{ id: string; end: string; kinds: Array<{ kind: string; actuator?: unknown; key?: unknown }> }> {
    // Its own copy of the strict domain (the same pin), run as `weft run <it> --seed N --redis … --dispatch bullmq` would.
    const own = writeStrictTravelDomain(mkdtempSync(path.join(root, 'domain-')), { version: VERSION });
    const run = await runOnRedis(own, { seed: button === '#approve' ? '3' : '4', redis: redis.url, prefix: ctx.prefix, dispatch: 'bullmq', dir: path.join(root, `runtime-${button.slice(1)}`), signingKey: keys.secret });
    expect(run.status).toBe('awaiting_approval');
    const viewer = await serveInspector([...ctx.store, '--public-key', keys.pub]);
    try {
      const { page, errors } = await openPage(browser);
      await page.goto(`${viewer.url}invocations/${run.id}`);
      await page.locator('#next table.asked').waitFor();
      await page.locator('#approve-form[data-enabled="true"]').waitFor();
      expect(await page.locator('#approve-status').textContent()).toContain('weft serve');
      await page.fill('#approve-by', 'ops');
      await page.fill('#approve-note', note);
      await page.click(button);
      // Into its inbox (the viewer has no --domain); serve resumes it on the workers and the page follows it to its sealed end.
      await page.locator('.summary .status', { hasText: /^(completed|failed|handed off)$/ }).waitFor({ timeout: 120_000 }).catch(async (err: unknown) => {
        const api = await (await fetch(`${viewer.url}api/invocations/${run.id}`)).json().catch(() => null) as { status?: string } | null;
        throw new Error(`${String(err)}\n the page: status ${await page.locator('.summary .status').textContent()}, approve-status ${await page.locator('#approve-status').textContent().catch(() => '-')}, stale ${await page.locator('#stale').textContent().catch(() => '-')}, live ${await page.evaluate(() => (globalThis as unknown as { document: { body: { dataset: Record<string, string> } } }).document.body.dataset.live)}; the API: ${api?.status}; serve: ${ctx.serve.stdout().slice(-600)}`);
      });
      await page.locator('#verdict h2', { hasText: '✓ verified in this page' }).waitFor({ timeout: 30_000 });
      expect(await page.locator('#verdict').textContent()).toContain(`${keys.pub} (given with --public-key)`);
      const end = (await page.locator('.summary .status').textContent()) ?? '';
      expect(errors).toEqual([]);
      await page.close();
      const stored = await redis.admin.lrange(`${ctx.prefix}:{${run.id}}:journal`, 0, -1);
      const kinds = stored.map((l) => JSON.parse(l) as { kind: string; body: { actuator?: unknown; key?: unknown } }).map((r) => ({ kind: r.kind, actuator: r.body.actuator, key: r.body.key }));
      expect(kinds.at(-1)!.kind).toBe('invocation.sealed');
      return { id: run.id, end, kinds };
    } finally {
      await viewer.stop();
    }
  }

  test('approved by a click: serve resumes it on the workers, the page follows it to completed, verified', async () => {
    const { id, end, kinds } = await decideAndFollow('#approve', 'within budget');
    expect(end).toBe('completed');
    expect(ctx.serve.stdout()).toMatch(new RegExp(`resuming  ${id} \\(approval`));
    // The booking ran on one of the workers, after serve took the decision.
    const charge = kinds.find((r) => r.kind === 'step.dispatched' && r.actuator === 'card.charge');
    expect(charge?.key).toEqual(expect.any(String));
    await waitFor('the booking among the workers\' jobs', () => jobLines(ctx.workers, id).flat().some((l) => l.startsWith(`${String(charge!.key)} attempt 1 ok`)));
  });

  test('rejected by a click: serve records it, the run ends sealed (failed or handed off), nothing charged', async () => {
    const { id, end, kinds } = await decideAndFollow('#reject', 'too expensive');
    expect(['failed', 'handed off']).toContain(end);
    expect(ctx.serve.stdout()).toMatch(new RegExp(`resuming  ${id} \\(approval`));
    expect(kinds.filter((r) => r.kind === 'step.dispatched' && r.actuator === 'card.charge')).toHaveLength(0);
  });
});
