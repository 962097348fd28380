/**
 * The invocations list held in every order the page sorts by, kept in order row by row: a page of
 * it (`/api/invocations?…`, list-page.ts) is cut from the order asked for, never sorted or listed
 * anew per request. Each sort key has its own order — the rows whose key is known, sorted by
 * (key, id), and those whose key is unknown, by id — made the first time a page asks for that key,
 * then kept: a changed row is taken out of each order by binary search and put back where its new
 * key goes (no re-sort; 100,000 rows cost a page the rows it returns, or one pass when it filters
 * or searches).
 *
 * It answers exactly as list-page.ts `listPage` does over the same rows: the same order (ties by
 * id in the same direction, unknown keys last either way), filters, search, counts and the
 * statuses and tenants that occur. Pure: rows in, pages out; the effects (the store, its change
 * feed) are listing.ts's.
 */
import type { InvocationSummary } from '../runtime/list.js';
import { keyOf, type ListPage, type ListQuery, type SortKey } from './list-page.js';

type Key = number | string;

/** One sort key's order: the rows with a key, by (key, id) ascending; those without, by id ascending. */
interface Order {
  known: Array<{ key: Key; id: string }>;
  unknown: string[];
}

const before = (a: { key: Key; id: string }, b: { key: Key; id: string }) => (a.key !== b.key ? a.key < b.key : a.id < b.id);

/** The index at which `item` is (or would go) in `sorted`, by `less`. */
function bisect<T>(sorted: readonly T[], item: T, less: (a: T, b: T) => boolean): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (less(sorted[mid]!, item)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const idLess = (a: string, b: string) => a < b;

/** A row as held: the listing's row, what a search looks in (lower case), and the key it is kept under in each order made. */
interface Held {
  row: InvocationSummary;
  haystack: string;
  keys: Map<SortKey, Key | undefined>;
}

export class ListOrder {
  private readonly held = new Map<string, Held>();
  private readonly orders = new Map<SortKey, Order>();
  private readonly statusCount = new Map<string, number>();
  private readonly tenantCount = new Map<string, number>();

  /** A listing of `rows` (any order). */
  constructor(rows: Iterable<InvocationSummary> = []) {
    for (const row of rows) this.put(row);
  }

  get size(): number {
    return this.held.size;
  }

  /** Every row held, by id (what the inbox count and the lineage tree read: inbox-count.ts, lineage-tree.ts). */
  rows(): InvocationSummary[] {
    return [...this.held.values()].map((h) => h.row).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** The row held for `id`. */
  get(id: string): InvocationSummary | undefined {
    return this.held.get(id)?.row;
  }

  /** Put a new or changed row (in place of the one held under its id, if any). */
  put(row: InvocationSummary): void {
    const old = this.held.get(row.id);
    if (old) this.take(old);
    const held: Held = { row, haystack: `${row.id}\u0000${row.intent}`.toLowerCase(), keys: new Map() };
    this.held.set(row.id, held);
    count(this.statusCount, row.status, 1);
    count(this.tenantCount, row.tenant, 1);
    for (const [sort, order] of this.orders) this.place(order, held, sort);
  }

  /** Take `id`'s row out (an invocation no longer in the store). */
  remove(id: string): void {
    const old = this.held.get(id);
    if (old) this.take(old);
    this.held.delete(id);
  }

  private take(old: Held): void {
    count(this.statusCount, old.row.status, -1);
    count(this.tenantCount, old.row.tenant, -1);
    for (const [sort, order] of this.orders) {
      const key = old.keys.get(sort);
      if (key === undefined) {
        const i = bisect(order.unknown, old.row.id, idLess);
        if (order.unknown[i] === old.row.id) order.unknown.splice(i, 1);
      } else {
        const item = { key, id: old.row.id };
        const i = bisect(order.known, item, before);
        if (order.known[i]?.id === old.row.id) order.known.splice(i, 1);
      }
    }
  }

  private place(order: Order, held: Held, sort: SortKey): void {
    const key = keyOf(held.row, sort);
    held.keys.set(sort, key);
    if (key === undefined) order.unknown.splice(bisect(order.unknown, held.row.id, idLess), 0, held.row.id);
    else {
      const item = { key, id: held.row.id };
      order.known.splice(bisect(order.known, item, before), 0, item);
    }
  }

  /** `sort`'s order, made once (one sort of every row) and kept from then on. */
  private orderOf(sort: SortKey): Order {
    let order = this.orders.get(sort);
    if (order) return order;
    order = { known: [], unknown: [] };
    for (const held of this.held.values()) {
      const key = keyOf(held.row, sort);
      held.keys.set(sort, key);
      if (key === undefined) order.unknown.push(held.row.id);
      else order.known.push({ key, id: held.row.id });
    }
    order.known.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
    order.unknown.sort();
    this.orders.set(sort, order);
    return order;
  }

  /** The ids in the order asked for: known keys in `dir`, then the unknown, by id in `dir`. */
  private *ids(sort: SortKey, dir: 'asc' | 'desc'): Generator<string> {
    const { known, unknown } = this.orderOf(sort);
    if (dir === 'asc') {
      for (const item of known) yield item.id;
      yield* unknown;
    } else {
      for (let i = known.length - 1; i >= 0; i--) yield known[i]!.id;
      for (let i = unknown.length - 1; i >= 0; i--) yield unknown[i]!;
    }
  }

  /**
   * One page, as list-page.ts `listPage` gives it over the same rows; `tenant` (a tenant's scope)
   * first narrows the rows to that tenant's, as if the others were not held.
   */
  page(query: ListQuery, scopeTenant?: string): ListPage {
    const filtered = query.status !== '' || query.tenant !== '' || query.q !== '' || scopeTenant !== undefined;
    const rows: InvocationSummary[] = [];
    const end = query.offset + query.limit;
    if (!filtered) {
      // No filter: the page is a slice of the order, and every count is kept.
      const { known, unknown } = this.orderOf(query.sort);
      const n = known.length + unknown.length;
      // asc: the known keys, then the unknown; desc: the known keys backwards, then the unknown backwards
      const asc = (i: number) => (i < known.length ? known[i]!.id : unknown[i - known.length]!);
      const desc = (i: number) => (i < known.length ? known[known.length - 1 - i]!.id : unknown[unknown.length - 1 - (i - known.length)]!);
      for (let i = query.offset; i < Math.min(end, n); i++) rows.push(this.held.get(query.dir === 'asc' ? asc(i) : desc(i))!.row);
      return { rows, total: n, all: n, statuses: present(this.statusCount), tenants: present(this.tenantCount), sort: query.sort, dir: query.dir };
    }
    let total = 0;
    let all = 0;
    const statuses = new Set<string>();
    const tenants = new Set<string>();
    for (const id of this.ids(query.sort, query.dir)) {
      const held = this.held.get(id)!;
      const row = held.row;
      if (scopeTenant !== undefined && row.tenant !== scopeTenant) continue;
      all++;
      statuses.add(row.status);
      tenants.add(row.tenant);
      if ((query.status !== '' && row.status !== query.status) || (query.tenant !== '' && row.tenant !== query.tenant) || (query.q !== '' && !held.haystack.includes(query.q))) continue;
      if (total >= query.offset && total < end) rows.push(row);
      total++;
    }
    return { rows, total, all, statuses: [...statuses].sort(), tenants: [...tenants].sort(), sort: query.sort, dir: query.dir };
  }
}

function count(counts: Map<string, number>, value: string, by: number): void {
  const n = (counts.get(value) ?? 0) + by;
  if (n <= 0) counts.delete(value);
  else counts.set(value, n);
}

function present(counts: Map<string, number>): string[] {
  return [...counts.keys()].sort();
}
