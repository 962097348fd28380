/**
 * The viewer's HTTP server traced (inspector/server.ts): one SERVER span per request, named by its
 * method, with the HTTP semantic conventions' `http.request.method`, `url.path` and
 * `http.response.status_code` — the path only, never the query string (it may carry the viewer's
 * token: `?token=…`), and no header. A 5xx answer marks the span an error (`error.type` its code).
 * Without a tracer provider this costs one no-op span per request.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { weftTracer } from './record-tracer.js';

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'CONNECT', 'TRACE']);

/** The path of a request target: what precedes `?` (or `#`), at most 256 characters. */
export function pathOnly(target: string | undefined): string {
  const text = target ?? '/';
  const end = text.search(/[?#]/);
  return (end < 0 ? text : text.slice(0, end)).slice(0, 256) || '/';
}

/** Methods as the conventions take them: a known one, else `_OTHER`. */
export function methodOf(method: string | undefined): string {
  return method !== undefined && KNOWN_METHODS.has(method) ? method : '_OTHER';
}

/** Trace one request: the span starts now and ends when the response is finished or the connection closes. */
export function traceHttpRequest(req: IncomingMessage, res: ServerResponse, component: string): void {
  try {
    const method = methodOf(req.method);
    const span = weftTracer().startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': pathOnly(req.url), 'url.scheme': 'http', 'weft.component': component } });
    if (!span.isRecording()) return;
    res.once('close', () => {
      try {
        const status = res.statusCode;
        span.setAttribute('http.response.status_code', status);
        if (status >= 500) {
          span.setAttribute('error.type', String(status));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        if (!res.writableFinished) span.setAttribute('weft.http.aborted', true);
        span.end();
      } catch {
        // observation only
      }
    });
  } catch {
    // observation only: tracing never fails a request
  }
}

/** What the upgrade's handler tells its span: the status it answered (101 once the WebSocket is open), and what it follows. */
export interface UpgradeTrace {
  answered(status: number): void;
  follows(mode: 'journal' | 'list'): void;
}

const NO_UPGRADE_TRACE: UpgradeTrace = { answered: () => undefined, follows: () => undefined };

/**
 * Trace one WebSocket upgrade (the viewer's /live): a SERVER span from the request to the socket's
 * close, so it covers the connection's life; its path without the query (which names the token).
 */
export function traceUpgrade(req: IncomingMessage, socket: { once(event: 'close', fn: () => void): unknown }, component: string): UpgradeTrace {
  try {
    const method = methodOf(req.method);
    const span = weftTracer().startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': pathOnly(req.url), 'url.scheme': 'http', 'weft.component': component, 'network.protocol.name': 'websocket' } });
    if (!span.isRecording()) return NO_UPGRADE_TRACE;
    socket.once('close', () => {
      try {
        span.end();
      } catch {
        // observation only
      }
    });
    return {
      answered: (status) => {
        span.setAttribute('http.response.status_code', status);
        if (status === 101) span.addEvent('websocket.open');
        else if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      },
      follows: (mode) => span.setAttribute('weft.live.follows', mode),
    };
  } catch {
    return NO_UPGRADE_TRACE;
  }
}
