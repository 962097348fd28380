/**
 * The viewer's HTTP server (`weft inspect`): read-only over one store.
 *
 *   GET /                              the invocations page (page/list.ts)
 *   GET /invocations/<id>              one invocation's page (page/invocation.ts)
 *   GET /api/invocations               runtime/list.ts listInvocations, as JSON
 *   GET /api/invocations/<id>          runtime/describe-load.ts describeInvocation, as JSON
 *   GET /api/invocations/<id>/journal  the journal's lines (journal-bytes.ts), for the page to verify
 *   GET /api/invocations/<id>/trail    its journal replayed: the state at each record, the transitions taken (replay-trail.ts)
 *   GET /api/machine                   the invocation statechart, laid out (machine-graph.ts)
 *   GET /api/invocations/<id>/plans    each epoch's plan tree re-derived and checked (plan-trees.ts)
 *   GET /api/trusted-key               the key given with --public-key and its label, or null
 *   GET /api/keys/<keyId>              the public key the store holds under that id, labelled "from the
 *                                      store, not independent" (the page's last resort: page/trusted-key.ts)
 *   GET /api/viewer                    the store's name and its location flags
 *   GET /assets/…, /vendor/…           the page's modules (assets.ts)
 *   GET /api/approvals, POST /api/invocations/<id>/decision   approvals from the page (approve.ts)
 *   WebSocket /live                    records as they become durable, changed rows (live.ts)
 *
 * Every request passes access.ts first (a token, when the viewer has one). Nothing here but approve.ts writes to
 * the store, and no secret key is ever read: the trusted key is a public key. Untrusted text in the
 * JSON is rendered by the page as text; the Content-Security-Policy allows no script but this
 * origin's files and the import map (by its hash), so an intent that smuggles markup could not run
 * it even if it reached the DOM as markup.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isWeftError } from '../journal/errors.js';
import type { PublicKey } from '../journal/seal.js';
import type { JournalStore } from '../journal/store.js';
import type { Domain } from '../runtime/domain.js';
import { describeInvocation } from '../runtime/describe-load.js';
import { publicKeyFromStore } from '../runtime/keys.js';
import { listInvocations } from '../runtime/list.js';
import { loopbackHostHeader, presentedToken, sameToken, tokenCookie } from './access.js';
import { approvalRoute, type Approver } from './approve.js';
import { assetFile, readAsset } from './assets.js';
import { journalBytes } from './journal-bytes.js';
import { machineGraph } from './machine-graph.js';
import { cachedTrailOf } from './replay-trail.js';
import { attachLive } from './live.js';
import { evaluablesFrom, loadPlanTrees } from './plan-trees.js';
import { IMPORT_MAP, pageShell } from './shell.js';
import { STYLE } from './style.js';

export interface InspectorOptions {
  store: JournalStore;
  /** The public key the user trusts, with where it came from (shown beside the verdict). */
  trustedKey?: { key: PublicKey; label: string };
  /** The CLI's flags naming this store (`--dir D`, `--redis URL`), appended to the commands the page shows. */
  location?: string;
  /** When set, every request must carry it (access.ts). */
  token?: string;
  /** Bound to loopback: then a request must name a loopback host (access.ts, against DNS rebinding). */
  loopback?: boolean;
  /** Decisions on approvals from the page (approve.ts); without it, the page shows the CLI command. */
  approver?: Approver;
  /** The domain given with `--domain`: replays (time travel) its invocations besides the built-ins' (replay-trail.ts). */
  domain?: Domain;
}

const hash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const CSP = [
  "default-src 'none'",
  `script-src 'self' ${hash(IMPORT_MAP)}`,
  `style-src ${hash(STYLE)}`,
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const COMMON_HEADERS = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'cache-control': 'no-store' };

/** An HTTP server for the viewer (not yet listening). */
export function createInspectorServer(options: InspectorOptions): Server {
  const server = createServer((req, res) => {
    handle(options, req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', `weft inspect: ${err instanceof Error ? err.message : String(err)}\n`);
      else res.destroy();
    });
  });
  attachLive(server, options); // the WebSocket at /live (live.ts)
  return server;
}

async function handle(options: InspectorOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://viewer.invalid');
  if (options.loopback && !loopbackHostHeader(req.headers.host)) {
    send(res, 403, 'text/plain; charset=utf-8', 'weft inspect: this viewer answers only requests addressed to 127.0.0.1 or localhost\n');
    return;
  }
  if (options.token !== undefined) {
    const { token, fromUrl } = presentedToken(req, url);
    if (!sameToken(token, options.token)) {
      send(res, 401, 'text/plain; charset=utf-8', 'weft inspect: this viewer needs its token: open the URL weft inspect printed (with ?token=…), or send Authorization: Bearer <token>\n', { 'www-authenticate': 'Bearer' });
      return;
    }
    if (fromUrl) res.setHeader('set-cookie', tokenCookie(options.token));
  }
  if (await approvalRoute(options.approver, req, res, url)) return;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    send(res, 405, 'text/plain; charset=utf-8', 'weft inspect: this viewer only reads (GET)\n', { allow: 'GET, HEAD' });
    return;
  }
  const p = url.pathname;
  if (p === '/' || p === '/index.html') return html(res, pageShell('list', 'invocations — weft inspect'));
  const page = /^\/invocations\/([^/]+)\/?$/.exec(p);
  if (page) return html(res, pageShell('invocation', `${decoded(page[1]!) ?? '?'} — weft inspect`));
  if (p === '/api/invocations') return sendJson(res, 200, await listInvocations(options.store));
  if (p === '/api/trusted-key') {
    const t = options.trustedKey;
    return sendJson(res, 200, t ? { publicKey: t.key.publicKey, keyId: t.key.keyId, label: t.label } : null);
  }
  const storeKey = /^\/api\/keys\/([0-9a-f]{64})$/.exec(p);
  if (storeKey) {
    const key = await publicKeyFromStore(options.store, storeKey[1]!);
    return sendJson(res, 200, key ? { ...key, label: `from the store (${options.store.name}), not independent: it shows the journal is unchanged since this key sealed it, not whose key it is — pass --public-key, or drop your weft.pub on the page` } : null);
  }
  if (p === '/api/machine') return sendJson(res, 200, machineGraph());
  if (p === '/api/viewer') return sendJson(res, 200, { store: options.store.name, location: options.location ?? '' });
  const api = /^\/api\/invocations\/([^/]+)(\/journal|\/trail|\/plans)?$/.exec(p);
  if (api) {
    const id = decoded(api[1]!);
    if (id === undefined) return sendJson(res, 400, { error: 'the invocation id in the URL is not valid percent-encoding' });
    try {
      const description = await describeInvocation(options.store, id);
      if (!api[2]) return sendJson(res, 200, description);
      if (api[2] === '/trail') return sendJson(res, 200, await cachedTrailOf(options.store, id, { given: options.domain }));
      if (api[2] === '/plans') return sendJson(res, 200, await plansOf(options, id));
      const bytes = await journalBytes(options.store, id);
      if (bytes === undefined) return sendJson(res, 404, { error: `invocation ${id} has no journal in ${options.store.name}` });
      return send(res, 200, 'application/x-ndjson; charset=utf-8', bytes);
    } catch (err) {
      if (isWeftError(err) && err.code === 'runtime.bad_invocation_id') return sendJson(res, 400, { error: err.message });
      if (isWeftError(err) && err.code === 'runtime.unknown_invocation') return sendJson(res, 404, { error: err.message });
      throw err;
    }
  }
  const file = assetFile(p);
  const bytes = file === undefined ? undefined : await readAsset(file);
  if (bytes !== undefined) return send(res, 200, 'text/javascript; charset=utf-8', bytes);
  send(res, 404, 'text/plain; charset=utf-8', `weft inspect: nothing at ${p}\n`);
}

/** Each epoch's plan tree re-derived (plan-trees.ts); a journal that cannot be read is said, not a 500. */
async function plansOf(options: InspectorOptions, id: string) {
  let records;
  try {
    records = await options.store.read(id);
  } catch (err) {
    return { version: 1, library: { digest: '', name: null }, problem: `the journal cannot be read: ${err instanceof Error ? err.message : String(err)}`, epochs: [] };
  }
  return loadPlanTrees(options.store, records, evaluablesFrom(options.domain));
}

/** A URL segment decoded, or undefined when it is not valid percent-encoding. */
function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function html(res: ServerResponse, body: string): void {
  send(res, 200, 'text/html; charset=utf-8', body, { 'content-security-policy': CSP });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

function send(res: ServerResponse, status: number, type: string, body: string | Uint8Array, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...COMMON_HEADERS, 'content-type': type, ...headers });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
