/**
 * Cancel, Resume and Fork from the viewer's invocation page (page/actions.ts draws them), beside
 * Approve and Reject (approve.ts). Each is a request, written as the CLI writes it:
 *
 * - **cancel** — a `cancel` message in the invocation's inbox, as the client's `cancel` writes it
 *   (runtime/cancel-request.ts requestCancel): the live runtime holding it sees it before its next
 *   step; resting, `weft serve` (or the next `weft resume`) stops it and records `cancel.requested`
 *   naming who asked. A cancel already waiting is kept.
 * - **resume** — a `resume` message in the inbox of a hibernated or suspended invocation
 *   (journal/store.ts ResumeMessage): left to `weft serve`, as a decision is (runtime/serve.ts, why
 *   `resume`), or to a later `weft resume`; the resume clears it.
 * - **fork** — a new invocation from the end of an epoch the parent closed, made exactly as
 *   `weft fork <id> --at-epoch N` makes it (runtime.fork), then run by this viewer; the parent, if it
 *   had not ended, ends superseded with a reason naming who asked. The answer names the fork, and
 *   the page links to it.
 *
 *   GET  /api/actions                            what the page may do: { readOnly, by, cancel, resume, fork }
 *   POST /api/invocations/<id>/cancel            { by?, reason? }
 *   POST /api/invocations/<id>/resume            { by?, reason? }
 *   POST /api/invocations/<id>/fork              { by?, reason?, atEpoch }
 *
 * Every POST passes the checks every write from the page passes (write-checks.ts: this viewer's
 * Origin, a JSON body of at most 8 KiB) after server.ts's Host, token and tenant checks. Who asked
 * is recorded as the name typed in the page with this viewer's identity (`inspect:<host>:<pid>`),
 * or the identity alone. A viewer started with `--read-only` offers none of them and refuses each
 * with a 403 naming the flag (approve stays its only action).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isWeftError } from '../journal/errors.js';
import { reply, writeRequest } from './write-checks.js';

export type PageAction = 'cancel' | 'resume' | 'fork';
export const PAGE_ACTIONS: readonly PageAction[] = ['cancel', 'resume', 'fork'];

/** What a page asks, validated: who (as recorded), why, and for a fork the epoch. */
export interface ActionRequest {
  by: string;
  reason: string;
  atEpoch?: number;
}

/** What was done: whether a request was written (false: one already waited), what the page says, and a fork's id. */
export interface ActionOutcome {
  requested: boolean;
  said: string;
  fork?: string;
}

/** What `weft inspect` gives the server to act on the page's requests (cli/inspect-actions.ts builds it). */
export interface PageActions {
  /** `--read-only`: none of these actions is offered or taken. */
  readOnly: boolean;
  /** This viewer, as recorded beside the name typed in the page: `inspect:<host>:<pid>`. */
  identity: string;
  /** Per action: whether this viewer can take it; when not, why (the page shows the CLI command). */
  available: Record<PageAction, { ok: true } | { ok: false; reason: string }>;
  act(action: PageAction, id: string, request: ActionRequest): Promise<ActionOutcome>;
}

const MAX_BY = 200;
const MAX_REASON = 2000;
const READ_ONLY = 'this viewer was started with --read-only: approve is its only action';

/** The request a body holds (`by` joined with the viewer's identity), or the one line that says what is wrong with it. */
export function parseActionRequest(action: PageAction, body: unknown, identity: string): ActionRequest | { error: string } {
  const shape = `{ "by"?: NAME, "reason"?: TEXT${action === 'fork' ? ', "atEpoch": N' : ''} }`;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { error: `the body must be a JSON object: ${shape}` };
  const { by, reason, atEpoch, ...rest } = body as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length || (action !== 'fork' && atEpoch !== undefined)) return { error: `unknown field ${JSON.stringify(extra[0] ?? 'atEpoch')}: a ${action} takes ${shape}` };
  if (by !== undefined && typeof by !== 'string') return { error: 'by must be text (who asks)' };
  if (typeof by === 'string' && by.length > MAX_BY) return { error: `by must be at most ${MAX_BY} characters` };
  if (reason !== undefined && typeof reason !== 'string') return { error: 'reason must be text' };
  if (typeof reason === 'string' && reason.length > MAX_REASON) return { error: `reason must be at most ${MAX_REASON} characters` };
  if (action === 'fork' && !(typeof atEpoch === 'number' && Number.isInteger(atEpoch) && atEpoch >= 1)) return { error: 'atEpoch must be the number of an epoch the invocation closed (1, 2, …)' };
  const name = typeof by === 'string' ? by.trim() : '';
  return { by: name === '' ? identity : `${name} (${identity})`, reason: typeof reason === 'string' ? reason.trim() : '', ...(action === 'fork' ? { atEpoch: atEpoch as number } : {}) };
}

/** What `GET /api/actions` answers: per action, enabled or why not. */
export function actionsOffered(actions: PageActions | undefined) {
  const one = (action: PageAction) => {
    if (actions === undefined) return { enabled: false, reason: 'this viewer was started without a store it may write' };
    if (actions.readOnly) return { enabled: false, reason: READ_ONLY };
    const a = actions.available[action];
    return a.ok ? { enabled: true, reason: null } : { enabled: false, reason: a.reason };
  };
  return { readOnly: actions?.readOnly ?? false, by: actions?.identity ?? null, cancel: one('cancel'), resume: one('resume'), fork: one('fork') };
}

/**
 * Answer the action routes; false when the request is for none of them (server.ts goes on).
 * Called after server.ts's Host, token and tenant checks.
 */
export async function pageActionRoute(actions: PageActions | undefined, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  if (url.pathname === '/api/actions' && (req.method === 'GET' || req.method === 'HEAD')) {
    reply(res, 200, actionsOffered(actions));
    return true;
  }
  const m = /^\/api\/invocations\/([^/]+)\/(cancel|resume|fork)$/.exec(url.pathname);
  if (!m) return false;
  const action = m[2] as PageAction;
  // A read-only viewer has no such action: refused before anything is read.
  if (actions?.readOnly) {
    reply(res, 403, { error: `${READ_ONLY}; run weft ${action} instead`, code: 'inspect.read_only' });
    return true;
  }
  const request = await writeRequest(req, res, m[1]!, `a ${action}`, `{ "by"?: NAME, "reason"?: TEXT${action === 'fork' ? ', "atEpoch": N' : ''} }`);
  if (!request) return true;
  const parsed = parseActionRequest(action, request.body, actions?.identity ?? 'inspect');
  if ('error' in parsed) {
    reply(res, 400, { error: parsed.error });
    return true;
  }
  const available = actions?.available[action];
  if (actions === undefined || !available?.ok) {
    reply(res, 409, { error: `this viewer does not ${action}${available && !available.ok ? `: ${available.reason}` : ''}; run weft ${action} instead` });
    return true;
  }
  try {
    reply(res, 200, { ok: true, ...(await actions.act(action, request.id, parsed)) });
  } catch (err) {
    // The page shows the reason whatever it is (a domain that cannot be loaded for a fork is not a WeftError).
    if (!isWeftError(err)) return reply(res, 500, { error: err instanceof Error ? err.message : String(err) }), true;
    const status = err.code === 'invocation.not_found' ? 404 : err.code === 'runtime.bad_invocation_id' ? 400 : 409;
    reply(res, status, { error: err.message, code: err.code });
  }
  return true;
}
