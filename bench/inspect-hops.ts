/**
 * Each hop of append → page, for `npm run bench -- inspect` (bench/inspect.ts): one invocation at
 * a time is written record by record (the list fixture's intact journal, bench/list-fixture.ts,
 * one append every `gapMs` under a lease) while its page is open in Chromium and a load of real
 * runs goes on beside it; for each record appended after the page was live:
 *
 *   append     the wall clock when the store's append() resolved, in this process (durable);
 *   seen       when the store's change feed (inspector/store-changes.ts, the viewer's own module: Redis
 *              nudges or the folder watch) reported the invocation changed — in a process of its own
 *              (bench/live-watcher-child.ts), the first report after the previous append resolved;
 *   client     when a WebSocket client (that process) following the journal on /live got the record;
 *   received   when the page's own /live socket delivered it (a hook on the page's WebSocket);
 *   drawn      the first frame painted after the page's DOM next changed once it had the record.
 *
 * All on the machine's wall clock (performance.timeOrigin + performance.now(), in each process).
 * "drawn" is the page as a person sees it: the invocation page redraws after it fetched the
 * description again, so the hop includes that request.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import type { JournalRecord } from '../journal/records.js';
import type { JournalStore } from '../journal/store.js';
import { endedJournal, relinked, TEMPLATE_ID } from './list-fixture.js';

export interface HopFigures {
  /** Lags from append (ms), per hop, one per record timed. */
  seen: number[];
  client: number[];
  received: number[];
  drawn: number[];
  records: number;
}

const wall = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The page's hook (an init script): each records message's arrival, and the frame painted after the DOM next changed. */
const HOOK = `(() => {
  const hops = (window.__weftHops = []);
  let waiting = [];
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (ev) => {
        try {
          const m = JSON.parse(ev.data);
          if (m.type !== 'records') return;
          const at = performance.timeOrigin + performance.now();
          for (let i = 0; i < m.lines.length; i++) {
            const hop = { id: m.id, seq: m.from + i, received: at, drawn: null };
            hops.push(hop);
            waiting.push(hop);
          }
        } catch {}
      });
    }
  };
  new MutationObserver(() => {
    if (waiting.length === 0) return;
    const batch = waiting;
    waiting = [];
    requestAnimationFrame(() => setTimeout(() => { const at = performance.timeOrigin + performance.now(); for (const h of batch) h.drawn = at; }, 0));
  }).observe(document, { subtree: true, childList: true, characterData: true });
})();`;

interface ChildReport {
  arrived: Array<[string, number]>;
  changes: Array<[string, number[]]>;
}

/**
 * Time `invocations` invocations of `template`'s length, one after another, each on its own page;
 * `besides` runs while they are written (a load of real runs), and is awaited at the end.
 */
export async function appendToPageHops(options: {
  store: JournalStore;
  watch: { dir: string } | { redis: string; prefix: string };
  viewerUrl: string;
  browser: Browser;
  invocations: number;
  gapMs: number;
  tag: string;
  besides?: (stop: () => boolean) => Promise<void>;
}): Promise<HopFigures> {
  const { store, browser } = options;
  const child = fork(fileURLToPath(new URL('./live-watcher-child.js', import.meta.url)), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const waitFor = <T>(pick: (m: Record<string, unknown>) => T | undefined) =>
    new Promise<T>((resolve) => {
      const on = (m: Record<string, unknown>) => {
        const v = pick(m);
        if (v !== undefined) (child.off('message', on), resolve(v));
      };
      child.on('message', on);
    });
  const origin = new URL(options.viewerUrl).origin;
  const figures: HopFigures = { seen: [], client: [], received: [], drawn: [], records: 0 };
  let done = false;
  const beside = options.besides?.(() => done);
  const page = await browser.newPage();
  try {
    child.send({ connect: origin });
    await waitFor((m) => (m.ready ? true : undefined));
    child.send({ watchStore: options.watch });
    await waitFor((m) => (m.watching ? true : undefined));
    await page.addInitScript({ content: HOOK });
    const template = await endedJournal(TEMPLATE_ID, 't0');
    const stamps: Array<{ id: string; seq: number; at: number; after: number }> = [];
    for (let k = 0; k < options.invocations; k++) {
      const id = `hop-${options.tag}-${process.pid}-${k}`;
      const records: JournalRecord[] = relinked(template, id, 't0');
      const lease = await store.acquire(id, { writer: 'bench-hops', ttlMs: 60_000 });
      try {
        await store.append(lease, 0, [records[0]!]);
        child.send({ follow: id });
        await waitFor((m) => (m.followed === id ? true : undefined));
        const url = new URL(`/invocations/${encodeURIComponent(id)}`, options.viewerUrl);
        url.search = new URL(options.viewerUrl).search;
        await page.goto(url.href, { waitUntil: 'load' });
        await page.locator('body[data-live="live"]').waitFor({ timeout: 60_000 });
        await sleep(300);
        let after = wall();
        for (let seq = 1; seq < records.length; seq++) {
          await sleep(options.gapMs);
          await store.append(lease, seq, [records[seq]!]);
          const at = wall();
          stamps.push({ id, seq, at, after });
          after = at;
        }
        await sleep(1_500); // the last record's way to the page
      } finally {
        await store.release(lease).catch(() => undefined);
      }
      const hops = (await page.evaluate('window.__weftHops')) as Array<{ id: string; seq: number; received: number; drawn: number | null }>;
      for (const s of stamps.filter((s) => s.id === id)) {
        const h = hops.find((x) => x.id === id && x.seq === s.seq);
        if (h) figures.received.push(Math.max(0, h.received - s.at));
        if (h?.drawn != null) figures.drawn.push(Math.max(0, h.drawn - s.at));
      }
    }
    child.send({ report: true });
    const report = await waitFor((m) => (m.report as ChildReport | undefined) ?? undefined);
    const arrived = new Map(report.arrived);
    const changes = new Map(report.changes);
    for (const s of stamps) {
      figures.records++;
      const c = arrived.get(`${s.id} ${s.seq}`);
      if (c !== undefined) figures.client.push(Math.max(0, c - s.at));
      const seen = (changes.get(s.id) ?? []).find((t) => t > s.after);
      if (seen !== undefined) figures.seen.push(Math.max(0, seen - s.at));
    }
  } finally {
    done = true;
    await page.close().catch(() => undefined);
    child.send({ close: true });
    await beside?.catch(() => undefined);
  }
  return figures;
}
