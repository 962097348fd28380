/**
 * The viewer's HTTP server (`weft inspect`): read-only over one store.
 *
 *   GET /                              the invocations page (page/list.ts)
 *   GET /invocations/<id>              one invocation's page (page/invocation.ts)
 *   GET /api/invocations               runtime/list.ts listInvocations, as JSON; with ?limit=&offset=&q=&status=&tenant=&sort=&dir=
 *                                      one page of it, filtered, searched and sorted on the server (list-page.ts), cut
 *                                      from the listing kept as the store changes (listing.ts): no journal is read
 *   GET /api/invocations/<id>          runtime/describe-load.ts describeInvocation, as JSON
 *   GET /api/invocations/<id>/journal  the journal's lines (journal-bytes.ts), for the page to verify
 *   GET /api/invocations/<id>/trail    its journal replayed: the state at each record, the transitions taken (replay-trail.ts)
 *   GET /api/machine[?states=…]        the invocation statechart, laid out: all of it, or a run's path (machine-graph.ts)
 *   GET /api/invocations/<id>/plans    each epoch's plan tree re-derived and checked (plan-trees.ts)
 *   GET /api/invocations/<id>/verdict  the server's verdict on the stored journal (redact.ts), for a redacted one
 *   GET /api/trusted-key               the key given with --public-key and its label, or null
 *   GET /api/keys/<keyId>              the public key the store holds under that id, labelled "from the
 *                                      store, not independent" (the page's last resort: page/trusted-key.ts)
 *   GET /api/viewer                    the store's name and its location flags
 *   GET /assets/…, /vendor/…           the page's modules (assets.ts)
 *   GET /api/approvals, POST /api/invocations/<id>/decision   approvals from the page (approve.ts)
 *   GET /api/actions, POST /api/invocations/<id>/{cancel,resume,fork}   the page's other actions (page-actions.ts)
 *   GET /api/inbox                     the header's approvals inbox (inbox-count.ts)
 *   GET /api/invocations/<id>/lineage  a fork's lineage as a tree (lineage-tree.ts)
 *   WebSocket /live                    records as they become durable, changed rows (live.ts)
 *
 * Every request passes access.ts first (a token, when the viewer has one): one access decision, a
 * Scope (everything, or one tenant's invocations), made before any route runs. Every path about one
 * invocation — `/api/invocations/<id>` and ANYTHING under it, `/invocations/<id>` — is checked
 * against it in one place below (`visibleInvocation`: another tenant's id is a 404, as an unknown
 * one), so a route added under that prefix is scoped without a line of its own; a route that lists
 * invocations filters them by `visibleRows(requestScope(req), rows)`. Every payload about an
 * invocation passes redact.ts (`redactedFor(store, id, value)`) before it is sent.
 *
 * A tenant's token sees no server path: not the store's name or location (`/api/viewer` names the
 * tenant instead), not the --public-key file, and no message it gets (an error, a plan tree's
 * problem) names them — tenant-scrub.ts takes them out of every JSON and text answer to a tenant's
 * request (the journal's own bytes and the page's files pass unchanged).
 *
 * Nothing here but approve.ts and page-actions.ts (their checks in write-checks.ts) writes to
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
import { invocationOfPath, loopbackHostHeader, needsToken, presentedToken, rememberScope, requestScope, scopeOf, tokenCookie, visibleInvocation, visibleRows, type Scope } from './access.js';
import { approvalRoute, type Approver } from './approve.js';
import { pageActionRoute, type PageActions } from './page-actions.js';
import { inboxRoute } from './inbox-count.js';
import { lineageTreeRoute } from './lineage-tree.js';
import { assetFile, readAsset } from './assets.js';
import { journalBytes } from './journal-bytes.js';
import { openableFor, rowsWithLineageLinks, withLineageLinks } from './lineage-links.js';
import { listQueryOf } from './list-page.js';
import { attachListing, type InvocationListing } from './listing.js';
import { attachLive } from './live.js';
import { traceHttpRequest } from '../telemetry/http-span.js';
import { hideFrom, scrubbedFor, serverPathsOf } from './tenant-scrub.js';
import { marksOf, REDACTED_HEADER, RedactionUnavailableError, redactedFor, redactedJournal, redactedRows, redactedVerdict, serverVerdict } from './redact.js';
import { IMPORT_MAP, pageShell } from './shell.js';
import { STYLE } from './style.js';

export interface InspectorOptions {
  store: JournalStore;
  /** The public key the user trusts, with where it came from (shown beside the verdict). */
  trustedKey?: { key: PublicKey; label: string };
  /** The CLI's flags naming this store (`--dir D`, `--redis URL`), appended to the commands the page shows. */
  location?: string;
  /** When set, every request must carry it or a tenant's token (access.ts); this one sees every invocation. */
  token?: string;
  /** Tokens that each see only one tenant's invocations (`--tenant-token tenant=T`). */
  tenantTokens?: ReadonlyArray<{ tenant: string; token: string }>;
  /** Bound to loopback: then a request must name a loopback host (access.ts, against DNS rebinding). */
  loopback?: boolean;
  /** Decisions on approvals from the page (approve.ts); without it, the page shows the CLI command. */
  approver?: Approver;
  /** Cancel, Resume and Fork from the page (page-actions.ts); without it, the page shows the CLI commands. */
  actions?: PageActions;
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
    traceHttpRequest(req, res, 'inspect'); // one span per request, its path without the query (telemetry/http-span.ts)
    handle(options, req, res).catch((err: unknown) => {
      // Redaction fails closed: marks that could not be read send nothing about the invocation (redact.ts).
      if (err instanceof RedactionUnavailableError && !res.headersSent) return sendJson(res, err.status, { error: err.message });
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', `weft inspect: ${err instanceof Error ? err.message : String(err)}\n`);
      else res.destroy();
    });
  });
  attachLive(server, options); // the WebSocket at /live (live.ts)
  listings.set(options, attachListing(server, options.store)); // the list's pages, kept as the store changes (listing.ts)
  return server;
}

async function handle(options: InspectorOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://viewer.invalid');
  if (options.loopback && !loopbackHostHeader(req.headers.host)) {
    send(res, 403, 'text/plain; charset=utf-8', 'weft inspect: this viewer answers only requests addressed to 127.0.0.1 or localhost\n');
    return;
  }
  // The one access decision for this request (access.ts).
  const { token, fromUrl } = presentedToken(req, url);
  const scope = scopeOf(options, token);
  if (scope === undefined) {
    send(res, 401, 'text/plain; charset=utf-8', 'weft inspect: this viewer needs its token: open the URL weft inspect printed (with ?token=…), or send Authorization: Bearer <token>\n', { 'www-authenticate': 'Bearer' });
    return;
  }
  if (fromUrl && needsToken(options) && token !== undefined) res.setHeader('set-cookie', tokenCookie(token));
  rememberScope(req, scope);
  if (scope.kind === 'tenant') hideFrom(res, serverPathsOf({ storeName: options.store.name, location: options.location }));
  // Every path about one invocation, whatever follows its id: another tenant's is not there.
  const about = invocationOfPath(url.pathname);
  const aboutId = about === undefined ? undefined : decoded(about);
  if (aboutId !== undefined && !(await visibleInvocation(options.store, scope, aboutId))) {
    return sendJson(res, 404, { error: notFound(options, aboutId) });
  }
  if (await approvalRoute(options.approver, req, res, url)) return;
  if (await pageActionRoute(options.actions, req, res, url)) return;
  const listed = () => listings.get(options)!.rows(); // the viewer's listing (listing.ts), not the store listed per request
  if ((await inboxRoute(listed, req, res, url)) || (await lineageTreeRoute(listed, req, res, url, aboutId))) return;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    send(res, 405, 'text/plain; charset=utf-8', 'weft inspect: this viewer only reads (GET)\n', { allow: 'GET, HEAD' });
    return;
  }
  const p = url.pathname;
  if (p === '/' || p === '/index.html') return html(res, pageShell('list', 'invocations — weft inspect'));
  const page = /^\/invocations\/([^/]+)\/?$/.exec(p);
  if (page) return html(res, pageShell('invocation', `${decoded(page[1]!) ?? '?'} — weft inspect`));
  if (p === '/api/invocations') {
    const query = listQueryOf(url.searchParams);
    // The lineage ids this token may open, beside each row that names one (lineage-links.ts): the page links only those.
    const openable = openableFor(options.store, requestScope(req));
    if (query) {
      // A page: cut from the listing kept as the store changes (listing.ts), no journal read; only its rows are redacted.
      const scoped = requestScope(req);
      const listed = await listings.get(options)!.page(query, scoped.kind === 'tenant' ? scoped.tenant : undefined);
      return sendJson(res, 200, { ...listed, rows: await rowsWithLineageLinks(await redactedRows(options.store, visibleRows(scoped, listed.rows)), openable) });
    }
    const rows = await redactedRows(options.store, visibleRows(requestScope(req), await listInvocations(options.store, tenantFilter(requestScope(req)))));
    return sendJson(res, 200, await rowsWithLineageLinks(rows, openable));
  }
  if (p === '/api/trusted-key') {
    const t = options.trustedKey;
    // A tenant is not told where the key's file lies on the server.
    const label = scope.kind === 'tenant' ? "the key this viewer was started with (--public-key)" : t?.label;
    return sendJson(res, 200, t ? { publicKey: t.key.publicKey, keyId: t.key.keyId, label } : null);
  }
  const storeKey = /^\/api\/keys\/([0-9a-f]{64})$/.exec(p);
  if (storeKey) {
    const key = await publicKeyFromStore(options.store, storeKey[1]!);
    const where = scope.kind === 'tenant' ? 'from the store' : `from the store (${options.store.name})`;
    return sendJson(res, 200, key ? { ...key, label: `${where}, not independent: it shows the journal is unchanged since this key sealed it, not whose key it is — pass --public-key, or drop your weft.pub on the page` } : null);
  }
  // The statechart's layout (dagre, the machine): loaded by the first page that asks, not at start.
  if (p === '/api/machine') return sendJson(res, 200, (await import('./machine-graph.js')).machineGraphFor(url.searchParams));
  // A tenant's page names its tenant where others name the store, and its commands carry no store flags.
  if (p === '/api/viewer') return sendJson(res, 200, scope.kind === 'tenant' ? { store: `tenant ${scope.tenant}`, location: '' } : { store: options.store.name, location: options.location ?? '' });
  const api = /^\/api\/invocations\/([^/]+)(\/journal|\/trail|\/plans|\/verdict)?$/.exec(p);
  if (api) {
    const id = decoded(api[1]!);
    if (id === undefined) return sendJson(res, 400, { error: 'the invocation id in the URL is not valid percent-encoding' });
    try {
      const description = await describeInvocation(options.store, id);
      if (!api[2]) return sendJson(res, 200, await withLineageLinks(await redactedFor(options.store, id, description), openableFor(options.store, scope)));
      // The trail and the plans carry args and replies (and a divergence may quote a record): redacted like the rest.
      if (api[2] === '/trail') {
        // The replay (the machine, XState) and the planner below are loaded by the first page that asks, not at start.
        const { cachedTrailOf } = await import('./replay-trail.js');
        return sendJson(res, 200, await redactedFor(options.store, id, await cachedTrailOf(options.store, id, { given: options.domain })));
      }
      if (api[2] === '/plans') return sendJson(res, 200, await redactedFor(options.store, id, await plansOf(options, id)));
      const bytes = await journalBytes(options.store, id);
      if (bytes === undefined) return sendJson(res, 404, { error: `invocation ${id} has no journal in ${options.store.name}` });
      const shown = await redactedJournal(options.store, id, bytes);
      if (api[2] === '/verdict') return sendJson(res, 200, { redacted: shown.redacted, verdict: await redactedVerdict(options.store, id, serverVerdict(bytes, options.trustedKey)) });
      return send(res, 200, 'application/x-ndjson; charset=utf-8', shown.bytes, shown.redacted ? { [REDACTED_HEADER]: '1' } : {});
    } catch (err) {
      if (isWeftError(err) && err.code === 'runtime.bad_invocation_id') return sendJson(res, 400, { error: err.message });
      if (isWeftError(err) && err.code === 'invocation.not_found') return sendJson(res, 404, { error: err.message });
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
  const { evaluablesFrom, loadPlanTrees } = await import('./plan-trees.js');
  // The marks, for the trees' positional args (an operator's params): redactedFor cannot find them by name.
  return loadPlanTrees(options.store, records, evaluablesFrom(options.domain), await marksOf(options.store, id));
}

/** What a tenant's token gets for another tenant's invocation: the words an unknown one gets (describe-load.ts), so its id does not leak. */
function notFound(options: InspectorOptions, id: string): string {
  return `no invocation ${id} in ${options.store.name}; weft ls lists them`;
}

/** Each server's listing (listing.ts), by its options. */
const listings = new WeakMap<InspectorOptions, InvocationListing>();

/** The listing's own filter for a tenant's scope (the rows are filtered again by visibleRows). */
function tenantFilter(scope: Scope): { tenant?: string } {
  return scope.kind === 'tenant' ? { tenant: scope.tenant } : {};
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
  res.end(res.req.method === 'HEAD' ? undefined : typeof body === 'string' ? scrubbedFor(res, body) : body);
}

