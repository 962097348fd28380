/**
 * The checks every write from the viewer's page passes, in one place: Approve and Reject
 * (approve.ts) and Cancel, Resume and Fork (page-actions.ts). server.ts has already checked the Host
 * (loopback viewers: against DNS rebinding), the token and its scope (a tenant's token writing to
 * another tenant's invocation got a 404, access.ts); here:
 *
 * - the method must be POST (else 405);
 * - the request's Origin must be this viewer's own — a foreign or missing Origin is a 403, so a page
 *   elsewhere that holds the cookie cannot write through the person's browser;
 * - the invocation id in the path must be valid percent-encoding (else 400);
 * - the body must be JSON of at most MAX_BODY_BYTES (413, 400).
 *
 * `writeRequest` answers the refusal itself and returns undefined; otherwise the id and the parsed
 * body, and nothing has been written yet — the caller validates the body and acts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { scrubbedFor } from './tenant-scrub.js';

export const MAX_BODY_BYTES = 8 * 1024;

/** Whether a request's Origin is this server's own (the Host it was addressed to, over http). */
export function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  const host = req.headers.host;
  return typeof origin === 'string' && typeof host === 'string' && origin === `http://${host}`;
}

/**
 * A write's checks (see the header) for `what` (e.g. "a decision", "a cancel"), with `encodedId`
 * the id segment of its path: the decoded id and the JSON body, or undefined once refused (answered).
 */
export async function writeRequest(req: IncomingMessage, res: ServerResponse, encodedId: string, what: string, bodyHint: string): Promise<{ id: string; body: unknown } | undefined> {
  if (req.method !== 'POST') {
    reply(res, 405, { error: `${what} is a POST` }, { allow: 'POST' });
    return undefined;
  }
  if (!sameOrigin(req)) {
    reply(res, 403, { error: `${what} must come from this viewer's own page (its Origin did not match)` });
    return undefined;
  }
  let id: string;
  try {
    id = decodeURIComponent(encodedId);
  } catch {
    reply(res, 400, { error: 'the invocation id in the URL is not valid percent-encoding' });
    return undefined;
  }
  const text = await readBody(req);
  if (text === undefined) {
    reply(res, 413, { error: `${what}'s body must be at most ${MAX_BODY_BYTES} bytes` });
    return undefined;
  }
  try {
    return { id, body: JSON.parse(text) as unknown };
  } catch {
    reply(res, 400, { error: `the body is not JSON: send ${bodyHint}` });
    return undefined;
  }
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

/** A JSON answer to a write (never cached, never sniffed). */
export function reply(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'x-content-type-options': 'nosniff', 'cache-control': 'no-store', 'content-type': 'application/json; charset=utf-8', ...headers });
  // A tenant's answer names no server path (tenant-scrub.ts): an error from the store or the runtime may.
  res.end(res.req.method === 'HEAD' ? undefined : scrubbedFor(res, JSON.stringify(value)));
}
