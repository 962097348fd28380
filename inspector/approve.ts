/**
 * Approvals from the viewer's page: a person's decision on an epoch awaiting approval, written to
 * the invocation's inbox exactly as `weft approve --leave-to-serve` writes it (an `approval` inbox
 * message: decision, by, note, at), and — when `weft inspect` runs the invocation's domain in the
 * embedded mode — resumed by the viewer's own runtime (`runtime.approve` with run).
 *
 *   GET  /api/approvals                      what the page may do: { enabled, reason, resumes }
 *   POST /api/invocations/<id>/decision      { decision: 'approved' | 'rejected', by, note? }
 *
 * A POST is a write: server.ts has checked the Host, the token and its scope already (a tenant's
 * token deciding on another tenant's invocation got a 404 there, access.ts); write-checks.ts checks
 * what every write from the page must pass (its Origin this viewer's own — a foreign or missing one:
 * 403 — and its body JSON of at most 8 KiB); here the decision itself, and the viewer's store one the writers would accept (a Redis opened read-only that fails their durability
 * check: 409, and the page shows the CLI command instead). Bad input writes nothing: a 400 naming
 * what to fix.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isWeftError } from '../journal/errors.js';
import { reply, writeRequest } from './write-checks.js';

/** A person's decision, as `weft approve` takes it. */
export interface Decision {
  decision: 'approved' | 'rejected';
  by: string;
  note?: string;
}

/** Who goes on with the invocation once its decision is in its inbox. */
export type Resumer = 'viewer' | 'serve';

/** What `weft inspect` gives the server to act on decisions (cli/commands/inspect.ts builds it). */
export interface Approver {
  /** Whether the store takes writes; when not, why (the page shows it beside the CLI command). */
  writable: { ok: true } | { ok: false; reason: string };
  /** 'viewer': this process resumes the invocation; 'serve': it waits in the inbox for `weft serve` or `weft resume`. */
  resumes: Resumer;
  /** Put the decision in the inbox (and resume, for 'viewer'); throws a WeftError when it is refused. */
  decide(id: string, decision: Decision): Promise<void>;
}

const MAX_BY = 200;
const MAX_NOTE = 2000;

/** The decision a request body holds, or the one line that says what is wrong with it. */
export function parseDecision(body: unknown): Decision | { error: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { error: 'the body must be a JSON object: { "decision": "approved" | "rejected", "by": NAME, "note"?: TEXT }' };
  const { decision, by, note, ...rest } = body as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length) return { error: `unknown field ${JSON.stringify(extra[0])}: a decision has decision, by and note` };
  if (decision !== 'approved' && decision !== 'rejected') return { error: 'decision must be "approved" or "rejected"' };
  if (typeof by !== 'string' || by.trim() === '') return { error: 'by must name who decides (an approval records it)' };
  if (by.length > MAX_BY) return { error: `by must be at most ${MAX_BY} characters` };
  if (note !== undefined && typeof note !== 'string') return { error: 'note must be text' };
  if (typeof note === 'string' && note.length > MAX_NOTE) return { error: `note must be at most ${MAX_NOTE} characters` };
  return { decision, by: by.trim(), ...(typeof note === 'string' && note.trim() !== '' ? { note: note.trim() } : {}) };
}

/**
 * Answer the approval routes; false when the request is for none of them (server.ts goes on).
 * Called after server.ts's Host and token checks.
 */
export async function approvalRoute(approver: Approver | undefined, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  if (url.pathname === '/api/approvals' && (req.method === 'GET' || req.method === 'HEAD')) {
    const enabled = approver !== undefined && approver.writable.ok;
    const reason = approver === undefined ? 'this viewer was started without a store it may write' : approver.writable.ok ? null : approver.writable.reason;
    reply(res, 200, { enabled, reason, resumes: approver?.resumes ?? null });
    return true;
  }
  const m = /^\/api\/invocations\/([^/]+)\/decision$/.exec(url.pathname);
  if (!m) return false;
  // The checks every write from the page passes (write-checks.ts): POST, this viewer's Origin, a JSON body.
  const request = await writeRequest(req, res, m[1]!, 'a decision', '{ "decision": "approved" | "rejected", "by": NAME, "note"?: TEXT }');
  if (!request) return true;
  const { id, body: parsed } = request;
  const decision = parseDecision(parsed);
  if ('error' in decision) {
    reply(res, 400, { error: decision.error });
    return true;
  }
  if (approver === undefined || !approver.writable.ok) {
    reply(res, 409, { error: `this viewer does not write to its store${approver && !approver.writable.ok ? `: ${approver.writable.reason}` : ''}; run weft approve instead` });
    return true;
  }
  try {
    await approver.decide(id, decision);
  } catch (err) {
    if (isWeftError(err)) {
      const status = err.code === 'invocation.not_found' ? 404 : err.code === 'runtime.bad_invocation_id' ? 400 : 409;
      reply(res, status, { error: err.message, code: err.code });
      return true;
    }
    throw err;
  }
  reply(res, 200, { ok: true, resumes: approver.resumes });
  return true;
}
