/**
 * The approvals inbox of the viewer's header: the invocations this token may see that wait for a
 * person's decision (awaiting approval, no decision in their inbox yet).
 *
 *   GET /api/inbox    { awaiting: [id, …] }   (the page keeps it live from the socket's changed rows: page/inbox.ts)
 *
 * Ids and nothing else: no intent or reason, so nothing here needs redaction.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JournalStore } from '../journal/store.js';
import { listInvocations, type InvocationSummary } from '../runtime/list.js';
import { requestScope, visibleRows } from './access.js';
import { reply } from './write-checks.js';

/** Whether a row waits for a person's decision (what the inbox counts). */
export function awaitsDecision(row: Pick<InvocationSummary, 'status' | 'decided'>): boolean {
  return row.status === 'awaiting_approval' && row.decided !== true;
}

/** Answer `GET /api/inbox`; false for any other request. */
export async function inboxRoute(store: JournalStore, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  if (url.pathname !== '/api/inbox' || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  const scope = requestScope(req);
  const rows = visibleRows(scope, await listInvocations(store, { ...(scope.kind === 'tenant' ? { tenant: scope.tenant } : {}), status: 'awaiting_approval' }));
  reply(res, 200, { awaiting: rows.filter(awaitsDecision).map((r) => r.id).sort() });
  return true;
}
