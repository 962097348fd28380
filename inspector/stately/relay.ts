/**
 * The Stately relay (`weft run|resume|serve … --stately`): a WebSocket server on 127.0.0.1 that
 * speaks the Stately inspector's protocol (protocol.ts) and passes on what THIS process's runtime
 * publishes — never what a client sends. It is the safe stand-in for `@statelyai/inspect/server`,
 * which listens on every interface, relays any client's messages to every other, keeps only 200
 * messages and opens a browser by itself.
 *
 * - Loopback only. A browser's connection (it carries an Origin) needs the relay's token and must
 *   come from the relay's own bridge page (bridge.ts); a local process without an Origin (an
 *   inspector client in Node) may connect on loopback as it could read the user's files anyway.
 * - Clients only receive. Whatever a client sends is read and dropped (websocket.ts).
 * - Never blocks a run: `publish` only queues. Each client has a bounded queue; while its socket is
 *   backed up, messages wait there, and past the bound the oldest snapshots and events are dropped
 *   with a count, told to the client as a `weft.relay.dropped` event once it catches up. Actor
 *   messages are never dropped.
 * - A client that connects late first gets every actor the relay has seen (its latest bounded
 *   snapshot), so it shows where each invocation stands now.
 * - It prints its URL and opens nothing.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { acceptWebSocket, refuseUpgrade, type WebSocketConnection } from '../websocket.js';
import { BRIDGE_SCRIPT, bridgePage, BRIDGE_CSP } from './bridge.js';
import { ClientQueue } from './client-queue.js';
import { eventMessage, type InspectorMessage } from './protocol.js';

/** How long published messages wait to be written together. */
const WRITE_EVERY_MS = 15;

export interface RelayOptions {
  /** 0: any free port. */
  port: number;
  /** Messages a client may have waiting before the oldest are dropped (default 10,000: a burst of 64 runs starting at once is about 2,500). */
  maxQueued?: number;
  /** Bytes in a client's socket buffer above which messages wait in its queue (default 256 KiB). */
  highWaterBytes?: number;
  /** Invocations whose actor a late client is sent (most recent first; default 1,000). */
  maxActors?: number;
  /** The clock for messages' `createdAt` (the relay is on the effect side). */
  now?: () => number;
  token?: string;
}

export interface RelayStats {
  clients: number;
  published: number;
  sent: number;
  dropped: number;
}

interface Client {
  ws: WebSocketConnection;
  queue: ClientQueue<{ text: string; droppable: boolean; sessionId: string }>;
  dropped: number;
  /** A write of what is queued is scheduled (messages published in one turn go out in one write). */
  scheduled: boolean;
}

export class StatelyRelay {
  readonly token: string;
  private readonly clients = new Set<Client>();
  /** Per invocation: its actor message and its latest snapshot (what a late client is sent first). */
  private readonly actors = new Map<string, { actor: string; latest: string | undefined }>();
  private readonly waiting: Array<() => void> = [];
  private counts = { published: 0, sent: 0, dropped: 0 };

  private constructor(
    private readonly server: Server,
    private readonly options: Required<Omit<RelayOptions, 'token'>>,
    token: string,
  ) {
    this.token = token;
  }

  /** Start a relay on 127.0.0.1:`port`. */
  static async start(options: RelayOptions): Promise<StatelyRelay> {
    const token = options.token ?? randomBytes(18).toString('base64url');
    const server = createServer();
    const relay = new StatelyRelay(server, { port: options.port, maxQueued: options.maxQueued ?? 10_000, highWaterBytes: options.highWaterBytes ?? 256 * 1024, maxActors: options.maxActors ?? 1_000, now: options.now ?? (() => Date.now()) }, token);
    server.on('request', (req, res) => relay.page(req, res));
    server.on('upgrade', (req, socket, head: Buffer) => relay.upgrade(req, socket, head));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, '127.0.0.1', () => resolve());
    });
    server.unref(); // the relay lives as long as the process, and never keeps it alive
    return relay;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Where an inspector client connects (a Node client needs no token on loopback). */
  get url(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  /** The bridge page to open in a browser: it shows Stately's inspector and feeds it this relay's messages. */
  get pageUrl(): string {
    return `http://127.0.0.1:${this.port}/?token=${encodeURIComponent(this.token)}`;
  }

  stats(): RelayStats {
    return { clients: this.clients.size, ...this.counts };
  }

  /** Resolves true once a client is connected, or false after `ms`. */
  waitForClient(ms: number): Promise<boolean> {
    if (this.clients.size > 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms); // keeps the process alive while it waits
      this.waiting.push(() => (clearTimeout(timer), resolve(true)));
    });
  }

  /** Queue a message for every client. Never throws and never waits. */
  publish(message: InspectorMessage): void {
    let text: string;
    try {
      text = JSON.stringify(message);
    } catch {
      return;
    }
    this.counts.published++;
    if (message.type === '@xstate.actor') {
      this.actors.delete(message.sessionId);
      this.actors.set(message.sessionId, { actor: text, latest: undefined });
      while (this.actors.size > this.options.maxActors) this.actors.delete(this.actors.keys().next().value!);
    } else if (message.type === '@xstate.snapshot') {
      const known = this.actors.get(message.sessionId);
      if (known) known.latest = text;
    }
    for (const client of this.clients) this.enqueue(client, { text, droppable: message.type !== '@xstate.actor', sessionId: message.sessionId });
  }

  /** Resolves once every client has been sent all it has queued (or after `ms`): what a process does before it exits. */
  async drain(ms = 2_000): Promise<void> {
    const until = this.options.now() + ms;
    while (this.options.now() < until && [...this.clients].some((c) => c.queue.length > 0 || c.ws.buffered() > 0)) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Send what is queued (for up to 2 s), then close every client and stop listening. */
  async close(): Promise<void> {
    await this.drain();
    for (const client of this.clients) client.ws.close();
    this.clients.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private enqueue(client: Client, item: { text: string; droppable: boolean; sessionId: string }): void {
    client.queue.push(item);
    if (client.queue.length > this.options.maxQueued) {
      if (client.queue.dropOldest()) {
        client.dropped++;
        this.counts.dropped++;
      }
    }
    if (!client.scheduled) {
      client.scheduled = true;
      // Messages published within a few milliseconds go out in one write: a write per event-loop
      // turn cost a busy run more than the rest of the relay; a person watching sees no delay.
      setTimeout(() => {
        client.scheduled = false;
        this.pump(client);
      }, WRITE_EVERY_MS).unref();
    }
  }

  /**
   * Write what the client's socket can take now, in one write (a write per message costs a run
   * more than everything else the relay does); the rest waits for its drain.
   */
  private pump(client: Client): void {
    let room = this.options.highWaterBytes - client.ws.buffered();
    const batch: string[] = [];
    while (client.queue.length > 0 && room > 0) {
      const item = client.queue.shift()!;
      if (client.dropped > 0) {
        batch.push(JSON.stringify(eventMessage(item.sessionId, { type: 'weft.relay.dropped', dropped: client.dropped }, this.options.now())));
        client.dropped = 0;
      }
      batch.push(item.text);
      room -= item.text.length;
      this.counts.sent++;
    }
    client.ws.sendMany(batch);
  }

  private page(req: IncomingMessage, res: import('node:http').ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://relay.invalid');
    const headers = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' };
    if (!loopbackHost(req.headers.host)) return void res.writeHead(403, headers).end('weft: the Stately relay answers only requests addressed to 127.0.0.1\n');
    if (url.pathname === '/bridge.js') return void res.writeHead(200, { ...headers, 'content-type': 'text/javascript; charset=utf-8' }).end(BRIDGE_SCRIPT);
    if (url.pathname !== '/') return void res.writeHead(404, headers).end('weft: nothing here\n');
    if (!this.tokenMatches(url.searchParams.get('token'))) return void res.writeHead(401, headers).end('weft: open the URL the command printed (it carries the relay\'s token)\n');
    res.writeHead(200, { ...headers, 'content-type': 'text/html; charset=utf-8', 'content-security-policy': BRIDGE_CSP }).end(bridgePage());
  }

  private upgrade(req: IncomingMessage, socket: import('node:stream').Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://relay.invalid');
    if (!loopbackHost(req.headers.host)) return refuseUpgrade(socket, 403, 'Forbidden', 'weft: the Stately relay answers only 127.0.0.1\n');
    const origin = req.headers.origin;
    if (origin !== undefined) {
      // A browser: only this relay's own bridge page, with the token.
      if (origin !== `http://127.0.0.1:${this.port}` || !this.tokenMatches(url.searchParams.get('token'))) {
        return refuseUpgrade(socket, 401, 'Unauthorized', 'weft: a browser may connect only from the relay\'s page, with its token\n');
      }
    }
    const ws = acceptWebSocket(req, socket, head);
    if (!ws) return;
    const client: Client = { ws, queue: new ClientQueue(), dropped: 0, scheduled: false };
    this.clients.add(client);
    ws.onClose(() => this.clients.delete(client));
    ws.onDrain(() => this.pump(client));
    for (const [sessionId, { actor, latest }] of this.actors) {
      this.enqueue(client, { text: actor, droppable: false, sessionId });
      if (latest !== undefined) this.enqueue(client, { text: latest, droppable: true, sessionId });
    }
    for (const wake of this.waiting.splice(0)) wake();
  }

  private tokenMatches(given: string | null): boolean {
    if (given === null) return false;
    const a = Buffer.from(given);
    const b = Buffer.from(this.token);
    return a.length === b.length && timingSafeEqual(a, b);
  }
}

function loopbackHost(host: string | undefined): boolean {
  return host !== undefined && /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/.test(host);
}
