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
 * token deciding on another tenant's invocation got a 404 there, access.ts); here its Origin must be
 * this viewer's own (a foreign or missing Origin: 403), its body JSON of at most 8 KiB, and the
 * viewer's store one the writers would accept (a Redis opened read-only that fails their durability
 * check: 409, and the page shows the CLI command instead). Bad input writes nothing: a 400 naming
 * what to fix.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isWeftError } from '../journal/errors.js';
import { scrubbedFor } from './tenant-scrub.js';

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

export const MAX_BODY_BYTES = 8 * 1024;
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

/** Whether a request's Origin is this server's own (the Host it was addressed to, over http). */
export function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  const host = req.headers.host;
  return typeof origin === 'string' && typeof host === 'string' && origin === `http://${host}`;
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
  if (req.method !== 'POST') {
    reply(res, 405, { error: 'a decision is a POST' }, { allow: 'POST' });
    return true;
  }
  if (!sameOrigin(req)) {
    reply(res, 403, { error: "a decision must come from this viewer's own page (its Origin did not match)" });
    return true;
  }
  let id: string;
  try {
    id = decodeURIComponent(m[1]!);
  } catch {
    reply(res, 400, { error: 'the invocation id in the URL is not valid percent-encoding' });
    return true;
  }
  const body = await readBody(req);
  if (body === undefined) {
    reply(res, 413, { error: `a decision's body must be at most ${MAX_BODY_BYTES} bytes` });
    return true;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    reply(res, 400, { error: 'the body is not JSON: send { "decision": "approved" | "rejected", "by": NAME, "note"?: TEXT }' });
    return true;
  }
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

/** The body as text, or undefined once it passes MAX_BODY_BYTES (the rest is drained, not kept). */
function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      if (size > MAX_BODY_BYTES) return; // drained, not kept
      size += chunk.length;
      if (size > MAX_BODY_BYTES) resolve(undefined);
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function reply(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'x-content-type-options': 'nosniff', 'cache-control': 'no-store', 'content-type': 'application/json; charset=utf-8', ...headers });
  // A tenant's answer names no server path (tenant-scrub.ts): an error from the store or the runtime may.
  res.end(res.req.method === 'HEAD' ? undefined : scrubbedFor(res, JSON.stringify(value)));
}
