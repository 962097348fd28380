/**
 * Cancel, Resume and Fork from the viewer's invocation page, in a real headless Chromium, over a
 * workspace and over Redis (one browser per file, a page per test). Fixtures are travel runs
 * hibernated at their first boundary, made in this process as `weft run --hibernate` makes them:
 *
 * - Cancel: the first click only opens a confirmation (Back closes it, nothing is written); Confirm
 *   puts a cancel in the inbox naming who asked (the name typed, with the viewer's
 *   `inspect:<host>:<pid>`), and the resume that takes it up records `cancel.requested` by them and
 *   ends it cancelled;
 * - Resume: Confirm leaves a resume request in the inbox naming who asked; `weft serve` (its
 *   runtime.serve, in this process) carries it out, and the page follows the run to completed;
 * - Fork at epoch 1: the new invocation is made as `weft fork` makes it (its `invocation.forked`
 *   names the parent; the parent's `invocation.superseded` names who asked), the page links to it,
 *   and the fork's page draws the lineage as a tree;
 * - each POST without the token is a 401, from a foreign or missing Origin a 403, and writes nothing;
 * - a `--read-only` viewer draws none of them and refuses each (403, naming the flag), writing nothing;
 * - the top bar's approvals inbox counts a new invocation awaiting approval live (workspace only).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { JournalStore } from '../dist/journal/store.js';
import { assertBuilt } from './support/cli.js';
import { launchBrowser, NO_CHROMIUM_MESSAGE, pageScreenshot, requireChromium } from './support/chromium.js';
import { commandModules } from './support/commands-here.js';
import { fromDist } from './support/dist.js';
import { openPage } from './support/inspect-viewer.js';
import { serveInspector, type ServedViewer } from './support/inspector.js';
import { requireRedis, startRedis, type RedisServer } from './support/redis-server.js';
import { resumeInWorkspace, resumeOnRedis, runInWorkspace, runOnRedis } from './support/runs-here.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-inspect-actions-'));
const hasChromium = requireChromium();
const redisWanted = requireRedis();
let browser: Browser;

const LISBON = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';
const TOKEN = 'page-actions-token-0123456789abcdef';
/** What the viewer records beside the name typed: this process serves it (test/support/inspector.ts). */
const VIEWER = `inspect:${hostname()}:${process.pid}`;

beforeAll(async () => {
  assertBuilt();
  if (hasChromium) browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  rmSync(root, { recursive: true, force: true });
});

test.runIf(!hasChromium && process.env.CI === 'true')('chromium is installed', () => {
  throw new Error(NO_CHROMIUM_MESSAGE);
});

/** One store mode: how to make a hibernated run, resume one, open the store, and the viewer's flags. */
interface Mode {
  name: string;
  flags: () => string[];
  hibernated: (seed: string) => Promise<string>;
  resume: (id: string) => Promise<{ status: string }>;
  store: () => Promise<JournalStore>;
  /** A runtime over the travel domain for `weft serve` (runtime.serve), closed by the caller. */
  serving: (id: string) => Promise<{ runtime: { serve(o: { pollMs: number; signal: AbortSignal }): Promise<void>; close(): Promise<void> } }>;
}

function fileMode(): Mode {
  const dir = path.join(root, 'file');
  return {
    name: 'a workspace',
    flags: () => ['--dir', dir],
    hibernated: async (seed) => {
      const ran = await runInWorkspace('travel', { dir, intent: LISBON, seed, asOf: '2026-06-01T09:00:00Z', hibernate: true });
      expect(ran.status, ran.reason ?? '').toBe('hibernated');
      return ran.id;
    },
    resume: (id) => resumeInWorkspace(id, { dir }),
    store: async () => new (await commandModules()).FileStore(dir),
    serving: async (id) => (await commandModules()).openWorkspaceFor({ dir, id, domain: undefined, model: { url: undefined, name: undefined } }),
  };
}

function redisMode(server: () => RedisServer): Mode {
  const dir = path.join(root, 'redis');
  const on = () => ({ dir, redis: server().url, prefix: 'actions' });
  return {
    name: 'Redis',
    flags: () => ['--redis', server().url, '--redis-prefix', 'actions', '--dir', dir],
    hibernated: async (seed) => {
      const ran = await runOnRedis('travel', { ...on(), dispatch: 'in-process', intent: LISBON, seed, asOf: '2026-06-01T09:00:00Z', hibernate: true });
      expect(ran.status, ran.reason ?? '').toBe('hibernated');
      return ran.id;
    },
    resume: (id) => resumeOnRedis(id, { ...on(), dispatch: 'in-process' }),
    store: async () => {
      const { RedisStore } = await fromDist<typeof import('../dist/stores/redis.js')>('stores/redis.js');
      return new RedisStore({ redis: server().url, prefix: 'actions' });
    },
    serving: async (id) => {
      const m = await commandModules();
      return m.openWorkspaceFor({ dir, id, domain: undefined, model: { url: undefined, name: undefined }, store: m.storeChoice(dir, { redis: server().url, 'redis-prefix': 'actions' }, { longLived: true }), dispatch: 'in-process' });
    },
  };
}

/** Open the invocation page of `id` (with the token) and wait for its actions panel to know what it may do. */
async function openInvocation(viewer: ServedViewer, id: string): Promise<{ page: Page; errors: string[] }> {
  const opened = await openPage(browser);
  await opened.page.goto(`${viewer.origin}/invocations/${id}?token=${TOKEN}`);
  await opened.page.locator('#actions[data-state]:not([data-state="loading"])').waitFor({ state: 'attached', timeout: 60_000 });
  return opened;
}

/** Ask for `action` in the page: the button, then the confirmation filled and confirmed; the panel's outcome. */
async function askInPage(page: Page, action: 'cancel' | 'resume' | 'fork', by: string, reason: string): Promise<void> {
  await page.click(`#action-${action}`);
  await page.locator('#action-confirm:not([hidden])').waitFor();
  await page.fill('#action-by', by);
  await page.fill('#action-reason', reason);
  await page.click('#action-confirm-go');
  await page.locator(`#actions[data-outcome="${action}"]`).waitFor({ timeout: 120_000 }).catch(async (err: unknown) => {
    throw new Error(`the ${action} was not taken: the panel says ${JSON.stringify(await page.locator('#action-status').textContent())}; ${String(err)}`);
  });
}

const kinds = async (store: JournalStore, id: string) => (await store.read(id)).map((r) => r as { kind: string; body: Record<string, unknown> });

/** Wait (up to `ms`) until `check` holds, reading again every 250 ms. */
async function until<T>(what: string, read: () => Promise<T>, check: (value: T) => boolean, ms = 120_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > end) throw new Error(`${what}: still ${JSON.stringify(value)?.slice(0, 400)} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function actionsIn(mode: Mode) {
  let viewer: ServedViewer;
  let readOnly: ServedViewer;
  let store: JournalStore;
  let toCancel: string;
  let toResume: string;
  let toFork: string;
  let untouched: string;

  beforeAll(async () => {
    toCancel = await mode.hibernated('11');
    toResume = await mode.hibernated('12');
    toFork = await mode.hibernated('13');
    untouched = await mode.hibernated('14');
    store = await mode.store();
    viewer = await serveInspector([...mode.flags(), '--token', TOKEN]);
    readOnly = await serveInspector([...mode.flags(), '--token', TOKEN, '--read-only']);
  }, 240_000);
  afterAll(async () => {
    await viewer?.stop();
    await readOnly?.stop();
    await store?.close();
  });

  test('Cancel asks for confirmation, then puts a cancel naming who asked in the inbox; the resume that takes it up records it and ends cancelled', async () => {
    const { page, errors } = await openInvocation(viewer, toCancel);
    expect(await page.locator('#actions').getAttribute('data-state')).toBe('on');
    // The first click only asks: Back leaves nothing written.
    await page.click('#action-cancel');
    await page.locator('#action-confirm:not([hidden])').waitFor();
    expect(await page.locator('#action-what').textContent()).toContain(`Cancel ${toCancel}?`);
    await page.click('#action-confirm-back');
    await page.locator('#action-confirm').waitFor({ state: 'hidden' });
    expect(await store.peekInbox(toCancel)).toBeUndefined();

    await askInPage(page, 'cancel', 'ops lead', 'wrong city');
    const asked = `ops lead (${VIEWER})`;
    expect(await store.peekInbox(toCancel)).toMatchObject({ type: 'cancel', by: asked, reason: 'wrong city' });
    expect((await mode.resume(toCancel)).status).toBe('cancelled');
    const requested = (await kinds(store, toCancel)).find((r) => r.kind === 'cancel.requested');
    expect(requested?.body).toMatchObject({ by: asked, reason: 'wrong city' });
    await page.locator('.summary .status', { hasText: 'cancelled' }).waitFor({ timeout: 60_000 });
    expect(errors).toEqual([]);
    await page.close();
  }, 240_000);

  test('Resume leaves a request naming who asked in the inbox, and weft serve carries it out; the page follows it to completed', async () => {
    const { page, errors } = await openInvocation(viewer, toResume);
    expect(await page.locator('#action-resume').isVisible()).toBe(true);
    await askInPage(page, 'resume', 'night shift', 'the outage is over');
    expect(await store.peekInbox(toResume)).toMatchObject({ type: 'resume', by: `night shift (${VIEWER})`, reason: 'the outage is over' });
    const { invocationSummary } = await fromDist<typeof import('../dist/runtime/list.js')>('runtime/list.js');
    const { servable } = await fromDist<typeof import('../dist/runtime/serve.js')>('runtime/serve.js');
    expect(servable(await invocationSummary(store, toResume))).toBe('resume');
    // Serve takes it up (and leaves the other hibernated ones, which nobody asked to resume, asleep).
    const ws = await mode.serving(toResume);
    const stop = new AbortController();
    const serving = ws.runtime.serve({ pollMs: 200, signal: stop.signal });
    try {
      await until('the resumed invocation', async () => (await invocationSummary(store, toResume)).status, (s) => s === 'completed');
    } finally {
      stop.abort();
      await serving;
      await ws.runtime.close();
    }
    expect(await store.peekInbox(toResume)).toBeUndefined();
    expect((await invocationSummary(store, untouched)).status).toBe('hibernated');
    await page.locator('.summary .status', { hasText: 'completed' }).waitFor({ timeout: 60_000 });
    expect(errors).toEqual([]);
    await page.close();
  }, 240_000);

  test('Fork at epoch 1 makes the new invocation as weft fork does, names who asked, links to it, and the fork page draws the lineage tree', async () => {
    const { page, errors } = await openInvocation(viewer, toFork);
    expect(await page.locator('#fork-epoch option').allTextContents()).toEqual(['1']);
    await askInPage(page, 'fork', 'planner', 'new fares');
    const href = await page.locator('#fork-link').getAttribute('href');
    const fork = decodeURIComponent(href!.replace('/invocations/', ''));
    const records = await kinds(store, fork);
    expect(records[1]).toMatchObject({ kind: 'invocation.forked', body: { parent: toFork, atEpoch: 1 } });
    const superseded = (await kinds(store, toFork)).find((r) => r.kind === 'invocation.superseded');
    expect(superseded?.body).toMatchObject({ by: fork, atEpoch: 1 });
    expect(superseded?.body.reason).toBe(`forked from the page by planner (${VIEWER}) at the end of epoch 1: new fares`);
    // The parent's page draws its tree once its journal says it is superseded.
    await page.locator(`#lineage-tree li[data-id="${fork}"]`).waitFor({ timeout: 60_000 });
    await pageScreenshot(page, `weft-inspect-actions-${mode.name === 'Redis' ? 'redis' : 'file'}-forked.png`);
    await page.click('#fork-link');
    await page.locator(`#lineage-tree li.here[data-id="${fork}"]`).waitFor({ timeout: 60_000 });
    expect(await page.locator(`#lineage-tree > li[data-id="${toFork}"] > ul > li[data-id="${fork}"] .at`).first().textContent()).toContain('fork at epoch 1');
    expect(await page.locator(`#lineage-tree li[data-id="${toFork}"] > .node a`).getAttribute('href')).toBe(`/invocations/${toFork}`);
    expect(errors).toEqual([]);
    await page.close();
  }, 240_000);

  test('each action needs the token and this viewer\'s Origin (401, 403), and a refused one writes nothing', async () => {
    const length = await store.length(untouched);
    const post = (action: string, headers: Record<string, string>) =>
      fetch(`${viewer.origin}/api/invocations/${untouched}/${action}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ by: 'mallory', atEpoch: 1 }) });
    const auth = { authorization: `Bearer ${TOKEN}` };
    for (const action of ['cancel', 'resume', 'fork']) {
      expect((await post(action, { origin: viewer.origin })).status, action).toBe(401);
      const foreign = await post(action, { ...auth, origin: 'http://evil.example' });
      expect(foreign.status, action).toBe(403);
      expect(((await foreign.json()) as { error: string }).error).toContain("this viewer's own page");
      expect((await post(action, auth)).status, action).toBe(403); // no Origin at all
    }
    expect(await store.peekInbox(untouched)).toBeUndefined();
    expect(await store.length(untouched)).toBe(length);
    expect((await kinds(store, untouched)).some((r) => r.kind === 'invocation.superseded')).toBe(false);
  }, 60_000);

  test('a --read-only viewer draws none of the actions and refuses each, naming the flag; approve stays on', async () => {
    const { page, errors } = await openInvocation(readOnly, untouched);
    expect(await page.locator('#actions').getAttribute('data-state')).toBe('read-only');
    expect(await page.locator('#action-cancel').count()).toBe(0);
    expect(await page.locator('#action-resume').count()).toBe(0);
    expect(await page.locator('#action-fork').count()).toBe(0);
    const approvals = await fetch(`${readOnly.origin}/api/approvals`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(((await approvals.json()) as { enabled: boolean }).enabled).toBe(true);
    const length = await store.length(untouched);
    for (const action of ['cancel', 'resume', 'fork']) {
      const res = await fetch(`${readOnly.origin}/api/invocations/${untouched}/${action}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, origin: readOnly.origin }, body: JSON.stringify({ by: 'ops', atEpoch: 1 }) });
      expect(res.status, action).toBe(403);
      expect(await res.json()).toMatchObject({ code: 'inspect.read_only', error: expect.stringContaining('--read-only') });
    }
    expect(await store.peekInbox(untouched)).toBeUndefined();
    expect(await store.length(untouched)).toBe(length);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
}

describe.runIf(hasChromium)('actions from the page, over a workspace', () => {
  const mode = fileMode();
  actionsIn(mode);

  test('the top bar counts the invocations awaiting approval, live', async () => {
    const viewer = await serveInspector([...mode.flags(), '--token', TOKEN]);
    try {
      const { page, errors } = await openPage(browser);
      await page.goto(`${viewer.origin}/?token=${TOKEN}`);
      await page.locator('#inbox-count[data-count]').waitFor();
      await page.locator('body[data-live="live"]').waitFor({ state: 'attached' });
      const before = Number(await page.locator('#inbox-count').getAttribute('data-count'));
      const domain = writeStrictTravelDomain(mkdtempSync(path.join(root, 'domain-')), { version: 'inbox-count' });
      const ran = await runInWorkspace(domain, { dir: mode.flags()[1]!, seed: '3' });
      expect(ran.status, ran.reason ?? '').toBe('awaiting_approval');
      await page.locator(`#inbox-count[data-count="${before + 1}"]`).waitFor({ timeout: 60_000 });
      expect(await page.locator('#inbox-count').textContent()).toBe(`inbox ${before + 1} awaiting approval`);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await viewer.stop();
    }
  }, 180_000);
});

describe.runIf(hasChromium && (redisWanted || process.env.CI === 'true'))('actions from the page, over Redis', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  }, 60_000);
  afterAll(async () => server?.stop());
  actionsIn(redisMode(() => server));
});
