/**
 * The viewer's HTTP server traced (telemetry/http-span.ts, issue 34): one SERVER span per request
 * with `http.request.method`, `url.path` and `http.response.status_code` — the path without its
 * query string, so the viewer's token (`?token=…`) is in no span — and a span for each /live
 * connection that lasts until the socket closes, saying it opened (101) or why it was refused.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openLive } from '../bench/live-client.js';
import { createInspectorServer } from '../inspector/server.js';
import { MemoryStore } from '../stores/memory.js';
import { installTracing, type Tracing } from '../telemetry/setup.js';

const TOKEN = 'tok-s3cret-value-0123456789';
const exporter = new InMemorySpanExporter();
let tracing: Tracing;
let server: Server;
let origin = '';

beforeAll(async () => {
  tracing = await installTracing({ exporter, processor: 'simple' });
  server = createInspectorServer({ store: new MemoryStore(), token: TOKEN, loopback: true });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await tracing.shutdown(100);
});

const serverSpans = () => exporter.getFinishedSpans().filter((s) => s.attributes['weft.component'] !== undefined);
const everything = (s: ReadableSpan) => JSON.stringify({ name: s.name, attributes: s.attributes, events: s.events, status: s.status });

/** Wait (bounded) until a span matching `pick` has ended. */
async function spanWhere(pick: (s: ReadableSpan) => boolean): Promise<ReadableSpan> {
  for (let i = 0; i < 400; i++) {
    const found = serverSpans().find(pick);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no such span; have: ${serverSpans().map(everything).join('\n')}`);
}

describe("the viewer's HTTP spans", () => {
  test('a request with its token in the query: method, path and status, and the token in no span', async () => {
    const res = await fetch(`${origin}/api/invocations?token=${TOKEN}&status=open`);
    await res.arrayBuffer();
    const span = await spanWhere((s) => s.attributes['url.path'] === '/api/invocations');
    expect(span.name).toBe('GET');
    expect(span.attributes['http.request.method']).toBe('GET');
    expect(span.attributes['http.response.status_code']).toBe(res.status);
    for (const s of serverSpans()) expect(everything(s)).not.toContain(TOKEN);
  });

  test('a request without the token is traced with its 401', async () => {
    const res = await fetch(`${origin}/`, { method: 'HEAD' });
    expect(res.status).toBe(401);
    const span = await spanWhere((s) => s.attributes['http.request.method'] === 'HEAD');
    expect(span.attributes['url.path']).toBe('/');
    expect(span.attributes['http.response.status_code']).toBe(401);
  });

  test('a /live connection is a span from its opening to its close; a refused one says its status', async () => {
    const client = await openLive(origin, `/live?list=1&token=${TOKEN}`, () => undefined);
    client.close();
    await client.closed;
    const opened = await spanWhere((s) => s.attributes['url.path'] === '/live' && s.attributes['http.response.status_code'] === 101);
    expect(opened.attributes['weft.live.follows']).toBe('list');
    expect(opened.events.map((e) => e.name)).toContain('websocket.open');
    await expect(openLive(origin, '/live?list=1', () => undefined)).rejects.toThrow(/401/);
    await spanWhere((s) => s.attributes['url.path'] === '/live' && s.attributes['http.response.status_code'] === 401);
    for (const s of serverSpans()) expect(everything(s)).not.toContain(TOKEN);
  });
});
