/**
 * `npm run bench -- inspect [--invocations N] [--steps N] [--rounds R] [--list-count N] [--list-reps R]
 * [--list-big N] [--hop-invocations N] [--no-redis] [--viewer-nice N]` — what watching runs with `weft inspect` costs, each figure beside a baseline from
 * the same run:
 *
 *   (a) throughput (steps/s) of N concurrent invocations (default 64) of an epoch of `--steps`
 *       no-op world-effect steps (default 10; bench/workers-domain.ts), with the viewer connected
 *       and without it, in R rounds of three arms back to back (without the viewer, with it, with it
 *       but no page open — to say what the page costs; order rotating; each arm is 3 loads back to
 *       back, about 3 s; the figure is the median of the rounds' ratios). The page is open and
 *       settled (its modules loaded, its socket live) before its arm starts: embedded (a FileStore and the in-process dispatcher, in this process)
 *       and distributed (a RedisStore, BullMQ, 2 `weft worker`-equivalent processes,
 *       bench/workers-child.ts). "Connected" means: the viewer (`weft inspect`, its own process, as
 *       a user runs it), one WebSocket client (its own process, bench/live-watcher-child.ts, as a page
 *       would be) on /live following every invocation from seq 0 and on the list, consuming every
 *       update, and one headless Chromium page open on the list. The viewer runs as `weft inspect`
 *       does by default, at nice 10 (cli/yield-cpu.ts); `--viewer-nice N` passes `--nice N` (0: the
 *       runs' own priority, to see what the priority is worth). The client and Chromium run at the
 *       bench's priority. Goal ≥ 0.9×.
 *   (b) the lag from a durable append to the WebSocket client receiving that record, p50 and p99,
 *       under that load. The append time is taken in the writer (this process) when the store's
 *       append() resolves — after the flush (file) or after Redis answered (AOF fsync always) — and
 *       the arrival time by the client in its process, both on the machine's wall clock (ms with
 *       sub-ms precision: performance.timeOrigin + performance.now()). Records appended before the
 *       client's socket for that invocation was open are not counted (they wait for the socket, not
 *       for the viewer). Goal p99 ≤ 250 ms. (The page's DOM is not timed: the invocation page is
 *       redrawn per message, and the list page is what is open here.)
 *   (b') each hop of append → page (bench/inspect-hops.ts): `--hop-invocations` (default 8)
 *       invocations written one record every 100 ms, each with its own page open in Chromium,
 *       beside the same load — append → the store's change seen by the viewer's change feed
 *       (store-changes.ts, in a process of its own) → a /live client has it → the page's socket
 *       delivered it → the page drawn with it; p50 / p99 of each, from the durable append.
 *   (c) the invocation list with `--list-count` (default 10,000) ended invocations in the store, in
 *       Chromium, from navigation start to the first frame painted with the table holding its rows
 *       (timed in the page: listPageMs), on both stores (median of R
 *       fresh page loads); beside it the same page over an empty store, and the server's share (the
 *       viewer's /api/invocations fetched and parsed here). Goal ≤ 1 s. Then the same on Redis at
 *       `--list-big` (default 100,000; 0: not) ended invocations, written by pipeline
 *       (list-fixture.ts fillEndedRedis). Beside each median, the cold page: the first one after
 *       its viewer started (the viewer makes its listing from the store's index then, listing.ts).
 *
 *   (d) throughput with the Stately relay (`--stately`, in the runtime's process) and one inspector
 *       client consuming it, beside the same runtime without it (bench/stately-relay.ts), on both
 *       stores. Goal ≥ 0.9×.
 *
 * `--only viewer,relay,list` runs some of them ((a)+(b), (d), (c)); all by default.
 *
 * Redis is a private `redis-server --appendonly yes --appendfsync always` (bench/redis-server.ts).
 * Chromium is /usr/bin/chromium (or CHROMIUM_PATH). Every child (viewer, workers, server, browser)
 * is stopped at the end, on error too.
 *
 * Over 400 lines on purpose: one suite whose figures share their runtimes, viewers and browser, and
 * are printed side by side; the parts that stand alone live apart (inspect-hops.ts, stately-relay.ts,
 * list-fixture.ts, live-watcher-child.ts).
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { JournalRecord } from '../journal/records.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import type { JournalStore, Lease } from '../journal/store.js';
import { FileStore } from '../stores/file.js';
import { RedisStore } from '../stores/redis.js';
import { BullMqDispatcher, bullPrefix } from '../queue/bullmq.js';
import { createRuntime, type Runtime } from '../runtime/index.js';
import { fillEnded, fillEndedRedis } from './list-fixture.js';
import { appendToPageHops, type HopFigures } from './inspect-hops.js';
import { BENCH_INTENT } from './noop-app.js';
import { startPrivateRedis, type PrivateRedis } from './redis-server.js';
import { benchDomain, tenantFor } from './workers-domain.js';
import { spawnWorker, type WorkerProcess } from './workers.js';
import { cpuByRole } from './process-cpu.js';
import { StatelyRelay } from '../inspector/stately/relay.js';
import { statelyTap } from '../inspector/stately/runtime-tap.js';
import { relayRounds, type RelayFigures } from './stately-relay.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(11));
const ASOF = '2026-01-01T00:00:00Z';
const LIMITS = { maxNodes: 10_000_000, maxDepth: 1_000_000 };
const CLI = fileURLToPath(new URL('../cli/main.js', import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Loads of N × steps per arm of a round (one load of 64 × 10 lasts about a second: too short to be steady on a shared machine). */
const LOADS_PER_ARM = 3;

const quantile = (xs: readonly number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
};
const median = (xs: readonly number[]) => quantile(xs, 0.5);
const fmt = (n: number, d = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }) : '—');
const loadLine = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
const note = (line: string) => process.stderr.write(`  [inspect] ${line}\n`);
const mark = (ok: boolean) => (ok ? 'met' : 'NOT met');

/** When each record became durable in this process: `<invocation> <seq>` → the wall clock (ms, sub-ms precision) after append() resolved. */
type Stamps = Map<string, number>;
const stampOf = (id: string, seq: number) => `${id} ${seq}`;

/** `store`, stamping each record's durable time (the wall clock the watcher's process uses too) when its append resolves. */
function stamped<S extends JournalStore>(store: S): S & { stamps: Stamps } {
  const stamps: Stamps = new Map();
  const append = store.append.bind(store);
  store.append = async (lease: Lease, expectedSeq: number, records: readonly JournalRecord[]) => {
    await append(lease, expectedSeq, records);
    const at = performance.timeOrigin + performance.now();
    for (const r of records) stamps.set(stampOf(lease.invocation, r.seq), at);
  };
  return Object.assign(store, { stamps });
}

// ── the viewer, its clients ─────────────────────────────────────────────────────────────────────

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

interface ViewerProcess {
  pid: number;
  url: string;
  origin: string;
  stop(): Promise<void>;
}

/** `weft inspect <args> --port 0` in its own process, once it printed its URL. */
async function startViewer(args: string[], nice?: number): Promise<ViewerProcess> {
  // BENCH_PROFILE_VIEWER=<dir>: the viewer writes a CPU profile there when it stops.
  const profile = process.env.BENCH_PROFILE_VIEWER ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_VIEWER}`] : [];
  const child = spawn(process.execPath, [...profile, CLI, 'inspect', '--port', '0', ...(nice === undefined ? [] : ['--nice', String(nice)]), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => (children.delete(child), resolve())));
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`weft inspect printed no URL within 30 s: ${out}`)), 30_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const m = /http:\/\/\S+/.exec(out);
      if (m) (clearTimeout(timer), resolve(m[0]));
    });
    child.stderr!.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`weft inspect exited (${code}): ${out}`))));
  });
  const u = new URL(url);
  return {
    pid: child.pid!,
    url,
    origin: `${u.protocol}//${u.host}`,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** What watching a load costs the viewer's clients: arrival times per record, the sockets to close. */
/**
 * The WebSocket client consuming every update — the list and every invocation from seq 0 — run in
 * its own process (live-watcher-child.ts), as a page would be: the runtime measured here neither
 * waits for it nor delays its reading. Arrival times come back over IPC on the same wall clock as
 * the append stamps.
 */
class Watcher {
  /** Per invocation, when its follow socket was open. */
  readonly openedAt = new Map<string, number>();
  private arrived = new Map<string, number>();
  private readonly pending = new Map<string, () => void>();
  private reported: ((r: { arrived: Array<[string, number]>; rows: number }) => void) | undefined;
  rows = 0;
  get pid(): number {
    return this.child.pid!;
  }

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (m: { ready?: boolean; followed?: string; openedAt?: number; report?: { arrived: Array<[string, number]>; rows: number } }) => {
      if (m.ready) this.pending.get('')?.();
      if (m.followed !== undefined) {
        this.openedAt.set(m.followed, m.openedAt!);
        this.pending.get(m.followed)?.();
      }
      if (m.report) this.reported?.(m.report);
    });
  }

  private ask(key: string, message: unknown): Promise<void> {
    return new Promise((resolve) => {
      this.pending.set(key, () => (this.pending.delete(key), resolve()));
      this.child.send(message as never);
    });
  }

  static async connect(origin: string): Promise<Watcher> {
    const child = fork(fileURLToPath(new URL('./live-watcher-child.js', import.meta.url)), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    children.add(child);
    child.once('exit', () => children.delete(child));
    const w = new Watcher(child);
    await w.ask('', { connect: origin });
    return w;
  }

  /** Follow `id` from seq 0, consuming every record message. */
  follow(id: string): Promise<void> {
    return this.ask(id, { follow: id });
  }

  /** Bring the child's arrival times here. */
  async report(): Promise<void> {
    const r = await new Promise<{ arrived: Array<[string, number]>; rows: number }>((resolve) => {
      this.reported = resolve;
      this.child.send({ report: true });
    });
    this.arrived = new Map(r.arrived);
    this.rows = r.rows;
  }

  /** Lags (ms) of the records appended after their invocation's socket was open; and how many of the appended records arrived (as of the last report). */
  lags(stamps: Stamps, ids: readonly string[]): { lags: number[]; arrived: number; appended: number } {
    const lags: number[] = [];
    let arrived = 0;
    let appended = 0;
    const wanted = new Set(ids);
    for (const [k, appendedAt] of stamps) {
      const id = k.slice(0, k.indexOf(' '));
      if (!wanted.has(id)) continue;
      appended++;
      const at = this.arrived.get(k);
      if (at !== undefined) arrived++;
      const opened = this.openedAt.get(id);
      if (at !== undefined && opened !== undefined && appendedAt >= opened) lags.push(Math.max(0, at - appendedAt));
    }
    return { lags, arrived, appended };
  }

  close(): void {
    this.child.send({ close: true });
  }
}

// ── (a) + (b): throughput with and without the viewer ──────────────────────────────────────────

/** Every invocation this suite started. */
const startedIds = new Set<string>();

interface LoadRun {
  stepsPerS: number;
  ids: string[];
}

/** `lanes` invocations of `steps` no-op steps at once through `rt`; with `watcher`, each followed as soon as it has an id. */
async function load(rt: Runtime, lanes: number, steps: number, tag: string, watcher?: Watcher): Promise<LoadRun> {
  const ids: string[] = [];
  const follows: Promise<void>[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      const handle = await rt.start(BENCH_INTENT, { tenant: tenantFor(steps), seed: `${tag}-${lane}`, asOf: ASOF });
      // A seed used before names an invocation that has ended: its start would measure nothing.
      if (startedIds.has(handle.id)) throw new Error(`bench inspect: invocation ${handle.id} (seed ${tag}-${lane}) was started before in this run`);
      startedIds.add(handle.id);
      ids.push(handle.id);
      if (watcher) follows.push(watcher.follow(handle.id));
      const result = await handle.done;
      if (result.status !== 'completed') throw new Error(`bench invocation ended ${result.status}: ${result.reason}`);
    }),
  );
  const wallMs = performance.now() - t0;
  await Promise.all(follows);
  return { stepsPerS: (lanes * steps) / (wallMs / 1000), ids };
}

/** `times` loads back to back (each with its own seeds): one figure over all of them, long enough to be steady. */
async function loads(rt: Runtime, lanes: number, steps: number, tag: string, times: number, watcher?: Watcher): Promise<LoadRun> {
  const ids: string[] = [];
  let ms = 0;
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    const run = await load(rt, lanes, steps, `${tag}-${i}`, watcher);
    ms += performance.now() - t0;
    ids.push(...run.ids);
  }
  return { stepsPerS: (times * lanes * steps) / (ms / 1000), ids };
}

interface ModeFigures {
  label: string;
  without: number[];
  withViewer: number[];
  ratios: number[];
  /** The viewer and its WebSocket clients, the page closed: where the cost is. */
  noPage: number[];
  noPageRatios: number[];
  lags: number[];
  arrived: number;
  appended: number;
  /** CPU µs per step, per round: the run's processes (this one, workers, redis-server) bare and watched; the viewer's (viewer, client, browser) watched. */
  runCpuBare: number[];
  runCpuWatched: number[];
  viewCpu: number[];
  /** The viewer's processes apart: weft inspect, the WebSocket client, Chromium. */
  viewerCpu: number[];
  clientCpu: number[];
  pageCpu: number[];
}

/** The run's processes and the viewer's, by pid and command line (process-cpu.ts). */
function roleOf(viewerPid: number, clientPid: () => number | undefined) {
  return (p: { pid: number; command: string }): string | undefined => {
    if (p.pid === process.pid || /redis-server|workers-child/.test(p.command)) return 'run';
    if (p.pid === viewerPid) return 'viewer';
    if (p.pid === clientPid()) return 'client';
    if (/chrom/i.test(p.command)) return 'page';
    return undefined;
  };
}

/**
 * P rounds (order rotating) of one load without the viewer's clients, one with them and the page,
 * and one with them but no page open (to say which costs what).
 */
async function rounds(label: string, rt: Runtime, stamps: Stamps, viewer: ViewerProcess, page: Page, lanes: number, steps: number, count: number): Promise<ModeFigures> {
  const f: ModeFigures = { label, without: [], withViewer: [], ratios: [], noPage: [], noPageRatios: [], lags: [], arrived: 0, appended: 0, runCpuBare: [], runCpuWatched: [], viewCpu: [], viewerCpu: [], clientCpu: [], pageCpu: [] };
  let clientPid: number | undefined;
  const cpu = cpuByRole(roleOf(viewer.pid, () => clientPid));
  const stepsPerArm = LOADS_PER_ARM * lanes * steps;
  note(`${label}: warm-up`);
  await load(rt, lanes, steps, `${label}-warm`);
  for (let p = 0; p < count; p++) {
    const bare = async () => {
      clientPid = undefined;
      cpu.start();
      f.without.push((await loads(rt, lanes, steps, `${label}-bare-${p}`, LOADS_PER_ARM)).stepsPerS);
      f.runCpuBare.push(((cpu.end().get('run') ?? Number.NaN) * 1000) / stepsPerArm);
    };
    const watched = async (withPage: boolean) => {
      if (withPage) {
        // The page open and settled — its modules loaded (the drop panel's come after the table) and
        // its socket connected — before the load starts: what is measured is a page watching, not a
        // page loading (a load here lasts about a second).
        await page.goto(viewer.url, { waitUntil: 'networkidle' });
        await page.locator('table.invocations').waitFor();
        await page.locator('#drop').waitFor();
        await page.locator('body[data-live="live"]').waitFor();
        await new Promise((r) => setTimeout(r, 300));
      } else await page.goto('about:blank');
      const watcher = await Watcher.connect(viewer.origin);
      clientPid = watcher.pid;
      cpu.start();
      const run = await loads(rt, lanes, steps, `${label}-${withPage ? 'page' : 'no-page'}-${p}`, LOADS_PER_ARM, watcher); // own seeds: a start with the seed of an ended run would only find it ended
      const used = cpu.end();
      if (!withPage) {
        f.noPage.push(run.stepsPerS);
        watcher.close();
        return;
      }
      f.withViewer.push(run.stepsPerS);
      f.runCpuWatched.push(((used.get('run') ?? Number.NaN) * 1000) / stepsPerArm);
      const per = (role: string) => ((used.get(role) ?? 0) * 1000) / stepsPerArm;
      f.viewerCpu.push(per('viewer'));
      f.clientCpu.push(per('client'));
      f.pageCpu.push(per('page'));
      f.viewCpu.push(per('viewer') + per('client') + per('page'));
      // Let the last records reach the client (they are counted; lags already measured are not changed by waiting).
      const deadline = performance.now() + 5_000;
      for (;;) {
        await watcher.report();
        const now = watcher.lags(stamps, run.ids);
        if (now.arrived >= now.appended || performance.now() >= deadline) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const got = watcher.lags(stamps, run.ids);
      f.lags.push(...got.lags);
      f.arrived += got.arrived;
      f.appended += got.appended;
      watcher.close();
    };
    const arms = [bare, () => watched(true), () => watched(false)];
    for (let k = 0; k < arms.length; k++) await arms[(p + k) % arms.length]!();
    f.ratios.push(f.withViewer.at(-1)! / f.without.at(-1)!);
    f.noPageRatios.push(f.noPage.at(-1)! / f.without.at(-1)!);
    note(`${label}: round ${p + 1}/${count}: ${fmt(f.without.at(-1)!)} steps/s bare, ${fmt(f.withViewer.at(-1)!)} watched with the page, ${fmt(f.noPage.at(-1)!)} without it`);
  }
  return f;
}

// ── (c): the list page with many invocations ───────────────────────────────────────────────────

/**
 * What a page of the list records about itself: the moment (ms since its navigation started, its
 * performance.now()) of the first frame painted with `selector` in the document — a mutation
 * observer sees the element arrive, then a frame (requestAnimationFrame) and a task after it. Taken
 * in the page, because Playwright's own wait for an element polls with a back-off (up to 500 ms
 * between looks) that would be measured as the page's time.
 */
const shownScript = (selector: string) => `(() => {
  const seen = () => {
    if (window.__weftShown !== undefined || !document.querySelector(${JSON.stringify(selector)})) return false;
    window.__weftShown = null;
    requestAnimationFrame(() => setTimeout(() => (window.__weftShown = performance.now()), 0));
    return true;
  };
  const observer = new MutationObserver(() => seen() && observer.disconnect());
  observer.observe(document, { childList: true, subtree: true });
})();`;

/**
 * Median ms (of `reps` fresh pages) from navigation start to the first frame painted with the list's
 * table holding a row (0 rows: the table shown); `cold`, the first page's (its viewer just started:
 * its listing made from the store's index, listing.ts, and the browser's cache of modules empty).
 */
async function listPageTimes(browser: Browser, url: string, rows: number, reps: number): Promise<{ ms: number; coldMs: number }> {
  const times: number[] = [];
  let coldMs = Number.NaN;
  const selector = rows > 0 ? 'table.invocations tr[data-id]' : 'table.invocations';
  for (let r = 0; r <= reps; r++) {
    const page = await browser.newPage();
    try {
      await page.addInitScript({ content: shownScript(selector) });
      await page.goto(url, { waitUntil: 'commit' });
      await page.locator(selector).first().waitFor({ timeout: 60_000 });
      let ms: number | null | undefined;
      for (let tries = 0; typeof ms !== 'number' && tries < 600; tries++) {
        ms = await page.evaluate(() => (globalThis as { __weftShown?: number | null }).__weftShown);
        if (typeof ms !== 'number') await new Promise((resolve) => setTimeout(resolve, 10));
      }
      if (typeof ms !== 'number') throw new Error('the list page recorded no painted frame with its table');
      if (rows > 0) {
        const shown = await page.locator('table.invocations tr[data-id]').count();
        if (shown === 0) throw new Error('the list page showed no row');
      }
      if (r > 0) times.push(ms); // the first load warms the viewer and the browser's cache of modules
      else coldMs = ms;
    } finally {
      await page.close();
    }
  }
  return { ms: median(times), coldMs };
}

/** The median of `listPageTimes`. */
async function listPageMs(browser: Browser, url: string, rows: number, reps: number): Promise<number> {
  return (await listPageTimes(browser, url, rows, reps)).ms;
}

/** `url` with the list page's view (list-page.ts: sort, dir, q, tenant, status) in its query. */
function withView(url: string, view: Record<string, string>): string {
  const u = new URL(url);
  for (const [k, v] of Object.entries(view)) u.searchParams.set(k, v);
  return u.href;
}

/** The views of the list timed beside the default one (newest first): a sort over the whole list, a filter with a sort, a search. */
const LIST_VIEWS: Array<{ label: string; view: Record<string, string> }> = [
  { label: 'sorted by duration ↑', view: { sort: 'duration', dir: 'asc' } },
  { label: 'tenant t3, by id ↓', view: { tenant: 't3', sort: 'id', dir: 'desc' } },
  { label: 'search ?q=list-0042', view: { q: 'list-0042' } },
];

/** Median ms of `reps` fetches of one page of /api/invocations as the list page asks for it (200 rows, `view`), parsed. */
async function apiPageMs(origin: string, view: Record<string, string>, reps: number): Promise<number> {
  const times: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    const res = await fetch(withView(`${origin}/api/invocations`, { limit: '200', offset: '0', ...view }));
    const page = (await res.json()) as { rows?: unknown[] };
    times.push(performance.now() - t0);
    if (!Array.isArray(page.rows) || page.rows.length === 0) throw new Error(`/api/invocations?${new URLSearchParams(view)} gave no rows`);
  }
  return median(times);
}

/** Median ms of `reps` fetches of the viewer's /api/invocations, parsed (the server's share of the list page). */
async function apiListMs(origin: string, rows: number, reps: number): Promise<number> {
  const times: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    const res = await fetch(`${origin}/api/invocations`);
    const list = (await res.json()) as unknown[];
    times.push(performance.now() - t0);
    if (list.length !== rows) throw new Error(`/api/invocations gave ${list.length} rows, filled ${rows}`);
  }
  return median(times);
}

// ── the suite ───────────────────────────────────────────────────────────────────────────────────

export async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { invocations: { type: 'string' }, steps: { type: 'string' }, rounds: { type: 'string' }, 'list-count': { type: 'string' }, 'list-reps': { type: 'string' }, 'list-big': { type: 'string' }, 'hop-invocations': { type: 'string' }, 'no-redis': { type: 'boolean' }, only: { type: 'string' }, 'viewer-nice': { type: 'string' } },
  });
  const int = (name: string, text: string | undefined, fallback: number, min: number) => {
    const n = Number(text ?? fallback);
    if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${name} must be an integer ≥ ${min}`);
    return n;
  };
  const lanes = int('invocations', values.invocations, 64, 1);
  const steps = int('steps', values.steps, 10, 1);
  const pairCount = int('rounds', values.rounds, 5, 1);
  const viewerNice = values['viewer-nice'] === undefined ? undefined : int('viewer-nice', values['viewer-nice'], 0, 0);
  if (viewerNice !== undefined && viewerNice > 19) throw new Error('--viewer-nice takes a nice value 0–19 (weft inspect --nice)');
  const listCount = int('list-count', values['list-count'], 10_000, 1);
  const listReps = int('list-reps', values['list-reps'], 3, 1);
  const listBig = int('list-big', values['list-big'], 100_000, 0);
  const hopInvocations = int('hop-invocations', values['hop-invocations'], 8, 0);
  const withRedis = !values['no-redis'];
  const parts = new Set((values.only ?? 'viewer,relay,list').split(',').map((p) => p.trim()));
  for (const p of parts) if (!['viewer', 'relay', 'list'].includes(p)) throw new Error(`--only takes viewer, relay and list (comma-separated), got ${JSON.stringify(p)}`);

  const started = performance.now();
  const out: string[] = [`load at start: ${loadLine()}`];
  const root = mkdtempSync(join(os.tmpdir(), 'weft-bench-inspect-'));
  const closers: Array<() => Promise<unknown>> = [];
  const workers: WorkerProcess[] = [];
  let server: PrivateRedis | undefined;
  let browser: Browser | undefined;
  const modes: ModeFigures[] = [];
  const hopModes: Array<{ label: string; hops: HopFigures }> = [];
  /** A load of runs through `rt` again and again until `stop` says so (beside the hop probe). */
  const loadUntil = (rt: Runtime, tag: string) => async (stop: () => boolean) => {
    for (let i = 0; !stop(); i++) await load(rt, lanes, steps, `${tag}-${i}`);
  };
  const lists: Array<{ label: string; count: number; ms: number; coldMs: number; emptyMs: number; apiMs: number; pageApiMs: number; views: Array<{ label: string; ms: number; apiMs: number }> }> = [];
  const relays: RelayFigures[] = [];
  const relay = parts.has('relay') ? await StatelyRelay.start({ port: 0 }) : undefined;
  if (relay) closers.push(() => relay.close());
  const tap = relay ? statelyTap(relay) : undefined;
  /** One arm of the relay figure: LOADS_PER_ARM loads through `rt`, in steps/s. */
  const relayArm = (rt: Runtime) => async (tag: string) => ({ stepsPerS: (await loads(rt, lanes, steps, tag, LOADS_PER_ARM)).stepsPerS, steps: LOADS_PER_ARM * lanes * steps });
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'], headless: true });
    const page = await browser.newPage();

    // ── embedded: FileStore + in-process dispatcher in this process; the viewer in its own ──
    const dir = join(root, 'embedded');
    const fileStore = stamped(new FileStore(dir));
    const rtFile = createRuntime({ store: fileStore, domain: benchDomain, stateDir: join(root, 'state'), signingKey: key, limits: LIMITS });
    closers.push(() => rtFile.close());
    await load(rtFile, 1, steps, 'create'); // the workspace exists before the viewer watches it
    if (parts.has('viewer')) {
      const fileViewer = await startViewer(['--dir', dir], viewerNice);
      closers.push(() => fileViewer.stop());
      modes.push(await rounds('embedded (file store)', rtFile, fileStore.stamps, fileViewer, page, lanes, steps, pairCount));
      if (hopInvocations > 0) {
        note('embedded (file store): append → page, each hop');
        hopModes.push({ label: 'embedded (file store)', hops: await appendToPageHops({ store: fileStore, watch: { dir }, viewerUrl: fileViewer.url, browser, invocations: hopInvocations, gapMs: 100, tag: 'file', besides: loadUntil(rtFile, 'file-hops') }) });
      }
      await fileViewer.stop();
    }
    if (tap) {
      const rtFileRelayed = createRuntime({ store: tap.tapStore(fileStore), inspect: tap.inspect, domain: benchDomain, stateDir: join(root, 'state'), signingKey: key, limits: LIMITS });
      closers.push(() => rtFileRelayed.close());
      await load(rtFileRelayed, lanes, steps, 'relay-warm');
      relays.push(await relayRounds('embedded (file store)', relay!, children, { bare: relayArm(rtFile), relayed: relayArm(rtFileRelayed) }, pairCount, note));
    }

    // ── distributed: RedisStore + BullMQ + 2 worker processes ──
    let redisUrl: string | undefined;
    const prefix = `weft-bench-i${process.pid}`;
    if (withRedis && (parts.has('viewer') || parts.has('relay') || parts.has('list'))) {
      server = await startPrivateRedis({ orElse: 'pass --no-redis' });
      redisUrl = server.url;
    }
    if (server && (parts.has('viewer') || parts.has('relay'))) {
      const queue = 'weft-inspect-thr';
      note('starting 2 worker processes');
      workers.push(...(await Promise.all([1, 2].map(() => spawnWorker('weft', server!.url, bullPrefix(prefix), queue, 32)))));
      const redisStore = stamped(new RedisStore({ redis: server.url, prefix }));
      const dispatcher = new BullMqDispatcher({ connection: server.url, prefix: bullPrefix(prefix), queue, actuators: benchDomain.actuators({ stateDir: os.tmpdir() }) });
      const rtRedis = createRuntime({ store: redisStore, dispatcher, domain: benchDomain, signingKey: key, limits: LIMITS });
      closers.push(async () => {
        await rtRedis.close();
        await redisStore.close();
      });
      if (parts.has('viewer')) {
        const redisViewer = await startViewer(['--redis', server.url, '--redis-prefix', prefix], viewerNice);
        closers.push(() => redisViewer.stop());
        modes.push(await rounds('redis + 2 workers', rtRedis, redisStore.stamps, redisViewer, page, lanes, steps, pairCount));
        if (hopInvocations > 0) {
          note('redis + 2 workers: append → page, each hop');
          hopModes.push({ label: 'redis + 2 workers', hops: await appendToPageHops({ store: redisStore, watch: { redis: server.url, prefix }, viewerUrl: redisViewer.url, browser, invocations: hopInvocations, gapMs: 100, tag: 'redis', besides: loadUntil(rtRedis, 'redis-hops') }) });
        }
        await redisViewer.stop();
      }
      if (tap) {
        // A second dispatcher on the same queue for the relayed runtime (as a second `serve` would have).
        const relayedDispatcher = new BullMqDispatcher({ connection: server.url, prefix: bullPrefix(prefix), queue, actuators: benchDomain.actuators({ stateDir: os.tmpdir() }) });
        const rtRedisRelayed = createRuntime({ store: tap.tapStore(redisStore), inspect: tap.inspect, dispatcher: relayedDispatcher, domain: benchDomain, signingKey: key, limits: LIMITS });
        closers.push(() => rtRedisRelayed.close());
        await load(rtRedisRelayed, lanes, steps, 'redis-relay-warm');
        relays.push(await relayRounds('redis + 2 workers', relay!, children, { bare: relayArm(rtRedis), relayed: relayArm(rtRedisRelayed) }, pairCount, note));
      }
      await Promise.allSettled(workers.splice(0).map((w) => w.stop()));
    }

    // ── (c): the list page over N ended invocations, and over an empty store ──
    if (parts.has('list')) {
      note(`filling ${listCount} ended invocations (${withRedis ? 'file store and Redis' : 'file store'})`);
      const listDir = join(root, 'list');
      const emptyDir = join(root, 'empty');
      const listFile = new FileStore(listDir);
      const listStores: JournalStore[] = [listFile];
      const listPrefix = `${prefix}-list`;
      let listRedis: RedisStore | undefined;
      if (redisUrl) {
        listRedis = new RedisStore({ redis: redisUrl, prefix: listPrefix });
        listStores.push(listRedis);
        closers.push(() => listRedis!.close());
      }
      const fillStart = performance.now();
      // Started a second apart (unhashed envelope times), so a sort by start or duration has work to do.
      await fillEnded(listStores, listCount, { concurrency: 16, spreadMs: 1_000, onProgress: (n) => process.stderr.write(`\r  [inspect] filled ${n}/${listCount}`) });
      process.stderr.write('\n');
      out.push(`list fixture: ${listCount} ended invocations filled in ${fmt((performance.now() - fillStart) / 1000, 1)} s`);
      const listTargets: Array<{ label: string; args: string[]; empty: string[] }> = [{ label: 'file store', args: ['--dir', listDir], empty: ['--dir', emptyDir] }];
      if (redisUrl) listTargets.push({ label: 'redis', args: ['--redis', redisUrl, '--redis-prefix', listPrefix], empty: ['--redis', redisUrl, '--redis-prefix', `${prefix}-empty`] });
      for (const t of listTargets) {
        const full = await startViewer(t.args, viewerNice);
        let apiMs = Number.NaN;
        let pageApiMs = Number.NaN;
        const views: Array<{ label: string; ms: number; apiMs: number }> = [];
        let coldMs = Number.NaN;
        const ms = await listPageTimes(browser, full.url, listCount, listReps)
          .then(async (times) => {
            coldMs = times.coldMs;
            const pageMs = times.ms;
            apiMs = await apiListMs(full.origin, listCount, listReps);
            pageApiMs = await apiPageMs(full.origin, {}, listReps);
            for (const v of LIST_VIEWS) views.push({ label: v.label, ms: await listPageMs(browser!, withView(full.url, v.view), 1, listReps), apiMs: await apiPageMs(full.origin, v.view, listReps) });
            return pageMs;
          })
          .finally(() => full.stop());
        const empty = await startViewer(t.empty, viewerNice);
        const emptyMs = await listPageMs(browser, empty.url, 0, listReps).finally(() => empty.stop());
        lists.push({ label: t.label, count: listCount, ms, coldMs, emptyMs, apiMs, pageApiMs, views });
        note(`list page, ${t.label}: ${fmt(ms)} ms (empty store ${fmt(emptyMs)} ms)${views.map((v) => `; ${v.label} ${fmt(v.ms)} ms`).join('')}`);
      }
      // ── the list at --list-big (100,000) on Redis, filled by pipelines (list-fixture.ts fillEndedRedis) ──
      if (redisUrl && listBig > 0) {
        const bigPrefix = `${prefix}-big`;
        const big = new RedisStore({ redis: redisUrl, prefix: bigPrefix });
        closers.push(() => big.close());
        const bigStart = performance.now();
        await fillEndedRedis(big, listBig, { spreadMs: 1_000, onProgress: (n) => process.stderr.write(`\r  [inspect] filled ${n}/${listBig} (redis, pipelined)`) });
        process.stderr.write('\n');
        out.push(`list fixture, redis: ${listBig} ended invocations written by pipeline in ${fmt((performance.now() - bigStart) / 1000, 1)} s`);
        const viewer = await startViewer(['--redis', redisUrl, '--redis-prefix', bigPrefix], viewerNice);
        const views: Array<{ label: string; ms: number; apiMs: number }> = [];
        let pageApiMs = Number.NaN;
        const times = await listPageTimes(browser, viewer.url, listBig, listReps)
          .then(async (t) => {
            pageApiMs = await apiPageMs(viewer.origin, {}, listReps);
            for (const v of LIST_VIEWS) views.push({ label: v.label, ms: await listPageMs(browser!, withView(viewer.url, v.view), 1, listReps), apiMs: await apiPageMs(viewer.origin, v.view, listReps) });
            return t;
          })
          .finally(() => viewer.stop());
        const emptyMs = lists.find((l) => l.label === 'redis')?.emptyMs ?? Number.NaN;
        lists.push({ label: 'redis', count: listBig, ms: times.ms, coldMs: times.coldMs, emptyMs, apiMs: Number.NaN, pageApiMs, views });
        note(`list page, redis at ${listBig}: ${fmt(times.ms)} ms (cold ${fmt(times.coldMs)} ms)`);
      }
    }
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await Promise.allSettled(workers.map((w) => w.stop()));
    await browser?.close().catch(() => undefined);
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  }

  // ── the table ──
  if (modes.length > 0) {
    out.push(`load: ${lanes} invocations at once × ${steps} no-op steps; ${pairCount} rounds of three runs back to back (without the viewer / with it / with it but no page; order rotating); viewer = weft inspect in its own process (${viewerNice === undefined ? 'at its default nice 10' : `--nice ${viewerNice}`}) + a WebSocket client following every invocation and the list + one Chromium page on the list`);
    out.push('');
    out.push(`${'(a) throughput'.padEnd(26)} ${'without viewer'.padStart(16)} ${'with viewer'.padStart(14)} ${'ratio (median of rounds)'.padStart(26)}   goal ≥ 0.9×   ${'viewer, no page'.padStart(16)} ${'ratio'.padStart(7)}`);
    for (const m of modes) {
      const ratio = median(m.ratios);
      out.push(
        `${m.label.padEnd(26)} ${`${fmt(median(m.without))} steps/s`.padStart(16)} ${`${fmt(median(m.withViewer))} steps/s`.padStart(14)} ${`${fmt(ratio, 2)}× (${m.ratios.map((r) => fmt(r, 2)).join(', ')})`.padStart(26)}   ${mark(ratio >= 0.9).padEnd(11)} ${`${fmt(median(m.noPage))} steps/s`.padStart(16)} ${`${fmt(median(m.noPageRatios), 2)}×`.padStart(7)}`,
      );
    }
    out.push('');
    out.push(`${"(a') CPU per step".padEnd(26)} ${"run's processes, bare".padStart(22)} ${'watched'.padStart(9)} ${"viewer's processes".padStart(19)} ${'share of all'.padStart(13)}   (median of rounds; the run = this process + workers + redis-server, the viewer = weft inspect + its client + Chromium)`);
    for (const m of modes) {
      const run = median(m.runCpuWatched);
      const view = median(m.viewCpu);
      out.push(`${m.label.padEnd(26)} ${`${fmt(median(m.runCpuBare))} µs`.padStart(22)} ${`${fmt(run)} µs`.padStart(9)} ${`${fmt(view)} µs`.padStart(19)} ${`${fmt((100 * view) / (run + view), 1)} %`.padStart(13)}   (weft inspect ${fmt(median(m.viewerCpu))} µs, client ${fmt(median(m.clientCpu))} µs, Chromium ${fmt(median(m.pageCpu))} µs)`);
    }
    out.push('');
    out.push(`${'(b) append → client'.padEnd(26)} ${'p50'.padStart(10)} ${'p99'.padStart(10)} ${'max'.padStart(10)} ${'records timed'.padStart(14)} ${'arrived / appended'.padStart(20)}   goal p99 ≤ 250 ms`);
    for (const m of modes) {
      const p99 = quantile(m.lags, 0.99);
      out.push(`${m.label.padEnd(26)} ${`${fmt(median(m.lags), 1)} ms`.padStart(10)} ${`${fmt(p99, 1)} ms`.padStart(10)} ${`${fmt(Math.max(...m.lags), 1)} ms`.padStart(10)} ${String(m.lags.length).padStart(14)} ${`${m.arrived} / ${m.appended}`.padStart(20)}   ${mark(p99 <= 250)}`);
    }
    out.push('');
  }
  if (hopModes.length > 0) {
    const pp = (xs: number[]) => `${fmt(median(xs), 1)} / ${fmt(quantile(xs, 0.99), 1)}`;
    out.push(`${"(b') append → page, by hop".padEnd(26)} ${'store change seen'.padStart(18)} ${'/live → client'.padStart(16)} ${'page got it'.padStart(14)} ${'drawn in page'.padStart(15)} ${'records'.padStart(8)}   p50 / p99 ms from the durable append, goal p99 ≤ 250 ms (drawn)`);
    for (const { label, hops } of hopModes) {
      out.push(`${label.padEnd(26)} ${pp(hops.seen).padStart(18)} ${pp(hops.client).padStart(16)} ${pp(hops.received).padStart(14)} ${pp(hops.drawn).padStart(15)} ${String(hops.records).padStart(8)}   ${mark(quantile(hops.drawn, 0.99) <= 250)}`);
    }
    out.push(`(b'): ${hopInvocations} invocations one after another, each written one record every 100 ms (the list fixture's journal) with its invocation page open in Chromium, beside the same load of runs; seen = the viewer's change feed (store-changes.ts) in a process of its own; drawn = the first frame after the page's DOM changed with the record (the page fetches the description again before it redraws)`);
    out.push('');
  }
  if (lists.length > 0) {
    out.push(`${'(c) list page → table'.padEnd(34)} ${'page'.padStart(10)} ${'cold'.padStart(10)} ${'empty store'.padStart(12)} ${'ratio'.padStart(8)} ${'of which /api → JSON'.padStart(22)}   goal ≤ 1,000 ms (median of ${listReps} fresh pages after one warm-up; cold: the first page, its viewer just started)`);
    for (const l of lists) {
      out.push(`${`${l.label}, ${fmt(l.count)}, newest first`.padEnd(34)} ${`${fmt(l.ms)} ms`.padStart(10)} ${`${fmt(l.coldMs)} ms`.padStart(10)} ${`${fmt(l.emptyMs)} ms`.padStart(12)} ${`${fmt(l.ms / l.emptyMs, 1)}×`.padStart(8)} ${`${fmt(l.pageApiMs)} ms`.padStart(22)}   ${mark(l.ms <= 1000)}${Number.isFinite(l.apiMs) ? `   (the whole list as JSON, no paging: ${fmt(l.apiMs)} ms)` : ''}`);
      for (const v of l.views) out.push(`${`  ${v.label}`.padEnd(34)} ${`${fmt(v.ms)} ms`.padStart(10)} ${''.padStart(10)} ${''.padStart(12)} ${`${fmt(v.ms / l.emptyMs, 1)}×`.padStart(8)} ${`${fmt(v.apiMs)} ms`.padStart(22)}   ${mark(v.ms <= 1000)}`);
    }
    out.push('(c): a view is opened from its URL (/?sort=…&dir=…&tenant=…&q=…), as a bookmark is; "of which /api" is the page\'s own request (200 rows of the view, sorted and filtered on the server)');
    out.push('');
  }
  if (relays.length > 0) {
    out.push(`${'(d) throughput, relay'.padEnd(26)} ${'without relay'.padStart(16)} ${'with relay'.padStart(14)} ${'ratio (median of rounds)'.padStart(26)}   goal ≥ 0.9×   ${'CPU/step here, without → with'.padStart(30)} ${'published → client (dropped)'.padStart(30)}`);
    for (const r of relays) {
      const ratio = median(r.ratios);
      out.push(
        `${r.label.padEnd(26)} ${`${fmt(median(r.without))} steps/s`.padStart(16)} ${`${fmt(median(r.withRelay))} steps/s`.padStart(14)} ${`${fmt(ratio, 2)}× (${r.ratios.map((x) => fmt(x, 2)).join(', ')})`.padStart(26)}   ${mark(ratio >= 0.9).padEnd(11)} ${`${fmt(median(r.cpuWithout))} → ${fmt(median(r.cpuWithRelay))} µs (${fmt(median(r.cpuWithout) / median(r.cpuWithRelay), 2)}×)`.padStart(30)} ${`${r.published} → ${r.received} (${r.dropped})`.padStart(30)}`,
      );
    }
    out.push('(d): the relay and the runtime in one process, as `weft run|serve --stately` has them; one inspector client in its own process, connected as the bridge page is, parsing every message; CPU/step here = the CPU time per step of the runtime\'s process (the relay included in the relayed arm), its ratio the bare cost over the relayed one (1× = free)');
    out.push('');
  }
  out.push(`load at end: ${loadLine()}; suite took ${fmt((performance.now() - started) / 1000)} s`);
  process.stdout.write(`${out.join('\n')}\n`);
}
