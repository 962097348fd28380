/**
 * `weft inspect`: each epoch's plan tree re-derived on the server (inspector/plan-trees.ts) and
 * checked against `epoch.derived`'s digest, and the timeline of attempts and workers
 * (inspector/page/timeline.ts).
 *
 * - The server derivation: a travel run from the CLI re-derives, digest matching, in every epoch,
 *   with the methods the planner chose; another library (or a blob that is not the library it is
 *   filed under) names the mismatch; a user domain's library whose evaluables the viewer has not
 *   loaded says "not re-derived: domain not loaded" — and is re-derived when its domain is given.
 * - In a real Chromium: the page says "re-derived, digest matches" with the tree's method and step
 *   names; a step that failed once (the airline down once) shows 2 attempts, the backoff between
 *   them and the worker (`in-process`) in the timeline; in Redis mode with a separate `weft worker`
 *   process, the worker's identity (`<host>:<pid>` of that process) is what the timeline names.
 * Screenshots are kept in WEFT_TEST_ARTIFACTS when it names a folder (test/support/chromium.ts).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { travelDomain, TRAVEL_STATE_FILE } from '../examples/travel/domain.js';
import { initialTravelState, seedTravelState } from '../examples/travel/state.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Library } from '../htn/library/schema.js';
import type { JournalRecord } from '../journal/records.js';
import { FileStore } from '../stores/file.js';
import { derivePlanTrees, evaluablesFrom, loadPlanTrees, NOT_LOADED } from '../inspector/plan-trees.js';
import { assertBuilt, weft } from './support/cli.js';
import { launchBrowser, requireChromium, screenshotOf, pageScreenshot } from './support/chromium.js';
import { openPage, startViewer } from './support/inspect-viewer.js';
import { requireRedis, startRedis, type RedisServer } from './support/redis-server.js';
import { startWeftWorker, waitFor } from './support/weft-processes.js';
import { ScriptedModel } from '../actors/model/scripted.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { MemoryStore } from '../stores/memory.js';
import { createRuntime } from '../runtime/index.js';
import { newLedger, notifyActuators, notifyLibrary } from './support/notify-app.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-inspect-plan-'));
const LISBON = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';
const TRAVEL = ['--seed', '7', '--as-of', '2026-06-01T09:00:00Z'];
const hasChromium = requireChromium();

interface RunLine {
  id: string;
  status: string;
  fingerprint: string;
  publicKey: string;
}
const last = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as RunLine;

const dir = path.join(root, 'w');
let run: RunLine;
let records: JournalRecord[];
let store: FileStore;

beforeAll(async () => {
  assertBuilt();
  const r = await weft(['run', 'travel', LISBON, ...TRAVEL, '--dir', dir, '--json']);
  expect(r.code, r.stderr).toBe(0);
  run = last(r.stdout);
  expect(run.status).toBe('completed');
  store = new FileStore(dir);
  records = await store.read(run.id);
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The travel library with one method renamed: a library a journal was not planned with. */
function otherLibrary(): Library {
  const library = travelDomain.libraries[0]!;
  return { ...library, methods: library.methods.map((m) => (m.name === 'direct-flight-hotel-near-venue' ? { ...m, name: 'direct-flight-hotel-renamed' } : m)) };
}

describe('the plan trees, re-derived on the server', () => {
  test('a travel run from the CLI: every epoch re-derived from the pinned blob and its observation, digest matching, with the methods chosen', async () => {
    const plans = await loadPlanTrees(store, records, evaluablesFrom(undefined));
    expect(plans.problem).toBeNull();
    expect(plans.library).toEqual({ digest: (records[0] as JournalRecord<'invocation.pinned'>).body.pin.library, name: 'travel' });
    const derived = records.filter((r) => r.kind === 'epoch.derived') as Array<JournalRecord<'epoch.derived'>>;
    expect(plans.epochs.map((e) => [e.epoch, e.goal?.task, e.source, e.verdict])).toEqual(derived.map((d) => [d.epoch, d.body.goal.task, 'htn', { kind: 'matches', digest: d.body.plan }]));
    expect(plans.epochs.map((e) => e.tree?.method)).toEqual(['search-flights-and-hotels', 'direct-flight-hotel-near-venue', 'itinerary-on-preferred-channel']);
    const booking = plans.epochs[1]!.tree!;
    expect(booking.children.map((c) => [c.step, c.task, c.actuator])).toEqual([
      [0, 'hold_flight', 'airline.hold'],
      [1, 'hold_hotel', 'hotel.hold'],
      [2, 'charge_card', 'card.charge'],
      [3, 'confirm_flight', 'airline.confirm'],
      [4, 'confirm_hotel', 'hotel.confirm'],
    ]);
    // The demo model's first reply is chatter: its rejection is shown with the epoch, with its reason.
    expect(plans.epochs[0]!.rejected).toEqual([{ seq: 3, attempt: 1, reason: expect.stringContaining('not valid JSON') }]);
    // A prefix of the journal (the time-travel slider): epochs not yet derived say so, none is invented.
    // (Up to epoch 2's plan, not including it: its parse and observation are there. Found, not counted: flag 9 added step admissions before.)
    const prefix = derivePlanTrees(records.slice(0, records.findIndex((r) => r.kind === 'epoch.derived' && r.epoch === 2)), { library: travelDomain.libraries[0], digest: plans.library.digest, evaluables: travelDomain.evaluables });
    expect(prefix.epochs.map((e) => [e.epoch, e.verdict.kind])).toEqual([[1, 'matches'], [2, 'not-derived']]);
  });

  test('another library names the mismatch: the digest the journal recorded and the one re-derived', () => {
    const other = otherLibrary();
    const plans = derivePlanTrees(records, { library: other, digest: libraryDigest(other), evaluables: travelDomain.evaluables });
    const [one, two, three] = plans.epochs;
    expect(one!.verdict.kind).toBe('matches'); // its methods are the same
    expect(three!.verdict.kind).toBe('matches');
    const recorded = (records.find((r) => r.kind === 'epoch.derived' && r.epoch === 2) as JournalRecord<'epoch.derived'>).body.plan;
    expect(two!.verdict).toEqual({ kind: 'mismatch', expected: recorded, got: expect.stringMatching(/^[0-9a-f]{64}$/), reason: 'the re-derived plan has another digest' });
    expect((two!.verdict as { got: string }).got).not.toBe(recorded);
    expect(two!.tree!.method).toBe('direct-flight-hotel-renamed');
  });

  test('a blob that is not the library it is filed under is refused, and every epoch says why', async () => {
    const digest = (records[0] as JournalRecord<'invocation.pinned'>).body.pin.library;
    const tampered = { getBlob: async (d: string) => (d === digest ? new TextEncoder().encode(JSON.stringify(otherLibrary())) : undefined) };
    const plans = await loadPlanTrees(tampered, records, evaluablesFrom(undefined));
    expect(plans.problem).toMatch(/does not hold the library it is filed under/);
    expect(plans.epochs.map((e) => e.verdict.kind)).toEqual(['not-derived', 'not-derived', 'not-derived']);
  });

  test('the gap path: why no method applied (re-derived), the fragment the model authored marked authored and certified again, its rejected reply, its constraint check and admission', async () => {
    const intent = 'Tell Alice the report is ready';
    const memory = new MemoryStore();
    const model = new ScriptedModel({
      model: 'notify',
      entries: [
        { match: { intent, epoch: 1, purpose: 'parse' }, reply: { goal: { task: 'notify', args: ['bob'] } } },
        { match: { intent, epoch: 1, purpose: 'author' }, reply: { steps: [{ operator: 'send', args: ['bob'] }] } },
        { match: { intent, epoch: 1, purpose: 'author', feedback: 'does not apply' }, reply: { steps: [{ operator: 'charge', args: ['bob'] }] } },
        { match: { intent, epoch: 2 }, reply: { done: true, summary: 'charged bob instead' } },
      ],
    });
    const runtime = createRuntime({ store: memory, libraries: [notifyLibrary], actuators: notifyActuators(newLedger()), observe: 'world.observe', model, signingKey: signingKeyFromSecret(new Uint8Array(32).fill(3)), sleep: async () => undefined });
    const handle = await runtime.start(intent, { tenant: 't1', seed: 1, asOf: '2026-12-01T09:00:00Z' });
    expect((await handle.done).status).toBe('awaiting_approval');
    const plans = await loadPlanTrees(memory, await memory.read(handle.id), evaluablesFrom(undefined));
    const [gap] = plans.epochs;
    expect(gap).toMatchObject({ epoch: 1, source: 'authored', goal: { task: 'notify', args: ['bob'] } });
    expect(gap!.verdict.kind).toBe('matches');
    expect(gap!.noMethod!.explanation).toMatch(/^no method covers notify\(bob\)/);
    expect(gap!.noMethod!.explanation).toBe(gap!.noMethod!.recorded); // what the model was told, re-derived
    expect(gap!.rejected).toEqual([{ seq: expect.any(Number), attempt: 1, reason: expect.stringMatching(/the fragment does not apply in the observed state/) }]);
    expect(gap!.authored).toMatchObject({ attempt: 2, constraints: null, admission: { decision: 'require_approval', reason: expect.stringMatching(/model authored this fragment/) } });
    // goal → the authored fragment → its step
    expect(gap!.tree!.task).toBe('notify');
    expect(gap!.tree!.children.map((c) => [c.authored, c.method])).toEqual([[true, 'authored-fragment']]);
    expect(gap!.tree!.children[0]!.children.map((c) => [c.step, c.task])).toEqual([[0, 'charge']]);
    await runtime.close();
  });

  test("a user domain's library (it pins evaluables) is not re-derived without its domain: \"domain not loaded\"; with it, it is", async () => {
    const user: Library = { ...travelDomain.libraries[0]!, name: 'my-trips' };
    expect(user.evaluables.length).toBeGreaterThan(0);
    expect(await evaluablesFrom(undefined)(user)).toEqual({ loaded: false, reason: NOT_LOADED });
    const plans = derivePlanTrees(records, { library: user, digest: libraryDigest(user), problem: NOT_LOADED });
    expect(plans.epochs.map((e) => e.verdict)).toEqual([1, 2, 3].map(() => ({ kind: 'not-derived', reason: 'domain not loaded' })));
    expect(plans.epochs.every((e) => e.tree === null)).toBe(true);
    const given = await evaluablesFrom({ libraries: [user], evaluables: travelDomain.evaluables })(user);
    expect(given).toEqual({ loaded: true, evaluables: travelDomain.evaluables });
    // A library that pins no evaluables is data only: re-derived with no domain at all.
    expect(await evaluablesFrom(undefined)({ ...user, evaluables: [] })).toEqual({ loaded: true, evaluables: undefined });
  });
});

describe.runIf(hasChromium)('the plan tree and the timeline in a real Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  test('the page says "re-derived, digest matches" with the tree\'s methods and steps; a step that failed once shows its 2 attempts, the backoff and the worker', async () => {
    // A second run in the same workspace whose airline is down once (airline.hold fails transiently,
    // then holds) and whose hotel sells its last room while held: the booking is compensated, and
    // with nothing booked no method shares an itinerary (the gap path; the demo model authors nothing).
    const id = 'flaky-airline';
    const world = initialTravelState();
    world.faults.flaky['airline.hold'] = 1;
    world.faults.soldOut.push('h-alfama');
    mkdirSync(path.join(dir, 'state', 'travel', id), { recursive: true });
    seedTravelState(path.join(dir, 'state', 'travel', id, TRAVEL_STATE_FILE), world);
    const flaky = await weft(['run', 'travel', LISBON, ...TRAVEL, '--dir', dir, '--id', id, '--json']);
    expect(last(flaky.stdout).status, flaky.stderr).toBe('failed');

    const viewer = await startViewer(['--dir', dir, '--public-key', run.publicKey]);
    const { page, errors } = await openPage(browser);
    try {
      await page.setViewportSize({ width: 1360, height: 900 });
      await page.goto(`${viewer.url.replace(/\/(\?.*)?$/, '')}/invocations/${run.id}`);
      await page.waitForSelector('#plans .pt-verdict[data-verdict="matches"]', { timeout: 30_000 });
      const plans = page.locator('#plans');
      await expect.poll(() => plans.locator('[data-verdict="matches"]').count(), { timeout: 10_000 }).toBe(3);
      const text = await plans.innerText();
      expect(text).toContain('re-derived, digest matches');
      for (const name of ['search-flights-and-hotels', 'direct-flight-hotel-near-venue', 'itinerary-on-preferred-channel', 'hold_flight(me, f-tp1353)', 'charge_card', 'send_itinerary', 'airline.hold']) expect(text).toContain(name);
      expect(await page.locator('#model-replies .mr-rejected .mr-reason').first().innerText()).toMatch(/rejected: the reply is not valid JSON/);
      await screenshotOf(page, '#plans', 'inspect-plan-tree.png');

      await page.goto(`${viewer.url.replace(/\/(\?.*)?$/, '')}/invocations/${id}`);
      await page.waitForSelector('#timeline .tl-row', { timeout: 30_000 });
      const hold = page.locator('#timeline .tl-epoch[data-epoch="2"] .tl-row', { hasText: 'airline.hold' }).first();
      await expect.poll(() => hold.innerText(), { timeout: 10_000 }).toContain('2 attempts');
      // Its journal, with the workers in its envelopes, verifies in the page against the key given.
      expect(await page.locator('body').getAttribute('data-verdict')).toBe('verified');
      const row = await hold.innerText();
      expect(row).toMatch(/backoff \d/);
      expect(row).toContain('in-process');
      expect(await hold.locator('.tl-seg').count()).toBe(2);
      expect(await hold.locator('.tl-seg.tl-failed').count()).toBe(1);
      // The bars are placed through the CSSOM, which the page's CSP allows: they have a width.
      // The compensations, in the order they ran: the reverse of the steps.
      expect(await page.locator('#timeline .tl-epoch[data-epoch="2"] .tl-kind-compensation .tl-name').allInnerTexts()).toEqual(['undo #3 · airline.cancel', 'undo #2 · card.charge', 'undo #1 · hotel.hold', 'undo #0 · airline.hold']);
      // The gap path's epoch: why no method applied, per method.
      const gap = page.locator('#plans .pt-epoch[data-epoch="3"]');
      await expect.poll(() => gap.innerText(), { timeout: 10_000 }).toContain('why no method applied');
      expect(await gap.innerText()).toMatch(/itinerary-on-preferred-channel\s+precondition\s+\(booked \?t \?f\)/);
      const widths = await page.locator('#timeline .tl-seg').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().width));
      expect(widths.filter((w) => w >= 2).length).toBeGreaterThan(5);
      expect(await page.locator('#plans [data-verdict="matches"]').count()).toBe(2);
      await screenshotOf(page, '#timeline', 'inspect-timeline.png');
      await pageScreenshot(page, 'inspect-invocation-full.png');
      expect(errors).toEqual([]);
    } finally {
      await page.close();
      await viewer.stop();
    }
  }, 180_000);

  const redis = requireRedis();
  describe.runIf(redis || process.env.CI === 'true')('in Redis mode, with a separate weft worker', () => {
    let server: RedisServer;
    beforeAll(async () => {
      server = await startRedis();
    });
    afterAll(async () => {
      await server?.stop();
    });

    test("the timeline names the worker process that ran each step (<host>:<pid>), and the plans re-derive from the blob in Redis", async () => {
      const keyFile = path.join(path.dirname(run.publicKey), 'weft.key');
      const worker = await startWeftWorker(['--domain', 'travel', '--redis', server.url, '--dir', path.join(root, 'worker')]);
      try {
        const r = await weft(['run', 'travel', LISBON, ...TRAVEL, '--redis', server.url, '--dispatch', 'bullmq', '--dir', path.join(root, 'r'), '--json'], { WEFT_SIGNING_KEY: keyFile });
        expect(r.code, r.stderr).toBe(0);
        const redisRun = last(r.stdout);
        expect(redisRun.status).toBe('completed');
        const viewer = await startViewer(['--redis', server.url, '--public-key', run.publicKey]);
        const { page, errors } = await openPage(browser);
        try {
          await page.setViewportSize({ width: 1360, height: 900 });
          await page.goto(`${viewer.url.replace(/\/(\?.*)?$/, '')}/invocations/${redisRun.id}`);
          await page.waitForSelector('#timeline .tl-row', { timeout: 30_000 });
          const identity = `${hostname()}:${worker.pid}`;
          await expect.poll(() => page.locator('body').getAttribute('data-verdict'), { timeout: 10_000 }).toBe('verified');
          const steps = page.locator('#timeline .tl-kind-step');
          await waitFor('the steps in the timeline', async () => (await steps.count()) >= 9, 30_000, 100);
          const workers = await steps.locator('.tl-worker').allInnerTexts();
          expect(workers.every((w) => w === identity), `${workers.join(' | ')} vs ${identity}`).toBe(true);
          await expect.poll(() => page.locator('#plans [data-verdict="matches"]').count(), { timeout: 30_000 }).toBe(3);
          await screenshotOf(page, '#timeline', 'inspect-timeline-redis.png');
          expect(errors).toEqual([]);
        } finally {
          await page.close();
          await viewer.stop();
        }
      } finally {
        await worker.stop();
      }
    }, 180_000);
  });
});
