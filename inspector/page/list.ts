/**
 * The invocations page (`/`): every invocation in the store as a table — id (linking to its page),
 * tenant, intent (cut), status, epoch, records, the last record's kind and age, and why a suspended
 * or damaged one is so — with filters by
 * status and tenant and a search box over id and intent, applied in the page. The rows come from
 * `/api/invocations` (runtime/list.ts `listInvocations`).
 */
import { cut, el, failure, getJson, invocationHref, replace, statusBadge, showWhere } from './dom.js';
import { followList } from './live.js';
import type { ListedInvocation, TrustedKey } from './wire.js';

const root = document.getElementById('app')!;
/** Rows drawn at once (and per "show more"). */
const PAGE_ROWS = 200;
/** The list is redrawn at most this often while rows change. */
const REDRAW_MS = 250;

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

function row(inv: ListedInvocation): HTMLTableRowElement {
  const why = [inv.problem, inv.reason].filter((t): t is string => typeof t === 'string' && t !== '').join('; ');
  return el(
    'tr',
    { 'data-id': inv.id, 'data-status': inv.status },
    el('td', { class: 'mono id' }, el('a', { href: invocationHref(inv.id) }, inv.id)),
    el('td', {}, cut(inv.tenant, 24)),
    el('td', { class: 'intent' }, cut(inv.intent, 80)),
    el('td', {}, statusBadge(inv.status)),
    el('td', { class: 'num' }, inv.epoch ?? ''),
    el('td', { class: 'num' }, inv.records),
    el('td', { class: 'last' }, inv.last ? el('span', { class: 'mono' }, inv.last.kind) : '', inv.last?.at ? el('div', { class: 'age', title: inv.last.at }, age(inv.last.at)) : null),
    el('td', { class: 'why' }, why === '' ? '' : cut(why, 140), inv.fix ? el('div', { class: 'fix mono' }, cut(inv.fix, 140)) : null),
  );
}

async function main(): Promise<void> {
  let rows: ListedInvocation[];
  let trusted: TrustedKey | null = null;
  // The drop panel verifies files with the journal code, zod and @noble: loaded after the table is
  // drawn, so the table waits for none of it.
  const drop = el('div', { id: 'drop-slot' });
  const loadDrop = () =>
    import('./drop.js').then(
      ({ dropPanel }) => drop.replaceWith(dropPanel(() => trusted)),
      (err: unknown) => drop.replaceWith(failure(err)),
    );
  try {
    [rows, trusted] = await Promise.all([getJson<ListedInvocation[]>('/api/invocations'), getJson<TrustedKey | null>('/api/trusted-key')]);
  } catch (err) {
    replace(root, failure(err), drop);
    void loadDrop();
    return;
  }
  const statuses = [...new Set(rows.map((r) => r.status))].sort();
  const tenants = [...new Set(rows.map((r) => r.tenant))].sort();
  const status = el('select', { id: 'filter-status', 'aria-label': 'status' }, option('', 'every status'), ...statuses.map((s) => option(s, s.replace(/_/g, ' '))));
  const tenant = el('select', { id: 'filter-tenant', 'aria-label': 'tenant' }, option('', 'every tenant'), ...tenants.map((t) => option(t, t)));
  const search = el('input', { id: 'search', type: 'search', placeholder: 'search id or intent', 'aria-label': 'search' });
  const count = el('span', { class: 'count' });
  const body = el('tbody');
  const table = el(
    'table',
    { class: 'invocations' },
    el('thead', {}, el('tr', {}, el('th', {}, 'invocation'), el('th', {}, 'tenant'), el('th', {}, 'intent'), el('th', {}, 'status'), el('th', { class: 'num' }, 'epoch'), el('th', { class: 'num' }, 'records'), el('th', {}, 'last record'), el('th', {}, 'why'))),
    body,
  );
  // At most `limit` rows are drawn (10,000 invocations would be 10,000 table rows): the search and
  // the filters narrow them, "show more" draws the next ones.
  let limit = PAGE_ROWS;
  const more = el('button', { type: 'button', class: 'button more', id: 'show-more' }, `show ${PAGE_ROWS} more`);
  more.addEventListener('click', () => ((limit += PAGE_ROWS), render()));
  const render = () => {
    const wantStatus = status.value;
    const wantTenant = tenant.value;
    const words = search.value.trim().toLowerCase();
    const shown = rows.filter(
      (r) => (wantStatus === '' || r.status === wantStatus) && (wantTenant === '' || r.tenant === wantTenant) && (words === '' || r.id.toLowerCase().includes(words) || r.intent.toLowerCase().includes(words)),
    );
    replace(body, ...shown.slice(0, limit).map(row));
    if (shown.length === 0) body.appendChild(el('tr', {}, el('td', { colspan: '8', class: 'empty' }, rows.length === 0 ? 'no invocations in this store yet' : 'nothing matches')));
    const drawn = Math.min(limit, shown.length);
    count.textContent =
      shown.length === rows.length && drawn === shown.length
        ? `${rows.length} invocation${rows.length === 1 ? '' : 's'}`
        : drawn < shown.length
          ? `showing ${drawn} of ${shown.length}${shown.length === rows.length ? '' : ` matching (${rows.length} in all)`}`
          : `${shown.length} of ${rows.length}`;
    more.hidden = drawn >= shown.length;
  };
  const narrowed = () => ((limit = PAGE_ROWS), render());
  for (const input of [status, tenant]) input.addEventListener('change', narrowed);
  search.addEventListener('input', narrowed);
  replace(root, el('div', { class: 'toolbar' }, search, status, tenant, count), table, el('p', { class: 'more-row' }, more), drop);
  render();
  void loadDrop();
  // Changed rows arrive over the WebSocket (live.ts): kept at once, drawn at most every REDRAW_MS
  // (a person reads a list a few times a second at most; a busy store changes hundreds of rows a second).
  const at = new Map(rows.map((r, i) => [r.id, i]));
  let drawing = false;
  followList((changed) => {
    const i = at.get(changed.id);
    if (i === undefined) at.set(changed.id, rows.push(changed) - 1);
    else rows[i] = changed;
    addOption(status, changed.status, changed.status.replace(/_/g, ' '));
    addOption(tenant, changed.tenant, changed.tenant);
    if (drawing) return;
    drawing = true;
    setTimeout(() => requestAnimationFrame(() => ((drawing = false), render())), REDRAW_MS);
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
