/**
 * One page of the invocations list, cut on the server (`GET /api/invocations?limit=&offset=&q=&status=&tenant=`):
 * a store of 10,000 invocations must not send 10,000 rows to draw 200. The filters and the search
 * (id and intent, case-insensitive) apply to every invocation the token may see; the answer says
 * how many match and how many there are, and which statuses and tenants occur (for the filters).
 * Pure: rows in, a page out.
 */
import type { InvocationSummary } from '../runtime/list.js';

export interface ListQuery {
  limit: number;
  offset: number;
  q: string;
  status: string;
  tenant: string;
}

export interface ListPage {
  rows: InvocationSummary[];
  /** Rows matching the filters and the search. */
  total: number;
  /** Rows in all (that the token may see). */
  all: number;
  statuses: string[];
  tenants: string[];
}

/** The largest page asked for at once. */
export const MAX_PAGE_ROWS = 1_000;

/** The query a URL asks for, or undefined when it asks for none (then the whole list, as an array). */
export function listQueryOf(params: URLSearchParams): ListQuery | undefined {
  if (!['limit', 'offset', 'q', 'status', 'tenant'].some((k) => params.has(k))) return undefined;
  const int = (k: string, fallback: number, max: number) => {
    const n = Number(params.get(k) ?? fallback);
    return Number.isSafeInteger(n) && n >= 0 ? Math.min(n, max) : fallback;
  };
  return { limit: int('limit', 200, MAX_PAGE_ROWS), offset: int('offset', 0, Number.MAX_SAFE_INTEGER), q: (params.get('q') ?? '').trim().toLowerCase(), status: params.get('status') ?? '', tenant: params.get('tenant') ?? '' };
}

export function listPage(rows: readonly InvocationSummary[], query: ListQuery): ListPage {
  const matching = rows.filter(
    (r) => (query.status === '' || r.status === query.status) && (query.tenant === '' || r.tenant === query.tenant) && (query.q === '' || r.id.toLowerCase().includes(query.q) || r.intent.toLowerCase().includes(query.q)),
  );
  return {
    rows: matching.slice(query.offset, query.offset + query.limit),
    total: matching.length,
    all: rows.length,
    statuses: [...new Set(rows.map((r) => r.status))].sort(),
    tenants: [...new Set(rows.map((r) => r.tenant))].sort(),
  };
}
