/**
 * The invocations page (`/`): the store's invocations as a table, newest first — id (linking to its
 * page), tenant, intent, status (with a fork's parent or a superseded run's fork, lineage.ts, and
 * this page's verdict on an ended journal in view, list-verdicts.ts), when it started, its last activity
 * (the last record's time and kind), how long its journal spans, epoch, records, and why a
 * suspended or damaged one is so. Every row is one line: long text is cut with an ellipsis and given
 * whole on hover (the title) and on the invocation's page, so the table fits 1024–1400 px.
 *
 * The server filters, searches, sorts and cuts the list (`/api/invocations`, inspector/list-page.ts).
 * What the page asks for lives in its URL — `/?q=…&status=…&tenant=…&sort=started&dir=desc` — so
 * opening such a URL shows it, and each change is written back (history.replaceState). A change of
 * the search, a filter or the order clears the rows and says it is loading until the answer to the
 * latest question arrives; an answer to an older question is dropped, never drawn.
 *
 * Over 400 lines on purpose: the list page in one place — its table, filters and sort, their URL,
 * and live rows; verification marks live in list-verdicts.ts.
 */
import { el, failure, getJson, invocationHref, replace, statusBadge, showWhere } from './dom.js';
import './inbox.js'; // the approvals inbox in the top bar
import { lineageLines } from './lineage.js';
import { ListVerdicts } from './list-verdicts.js';
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

type SortKey = 'started' | 'activity' | 'duration' | 'id' | 'status';
type SortDir = 'asc' | 'desc';
const SORT_KEYS: readonly SortKey[] = ['started', 'activity', 'duration', 'id', 'status'];
const DEFAULT_SORT: SortKey = 'started';
/** The direction a first click on a column's header sorts in: times newest (longest) first, names A–Z. */
const FIRST_DIR: Record<SortKey, SortDir> = { started: 'desc', activity: 'desc', duration: 'desc', id: 'asc', status: 'asc' };

/** What the page shows: the search, the filters and the order (the URL's query). */
interface ListView {
  q: string;
  status: string;
  tenant: string;
  sort: SortKey;
  dir: SortDir;
}

/** The view a URL's query asks for (the default for what it does not say or says wrongly). */
function viewOf(search: string): ListView {
  const p = new URLSearchParams(search);
  const sort = SORT_KEYS.find((k) => k === p.get('sort')) ?? DEFAULT_SORT;
  const dir = p.get('dir') === 'asc' ? 'asc' : p.get('dir') === 'desc' ? 'desc' : sort === DEFAULT_SORT ? 'desc' : FIRST_DIR[sort];
  return { q: p.get('q') ?? '', status: p.get('status') ?? '', tenant: p.get('tenant') ?? '', sort, dir };
}

/** Write the view into the address bar (other parameters kept), without a new history entry. */
function writeView(view: ListView): void {
  const p = new URLSearchParams(location.search);
  const set = (k: string, v: string) => (v === '' ? p.delete(k) : p.set(k, v));
  set('q', view.q.trim());
  set('status', view.status);
  set('tenant', view.tenant);
  const isDefault = view.sort === DEFAULT_SORT && view.dir === 'desc';
  set('sort', isDefault ? '' : view.sort);
  set('dir', isDefault ? '' : view.dir);
  const query = p.toString();
  const url = `${location.pathname}${query === '' ? '' : `?${query}`}${location.hash}`;
  if (url !== `${location.pathname}${location.search}${location.hash}`) history.replaceState(history.state, '', url);
}

/**
 * Untrusted text (an intent, a reason) for a one-line cell: line breaks as spaces. Control and
 * bidi-override characters are shown as escapes by dom.ts, as everywhere on the pages.
 */
function plain(text: string): string {
  return text.replace(/[\n\r\t]+/g, ' ');
}

/** A one-line cell holding `text` (cut by the style sheet where it does not fit); the whole text is its span's title. */
function lineCell(cls: string, text: string, title = text): HTMLTableCellElement {
  return el('td', { class: cls }, title === '' ? text : el('span', { title }, text));
}

const pad = (n: number) => String(n).padStart(2, '0');
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** An envelope time, short, in this browser's time zone: "09:41:07" today, "Jun 1 09:41" this year, else "2025-06-01". */
function when(at: string | undefined): string {
  const t = at === undefined ? Number.NaN : Date.parse(at);
  if (!Number.isFinite(t)) return '';
  const d = new Date(t);
  const now = new Date();
  if (d.toDateString() === now.toDateString()) return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  if (d.getFullYear() === now.getFullYear()) return `${MONTHS[d.getMonth()]} ${d.getDate()} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
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

/** From the first record's time to the last's (ms), as the server sorts by it (list-page.ts durationMs). */
function durationMs(inv: ListedInvocation): number | undefined {
  const start = inv.startedAt === undefined ? Number.NaN : Date.parse(inv.startedAt);
  const end = inv.last?.at === undefined ? Number.NaN : Date.parse(inv.last.at);
  return Number.isFinite(start) && Number.isFinite(end) ? Math.max(0, end - start) : undefined;
}

/** A duration, short: "840 ms", "12.4 s", "4 min 05 s", "2 h 14 min", "3 d 4 h". */
function span(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${pad(s % 60)} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${pad(Math.floor((s % 3600) / 60))} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

/** The statuses of a journal that has ended (nothing more is appended to it). */
const ENDED = new Set(['completed', 'failed', 'handed_off', 'cancelled', 'superseded']);

/** The last-activity cell's text: "3 s ago · step.completed". */
function activity(inv: ListedInvocation): string {
  const parts = [inv.last?.at ? age(inv.last.at) : '', inv.last ? inv.last.kind : ''].filter((t) => t !== '');
  return parts.join(' · ');
}

function row(inv: ListedInvocation, verdicts: ListVerdicts): HTMLTableRowElement {
  const why = [inv.problem, inv.reason].filter((t): t is string => typeof t === 'string' && t !== '').map(plain).join('; ');
  const lineage = lineageLines({ forkOf: inv.forkOf ?? null, supersededBy: inv.supersededBy ?? null, links: inv.lineageLinks ?? [] }, { short: true, hash: false });
  const duration = durationMs(inv);
  const open = !ENDED.has(inv.status);
  const statusCell = el('td', { class: 'status-cell' }, statusBadge(inv.status), verdicts.mark(inv), ...lineage);
  const lineageText = lineage.map((l) => l.textContent ?? '').join('; ');
  if (lineageText !== '') statusCell.title = lineageText;
  const tr = el(
    'tr',
    { 'data-id': inv.id, 'data-status': inv.status },
    el('td', { class: 'mono id', title: inv.id }, el('a', { href: invocationHref(inv.id) }, inv.id)),
    lineCell('tenant', plain(inv.tenant)),
    lineCell('intent', plain(inv.intent)),
    statusCell,
    lineCell('started', when(inv.startedAt), inv.startedAt ?? ''),
    lineCell('activity', activity(inv), inv.last ? `${inv.last.kind}${inv.last.at ? ` at ${inv.last.at}` : ''}` : ''),
    lineCell('num duration', duration === undefined ? '' : `${span(duration)}${open ? '+' : ''}`, duration === undefined ? '' : open ? 'from its first record to its last so far (it has not ended)' : 'from its first record to its last'),
    lineCell('num epoch', inv.epoch === undefined ? '' : String(inv.epoch)),
    lineCell('num records', String(inv.records)),
    lineCell('why', why, [why, inv.fix ? `fix: ${plain(inv.fix)}` : ''].filter((t) => t !== '').join('\n')),
  );
  tr.dataset.verdict = verdicts.kindOf(inv);
  verdicts.watch(tr, inv); // checked once it is in view (list-verdicts.ts)
  return tr;
}

/** A drawn row's "… ago", brought up to date (written only when it reads differently now). */
function refreshAge(tr: Element, inv: ListedInvocation): void {
  const shown = tr.querySelector('td.activity span');
  if (!shown) return;
  const now = activity(inv);
  if (shown.textContent !== now) shown.textContent = now;
}

/** `/api/invocations?…`: one page of the list, cut on the server (inspector/list-page.ts). */
interface ListPage {
  rows: ListedInvocation[];
  total: number;
  all: number;
  statuses: string[];
  tenants: string[];
}

/** The table's columns: header text, class, and the key it sorts by (when it does). */
const COLUMNS: Array<{ label: string; cls: string; sort?: SortKey; title?: string }> = [
  { label: 'invocation', cls: 'id', sort: 'id' },
  { label: 'tenant', cls: 'tenant' },
  { label: 'intent', cls: 'intent' },
  { label: 'status', cls: 'status-cell', sort: 'status' },
  { label: 'started', cls: 'started', sort: 'started', title: 'its first record (the writer’s clock)' },
  { label: 'last activity', cls: 'activity', sort: 'activity', title: 'its last record (the writer’s clock) and its kind' },
  { label: 'duration', cls: 'num duration', sort: 'duration', title: 'from its first record to its last; + : it has not ended' },
  { label: 'epoch', cls: 'num epoch' },
  { label: 'records', cls: 'num records' },
  { label: 'why', cls: 'why' },
];

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
  const view = viewOf(location.search);
  const status = el('select', { id: 'filter-status', 'aria-label': 'status' }, option('', 'every status'));
  const tenant = el('select', { id: 'filter-tenant', 'aria-label': 'tenant' }, option('', 'every tenant'));
  // A filter the URL names is an option before the server has said it occurs (it may match nothing).
  if (view.status !== '') addOption(status, view.status, view.status.replace(/_/g, ' '));
  if (view.tenant !== '') addOption(tenant, view.tenant, view.tenant);
  status.value = view.status;
  tenant.value = view.tenant;
  const search = el('input', { id: 'search', type: 'search', placeholder: 'search id or intent', 'aria-label': 'search' });
  search.value = view.q;
  const count = el('span', { class: 'count', 'aria-live': 'polite' });
  const body = el('tbody');
  const headers = COLUMNS.map((c) => {
    const th = el('th', { class: c.cls, scope: 'col', ...(c.title ? { title: c.title } : {}) });
    if (!c.sort) th.textContent = c.label;
    else {
      th.dataset.sort = c.sort;
      const key = c.sort;
      th.appendChild(el('button', { type: 'button', class: 'sort' }, c.label, el('span', { class: 'sort-mark', 'aria-hidden': 'true' })));
      th.querySelector('button')!.addEventListener('click', () => {
        view.dir = view.sort === key ? (view.dir === 'asc' ? 'desc' : 'asc') : FIRST_DIR[key];
        view.sort = key;
        narrowed();
      });
    }
    return th;
  });
  /** aria-sort on the sorted column's header (and a mark beside its name); none on the others. */
  const showSort = () => {
    for (const th of headers) {
      const mark = th.querySelector('.sort-mark');
      if (th.dataset.sort === view.sort) {
        th.setAttribute('aria-sort', view.dir === 'asc' ? 'ascending' : 'descending');
        if (mark) mark.textContent = view.dir === 'asc' ? ' ▲' : ' ▼';
      } else {
        th.removeAttribute('aria-sort');
        if (mark) mark.textContent = '';
      }
    }
  };
  const table = el('table', { class: 'invocations' }, el('thead', {}, el('tr', {}, ...headers)), body);
  // The server filters, searches, sorts and cuts the list (10,000 invocations are not sent to draw
  // 200): the page holds the rows drawn, and asks again when the view or "show more" change.
  let limit = PAGE_ROWS;
  let page: ListPage = { rows: [], total: 0, all: 0, statuses: [], tenants: [] };
  const more = el('button', { type: 'button', class: 'button more', id: 'show-more' }, `show ${PAGE_ROWS} more`);
  const query = () => {
    const p = new URLSearchParams({ limit: String(limit), offset: '0', sort: view.sort, dir: view.dir });
    if (view.status) p.set('status', view.status);
    if (view.tenant) p.set('tenant', view.tenant);
    if (view.q.trim()) p.set('q', view.q.trim());
    return `/api/invocations?${p}`;
  };
  // Ended journals' verdicts, checked in this page after the table is drawn (list-verdicts.ts).
  const verdicts = new ListVerdicts(() => trusted, (id) => {
    const i = page.rows.findIndex((r) => r.id === id);
    const tr = body.querySelector(`tr[data-id="${CSS.escape(id)}"]`);
    if (i >= 0 && tr && !loading) {
      verdicts.forget(tr);
      tr.replaceWith(row(page.rows[i]!, verdicts));
      drawnAs[i] = '';
    }
  });
  /** While the answer to a changed view is awaited: the old rows are gone, and the table says so. */
  let loading = false;
  const showLoading = () => {
    loading = true;
    verdicts.forgetRows();
    table.setAttribute('aria-busy', 'true');
    document.body.dataset.listState = 'loading';
    replace(body, el('tr', { class: 'loading-row' }, el('td', { colspan: String(COLUMNS.length), class: 'empty loading' }, view.q.trim() ? 'searching…' : 'loading…')));
    drawnAs = [];
    count.textContent = view.q.trim() ? 'searching…' : 'loading…';
    more.hidden = true;
  };
  // The listing each drawn row was made from (as JSON): a redraw of the same rows in the same order
  // makes anew only the rows whose listing changed — a live update's, or a reload's that differ —
  // (a busy store redraws often; 200 rows made anew each time was most of what the page cost), and
  // brings the others' ages up to date in place.
  let drawnAs: string[] = [];
  const render = () => {
    if (loading) return; // the rows held are the old view's: not drawn as its results
    const rows = body.children;
    const listed = page.rows.map((inv) => JSON.stringify(inv));
    const sameRows = page.rows.length > 0 && rows.length === page.rows.length && page.rows.every((inv, i) => rows[i]!.getAttribute('data-id') === inv.id);
    if (sameRows) {
      page.rows.forEach((inv, i) => {
        if (drawnAs[i] !== listed[i]) {
          verdicts.forget(rows[i]!);
          rows[i]!.replaceWith(row(inv, verdicts));
        }
        else refreshAge(rows[i]!, inv);
      });
    } else {
      verdicts.forgetRows();
      replace(body, ...page.rows.map((inv) => row(inv, verdicts)));
      if (page.rows.length === 0) body.appendChild(el('tr', {}, el('td', { colspan: String(COLUMNS.length), class: 'empty' }, page.all === 0 ? 'no invocations in this store yet' : 'nothing matches')));
    }
    drawnAs = listed;
    table.removeAttribute('aria-busy');
    document.body.dataset.listState = 'shown';
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
    showSort();
  };
  /** Ask for the page the view describes; an answer to an older question is dropped. */
  let asked = 0;
  const reload = async () => {
    const mine = ++asked;
    let next: ListPage;
    try {
      next = await getJson<ListPage>(query());
    } catch (err) {
      if (mine !== asked) return;
      loading = false;
      verdicts.forgetRows();
      replace(body, el('tr', {}, el('td', { colspan: String(COLUMNS.length) }, failure(err))));
      return;
    }
    if (mine !== asked) return;
    page = next;
    loading = false;
    render();
  };
  const reloadSoon = (() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    return () => {
      clearTimeout(timer);
      timer = setTimeout(() => void reload(), SEARCH_DEBOUNCE_MS);
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
  /** The view changed: into the URL, the old rows away, the new ones asked for. */
  const narrowed = () => {
    view.q = search.value;
    view.status = status.value;
    view.tenant = tenant.value;
    writeView(view);
    showSort();
    limit = PAGE_ROWS;
    ++asked; // an answer already on its way is for the old view: dropped
    showLoading();
    reloadSoon();
  };
  for (const input of [status, tenant]) input.addEventListener('change', narrowed);
  search.addEventListener('input', narrowed);
  replace(root, el('div', { class: 'toolbar' }, search, status, tenant, count), el('div', { class: 'table-frame' }, table), el('p', { class: 'more-row' }, more), drop);
  writeView(view);
  render();
  // The drop panel's modules (zod and @noble above all) take the browser a while to compile: asked
  // for once the table has been painted (a frame, then a task after it), so the table is not held
  // behind them — or after DROP_LATEST_MS, in a tab in the background, which paints no frame.
  let dropAsked = false;
  const askDrop = () => {
    if (dropAsked) return;
    dropAsked = true;
    void loadDrop();
    verdicts.start();
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
      if (!loading) void reload();
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

function option(value: string, label: string): HTMLOptionElement {
  return el('option', { value }, label);
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
