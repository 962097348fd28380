/**
 * The list held in order (inspector/list-order.ts) gives every page the viewer asks for exactly as
 * the whole listing, sorted and cut (list-page.ts listPage), would — for each sort key and
 * direction, with filters, a search and a tenant's scope — and goes on doing so as rows change
 * (a run's last activity moves, its status ends, a new run starts, one is moved aside), which is
 * what lets the viewer answer a page without listing the store again.
 */
import { describe, expect, test } from 'vitest';
import { ListOrder } from '../inspector/list-order.js';
import { listPage, SORT_KEYS, type ListQuery } from '../inspector/list-page.js';
import type { InvocationSummary } from '../runtime/list.js';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1) + s * 1000).toISOString();

/** Row i: started i s in, last active (i * 7 % 13) s later; a few with no times, ties on purpose. */
function rowOf(i: number, statusShift = 0): InvocationSummary {
  const statuses = ['completed', 'running', 'failed', 'suspended'] as const;
  const timed = i % 11 !== 5;
  return {
    id: `inv-${String(i).padStart(4, '0')}`,
    tenant: `t${i % 3}`,
    intent: i % 4 === 0 ? `Book a Trip ${i}` : `move files ${i}`,
    records: 10 + (i % 5),
    status: statuses[(i + statusShift) % statuses.length]!,
    ...(timed ? { startedAt: at(Math.floor(i / 2)), last: { kind: 'step.completed', at: at(Math.floor(i / 2) + ((i * 7) % 13)) } } : {}),
  };
}

const queries = (): ListQuery[] => {
  const out: ListQuery[] = [];
  for (const sort of SORT_KEYS) {
    for (const dir of ['asc', 'desc'] as const) {
      out.push({ limit: 25, offset: 0, q: '', status: '', tenant: '', sort, dir });
      out.push({ limit: 10, offset: 30, q: '', status: '', tenant: '', sort, dir });
      out.push({ limit: 200, offset: 0, q: 'trip', status: '', tenant: 't1', sort, dir });
      out.push({ limit: 5, offset: 3, q: '', status: 'running', tenant: '', sort, dir });
    }
  }
  return out;
};

function expectSame(order: ListOrder, rows: InvocationSummary[]): void {
  for (const query of queries()) {
    expect(order.page(query), JSON.stringify(query)).toEqual(listPage(rows, query));
    const t2 = rows.filter((r) => r.tenant === 't2');
    expect(order.page(query, 't2'), `t2 ${JSON.stringify(query)}`).toEqual(listPage(t2, query));
  }
}

describe('the list held in order', () => {
  test('every page is the whole listing sorted and cut, before and after rows change', () => {
    let rows = Array.from({ length: 120 }, (_, i) => rowOf(i));
    const order = new ListOrder(rows);
    expectSame(order, rows);
    // Rows change after each order was made: new activity, an ending, a new run, one moved aside.
    const changed = rows.map((r, i) => (i % 9 === 0 ? { ...rowOf(i, 1), last: { kind: 'invocation.sealed', at: at(500 + i) } } : r));
    for (const r of changed.filter((r, i) => r !== rows[i])) order.put(r);
    const added = [rowOf(300), rowOf(301)];
    for (const r of added) order.put(r);
    order.remove('inv-0007');
    rows = [...changed, ...added].filter((r) => r.id !== 'inv-0007');
    expect(order.size).toBe(rows.length);
    expectSame(order, rows);
  });
});
