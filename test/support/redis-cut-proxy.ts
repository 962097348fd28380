/**
 * A TCP proxy in front of a private redis-server that can cut the connection at one chosen
 * command — the way a server killed or a network cut looks to a client with a command in flight:
 *
 * - `cutAt(marker, { deliver })`: the first client → server chunk that contains `marker` (e.g. a
 *   record kind inside an append script's arguments) is forwarded (`deliver: true`: the server runs
 *   it, its reply is dropped — a lost reply) or dropped (`deliver: false`: never reaches the server),
 *   and from then on nothing more is forwarded either way; a moment later every connection is cut
 *   and the proxy is down: a new connection is refused (`down: 'refuse'`, the server gone) or
 *   accepted and closed at once (`down: 'accept-and-close'`, a load balancer whose backend is gone).
 * - `restore()`: up again on the same port (Redis is back).
 *
 * Everything the clients send goes to the real server untouched until the cut, so what landed is
 * what the server says.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { freePort } from './redis-server.js';

export interface CutProxy {
  /** `redis://127.0.0.1:<proxy port>/0` */
  url: string;
  port: number;
  /** Arm the cut; resolves when it has happened (every connection closed, the proxy down). */
  cutAt(marker: string, options: { deliver: boolean; down?: 'refuse' | 'accept-and-close' }): Promise<void>;
  /** Listen again (after a cut). */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startCutProxy(targetPort: number): Promise<CutProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let armed: { marker: string; deliver: boolean; down: 'refuse' | 'accept-and-close'; done: () => void } | undefined;
  let frozen = false;
  let downMode: 'up' | 'refuse' | 'accept-and-close' = 'up';
  let server: Server | undefined;

  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  };

  const onConnection = (client: Socket) => {
    track(client);
    if (downMode !== 'up' || frozen) {
      client.destroy();
      return;
    }
    const upstream = connect({ host: '127.0.0.1', port: targetPort });
    track(upstream);
    client.on('data', (chunk: Buffer) => {
      if (frozen) return;
      const cut = armed;
      if (cut && chunk.toString('latin1').includes(cut.marker)) {
        armed = undefined;
        if (cut.deliver) upstream.write(chunk);
        frozen = true; // no reply reaches a client from now on, and nothing more reaches the server
        // Long enough for the server to run what was delivered; then every connection goes.
        setTimeout(() => void goDown(cut.down).then(cut.done), 200);
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!frozen) client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer(onConnection);
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        server = s;
        resolve();
      });
    });

  const stopListening = () =>
    new Promise<void>((resolve) => {
      const s = server;
      server = undefined;
      if (!s) return resolve();
      s.close(() => resolve());
    });

  async function goDown(mode: 'refuse' | 'accept-and-close') {
    downMode = mode;
    // A listener closes once its connections are gone: stop accepting, cut them, then wait.
    const stopped = mode === 'refuse' ? stopListening() : Promise.resolve();
    for (const socket of sockets) socket.destroy();
    await stopped;
  }

  await listen();
  return {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    cutAt(marker, { deliver, down = 'refuse' }) {
      return new Promise<void>((done) => {
        armed = { marker, deliver, down, done };
      });
    },
    async restore() {
      frozen = false;
      if (downMode === 'refuse') await listen();
      downMode = 'up';
    },
    async close() {
      armed = undefined;
      const stopped = stopListening();
      for (const socket of sockets) socket.destroy();
      await stopped;
    },
  };
}
