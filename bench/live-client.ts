/**
 * A WebSocket client for the viewer's `/live` (inspector/live.ts), as small as a bench or a test
 * needs: the handshake over node:http, then the server's text frames decoded (unmasked, FIN set or
 * continued, 7/16/64-bit lengths), each message handed to `onMessage` with the time it arrived
 * (performance.now() in this process). Node 20 has no WebSocket client of its own; the server side
 * (inspector/websocket.ts) frames only text and close, so this reads only those (ping is ignored).
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { Socket } from 'node:net';

export interface LiveClient {
  close(): void;
  /** Resolves when the connection has ended. */
  closed: Promise<void>;
}

/** Open `ws://host:port<path>` (path with its query) on the viewer at `origin` (http://host:port). */
export function openLive(origin: string, path: string, onMessage: (text: string, at: number) => void): Promise<LiveClient> {
  const { hostname, port, host } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request({
      host: hostname,
      port: Number(port),
      path,
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': randomBytes(16).toString('base64'), host, origin },
    });
    req.on('response', (res) => {
      res.resume();
      reject(new Error(`/live answered ${res.statusCode} instead of switching protocols`));
    });
    req.on('error', reject);
    req.on('upgrade', (_res, socket: Socket, head: Buffer) => {
      let buffer: Buffer = Buffer.alloc(0);
      let parts: Buffer[] = [];
      let done!: () => void;
      const closed = new Promise<void>((r) => (done = r));
      socket.on('close', () => done());
      socket.on('error', () => socket.destroy());
      const take = (chunk: Buffer) => {
        const at = performance.now();
        buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
        for (;;) {
          if (buffer.length < 2) return;
          const fin = (buffer[0]! & 0x80) !== 0;
          const opcode = buffer[0]! & 0x0f;
          let length = buffer[1]! & 0x7f;
          let offset = 2;
          if (length === 126) {
            if (buffer.length < 4) return;
            length = buffer.readUInt16BE(2);
            offset = 4;
          } else if (length === 127) {
            if (buffer.length < 10) return;
            length = Number(buffer.readBigUInt64BE(2));
            offset = 10;
          }
          if (buffer.length < offset + length) return;
          const payload = buffer.subarray(offset, offset + length);
          buffer = buffer.subarray(offset + length);
          if (opcode === 0x8) {
            socket.end();
            return;
          }
          if (opcode === 0x1 || opcode === 0x0) {
            parts.push(payload);
            if (fin) {
              const text = Buffer.concat(parts).toString('utf8');
              parts = [];
              onMessage(text, at);
            }
          }
        }
      };
      socket.on('data', take);
      // Frames that came with the handshake's answer.
      if (head.length > 0) take(head);
      resolve({
        close: () => {
          // A masked close frame (a client must mask), then the socket.
          const mask = randomBytes(4);
          socket.end(Buffer.concat([Buffer.from([0x88, 0x80]), mask]));
        },
        closed,
      });
    });
    req.end();
  });
}
