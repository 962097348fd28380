/**
 * The page's end of the viewer's WebSocket (inspector/live.ts): a journal's new records, in seq
 * order from the count the page already has, and the list's changed rows. A dropped connection is
 * opened again from where the page is, so nothing is missed or shown twice; `#live-state` in the top
 * bar (and `data-live` on the body) says whether updates are arriving.
 */
import { el } from './dom.js';
import type { ListedInvocation } from './wire.js';

const RECONNECT_MS = 1_000;

function liveUrl(query: string): string {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/live?${query}`;
}

function showState(state: 'live' | 'reconnecting'): void {
  document.body.dataset.live = state;
  const bar = document.querySelector('header.top');
  if (!bar) return;
  let badge = bar.querySelector<HTMLElement>('.live-state');
  if (!badge) badge = bar.appendChild(el('span', { class: 'live-state', id: 'live-state' }));
  badge.className = `live-state ${state}`;
  badge.textContent = state === 'live' ? '● live' : 'reconnecting…';
}

function open(query: () => string, onMessage: (message: unknown) => void): void {
  const socket = new WebSocket(liveUrl(query()));
  socket.addEventListener('open', () => showState('live'));
  socket.addEventListener('message', (event) => {
    try {
      onMessage(JSON.parse(String(event.data)));
    } catch {
      // not one of ours: ignored
    }
  });
  socket.addEventListener('close', () => {
    showState('reconnecting');
    setTimeout(() => open(query, onMessage), RECONNECT_MS);
  });
}

/**
 * Follow the journal of `id` from `have` records on: `onLines` gets each batch of new journal lines
 * once, in order (the server sends each from where the page is; a gap would reload the page).
 */
export function followJournal(id: string, have: number, onLines: (lines: string[]) => void): void {
  let count = have;
  open(
    () => `follow=${encodeURIComponent(id)}&from=${count}`,
    (message) => {
      const m = message as { type?: unknown; id?: unknown; from?: unknown; lines?: unknown };
      if (m.type !== 'records' || m.id !== id || typeof m.from !== 'number' || !Array.isArray(m.lines)) return;
      if (m.from > count) return location.reload(); // a gap cannot be filled from here: start again from the store
      const lines = (m.lines as unknown[]).filter((l): l is string => typeof l === 'string').slice(count - m.from);
      if (lines.length === 0) return;
      count += lines.length;
      onLines(lines);
    },
  );
}

/** Follow the store's invocations: `onRow` gets each changed invocation's row. */
export function followList(onRow: (row: ListedInvocation) => void): void {
  open(
    () => 'list=1',
    (message) => {
      const m = message as { type?: unknown; rows?: ListedInvocation[] };
      if (m.type === 'rows' && Array.isArray(m.rows)) for (const row of m.rows) if (row && typeof row.id === 'string') onRow(row);
    },
  );
}

/** How many lines (records) a journal's bytes hold. */
export function journalLineCount(bytes: Uint8Array): number {
  let n = 0;
  for (const b of bytes) if (b === 0x0a) n++;
  return bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a ? n + 1 : n;
}

/** The journal's bytes with `lines` appended, one line each. */
export function withLines(bytes: Uint8Array, lines: string[]): Uint8Array {
  const more = new TextEncoder().encode(lines.map((l) => `${l}\n`).join(''));
  const out = new Uint8Array(bytes.length + more.length);
  out.set(bytes);
  out.set(more, bytes.length);
  return out;
}

/** A redraw that failed is tried again after this long (unless a newer one was asked for). */
const RETRY_MS = 1_000;
let refreshing: Promise<void> | undefined;
let wanted: (() => Promise<void>) | undefined;

/** Run `work` now, or once the one running ends (the last asked for wins): redraws never overlap. */
export function refresh(work: () => Promise<void>): void {
  wanted = work;
  if (refreshing) return;
  const next = async (): Promise<void> => {
    while (wanted) {
      const run = wanted;
      wanted = undefined;
      try {
        await run();
      } catch (err) {
        // Said on the page (the next redraw clears it), and tried again shortly: the last change of
        // a run that has ended brings no further one to retry it.
        showStale(err);
        setTimeout(() => {
          if (!wanted) refresh(run);
        }, RETRY_MS);
      }
    }
    refreshing = undefined;
  };
  refreshing = next();
}

/** A redraw that failed: the page says it shows an older state, and why, until the next one succeeds. */
function showStale(err: unknown): void {
  const root = document.getElementById('app');
  if (!root) return;
  const text = `could not update this page (${err instanceof Error ? err.message : String(err)}): it shows an earlier state; it tries again on the next change`;
  let line = document.getElementById('stale');
  if (!line) {
    line = document.createElement('p');
    line.id = 'stale';
    line.className = 'error';
    root.prepend(line);
  }
  line.textContent = text;
}
