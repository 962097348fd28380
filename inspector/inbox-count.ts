/**
 * The approvals inbox of the viewer's header: the invocations this token may see that wait for a
 * person's decision (awaiting approval, no decision in their inbox yet).
 *
 *   GET /api/inbox    { awaiting: [id, …] }   (the page keeps it live from the socket's changed rows: page/inbox.ts)
 *
 * Cut from the viewer's listing (listing.ts `rows`), never a listing of the store per request.
 * Ids and nothing else: no intent or reason, so nothing here needs redaction.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InvocationSummary } from '../runtime/list.js';
import { requestScope, visibleRows } from './access.js';
import { reply } from './write-checks.js';

/** Whether a row waits for a person's decision (what the inbox counts). */
export function awaitsDecision(row: Pick<InvocationSummary, 'status' | 'decided'>): boolean {
  return row.status === 'awaiting_approval' && row.decided !== true;
}

/** Answer `GET /api/inbox`; false for any other request. */
export async function inboxRoute(listed: () => Promise<readonly InvocationSummary[]>, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  if (url.pathname !== '/api/inbox' || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  const scope = requestScope(req);
  const rows = visibleRows(scope, (await listed()).filter((r) => r.status === 'awaiting_approval'));
  reply(res, 200, { awaiting: rows.filter(awaitsDecision).map((r) => r.id).sort() });
  return true;
}
