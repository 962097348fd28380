/**
 * The invocations page (`/`): every invocation in the store as a table — id (linking to its page),
 * tenant, intent (cut), status (with a fork's parent or a superseded run's fork, lineage.ts), epoch,
 * records, the last record's kind and age, and why a suspended or damaged one is so — with filters by
 * status and tenant and a search box over id and intent, applied in the page. The rows come from
 * `/api/invocations` (runtime/list.ts `listInvocations`).
 */
import { cut, el, failure, getJson, invocationHref, replace, statusBadge, showWhere } from './dom.js';
import { lineageLines } from './lineage.js';
import { followList } from './live.js';
import type { ListedInvocation, TrustedKey } from './wire.js';

const root = document.getElementById('app')!;
/** Rows drawn at once (and per "show more"). */
const PAGE_ROWS = 200;
/** The list is redrawn at most this often while rows change. */
const REDRAW_MS = 250;
/** A row the page has not drawn (a new run) brings a fresh page at most this often. */
const RELOAD_MS = 3_000;
/** The drop panel is asked for at the latest this long after the table is drawn (see main). */
const DROP_LATEST_MS = 500;
/** Typing in the search asks the server once it pauses this long. */
const SEARCH_DEBOUNCE_MS = 150;

function option(value: string, label: string): HTMLOptionElement {
  const o = el('option', { value }, label);
  return o;
}

/** How long ago an envelope time was, by this browser's clock ("" when it is not a time). */
function age(at: string): string {
  const ms = Date.now() - Date.parse(at);
  if (!Number.isFinite(ms)) return '';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 172800) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}

/** A drawn row's "… ago", brought up to date (written only when it reads differently now). */
function refreshAge(tr: Element, inv: ListedInvocation): void {
  const shown = tr.querySelector('.age');
  if (!shown || !inv.last?.at) return;
  const now = age(inv.last.at);
  if (shown.textContent !== now) shown.textContent = now;
}

function row(inv: ListedInvocation): HTMLTableRowElement {
  const why = [inv.problem, inv.reason].filter((t): t is string => typeof t === 'string' && t !== '').join('; ');
  return el(
    'tr',
    { 'data-id': inv.id, 'data-status': inv.status },
    el('td', { class: 'mono id' }, el('a', { href: invocationHref(inv.id) }, inv.id)),
    el('td', {}, cut(inv.tenant, 24)),
    el('td', { class: 'intent' }, cut(inv.intent, 80)),
    el('td', { class: 'status-cell' }, statusBadge(inv.status), ...lineageLines({ forkOf: inv.forkOf ?? null, supersededBy: inv.supersededBy ?? null, links: inv.lineageLinks ?? [] }, { short: true, hash: false })),
    el('td', { class: 'num' }, inv.epoch ?? ''),
    el('td', { class: 'num' }, inv.records),
    el('td', { class: 'last' }, inv.last ? el('span', { class: 'mono' }, inv.last.kind) : '', inv.last?.at ? el('div', { class: 'age', title: inv.last.at }, age(inv.last.at)) : null),
    el('td', { class: 'why' }, why === '' ? '' : cut(why, 140), inv.fix ? el('div', { class: 'fix mono' }, cut(inv.fix, 140)) : null),
  );
}

/** `/api/invocations?…`: one page of the list, cut on the server (inspector/list-page.ts). */
interface ListPage {
  rows: ListedInvocation[];
  total: number;
  all: number;
  statuses: string[];
  tenants: string[];
}

async function main(): Promise<void> {
  let trusted: TrustedKey | null = null;
  // The drop panel verifies files with the journal code, zod and @noble: loaded after the table is
  // painted, so the table waits for none of it.
  const drop = el('div', { id: 'drop-slot' });
  const loadDrop = () =>
    import('./drop.js').then(
      ({ dropPanel }) => drop.replaceWith(dropPanel(() => trusted)),
      (err: unknown) => drop.replaceWith(failure(err)),
    );
  const status = el('select', { id: 'filter-status', 'aria-label': 'status' }, option('', 'every status'));
  const tenant = el('select', { id: 'filter-tenant', 'aria-label': 'tenant' }, option('', 'every tenant'));
  const search = el('input', { id: 'search', type: 'search', placeholder: 'search id or intent', 'aria-label': 'search' });
  const count = el('span', { class: 'count' });
  const body = el('tbody');
  const table = el(
    'table',
    { class: 'invocations' },
    el('thead', {}, el('tr', {}, el('th', {}, 'invocation'), el('th', {}, 'tenant'), el('th', {}, 'intent'), el('th', {}, 'status'), el('th', { class: 'num' }, 'epoch'), el('th', { class: 'num' }, 'records'), el('th', {}, 'last record'), el('th', {}, 'why'))),
    body,
  );
  // The server filters, searches and cuts the list (10,000 invocations are not sent to draw 200):
  // the page holds the rows drawn, and asks again when the filters, the search or "show more" change.
  let limit = PAGE_ROWS;
  let page: ListPage = { rows: [], total: 0, all: 0, statuses: [], tenants: [] };
  const more = el('button', { type: 'button', class: 'button more', id: 'show-more' }, `show ${PAGE_ROWS} more`);
  const query = () => {
    const p = new URLSearchParams({ limit: String(limit), offset: '0' });
    if (status.value) p.set('status', status.value);
    if (tenant.value) p.set('tenant', tenant.value);
    if (search.value.trim()) p.set('q', search.value.trim());
    return `/api/invocations?${p}`;
  };
  // The listing each drawn row was made from (as JSON): a redraw of the same rows in the same order
  // makes anew only the rows whose listing changed — a live update's, or a reload's that differ —
  // (a busy store redraws often; 200 rows made anew each time was most of what the page cost), and
  // brings the others' ages up to date in place.
  let drawnAs: string[] = [];
  const render = () => {
    const rows = body.children;
    const listed = page.rows.map((inv) => JSON.stringify(inv));
    const sameRows = page.rows.length > 0 && rows.length === page.rows.length && page.rows.every((inv, i) => rows[i]!.getAttribute('data-id') === inv.id);
    if (sameRows) {
      page.rows.forEach((inv, i) => {
        if (drawnAs[i] !== listed[i]) rows[i]!.replaceWith(row(inv));
        else refreshAge(rows[i]!, inv);
      });
    } else {
      replace(body, ...page.rows.map(row));
      if (page.rows.length === 0) body.appendChild(el('tr', {}, el('td', { colspan: '8', class: 'empty' }, page.all === 0 ? 'no invocations in this store yet' : 'nothing matches')));
    }
    drawnAs = listed;
    const drawn = page.rows.length;
    count.textContent =
      page.total === page.all && drawn === page.total
        ? `${page.all} invocation${page.all === 1 ? '' : 's'}`
        : drawn < page.total
          ? `showing ${drawn} of ${page.total}${page.total === page.all ? '' : ` matching (${page.all} in all)`}`
          : `${page.total} of ${page.all}`;
    more.hidden = drawn >= page.total;
    for (const s of page.statuses) addOption(status, s, s.replace(/_/g, ' '));
    for (const t of page.tenants) addOption(tenant, t, t);
  };
  /** Ask for the page the controls describe; an answer to an older question is dropped. */
  let asked = 0;
  const reload = async () => {
    const mine = ++asked;
    const next = await getJson<ListPage>(query());
    if (mine !== asked) return;
    page = next;
    render();
  };
  const reloadSoon = (() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    return () => {
      clearTimeout(timer);
      timer = setTimeout(() => void reload().catch((err: unknown) => replace(body, el('tr', {}, el('td', { colspan: '8' }, failure(err))))), SEARCH_DEBOUNCE_MS);
    };
  })();
  try {
    [page, trusted] = await Promise.all([getJson<ListPage>(query()), getJson<TrustedKey | null>('/api/trusted-key')]);
  } catch (err) {
    replace(root, failure(err), drop);
    void loadDrop();
    return;
  }
  more.addEventListener('click', () => ((limit += PAGE_ROWS), void reload()));
  const narrowed = () => ((limit = PAGE_ROWS), reloadSoon());
  for (const input of [status, tenant]) input.addEventListener('change', narrowed);
  search.addEventListener('input', narrowed);
  replace(root, el('div', { class: 'toolbar' }, search, status, tenant, count), table, el('p', { class: 'more-row' }, more), drop);
  render();
  // The drop panel's modules (zod and @noble above all) take the browser a while to compile: asked
  // for once the table has been painted (a frame, then a task after it), so the table is not held
  // behind them — or after DROP_LATEST_MS, in a tab in the background, which paints no frame.
  let dropAsked = false;
  const askDrop = () => {
    if (dropAsked) return;
    dropAsked = true;
    void loadDrop();
  };
  requestAnimationFrame(() => setTimeout(askDrop, 0));
  setTimeout(askDrop, DROP_LATEST_MS);
  // Changed rows arrive over the WebSocket (live.ts): a drawn row is replaced in place; a row the
  // page has not drawn (a new invocation, or one that now matches) brings a fresh page — at most
  // every REDRAW_MS (a busy store changes hundreds of rows a second).
  // A row not drawn asks the server for the page again, but at most every RELOAD_MS: a page is the
  // listing of the whole store, cut — a busy store starting runs must not have it made four times a second.
  let drawing = false;
  let stale = false;
  let reloadedAt = 0;
  const tick = () => {
    drawing = false;
    if (stale && Date.now() - reloadedAt >= RELOAD_MS) {
      stale = false;
      reloadedAt = Date.now();
      void reload().catch(() => undefined);
      return;
    }
    requestAnimationFrame(render);
    if (stale) schedule(RELOAD_MS - (Date.now() - reloadedAt));
  };
  const schedule = (ms: number) => {
    if (drawing) return;
    drawing = true;
    setTimeout(tick, Math.max(REDRAW_MS, ms));
  };
  followList((changed) => {
    const i = page.rows.findIndex((r) => r.id === changed.id);
    if (i >= 0) page.rows[i] = changed;
    else stale = true;
    schedule(REDRAW_MS);
  });
}

/** `select` with an option for `value`, added (in order) when it has none yet. */
function addOption(select: HTMLSelectElement, value: string, label: string): void {
  const options = [...select.options];
  if (options.some((o) => o.value === value)) return;
  const before = options.find((o) => o.value !== '' && o.value > value);
  select.insertBefore(option(value, label), before ?? null);
}

showWhere();
void main();
