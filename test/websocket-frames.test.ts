/**
 * The viewer's and the relay's WebSocket server side (inspector/websocket.ts): what `send` and
 * `sendMany` write is read back, message for message, by a real client (ws), across the three
 * frame-length encodings (7-bit, 16-bit, 64-bit) and multi-byte UTF-8.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import WebSocket from 'ws';
import { acceptWebSocket, type WebSocketConnection } from '../inspector/websocket.js';

let server: Server;
let connected: Promise<WebSocketConnection>;

beforeAll(async () => {
  server = createServer();
  connected = new Promise((resolve) => server.on('upgrade', (req, socket, head: Buffer) => resolve(acceptWebSocket(req, socket, head)!)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

test('send and sendMany deliver every message intact, in order, whatever its length', async () => {
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  const received: string[] = [];
  client.on('message', (data) => received.push(String(data)));
  await new Promise((resolve, reject) => (client.once('open', resolve), client.once('error', reject)));
  const ws = await connected;
  const texts = ['', 'a', 'é'.repeat(62), 'x'.repeat(125), 'y'.repeat(126), 'ü'.repeat(40_000), 'z'.repeat(65_535), '€'.repeat(30_000)];
  ws.send('first');
  ws.sendMany(texts);
  ws.sendMany([]);
  ws.send('last');
  const want = ['first', ...texts, 'last'];
  for (let waited = 0; received.length < want.length && waited < 10_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
  expect(received).toEqual(want);
  client.close();
});
