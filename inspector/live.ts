/**
 * Live updates for the viewer's pages, over a WebSocket at `/live`:
 *
 *   /live?follow=<id>&from=<n>   the journal of <id> from seq n on: { type: 'records', id, from, lines }
 *                                — the records [from, from + lines.length), each as its journal line
 *   /live?list=1                 the rows of the invocations that changed: { type: 'rows', rows } (runtime/list.ts),
 *                                at most one message every ROW_COALESCE_MS
 *
 * The follower reads records by seq from the store, from the last seq it sent, so it never misses
 * or repeats one, and sends only what the store holds durably (journal-bytes.ts `durableRecords`: on
 * the file store, up to the writer's durable mark — never a record still being flushed, nor one a
 * failed flush takes back; a record that cannot be read yet is read again at the next change). With
 * nothing to redact, a follower sends the store's own lines (a journal file's, or Redis's list entries),
 * neither parsed nor encoded again. What changed comes from
 * store-changes.ts (Redis nudges, or a watch on the workspace's folders); a poll of the followed
 * journals covers a nudge lost while reconnecting, or a folder that cannot be watched.
 *
 * The socket passes the same gates as every request (access.ts): a loopback Host for a loopback
 * viewer, the token when there is one (401 without), and in addition an Origin, when the browser
 * sends one, naming this viewer — a page elsewhere cannot open a socket to it. The token's scope
 * holds for the socket's life: a tenant's token follows only that tenant's journals (another's id:
 * 404, as an unknown one) and gets only that tenant's rows. Records and rows pass redact.ts, which
 * fails closed: when an invocation's redaction marks cannot be read, its journal's socket is closed
 * (1013, try again later, with the reason) and a row about it is not sent. A tenant's socket is
 * told no server path (tenant-scrub.ts): not in a refusal, not in a row.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { isValidInvocationId, type JournalStore } from '../journal/store.js';
import { invocationSummary } from '../runtime/list.js';
import { loopbackHostHeader, presentedToken, scopeOf, visible, visibleInvocation, type Scope } from './access.js';
import { LiveRedactor, REDACTION_UNAVAILABLE_CLOSE, RedactionUnavailableError, redactedRows } from './redact.js';
import { openableFor, rowsWithLineageLinks } from './lineage-links.js';
import { durableRecords, storedLines, type FollowCursor } from './journal-bytes.js';
import { watchStoreChanges, type StoreChanges } from './store-changes.js';
import { acceptWebSocket, refuseUpgrade as refuseUpgradeUntraced, type WebSocketConnection } from './websocket.js';
import { traceUpgrade, type UpgradeTrace } from '../telemetry/http-span.js';
import { scrubbed, serverPathsOf, STORE_WORDS } from './tenant-scrub.js';

export const LIVE_PATH = '/live';
/** How often the followed journals are read without a hint (the safety net, not the way updates come). */
const POLL_MS = 1_000;
/**
 * Changed rows are sent in batches, at most one every ROW_COALESCE_MS: a row is recomputed from the
 * store (its status, reason, last record: several small reads each), and a list needs no faster
 * than an update a second — while a busy store would otherwise wake every page hundreds of times a
 * second, and have the viewer read every running invocation's files as often. A followed
 * journal's records are sent at once (see FOLLOW_GAP_MS).
 */
const ROW_COALESCE_MS = 1_000;
/** Rows recomputed between two turns given to the rest of the viewer (its followers above all). */
const ROWS_PER_TURN = 8;
/**
 * A followed journal is read at most once every FOLLOW_GAP_MS: a change inside that gap is read at
 * its end, with whatever else landed meanwhile. A busy run appends every few milliseconds, and a
 * read per append made the viewer a second writer's worth of load on the store the run writes to
 * (its Redis, above all); reading in 25 ms gaps costs a record at most 25 ms of lag.
 */
const FOLLOW_GAP_MS = 25;
/** The WebSocket close code for "try again later" (RFC 6455 registry). */
const TRY_AGAIN_LATER = 1013;

export interface LiveOptions {
  store: JournalStore;
  token?: string;
  tenantTokens?: ReadonlyArray<{ tenant: string; token: string }>;
  loopback?: boolean;
  /** The CLI's location flags (`--dir D`): kept, with the store's name, from a tenant's socket (tenant-scrub.ts). */
  location?: string;
}

/** Serve `/live` on `server`'s upgrade requests; the follower stops when the server closes. */
export function attachLive(server: Server, options: LiveOptions): void {
  let live: LiveFeed | undefined;
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const traced = traceUpgrade(req, socket, 'inspect.live'); // a span for the connection's life (telemetry/http-span.ts)
    const refuseUpgrade = (...args: Parameters<typeof refuseUpgradeUntraced>) => {
      traced.answered(args[1]);
      return refuseUpgradeUntraced(...args);
    };
    const url = new URL(req.url ?? '/', 'http://viewer.invalid');
    const refused = gate(options, req, url);
    if ('status' in refused) return refuseUpgrade(socket, refused.status, refused.reason, `weft inspect: ${refused.message}\n`, refused.headers);
    void upgrade(req, socket, head, url, refused.scope, traced, refuseUpgrade).catch(() => socket.destroy());
  });
  const upgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, scope: Scope, traced: UpgradeTrace, refuseUpgrade: typeof refuseUpgradeUntraced): Promise<void> => {
    const follow = url.searchParams.get('follow');
    const from = Number(url.searchParams.get('from') ?? '0');
    if (follow !== null && (!isValidInvocationId(follow) || !Number.isSafeInteger(from) || from < 0)) {
      return refuseUpgrade(socket, 400, 'Bad Request', 'weft inspect: /live?follow=<invocation id>&from=<seq, 0 or more>\n');
    }
    if (follow === null && url.searchParams.get('list') === null) return refuseUpgrade(socket, 400, 'Bad Request', 'weft inspect: /live needs ?follow=<id>&from=<seq> or ?list=1\n');
    // A tenant is not told where the store is (tenant-scrub.ts); the words are an unknown id's either way.
    const storeWords = scope.kind === 'tenant' ? STORE_WORDS : options.store.name;
    if (follow !== null && !(await visibleInvocation(options.store, scope, follow))) return refuseUpgrade(socket, 404, 'Not Found', `weft inspect: no invocation ${follow} in ${storeWords}; weft ls lists them\n`);
    let redactor: LiveRedactor | undefined;
    let unavailable = false;
    try {
      redactor = follow === null ? undefined : await LiveRedactor.for(options.store, follow, from);
    } catch (err) {
      if (!(err instanceof RedactionUnavailableError)) throw err;
      unavailable = true;
    }
    const ws = acceptWebSocket(req, socket, head);
    traced.answered(ws ? 101 : 400);
    if (!ws) return;
    traced.follows(follow === null ? 'list' : 'journal');
    // Nothing is sent about an invocation whose marks cannot be read: the socket says why and closes (the page opens it again).
    if (unavailable) return ws.close(TRY_AGAIN_LATER, REDACTION_UNAVAILABLE_CLOSE);
    live ??= new LiveFeed(options.store, serverPathsOf({ storeName: options.store.name, location: options.location }));
    if (follow !== null) live.followJournal(follow, from, ws, redactor!);
    else live.followList(ws, scope);
  };
  // Upgraded sockets keep a net.Server from closing: the feed (and its sockets) end when close is asked for, not when it is done.
  const close = server.close.bind(server);
  server.close = (callback?: (err?: Error) => void) => {
    void live?.close();
    return close(callback);
  };
}

interface Refusal {
  status: number;
  reason: string;
  message: string;
  headers?: Record<string, string>;
}

/** Why an upgrade request may not proceed, or the scope its token grants (access.ts, the same decision as for a request). */
function gate(options: LiveOptions, req: IncomingMessage, url: URL): Refusal | { scope: Scope } {
  if (url.pathname !== LIVE_PATH) return { status: 404, reason: 'Not Found', message: `no WebSocket at ${url.pathname}` };
  if (options.loopback && !loopbackHostHeader(req.headers.host)) return { status: 403, reason: 'Forbidden', message: 'this viewer answers only requests addressed to 127.0.0.1 or localhost' };
  const scope = scopeOf(options, presentedToken(req, url).token);
  if (scope === undefined) {
    return { status: 401, reason: 'Unauthorized', message: 'this viewer needs its token: open the URL weft inspect printed (with ?token=…), or send Authorization: Bearer <token>', headers: { 'www-authenticate': 'Bearer' } };
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !sameOrigin(origin, req.headers.host)) return { status: 403, reason: 'Forbidden', message: 'a WebSocket to this viewer must come from its own pages' };
  return { scope };
}

function sameOrigin(origin: string, host: string | undefined): boolean {
  try {
    const o = new URL(origin);
    return (o.protocol === 'http:' || o.protocol === 'https:') && host !== undefined && o.host.toLowerCase() === host.toLowerCase();
  } catch {
    return false;
  }
}

/** One page following one journal: sends each record once, in seq order. */
class JournalFollower {
  private busy = false;
  private again = false;
  /** When the last read started (the viewer's clock), and the timer of a read waiting for its gap. */
  private lastRead = Number.NEGATIVE_INFINITY;
  private gapTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Where the last read of a workspace journal ended (journal-bytes.ts). */
  private cursor: FollowCursor | undefined;

  constructor(
    private readonly store: JournalStore,
    readonly id: string,
    private next: number,
    private readonly ws: WebSocketConnection,
    private readonly redactor: LiveRedactor,
  ) {}

  /** Read what the store holds from the last seq sent, and send it — at once, or at the end of the read gap (FOLLOW_GAP_MS); calls during a read make it read again after. */
  pump(): void {
    if (this.busy) {
      this.again = true;
      return;
    }
    if (this.gapTimer || this.stopped) return;
    const wait = this.lastRead + FOLLOW_GAP_MS - performance.now();
    if (wait <= 0) return void this.read();
    this.gapTimer = setTimeout(() => {
      this.gapTimer = undefined;
      void this.read();
    }, wait);
  }

  /** Stop a read waiting for its gap (the socket closed). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.gapTimer);
    this.gapTimer = undefined;
  }

  private async read(): Promise<void> {
    this.busy = true;
    this.lastRead = performance.now();
    this.again = false;
    try {
      // Nothing to redact: the store's own lines (a journal file's, Redis's entries), neither parsed nor re-encoded.
      const stored = this.redactor.passesThrough ? await storedLines(this.store, this.id, this.next, this.cursor) : undefined;
      if (stored) {
        if (stored.lines.length > 0) {
          this.ws.send(JSON.stringify({ type: 'records', id: this.id, from: this.next, lines: stored.lines }));
          this.next += stored.lines.length;
        }
        // The next read starts where this one ended (a read that found nothing new too), not at byte 0.
        if (stored.cursor?.seq === this.next) this.cursor = stored.cursor;
        return;
      }
      const { records, cursor } = await durableRecords(this.store, this.id, this.next, this.cursor);
      const next: typeof records = [];
      for (const record of records) {
        if (record.seq !== this.next + next.length) break;
        next.push(record);
      }
      if (next.length === 0) {
        if (cursor?.seq === this.next && records.length === 0) this.cursor = cursor;
        return;
      }
      const lines = await this.redactor.lines(next);
      this.ws.send(JSON.stringify({ type: 'records', id: this.id, from: this.next, lines }));
      this.next += lines.length;
      // Read on from where these records end (only when all that was read was sent).
      this.cursor = cursor && next.length === records.length && cursor.seq === this.next ? cursor : undefined;
    } catch (err) {
      // Redaction fails closed: what could not be redacted is not sent, and the page is told why.
      if (err instanceof RedactionUnavailableError) this.ws.close(TRY_AGAIN_LATER, REDACTION_UNAVAILABLE_CLOSE);
      // else not readable now (a tail being written, the store unreachable): read again at the next change or poll
    } finally {
      this.busy = false;
      // A change during the read: read again, after the gap.
      if (this.again && !this.stopped) {
        this.again = false;
        this.pump();
      }
    }
  }
}

/** The viewer's followers, and what tells them to read. */
class LiveFeed {
  private readonly journals = new Map<string, Set<JournalFollower>>();
  /** The list pages, each with the scope its token grants. */
  private readonly lists = new Map<WebSocketConnection, Scope>();
  /** Every open socket, closed with the feed. */
  private readonly sockets = new Set<WebSocketConnection>();
  /** Invocations whose row changed since the last batch, and the batch's timer. */
  private readonly changedRows = new Set<string>();
  private rowTimer: NodeJS.Timeout | undefined;
  /** Whether a batch of rows is being made (scheduleRows). */
  private sendingRows = false;
  private readonly changes: StoreChanges;
  private readonly poll: NodeJS.Timeout;

  constructor(
    private readonly store: JournalStore,
    /** The server paths a tenant's socket is not sent (tenant-scrub.ts serverPathsOf). */
    private readonly serverPaths: readonly string[] = [],
  ) {
    // A watch taken late (the folder appeared): what happened before it is reported now.
    const everything = () => void this.store.list().then((ids) => ids.forEach((id) => this.changed(id)), () => undefined);
    this.changes = watchStoreChanges(store, (id) => this.changed(id), everything);
    this.poll = setInterval(() => this.tick(), POLL_MS);
    this.poll.unref();
  }

  followJournal(id: string, from: number, ws: WebSocketConnection, redactor: LiveRedactor): void {
    this.track(ws);
    const follower = new JournalFollower(this.store, id, from, ws, redactor);
    let set = this.journals.get(id);
    if (!set) this.journals.set(id, (set = new Set()));
    set.add(follower);
    ws.onClose(() => {
      follower.stop();
      set.delete(follower);
      if (set.size === 0 && this.journals.get(id) === set) this.journals.delete(id);
    });
    follower.pump(); // what landed between the page's load and this socket
  }

  private track(ws: WebSocketConnection): void {
    this.sockets.add(ws);
    ws.onClose(() => this.sockets.delete(ws));
  }

  followList(ws: WebSocketConnection, scope: Scope): void {
    this.track(ws);
    this.lists.set(ws, scope);
    ws.onClose(() => this.lists.delete(ws));
  }

  private changed(id: string): void {
    for (const follower of this.journals.get(id) ?? []) follower.pump();
    if (this.lists.size === 0 || !isValidInvocationId(id)) return;
    this.changedRows.add(id);
    this.scheduleRows();
  }

  /**
   * The next batch of rows, ROW_COALESCE_MS from now — but one batch at a time: a batch gives the
   * event loop turns, and a second one running beside it could send a row's newer state before the
   * first sends its older one, which would then stay on the page. Changes during a batch wait for it.
   */
  private scheduleRows(): void {
    if (this.rowTimer || this.sendingRows) return;
    this.rowTimer = setTimeout(() => {
      this.rowTimer = undefined;
      void this.sendRows();
    }, ROW_COALESCE_MS);
    this.rowTimer.unref();
  }

  /** The rows of every invocation that changed since the last batch, one message per list socket. */
  private async sendRows(): Promise<void> {
    this.sendingRows = true;
    try {
      await this.sendRowBatch();
    } finally {
      this.sendingRows = false;
      if (this.changedRows.size > 0) this.scheduleRows();
    }
  }

  private async sendRowBatch(): Promise<void> {
    const ids = [...this.changedRows];
    this.changedRows.clear();
    const rows = [];
    for (const [i, id] of ids.entries()) {
      // A turn for the followers between rows (each row is several synchronous reads of a workspace).
      if (i > 0 && i % ROWS_PER_TURN === 0) await nextTurn();
      try {
        rows.push(...(await redactedRows(this.store, [await invocationSummary(this.store, id)])));
      } catch {
        // unreadable now (or its redaction marks are): the next change sends it
      }
    }
    if (rows.length === 0) return;
    for (const [ws, scope] of this.lists) {
      const shown = rows.filter((row) => visible(scope, row));
      // Each socket's own lineage links (lineage-links.ts): what its scope may open.
      if (shown.length === 0) continue;
      const message = JSON.stringify({ type: 'rows', rows: await rowsWithLineageLinks(shown, openableFor(this.store, scope)) });
      // A tenant's rows name no server path: a damaged row's fix names its folder (tenant-scrub.ts).
      ws.send(scope.kind === 'tenant' ? scrubbed(message, this.serverPaths) : message);
    }
  }

  private tick(): void {
    this.changes.retry();
    for (const set of this.journals.values()) for (const follower of set) follower.pump();
  }

  async close(): Promise<void> {
    clearInterval(this.poll);
    clearTimeout(this.rowTimer);
    this.changedRows.clear();
    for (const ws of [...this.sockets]) ws.close();
    await this.changes.close();
  }
}
