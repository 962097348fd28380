/**
 * A fork's lineage as a tree, for the invocation page (page/lineage-tree.ts draws it): from the
 * oldest ancestor this token may see, every fork below it, each node with its status and the epoch
 * it was forked at — where lineage-links.ts gives a row's two text links.
 *
 *   GET /api/invocations/<id>/lineage   { root: LineageNode | null, of: id }   (null: no fork in its lineage)
 *
 * Built from the viewer's listing (listing.ts `rows`: no listing of the store per request), the rows the request's scope may see (`visibleRows`): an invocation of another
 * tenant is not in the tree, so every node is one the page may link. Ids, statuses and epochs only
 * (nothing to redact). A lineage with a cycle (a damaged journal naming a descendant as its parent)
 * is cut where it repeats; the tree is cut at MAX_NODES.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InvocationSummary } from '../runtime/list.js';
import { requestScope, visibleRows } from './access.js';
import { reply } from './write-checks.js';

export interface LineageNode {
  id: string;
  status: string;
  /** The parent's epoch this fork goes on from (none for the root). */
  atEpoch: number | null;
  children: LineageNode[];
}

export const MAX_NODES = 200;

type Row = Pick<InvocationSummary, 'id' | 'status' | 'forkOf'>;

/** The tree of `id`'s lineage among `rows`, or null when it has neither parent nor fork there. Pure. */
export function lineageTree(rows: readonly Row[], id: string): LineageNode | null {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const children = new Map<string, Row[]>();
  for (const r of rows) {
    const parent = r.forkOf?.parent;
    if (parent === undefined || !byId.has(parent)) continue;
    const list = children.get(parent) ?? [];
    list.push(r);
    children.set(parent, list);
  }
  if (!byId.has(id)) return null;
  // Up to the oldest ancestor shown.
  let top = id;
  const seen = new Set([top]);
  for (;;) {
    const parent = byId.get(top)?.forkOf?.parent;
    if (parent === undefined || !byId.has(parent) || seen.has(parent)) break;
    seen.add(parent);
    top = parent;
  }
  if (top === id && !children.has(id)) return null;
  let count = 0;
  const placed = new Set<string>();
  const build = (row: Row): LineageNode => {
    placed.add(row.id);
    count++;
    const kids = (children.get(row.id) ?? [])
      .filter((c) => !placed.has(c.id))
      .sort((a, b) => (a.forkOf!.atEpoch - b.forkOf!.atEpoch) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const out: LineageNode[] = [];
    for (const kid of kids) if (count < MAX_NODES && !placed.has(kid.id)) out.push(build(kid));
    return { id: row.id, status: row.status, atEpoch: row.forkOf?.atEpoch ?? null, children: out };
  };
  return build(byId.get(top)!);
}

/** Answer `GET /api/invocations/<id>/lineage` (server.ts has checked the id against the scope); false for any other request. */
export async function lineageTreeRoute(listed: () => Promise<readonly InvocationSummary[]>, req: IncomingMessage, res: ServerResponse, url: URL, id: string | undefined): Promise<boolean> {
  if (id === undefined || !/^\/api\/invocations\/[^/]+\/lineage$/.test(url.pathname) || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  const scope = requestScope(req);
  const rows = visibleRows(scope, await listed());
  reply(res, 200, { of: id, root: lineageTree(rows, id) });
  return true;
}
