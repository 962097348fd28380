/**
 * The statechart and time travel on one invocation's page of `weft inspect`, in a real Chromium:
 *
 * - the page opens on the path the run took, and "All states" draws every state of the machine
 *   (compared with the machine's own state list) from
 *   `/api/machine`, and labels each guarded transition by its guard's name;
 * - a completed travel run (`weft run travel …` from the CLI) lights `completed` and draws its path;
 * - the slider at record k shows the state replay reaches at k — computed here apart from the
 *   viewer: the journal's first k+1 records replayed with runtime/replay.ts `replayJournal` and an
 *   observer, the last state before replay ran out of records — at the start, in the middle of an
 *   epoch and at the end; the journal and the epochs follow the slider, and so do the keys;
 * - the trail (inspector/replay-trail.ts) agrees with those prefix replays at every record;
 * - a user domain's invocation without `--domain` says "not replayed: domain not loaded" and lights
 *   the state its status gives; with `--domain` it is replayed.
 *
 * Screenshots go to WEFT_TEST_ARTIFACTS when it names a folder (test/support/chromium.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { InspectionEvent } from 'xstate';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { travelDomain } from '../examples/travel/domain.js';
import type { JournalRecord } from '../journal/records.js';
import { FileStore } from '../stores/file.js';
import { machineGraph } from '../inspector/machine-graph.js';
import { trailOf, trailOfRecords } from '../inspector/replay-trail.js';
import type { Domain } from '../runtime/domain.js';
import { invocationMachine } from '../machines/invocation-machine.js';
import { replayJournal } from '../runtime/replay.js';
import { assertBuilt } from './support/cli.js';
import { launchBrowser, NO_CHROMIUM_MESSAGE, requireChromium, screenshotOf, pageScreenshot } from './support/chromium.js';
import { openPage } from './support/inspect-viewer.js';
import { serveInspector, type ServedViewer as Viewer } from './support/inspector.js';
import { runInWorkspace, type RunLine } from './support/runs-here.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-inspect-chart-'));
const hasChromium = requireChromium();
let browser: Browser;

const LISBON = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';

/** The machine's own list of states, and the name of every guard on its transitions (from its definition). */
const machineStates = Object.keys(invocationMachine.root.states).sort();
function machineGuards(): Set<string> {
  const out = new Set<string>();
  for (const node of Object.values(invocationMachine.root.states)) {
    for (const t of [...[...node.transitions.values()].flat(), ...(node.always ?? [])]) {
      const g = t.guard as { type?: string } | string | undefined;
      if (typeof g === 'string') out.add(g);
      else if (g?.type) out.add(g.type);
    }
  }
  return out;
}

/**
 * The state the machine is in once record k is passed, by replaying records 0..k alone: replay runs
 * out of journal where record k+1 would be needed, and the machine moves into `suspended` on that;
 * the state before it is the one. A whole journal ends in its final or resting state.
 */
async function stateAfterPrefix(records: readonly JournalRecord[], k: number): Promise<string> {
  const values: string[] = [];
  const inspect = (event: InspectionEvent) => {
    if (event.type !== '@xstate.snapshot') return;
    const value = (event.snapshot as { value?: unknown }).value;
    if (typeof value === 'string' && values.at(-1) !== value) values.push(value);
  };
  const result = await replayJournal(records.slice(0, k + 1), {
    loadLibrary: async () => travelDomain.libraries[0]!,
    policy: (id) => [travelDomain.policy!, ...travelDomain.policies].find((p) => p.id === id)!,
    observe: travelDomain.observe,
    evaluables: travelDomain.evaluables,
    inspect,
  });
  if (result.status === 'unfinished') {
    expect(values.at(-1)).toBe('suspended'); // out of journal: the replay's own error, not the run's
    values.pop();
  }
  return values.at(-1)!;
}

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

describe('the statechart and time travel in weft inspect', () => {
  const dir = path.join(root, 'w');
  let travel: RunLine;
  let strict: RunLine;
  let records: JournalRecord[];
  /** Records to travel to: the first model reply, in the middle of epoch 2's steps, and the last. */
  let picks: number[];

  beforeAll(async () => {
    // Fixtures made in this process as `weft run` makes them (test/support/runs-here.ts).
    travel = await runInWorkspace('travel', { dir, intent: LISBON, seed: '7', asOf: '2026-06-01T09:00:00Z' });
    expect(travel.status, travel.reason ?? '').toBe('completed');
    strict = await runInWorkspace(writeStrictTravelDomain(root), { dir });
    expect(strict.status, strict.reason ?? '').toBe('awaiting_approval');
    records = await new FileStore(dir).read(travel.id);
    const epoch2Steps = records.filter((r) => r.epoch === 2 && r.kind === 'step.completed');
    expect(epoch2Steps.length).toBeGreaterThan(2);
    picks = [records.findIndex((r) => r.kind === 'model.completed'), epoch2Steps[1]!.seq, records.length - 1];
  });

  test('the machine graph has every state and every guarded transition, named by its guard', () => {
    const graph = machineGraph();
    expect(graph.nodes.map((n) => n.id).sort()).toEqual(machineStates);
    expect(new Set(graph.edges.map((e) => e.guard?.replace(/\(.*\)$/, '')).filter((g) => g))).toEqual(machineGuards());
    const planFound = graph.edges.find((e) => e.source === 'decompose' && e.target === 'admit')!;
    expect(planFound).toMatchObject({ event: 'onDone', guard: 'planFound', fan: false });
    expect(graph.edges.find((e) => e.source === 'nextEpoch' && e.target === 'parse')).toMatchObject({ event: 'always', guard: null, otherwise: true });
    for (const e of graph.edges.filter((x) => !x.fan)) expect(e.points.length, e.id).toBeGreaterThan(1);
  });

  test('the trail agrees with replaying each prefix of the journal on its own', async () => {
    const trail = await trailOf(new FileStore(dir), travel.id, {});
    if (!trail.replayed) throw new Error(trail.reason);
    expect(trail).toMatchObject({ domain: 'travel', status: 'completed', error: null, records: records.length });
    // Every record, from a few places apart: the prefix replays are independent of the trail's hook.
    for (let k = 0; k < records.length; k += 3) expect(trail.states[k], `record ${k}`).toBe(await stateAfterPrefix(records, k));
    for (const k of picks) expect(trail.states[k], `record ${k}`).toBe(await stateAfterPrefix(records, k));
    expect(trail.states.at(-1)).toBe('completed');
    expect(trail.transitions.map((t) => t.edge)).toContain('decompose|onDone|0');
  });

  test('a replay that diverges is a trail with its error and the states up to it, not a throw', async () => {
    // The same policy id deciding otherwise: the first admission re-derived differs from the journal's.
    const denying = { ...travelDomain.policy!, admitEpoch: () => ({ decision: 'deny' as const, reason: 'no' }) };
    const trail = await trailOfRecords(records, { ...travelDomain, policy: denying, policies: [] } as Domain, travelDomain.libraries[0]!);
    if (!trail.replayed) throw new Error(trail.reason);
    const admission = records.find((r) => r.kind === 'admission.decided')!.seq;
    expect(trail).toMatchObject({ status: 'diverged', error: { code: 'replay.divergence', seq: admission }, passed: admission - 1 });
    expect(trail.error!.message).toContain(`replay diverged at seq ${admission}`);
    expect(trail.states.slice(0, admission)).toEqual(await Promise.all(records.slice(0, admission).map((_, k) => stateAfterPrefix(records, k))));
    expect(trail.states.slice(admission).every((s) => s === null)).toBe(true);
    expect(trail.transitions.some((t) => t.to === 'suspended')).toBe(false); // the replay's own error is not the run's
  });

  describe.runIf(hasChromium)('in the page', () => {
    let viewer: Viewer;
    let page: Page;
    let errors: string[];

    beforeAll(async () => {
      viewer = await serveInspector(['--dir', dir]);
      ({ page, errors } = await openPage(browser));
      await page.setViewportSize({ width: 1360, height: 1000 });
    });
    afterAll(async () => viewer?.stop());

    const current = () => page.locator('svg.statechart-svg').getAttribute('data-current');

    test('a completed travel run: its path drawn first, every state under "All states", guards named, completed lit', async () => {
      await page.goto(`${viewer.url.replace(/\/$/, '')}/invocations/${travel.id}`);
      // It opens on the path the run took (inspect-statechart-view.test.ts reads it): the states visited alone.
      await page.locator('svg.statechart-svg[data-current="completed"][data-layout="path"]').waitFor({ timeout: 30_000 });
      const path = await page.locator('svg.statechart-svg g.sc-node').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-state')));
      expect([...path].sort()).toEqual(['admit', 'boundary', 'completed', 'decompose', 'execute', 'finishing', 'nextEpoch', 'parse']);
      await page.getByRole('button', { name: 'Show all states' }).click();
      await page.locator('svg.statechart-svg[data-layout="all"]').waitFor();
      const drawn = await page.locator('svg.statechart-svg g.sc-node').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-state')));
      expect([...drawn].sort()).toEqual(machineStates);
      // Guards by name, on the edges they guard.
      expect(await page.locator('g.sc-label[data-edge="decompose|onDone|0"] text').textContent()).toBe('planFound');
      expect(await page.locator('g.sc-label[data-edge="admit|onDone|1"] text').textContent()).toBe('needsApproval');
      expect(await page.locator('g.sc-label[data-edge="execute|onDone|1"] text').textContent()).toBe('epochSucceeded');
      const visibleGuards = await page.locator('g.sc-label.guarded:not(.fan) text').allTextContents();
      for (const guard of ['replyIsGoal', 'planFound', 'noMethod', 'admitted', 'needsApproval', 'approved', 'epochSucceeded', 'compensated', 'replansExhausted']) expect(visibleGuards).toContain(guard);
      // Lit: completed; the path: parse → decompose → admit → execute → boundary → nextEpoch → parse … → finishing → completed.
      expect(await page.locator('g.sc-node[data-state="completed"]').getAttribute('class')).toContain('current');
      const taken = await page.locator('g.sc-edge.taken:not(.sc-label)').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-edge')));
      expect(new Set(taken)).toEqual(new Set(['parse|onDone|0', 'decompose|onDone|0', 'admit|onDone|0', 'execute|onDone|1', 'boundary|onDone|0', 'nextEpoch|always|3', 'parse|onDone|1', 'finishing|onDone|0']));
      const visited = await page.locator('g.sc-node.visited').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-state')));
      expect(new Set(visited)).toEqual(new Set(['parse', 'decompose', 'admit', 'execute', 'boundary', 'nextEpoch', 'finishing', 'completed']));
      expect(await page.locator('#chart-caption').textContent()).toContain('replayed from the journal with domain travel');
      await screenshotOf(page, 'section.statechart', 'inspect-statechart-completed.png');
      expect(errors).toEqual([]);
    });

    test('the slider at record k shows the state replay reaches at k; the journal and the epochs follow', async () => {
      const slider = page.locator('#travel-slider');
      expect(await slider.getAttribute('max')).toBe(String(records.length - 1));
      for (const k of picks) {
        const expected = await stateAfterPrefix(records, k);
        await slider.fill(String(k));
        await page.locator(`.travel[data-at="${k}"]`).waitFor();
        expect(await current(), `record ${k}`).toBe(expected);
        expect(await page.locator(`g.sc-node[data-state="${expected}"]`).getAttribute('class')).toContain('current');
        expect(await page.locator('#travel-readout').textContent()).toContain(`record ${k + 1} of ${records.length} · seq ${k} · ${records[k]!.kind} · ${expected}`);
        // The journal up to k; later records dimmed.
        const later = await page.locator('.journal li').evaluateAll((lis) => lis.map((li) => li.classList.contains('later')));
        expect(later).toEqual(records.map((_, i) => i > k));
      }
      // In the middle of epoch 2: its steps so far, still open, and no epoch 3 yet.
      const middle = picks[1]!;
      await slider.fill(String(middle));
      await page.locator(`.travel[data-at="${middle}"]`).waitFor();
      const epochs = await page.locator('section.timeline section.epoch .epoch-no').allTextContents();
      expect(epochs).toEqual(['epoch 1', 'epoch 2']);
      expect(await page.locator('section.timeline section.epoch').nth(1).getAttribute('class')).toContain('epoch-open');
      const done = records.filter((r) => r.epoch === 2 && r.kind === 'step.completed' && r.seq <= middle).length;
      expect(await page.locator('section.timeline section.epoch').nth(1).locator('.outcome-ok').count()).toBe(done);
      // Only the path up to here: the run has not reached finishing yet.
      expect(await page.locator('g.sc-edge.taken[data-edge="parse|onDone|1"]').count()).toBe(0);
      await pageScreenshot(page, 'inspect-statechart-travel.png');
      await screenshotOf(page, 'section.statechart', 'inspect-statechart-travel-chart.png');

      // The keys and the buttons step one record; End goes to the last.
      await page.locator('h1').click();
      await page.keyboard.press('ArrowRight');
      await page.locator(`.travel[data-at="${middle + 1}"]`).waitFor();
      expect(await current()).toBe(await stateAfterPrefix(records, middle + 1));
      await page.locator('#travel-prev').click();
      await page.locator(`.travel[data-at="${middle}"]`).waitFor();
      await page.keyboard.press('End');
      await page.locator(`.travel[data-at="${records.length - 1}"]`).waitFor();
      expect(await current()).toBe('completed');
      expect(await page.locator('section.timeline section.epoch').count()).toBe(3);
      expect(errors).toEqual([]);
    });

    test('a user domain without --domain: "not replayed: domain not loaded", lit from its status', async () => {
      await page.goto(`${viewer.url.replace(/\/$/, '')}/invocations/${strict.id}`);
      await page.locator('#chart-caption').filter({ hasText: 'not replayed' }).waitFor({ timeout: 30_000 });
      expect(await page.locator('#chart-caption').textContent()).toContain('not replayed: domain not loaded');
      expect(await current()).toBe('awaitingApproval');
      expect(await page.locator('g.sc-edge.taken').count()).toBe(0);
      await screenshotOf(page, 'section.statechart', 'inspect-statechart-not-replayed.png');
      expect(errors).toEqual([]);
    });

    test('with --domain, the user domain\'s invocation is replayed', async () => {
      const withDomain = await serveInspector(['--dir', dir, '--domain', path.join(root, 'strict-travel.mjs')]);
      try {
        const p = await browser.newPage();
        await p.goto(`${withDomain.url.replace(/\/$/, '')}/invocations/${strict.id}`);
        await p.locator('#chart-caption').filter({ hasText: 'replayed from the journal' }).waitFor({ timeout: 30_000 });
        expect(await p.locator('#chart-caption').textContent()).toContain('with domain strict-travel');
        expect(await p.locator('svg.statechart-svg').getAttribute('data-current')).toBe('awaitingApproval');
        expect(await p.locator('g.sc-edge.taken[data-edge="admit|onDone|1"]').count()).toBe(2); // the edge and its label: needsApproval taken
        await p.close();
      } finally {
        await withDomain.stop();
      }
    });
  });
});
