/**
 * The server side of a WebSocket (RFC 6455), as small as the viewer needs: the handshake on Node's
 * own `upgrade` event, text messages sent to the page, and the control frames a browser sends
 * (close, ping). Whatever the page sends besides is read and ignored — the viewer's sockets only
 * ever carry updates to the page. No dependency: Node's http server hands over the socket, and
 * framing one direction is a few dozen lines.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
/** A page never needs to send more than a control frame; anything larger ends the connection. */
const MAX_INCOMING = 64 * 1024;

export interface WebSocketConnection {
  /** Send one text message (dropped once the connection is closing). */
  send(text: string): void;
  /** Send several text messages in one write to the socket (one syscall, not one per message). */
  sendMany(texts: readonly string[]): void;
  /** Close the connection (a close frame — 1000 normal, or the code and reason given — then the socket). */
  close(code?: number, reason?: string): void;
  /** Called once, when the connection has ended for whatever reason. */
  onClose(listener: () => void): void;
  /** Bytes written but not yet taken by the network (the socket's own buffer): a slow reader's backlog. */
  buffered(): number;
  /** Called each time the socket's buffer has drained. */
  onDrain(listener: () => void): void;
}

/** Answer an upgrade request that may not proceed with an HTTP status and a one-line reason, then end the socket. */
export function refuseUpgrade(socket: Duplex, status: number, reason: string, message: string, headers: Record<string, string> = {}): void {
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  const body = Buffer.from(message, 'utf8');
  socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${body.length}\r\n${extra}connection: close\r\n\r\n${message}`);
}

/** Complete the handshake of a WebSocket upgrade request, or refuse it (400) when it is not a valid one. */
export function acceptWebSocket(req: IncomingMessage, socket: Duplex, head: Buffer): WebSocketConnection | undefined {
  const key = req.headers['sec-websocket-key'];
  if (String(req.headers.upgrade).toLowerCase() !== 'websocket' || typeof key !== 'string' || req.headers['sec-websocket-version'] !== '13') {
    refuseUpgrade(socket, 400, 'Bad Request', 'weft inspect: not a WebSocket handshake (version 13)\n');
    return undefined;
  }
  const accept = createHash('sha1').update(key + GUID).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept}\r\n\r\n`);
  return connection(socket, head);
}

function connection(socket: Duplex, head: Buffer): WebSocketConnection {
  let open = true;
  let finished = false;
  let pending = head.length ? Buffer.from(head) : Buffer.alloc(0);
  const listeners: Array<() => void> = [];
  const ended = () => {
    if (finished) return;
    finished = true;
    open = false;
    for (const listener of listeners.splice(0)) listener();
  };
  const write = (opcode: number, payload: Buffer) => {
    if (socket.destroyed || !socket.writable) return;
    socket.write(Buffer.concat([frameHeader(opcode, payload.length), payload]));
  };
  const close = (code = 1000, reason = '') => {
    if (finished) return;
    const status = Buffer.alloc(2);
    status.writeUInt16BE(code);
    write(0x8, Buffer.concat([status, Buffer.from(reason, 'utf8').subarray(0, 123)])); // a control frame's payload is at most 125 bytes
    socket.end();
    ended();
  };
  const read = () => {
    for (;;) {
      const frame = parseFrame(pending);
      if (frame === 'incomplete') return;
      if (frame === 'too-large') return close(1009);
      pending = pending.subarray(frame.size);
      if (frame.opcode === 0x8) return close();
      if (frame.opcode === 0x9) write(0xa, frame.payload);
    }
  };
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    read();
  });
  socket.on('close', ended);
  socket.on('error', () => socket.destroy());
  socket.on('end', () => socket.end());
  if (pending.length) queueMicrotask(read);
  return {
    send: (text) => {
      if (open) write(0x1, Buffer.from(text, 'utf8'));
    },
    sendMany: (texts) => {
      if (!open || texts.length === 0 || socket.destroyed || !socket.writable) return;
      // One buffer for every frame, each payload encoded straight into it.
      const lengths = texts.map((text) => Buffer.byteLength(text, 'utf8'));
      const out = Buffer.allocUnsafe(lengths.reduce((sum, n) => sum + headerLength(n) + n, 0));
      let at = 0;
      texts.forEach((text, i) => {
        at += writeFrameHeader(out, at, 0x1, lengths[i]!);
        at += out.write(text, at, 'utf8');
      });
      socket.write(out);
    },
    close,
    onClose: (listener) => {
      if (finished) listener();
      else listeners.push(listener);
    },
    buffered: () => socket.writableLength,
    onDrain: (listener) => void socket.on('drain', listener),
  };
}

/** How long a final frame's header is for a payload of `length` bytes. */
function headerLength(length: number): number {
  return length < 126 ? 2 : length < 65536 ? 4 : 10;
}

/** Write a final frame's header (as frameHeader) into `out` at `at`; returns its length. */
function writeFrameHeader(out: Buffer, at: number, opcode: number, length: number): number {
  out[at] = 0x80 | opcode;
  if (length < 126) {
    out[at + 1] = length;
    return 2;
  }
  if (length < 65536) {
    out[at + 1] = 126;
    out.writeUInt16BE(length, at + 2);
    return 4;
  }
  out[at + 1] = 127;
  out.writeBigUInt64BE(BigInt(length), at + 2);
  return 10;
}

/** A final frame's header (FIN set, no mask: a server's frames are not masked). */
function frameHeader(opcode: number, length: number): Buffer {
  if (length < 126) return Buffer.from([0x80 | opcode, length]);
  if (length < 65536) {
    const b = Buffer.alloc(4);
    b[0] = 0x80 | opcode;
    b[1] = 126;
    b.writeUInt16BE(length, 2);
    return b;
  }
  const b = Buffer.alloc(10);
  b[0] = 0x80 | opcode;
  b[1] = 127;
  b.writeBigUInt64BE(BigInt(length), 2);
  return b;
}

/** One frame from the start of `buf` (unmasked), or why there is none yet. */
function parseFrame(buf: Buffer): { opcode: number; payload: Buffer; size: number } | 'incomplete' | 'too-large' {
  if (buf.length < 2) return 'incomplete';
  const opcode = buf[0]! & 0x0f;
  const masked = (buf[1]! & 0x80) !== 0;
  let length = buf[1]! & 0x7f;
  let at = 2;
  if (length === 126) {
    if (buf.length < 4) return 'incomplete';
    length = buf.readUInt16BE(2);
    at = 4;
  } else if (length === 127) {
    if (buf.length < 10) return 'incomplete';
    const big = buf.readBigUInt64BE(2);
    if (big > BigInt(MAX_INCOMING)) return 'too-large';
    length = Number(big);
    at = 10;
  }
  if (length > MAX_INCOMING) return 'too-large';
  const mask = masked ? buf.subarray(at, at + 4) : undefined;
  if (masked) at += 4;
  if (buf.length < at + length) return 'incomplete';
  const payload = Buffer.from(buf.subarray(at, at + length));
  if (mask) for (let i = 0; i < payload.length; i++) payload[i] = payload[i]! ^ mask[i % 4]!;
  return { opcode, payload, size: at + length };
}
