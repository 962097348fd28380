/**
 * A local OpenAI-compatible chat-completions server for fail-closed tests: it answers each request
 * the way a case's handler says — any status, headers and body, after a delay, or not at all (the
 * socket destroyed, a hang, a redirect). One server serves many cases at once: a case is routed
 * by the path prefix of its base URL (`http://127.0.0.1:PORT/c/<case>/v1`), so parallel runs never
 * share replies. Requests are told apart as parse or author requests by their system prompt (the
 * authoring prompt's system message starts with "You author a short fragment"), and every request
 * is recorded, per case, in arrival order.
 *
 * Listens on 127.0.0.1:0 (a free port); `close()` drops every open connection and pending timer.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Purpose = 'parse' | 'author' | 'unknown';

/** One request as the server saw it. */
export interface ModelCall {
  /** 0-based position among this case's requests. */
  index: number;
  /** 0-based position among this case's requests of the same purpose. */
  nth: number;
  method: string;
  url: string;
  purpose: Purpose;
  /** The `Epoch: N` line of a parse prompt (undefined for authoring prompts and non-JSON bodies). */
  epoch?: number;
  /** The prompt says the previous reply was rejected (a re-prompt). */
  reprompt: boolean;
  system: string;
  user: string;
  /** The parsed request body, or undefined when it was not JSON (a redirected GET, say). */
  body?: { model?: string; messages?: Array<{ role: string; content: string }> } & Record<string, unknown>;
  bytes: number;
}

/** What the server does with one request. */
export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Answer after this many milliseconds. */
  delayMs?: number;
  /** Destroy the socket instead of answering. */
  destroy?: boolean;
  /** Send the headers and this part of the body, then destroy the socket (a cut-off response). */
  cutAfter?: number;
  /** Never answer (until the server closes). */
  hang?: boolean;
}

export type Handler = (call: ModelCall) => Answer | Promise<Answer>;

export interface CaseRoutes {
  /** Parse requests (and requests whose purpose cannot be told). */
  parse?: Handler;
  /** Authoring requests (the gap path); defaults to the parse handler. */
  author?: Handler;
}

export const AUTHOR_SYSTEM_PREFIX = 'You author a short fragment';

/** A 200 chat-completions response whose `choices[0].message.content` is `text`. */
export function reply(text: string): Answer {
  return { status: 200, headers: { 'content-type': 'application/json' }, body: envelope(text) };
}

/** The chat-completions JSON body carrying `text` as the assistant's content. */
export function envelope(text: string): string {
  return JSON.stringify({ id: 'chatcmpl-corpus', object: 'chat.completion', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: text } }] });
}

/** A reply handler that answers every request with `text` (computed once, on first use). */
export function always(text: string | (() => string)): Handler {
  let body: Buffer | undefined;
  return () => {
    body ??= Buffer.from(envelope(typeof text === 'function' ? text() : text));
    return { status: 200, headers: { 'content-type': 'application/json' }, body };
  };
}

/** A handler that answers every request the same raw way. */
export function raw(answer: Answer): Handler {
  return () => answer;
}

export class BadModelServer {
  private readonly routes = new Map<string, CaseRoutes>();
  private readonly calls = new Map<string, ModelCall[]>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private port = 0;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<BadModelServer> {
    // The server never closes an idle keep-alive connection (keepAliveTimeout 0: the client's own idle
    // time-out does): otherwise, on a busy machine, a client reusing a connection the server is closing
    // just then sees "fetch failed" — a transport failure no case asked for.
    const server = createServer({ keepAliveTimeout: 0 });
    const self = new BadModelServer(server);
    server.on('request', (req, res) => self.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self.port = (server.address() as AddressInfo).port;
    return self;
  }

  /** The base URL (…/v1) a client of case `name` uses. */
  url(name: string): string {
    return `http://127.0.0.1:${this.port}/c/${encodeURIComponent(name)}/v1`;
  }

  /** Register (or replace) a case's handlers; returns its base URL. */
  route(name: string, routes: CaseRoutes): string {
    this.routes.set(name, routes);
    this.calls.set(name, []);
    return this.url(name);
  }

  /** Every request case `name` received, in order. */
  requests(name: string): ModelCall[] {
    return this.calls.get(name) ?? [];
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const match = /^\/c\/([^/]+)\//.exec(req.url ?? '');
      const name = match ? decodeURIComponent(match[1]!) : undefined;
      const routes = name === undefined ? undefined : this.routes.get(name);
      if (!routes || name === undefined) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end(`no case routed at ${req.url}`);
        return;
      }
      const log = this.calls.get(name)!;
      const call = describe(req, raw, log);
      log.push(call);
      const handler = call.purpose === 'author' ? (routes.author ?? routes.parse) : routes.parse;
      if (!handler) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`case ${name} has no ${call.purpose} handler`);
        return;
      }
      Promise.resolve()
        .then(() => handler(call))
        .then((answer) => this.answer(req, res, answer))
        .catch((err: unknown) => {
          if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end(`handler threw: ${(err as Error).message}`);
        });
    });
  }

  private answer(req: IncomingMessage, res: ServerResponse, answer: Answer): void {
    const send = () => {
      if (res.destroyed || req.socket.destroyed) return;
      if (answer.hang) return;
      if (answer.destroy) {
        req.socket.destroy();
        return;
      }
      const body = answer.body ?? '';
      if (answer.cutAfter !== undefined) {
        const bytes = Buffer.from(body);
        res.writeHead(answer.status ?? 200, { 'content-length': String(bytes.length), ...answer.headers });
        res.write(bytes.subarray(0, answer.cutAfter), () => req.socket.destroy());
        return;
      }
      res.writeHead(answer.status ?? 200, answer.headers ?? {});
      res.end(body);
    };
    if (answer.delayMs !== undefined && answer.delayMs > 0) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        send();
      }, answer.delayMs);
      this.timers.add(timer);
      res.on('close', () => {
        clearTimeout(timer);
        this.timers.delete(timer);
      });
    } else {
      send();
    }
  }
}

function describe(req: IncomingMessage, raw: string, log: ModelCall[]): ModelCall {
  let body: ModelCall['body'];
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as ModelCall['body'];
  } catch {
    body = undefined;
  }
  const messages = Array.isArray(body?.messages) ? body!.messages : [];
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  const user = messages.find((m) => m.role === 'user')?.content ?? '';
  const purpose: Purpose = !body ? 'unknown' : system.startsWith(AUTHOR_SYSTEM_PREFIX) ? 'author' : 'parse';
  const epochMatch = /^Epoch: (\d+)$/m.exec(user);
  return {
    index: log.length,
    nth: log.filter((c) => c.purpose === purpose).length,
    method: req.method ?? '',
    url: req.url ?? '',
    purpose,
    ...(purpose === 'parse' && epochMatch ? { epoch: Number(epochMatch[1]) } : {}),
    reprompt: /was rejected/.test(user),
    system,
    user,
    ...(body ? { body } : {}),
    bytes: Buffer.byteLength(raw),
  };
}
