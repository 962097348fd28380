/**
 * Reading the statechart on an invocation's page of `weft inspect`, in a real Chromium (one browser
 * for the file, a page of its own — a context — for each test):
 *
 * - it opens on the path the run took: only the states its trail visits (inspector/replay-trail.ts,
 *   read here apart from the page), all in view, the current one lit, the labels legible — their
 *   median rendered height at least 9 px at 1400×900 and at 1024×900 — where the whole machine
 *   shrunk to the page's width drew them about 2 px high;
 * - "All states" draws the whole machine, the states the run did not take dimmed; Fit brings the
 *   path view back, exactly as it opened;
 * - the wheel zooms around the pointer (the state under it stays under it), a drag pans, the keys
 *   (+ − 0 and the arrows, with the chart focused) zoom and pan without moving time travel, and the
 *   Zoom in / Zoom out buttons zoom; each changes the svg's viewBox, and Fit restores it;
 * - time travel brings the state at its record into view when the chart is zoomed away from it, and
 *   the path's states not reached yet at that record are dimmed;
 * - the server lays out a path alone: its states, the transitions between them, the fans it took,
 *   and nothing for names the machine does not have.
 *
 * The file store is enough: the chart's data (`/api/machine`, the trail) is the same on Redis.
 * Screenshots (docs/inspect-invocation.png, docs/inspect-statechart*.png) go to WEFT_TEST_ARTIFACTS
 * when it names a folder (test/support/chromium.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { machineGraph, machineGraphFor } from '../inspector/machine-graph.js';
import { trailOf } from '../inspector/replay-trail.js';
import { FileStore } from '../stores/file.js';
import { assertBuilt } from './support/cli.js';
import { launchBrowser, NO_CHROMIUM_MESSAGE, pageScreenshot, requireChromium, screenshotFolder, screenshotOf } from './support/chromium.js';
import { openPage } from './support/inspect-viewer.js';
import { serveInspector, type ServedViewer } from './support/inspector.js';
import { runInWorkspace, type RunLine } from './support/runs-here.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-inspect-chart-view-'));
const hasChromium = requireChromium();
let browser: Browser;

const LISBON = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';

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

test('the server lays out a path alone: its states, the transitions between them, the fans it took', () => {
  const whole = machineGraph();
  const states = ['parse', 'decompose', 'admit', 'execute', 'suspended'];
  const fan = 'execute|onError|0';
  expect(whole.edges.find((e) => e.id === fan)).toMatchObject({ fan: true, target: 'suspended' });
  const query = new URLSearchParams({ states: [...states, 'noSuchState', '<b>'].join(','), taken: [fan, 'decompose|onDone|0', 'made|up|1'].join(',') });
  const path = machineGraphFor(query);
  expect(path.only).toEqual([...states].sort());
  expect(path.nodes.map((n) => n.id).sort()).toEqual([...states].sort());
  expect(path.total).toBe(whole.nodes.length);
  // Every transition of the machine between two of its states, but the fans it did not take.
  const expected = whole.edges.filter((e) => states.includes(e.source) && states.includes(e.target) && (!e.fan || e.id === fan)).map((e) => e.id);
  expect(path.edges.map((e) => e.id).sort()).toEqual(expected.sort());
  expect(expected).toContain('decompose|onDone|0');
  expect(path.edges.some((e) => e.id === 'parse|onError|0')).toBe(false);
  // Laid out small: a page shows it at a scale its labels can be read at.
  expect(path.width).toBeLessThan(whole.width / 4);
  for (const n of path.nodes) expect(n.x + n.width).toBeLessThanOrEqual(path.width + 1);
  // No state the machine has: the whole machine; the same path again: the same layout.
  expect(machineGraphFor(new URLSearchParams({ states: 'nope' }))).toBe(whole);
  expect(machineGraphFor(query)).toBe(path);
});

describe.runIf(hasChromium)('the statechart a person reads, in the page', () => {
  const dir = path.join(root, 'w');
  let travel: RunLine;
  let viewer: ServedViewer;
  /** The trail's states, record by record, and the states it visits. */
  let states: Array<string | null>;
  let visited: string[];

  beforeAll(async () => {
    travel = await runInWorkspace('travel', { dir, intent: LISBON, seed: '7', asOf: '2026-06-01T09:00:00Z' });
    expect(travel.status, travel.reason ?? '').toBe('completed');
    const trail = await trailOf(new FileStore(dir), travel.id, {});
    if (!trail.replayed) throw new Error(trail.reason);
    states = trail.states;
    visited = [...new Set([machineGraph().initial, ...trail.transitions.flatMap((t) => [t.from, t.to])])].sort();
    viewer = await serveInspector(['--dir', dir, '--public-key', travel.publicKey]);
  });
  afterAll(async () => viewer?.stop());

  const chart = (page: Page) => page.locator('svg.statechart-svg');
  const viewBox = async (page: Page) => (await chart(page).getAttribute('viewBox'))!.split(' ').map(Number) as [number, number, number, number];

  /** The invocation's page at `width`×900, once the path view has been laid out and fitted. */
  async function open(width: number): Promise<{ page: Page; errors: string[] }> {
    const opened = await openPage(browser);
    await opened.page.setViewportSize({ width, height: 900 });
    await opened.page.goto(`${viewer.url.replace(/\/$/, '')}/invocations/${travel.id}`);
    await opened.page.locator('svg.statechart-svg[data-layout="path"][data-current="completed"][viewBox]').waitFor({ timeout: 30_000 });
    return opened;
  }

  /** The chart scrolled into the window, for the pointer to reach it. */
  async function inReach(page: Page): Promise<void> {
    await chart(page).scrollIntoViewIfNeeded();
    await page.waitForTimeout(50);
  }

  /** A state's opacity as drawn (dimmed: below 1). */
  const opacityOf = (page: Page, state: string) =>
    page.locator(`g.sc-node[data-state="${state}"]`).evaluate((g) => Number((globalThis as unknown as { getComputedStyle(e: unknown): { opacity: string } }).getComputedStyle(g).opacity));

  /** The rendered height of the chart's labels, and whether each state's box lies inside the svg on screen. */
  const measure = (page: Page) =>
    chart(page).evaluate((svg) => {
      const frame = svg.getBoundingClientRect();
      const heights = [...svg.querySelectorAll('text')].map((t) => t.getBoundingClientRect()).filter((r) => r.width > 0).map((r) => r.height).sort((a, b) => a - b);
      const inView = Object.fromEntries(
        [...svg.querySelectorAll('g.sc-node')].map((g) => {
          const r = g.querySelector('rect.box')!.getBoundingClientRect();
          return [g.getAttribute('data-state')!, r.left >= frame.left - 1 && r.right <= frame.right + 1 && r.top >= frame.top - 1 && r.bottom <= frame.bottom + 1];
        }),
      );
      return { median: heights[Math.floor(heights.length / 2)] ?? 0, count: heights.length, inView, right: frame.right, innerWidth: (globalThis as unknown as { innerWidth: number }).innerWidth };
    });

  for (const width of [1400, 1024]) {
    test(`at ${width}×900 it opens on the path the run took, every state of it in view and its labels legible`, async () => {
      const { page, errors } = await open(width);
      const drawn = await chart(page).locator('g.sc-node').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-state')!).sort());
      expect(drawn).toEqual(visited);
      expect(drawn).not.toContain('failed'); // a state the run did not take: collapsed
      const seen = await measure(page);
      expect(seen.count).toBeGreaterThan(15);
      expect(seen.median, `median label height at ${width} px`).toBeGreaterThanOrEqual(9);
      expect(Object.entries(seen.inView).filter(([, inside]) => !inside).map(([s]) => s)).toEqual([]);
      expect(seen.right).toBeLessThanOrEqual(seen.innerWidth);
      expect(await page.locator('g.sc-node[data-state="completed"]').getAttribute('class')).toContain('current');
      expect(await page.locator('.sc-scope').textContent()).toBe(`the path taken: ${visited.length} of ${machineGraph().nodes.length} states (the other ${machineGraph().nodes.length - visited.length} collapsed)`);
      // What a person looking at the whole page measures: every svg label on it.
      const all = await page.locator('svg text').evaluateAll((ts) => ts.map((t) => t.getBoundingClientRect()).filter((r) => r.width > 0).map((r) => r.height).sort((a, b) => a - b));
      expect(all[Math.floor(all.length / 2)]).toBeGreaterThanOrEqual(9);
      if (width === 1400) await screenshotOf(page, 'section.statechart', 'inspect-statechart.png');
      expect(errors).toEqual([]);
      await page.context().close();
    });
  }

  test('"All states" draws the whole machine with the states not taken dimmed; Fit brings the path view back', async () => {
    const { page, errors } = await open(1400);
    const fitted = await viewBox(page);
    await page.getByRole('button', { name: 'Show all states' }).click();
    await page.locator('svg.statechart-svg[data-layout="all"]').waitFor();
    const drawn = await chart(page).locator('g.sc-node').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-state')!));
    expect(drawn.sort()).toEqual(machineGraph().nodes.map((n) => n.id).sort());
    const opacity = (state: string) => opacityOf(page, state);
    for (const state of ['failed', 'awaitingApproval', 'compensate']) expect(await opacity(state), state).toBeLessThan(0.5);
    for (const state of visited) expect(await opacity(state), state).toBe(1);
    expect(await page.locator('.sc-scope').textContent()).toContain('those not taken dimmed');
    // The view stays on the current state, as big as it was.
    expect((await measure(page)).inView.completed).toBe(true);
    await page.getByRole('button', { name: 'Fit: the path taken' }).click();
    await page.locator('svg.statechart-svg[data-layout="path"]').waitFor();
    expect(await viewBox(page)).toEqual(fitted);
    expect(await chart(page).locator('g.sc-node').count()).toBe(visited.length);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test('the wheel zooms around the pointer, a drag pans, the keys and the buttons zoom and pan; Fit restores the view', async () => {
    const { page, errors } = await open(1400);
    await inReach(page);
    const fitted = await viewBox(page);
    const scale = async () => Number(await chart(page).getAttribute('data-scale'));
    const s0 = await scale();
    const centreOf = async (state: string) => {
      const r = (await page.locator(`g.sc-node[data-state="${state}"] rect.box`).boundingBox())!;
      return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
    };

    // The wheel, over `decompose`: bigger, and decompose stays under the pointer.
    const before = await centreOf('decompose');
    await page.mouse.move(before.x, before.y);
    await page.mouse.wheel(0, -400);
    await expect.poll(scale).toBeGreaterThan(s0 * 1.5);
    const after = await centreOf('decompose');
    expect(Math.abs(after.x - before.x)).toBeLessThan(2);
    expect(Math.abs(after.y - before.y)).toBeLessThan(2);
    const zoomed = await viewBox(page);
    expect(zoomed[2]).toBeLessThan(fitted[2] / 1.5);

    // A drag pans by what the pointer moved, at the same scale.
    await page.mouse.move(after.x, after.y);
    await page.mouse.down();
    await page.mouse.move(after.x - 60, after.y - 40, { steps: 4 });
    await page.mouse.up();
    const dragged = await viewBox(page);
    const s1 = await scale();
    expect(dragged[2]).toBeCloseTo(zoomed[2], 1);
    expect(dragged[0] - zoomed[0]).toBeCloseTo(60 / s1, 0);
    expect(dragged[1] - zoomed[1]).toBeCloseTo(40 / s1, 0);
    expect((await centreOf('decompose')).x).toBeCloseTo(after.x - 60, 0);

    // The keys, with the chart focused: + zooms, an arrow pans, and time travel stays where it was.
    const at = await page.locator('.travel').getAttribute('data-at');
    await chart(page).focus();
    await page.keyboard.press('+');
    await expect.poll(scale).toBeCloseTo(s1 * 1.25, 2);
    const keyed = await viewBox(page);
    await page.keyboard.press('ArrowRight');
    expect((await viewBox(page))[0]).toBeGreaterThan(keyed[0]);
    await page.keyboard.press('ArrowDown');
    expect((await viewBox(page))[1]).toBeGreaterThan(keyed[1]);
    await page.keyboard.press('-');
    await expect.poll(scale).toBeCloseTo(s1, 2);
    expect(await page.locator('.travel').getAttribute('data-at')).toBe(at);
    await page.keyboard.press('0');
    expect(await viewBox(page)).toEqual(fitted);

    // The buttons, named for what they do.
    await page.getByRole('button', { name: 'Zoom in', exact: true }).click();
    expect(await scale()).toBeCloseTo(s0 * 1.25, 2);
    await page.getByRole('button', { name: 'Zoom out', exact: true }).click();
    await page.getByRole('button', { name: 'Zoom out', exact: true }).click();
    expect(await scale()).toBeCloseTo(s0 / 1.25, 2);
    expect(await page.locator('button.sc-zoom-in').getAttribute('title')).toMatch(/zoom/i);
    expect(await page.locator('button.sc-fit').getAttribute('title')).toMatch(/fit/i);
    await page.getByRole('button', { name: 'Fit: the path taken' }).click();
    expect(await viewBox(page)).toEqual(fitted);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test('time travel brings the state at its record into view; the states not reached yet are dimmed', async () => {
    const { page, errors } = await open(1400);
    await inReach(page);
    // Zoomed in on `completed`, far from where the run was early on.
    const done = (await page.locator('g.sc-node[data-state="completed"] rect.box').boundingBox())!;
    await page.mouse.move(done.x + done.width / 2, done.y + done.height / 2);
    for (let i = 0; i < 4; i++) await page.mouse.wheel(0, -300);
    await expect.poll(async () => Number(await chart(page).getAttribute('data-scale'))).toBeGreaterThan(2.5);
    const k = states.findIndex((s) => s === 'execute');
    expect(k).toBeGreaterThan(0);
    expect((await measure(page)).inView.execute).toBe(false);

    await page.locator('#travel-slider').fill(String(k));
    await page.locator(`.travel[data-at="${k}"]`).waitFor();
    expect(await chart(page).getAttribute('data-current')).toBe('execute');
    expect((await measure(page)).inView.execute).toBe(true);
    expect(Number(await chart(page).getAttribute('data-scale'))).toBeGreaterThan(2.5); // the zoom is kept
    // Not reached yet at record k: finishing and completed, dimmed; the way there is not.
    const opacity = (state: string) => opacityOf(page, state);
    expect(await opacity('finishing')).toBeLessThan(0.5);
    expect(await opacity('decompose')).toBe(1);
    await page.locator('.travel-latest').click();
    await page.locator(`.travel[data-at="${states.length - 1}"]`).waitFor();
    expect((await measure(page)).inView.completed).toBe(true);

    // The page as the docs show it: part way through the run, fitted.
    if (screenshotFolder) {
      const mid = states.findIndex((s, i) => s === 'execute' && i > states.length / 2);
      await page.locator('#travel-slider').fill(String(mid > 0 ? mid : k));
      await page.getByRole('button', { name: 'Fit: the path taken' }).click();
      await page.setViewportSize({ width: 1360, height: 900 });
      await page.waitForTimeout(200);
      await pageScreenshot(page, 'inspect-invocation-page.png');
      await page.screenshot({ path: path.join(screenshotFolder, 'inspect-invocation.png'), fullPage: true, clip: { x: 0, y: 0, width: 1360, height: 1900 } });
      // The whole machine around the state at that record, the states not taken dimmed.
      await page.getByRole('button', { name: 'Show all states' }).click();
      await screenshotOf(page, 'section.statechart', 'inspect-statechart-all.png');
    }
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
