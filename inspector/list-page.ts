/**
 * One page of the invocations list, cut on the server
 * (`GET /api/invocations?limit=&offset=&q=&status=&tenant=&sort=&dir=`): a store of 10,000
 * invocations must not send 10,000 rows to draw 200. The filters and the search (id and intent,
 * case-insensitive) apply to every invocation the token may see, and the order is the whole list's:
 * by `sort` — `started` (the default), `activity` (the last record's time), `duration` (from the
 * first record's time to the last's), `id` or `status` — in `dir` (`desc`, newest first, by
 * default; `asc`). Rows that lack the time sorted on go last either way; ties go by id, in the same
 * direction. The answer says how many match and how many there are, which statuses and tenants
 * occur (for the filters), and the order it applied. Pure: rows in, a page out. The viewer cuts its
 * pages from a listing kept in order as the store changes (list-order.ts, listing.ts); `listPage`
 * is the same answer from an array, the reference that listing is tested against.
 */
import type { InvocationSummary } from '../runtime/list.js';

export const SORT_KEYS = ['started', 'activity', 'duration', 'id', 'status'] as const;
export type SortKey = (typeof SORT_KEYS)[number];
export type SortDir = 'asc' | 'desc';

export interface ListQuery {
  limit: number;
  offset: number;
  q: string;
  status: string;
  tenant: string;
  sort: SortKey;
  dir: SortDir;
}

export interface ListPage {
  rows: InvocationSummary[];
  /** Rows matching the filters and the search. */
  total: number;
  /** Rows in all (that the token may see). */
  all: number;
  statuses: string[];
  tenants: string[];
  /** The order applied (what was asked, or the default for what was not or was not understood). */
  sort: SortKey;
  dir: SortDir;
}

/** The largest page asked for at once. */
export const MAX_PAGE_ROWS = 1_000;

/** The query a URL asks for, or undefined when it asks for none (then the whole list, as an array). */
export function listQueryOf(params: URLSearchParams): ListQuery | undefined {
  if (!['limit', 'offset', 'q', 'status', 'tenant', 'sort', 'dir'].some((k) => params.has(k))) return undefined;
  const int = (k: string, fallback: number, max: number) => {
    const n = Number(params.get(k) ?? fallback);
    return Number.isSafeInteger(n) && n >= 0 ? Math.min(n, max) : fallback;
  };
  const sort = SORT_KEYS.find((k) => k === params.get('sort')) ?? 'started';
  const dir: SortDir = params.get('dir') === 'asc' ? 'asc' : 'desc';
  return { limit: int('limit', 200, MAX_PAGE_ROWS), offset: int('offset', 0, Number.MAX_SAFE_INTEGER), q: (params.get('q') ?? '').trim().toLowerCase(), status: params.get('status') ?? '', tenant: params.get('tenant') ?? '', sort, dir };
}

/** An envelope time as ms since the epoch, or undefined when it is absent or not a time. */
function timeOf(at: string | undefined): number | undefined {
  if (at === undefined) return undefined;
  const ms = Date.parse(at);
  return Number.isFinite(ms) ? ms : undefined;
}

/** How long a row's journal spans: its last record's time less its first's (ms), when both are known. */
export function durationMs(row: Pick<InvocationSummary, 'startedAt' | 'last'>): number | undefined {
  const start = timeOf(row.startedAt);
  const end = timeOf(row.last?.at);
  return start === undefined || end === undefined ? undefined : Math.max(0, end - start);
}

/** The value a row is sorted by (computed once per row, not per comparison). */
export function keyOf(row: InvocationSummary, sort: SortKey): number | string | undefined {
  switch (sort) {
    case 'started':
      return timeOf(row.startedAt);
    case 'activity':
      return timeOf(row.last?.at);
    case 'duration':
      return durationMs(row);
    case 'status':
      return row.status;
    case 'id':
      return row.id;
  }
}

/** The rows in the order asked for (a new array). */
export function sortRows(rows: readonly InvocationSummary[], sort: SortKey, dir: SortDir): InvocationSummary[] {
  const sign = dir === 'asc' ? 1 : -1;
  const keyed = rows.map((row) => ({ row, key: keyOf(row, sort) }));
  const byId = (a: InvocationSummary, b: InvocationSummary) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  keyed.sort((a, b) => {
    if (a.key === undefined || b.key === undefined) {
      if (a.key !== b.key) return a.key === undefined ? 1 : -1; // the unknown last, either way
    } else if (a.key !== b.key) return (a.key < b.key ? -1 : 1) * sign;
    return byId(a.row, b.row) * sign;
  });
  return keyed.map((k) => k.row);
}

export function listPage(rows: readonly InvocationSummary[], query: ListQuery): ListPage {
  const matching = rows.filter(
    (r) => (query.status === '' || r.status === query.status) && (query.tenant === '' || r.tenant === query.tenant) && (query.q === '' || r.id.toLowerCase().includes(query.q) || r.intent.toLowerCase().includes(query.q)),
  );
  return {
    rows: sortRows(matching, query.sort, query.dir).slice(query.offset, query.offset + query.limit),
    total: matching.length,
    all: rows.length,
    statuses: [...new Set(rows.map((r) => r.status))].sort(),
    tenants: [...new Set(rows.map((r) => r.tenant))].sort(),
    sort: query.sort,
    dir: query.dir,
  };
}
