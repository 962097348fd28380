/**
 * `--metrics-port` on `weft serve` and `weft worker`: an HTTP endpoint (127.0.0.1 unless the flag
 * names a host: `HOST:PORT`) with
 *
 *   /metrics   Prometheus text (metrics.ts), the queue gauges refreshed first
 *   /healthz   200 while the process runs (liveness)
 *   /readyz    200 while Redis answers a PING within a second, else 503 (readiness); a process
 *              without Redis is always ready
 *
 * The readiness probe has a connection of its own that queues nothing while Redis is away, so an
 * answer comes within its bound whatever the state of the connections doing the work.
 */
import { createServer, type Server } from 'node:http';
import { METRICS, metricsText, onScrape } from './metrics.js';

export interface MetricsEndpointOptions {
  /** `PORT` or `HOST:PORT` (the flag's value). */
  listen: string;
  /** The Redis whose reachability is readiness; absent: always ready. */
  redisUrl?: string;
  /** BullMQ queues whose waiting jobs are counted at each scrape (with their BullMQ prefix). */
  queues?: { names: string[]; prefix: string };
}

export interface MetricsEndpoint {
  /** Where it listens (`host:port`). */
  address: string;
  close(): Promise<void>;
}

/** A `--metrics-port` value as host and port, or a message saying what is wrong with it. */
export function metricsListen(value: string): { host: string; port: number } | string {
  const m = /^(?:(.+):)?([0-9]{1,5})$/.exec(value);
  const port = m ? Number(m[2]) : NaN;
  if (!m || !(port >= 1 && port <= 65535)) return `--metrics-port must be PORT or HOST:PORT (1-65535), got ${JSON.stringify(value)}`;
  return { host: m[1] ?? '127.0.0.1', port };
}

const within = <T>(ms: number, work: Promise<T>): Promise<T> =>
  Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out')), ms).unref())]);

export async function startMetricsEndpoint(options: MetricsEndpointOptions): Promise<MetricsEndpoint> {
  const where = metricsListen(options.listen);
  if (typeof where === 'string') throw new Error(where);
  const closers: Array<() => Promise<unknown>> = [];
  let ping: (() => Promise<unknown>) | undefined;
  if (options.redisUrl !== undefined) {
    const { Redis } = await import('ioredis');
    const probe = new Redis(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 1_000, retryStrategy: () => 500, lazyConnect: false });
    probe.on('error', () => undefined);
    ping = () => probe.ping();
    closers.push(async () => probe.disconnect());
    METRICS.redisUp.set({}, 1);
  }
  if (options.queues && options.redisUrl !== undefined && options.queues.names.length > 0) {
    const { Queue } = await import('bullmq');
    const { Redis } = await import('ioredis');
    const connection = new Redis(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: null, retryStrategy: () => 500 });
    connection.on('error', () => undefined);
    const queues = options.queues.names.map((name) => new Queue(name, { connection, prefix: options.queues!.prefix }));
    for (const q of queues) q.on('error', () => undefined);
    const stop = onScrape(async () => {
      await Promise.all(
        queues.map(async (q) => {
          const counts = await within(1_000, q.getJobCounts('waiting', 'delayed', 'prioritized'));
          METRICS.waiting.set({ queue: q.name }, Object.values(counts).reduce((a, b) => a + b, 0));
        }),
      );
    });
    closers.push(async () => {
      stop();
      await Promise.allSettled(queues.map((q) => within(1_000, q.close())));
      connection.disconnect();
    });
  }
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reply = (code: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(code, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, 'GET only\n');
    if (path === '/healthz') return reply(200, 'ok\n');
    if (path === '/readyz') {
      if (!ping) return reply(200, 'ready\n');
      within(1_000, ping()).then(
        () => reply(200, 'ready\n'),
        (err: unknown) => reply(503, `not ready: Redis does not answer (${err instanceof Error ? err.message.slice(0, 120) : 'no answer'})\n`),
      );
      return;
    }
    if (path === '/metrics') {
      metricsText().then(
        (text) => reply(200, text, 'text/plain; version=0.0.4; charset=utf-8'),
        () => reply(500, 'metrics unavailable\n'),
      );
      return;
    }
    reply(404, 'not found: /metrics, /healthz, /readyz\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(where.port, where.host, () => resolve());
  });
  server.unref();
  return {
    address: `${where.host}:${where.port}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections?.();
      for (const close of closers) await close().catch(() => undefined);
    },
  };
}
