/**
 * OpenTelemetry across processes (issue 34), with a private Redis and two `weft worker` processes
 * that export to an OTLP/HTTP receiver this test runs on 127.0.0.1: a travel run with `--otel` and
 * BullMQ dispatch is one trace — each worker's span is the child of the step attempt that dispatched
 * its job — and a worker's `--metrics-port` serves weft_ metrics during the run, `/healthz`, and a
 * `/readyz` that fails once its Redis is gone.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freePort, requireRedis, startRedis, type RedisServer } from './support/redis-server.js';
import { spawnWeft, startWeftWorker, waitFor, type WorkerProcess } from './support/weft-processes.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
}

const hasRedis = requireRedis();
const dir = mkdtempSync(join(tmpdir(), 'weft-otel-workers-'));
const spans: OtlpSpan[] = [];
let receiver: Server;
let redis: RedisServer;
let otlpPort = 0;
let metricsPort = 0;
const workers: WorkerProcess[] = [];

const attr = (s: OtlpSpan, key: string) => Object.values(s.attributes?.find((a) => a.key === key)?.value ?? {})[0];
const get = async (path: string) => {
  try {
    const res = await fetch(`http://127.0.0.1:${metricsPort}${path}`);
    return { status: res.status, text: await res.text() };
  } catch {
    return { status: 0, text: '' };
  }
};

beforeAll(async () => {
  if (!hasRedis) return;
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: OtlpSpan[] }> }> };
        for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
      } catch {
        // not JSON: not ours
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  otlpPort = await freePort();
  await new Promise<void>((resolve) => receiver.listen(otlpPort, '127.0.0.1', resolve));
  redis = await startRedis();
  metricsPort = await freePort();
}, 60_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  await redis?.stop().catch(() => undefined);
  receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

const otelEnv = () => ({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlpPort}`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'weft-test', OTEL_BSP_SCHEDULE_DELAY: '200' });

describe.skipIf(!hasRedis)('a traced travel run on two workers', () => {
  test('one trace: the workers\' spans are children of the dispatch spans; the metrics endpoint answers during the run and readiness fails without Redis', async () => {
    const common = ['--domain', 'travel', '--redis', redis.url, '--dir', join(dir, 'w'), '--otel'];
    workers.push(await startWeftWorker([...common, '--metrics-port', String(metricsPort)], otelEnv()));
    workers.push(await startWeftWorker(common, otelEnv()));
    expect((await get('/healthz')).status).toBe(200);

    const run = spawnWeft(['run', 'travel', 'Take me to Lisbon for the conference on the 12th, under 900 EUR', '--seed', '7', '--as-of', '2026-06-01T09:00:00Z', '--redis', redis.url, '--dispatch', 'bullmq', '--dir', join(dir, 'r'), '--otel', '--json'], otelEnv());
    // Scraped while the run goes on (and after): the worker's own counters appear.
    const scraped = await waitFor('weft_worker_jobs_total on /metrics', async () => {
      const m = await get('/metrics');
      return m.status === 200 && /^weft_worker_jobs_total\{actuator="[^"]+",outcome="ok"\} \d+/m.test(m.text) ? m.text : undefined;
    }, 120_000, 100);
    expect(scraped).toMatch(/^# TYPE weft_queue_jobs_waiting gauge$/m);
    expect(scraped).toMatch(/^weft_queue_jobs_waiting\{queue="weft-effects-travel-timers"\} \d+$/m);
    expect((await get('/readyz')).status).toBe(200);
    const done = await run.done;
    expect(done.code, done.stderr).toBe(0);
    const outcome = JSON.parse(done.stdout.trim().split('\n').at(-1)!) as { id: string; status: string };
    expect(outcome.status).toBe('completed');

    // The workers export on their own schedule: wait for a worker's span of the charge.
    const workerCharge = await waitFor('a worker span for card.charge', () => spans.find((s) => s.name === 'process card.charge'), 60_000, 100);
    const dispatch = spans.find((s) => s.name === 'execute_tool card.charge')!;
    expect(dispatch).toBeDefined();
    expect(workerCharge.traceId).toBe(dispatch.traceId);
    expect(workerCharge.parentSpanId).toBe(dispatch.spanId);
    expect(attr(workerCharge, 'weft.idempotency_key')).toBe(attr(dispatch, 'weft.idempotency_key'));
    expect(attr(dispatch, 'weft.invocation.id') ?? attr(spans.find((s) => s.name === 'weft run')!, 'weft.invocation.id')).toBe(outcome.id);
    // Every worker span hangs under a dispatch span of the same trace; both workers took jobs.
    await waitFor('spans from both workers', () => new Set(spans.filter((s) => s.name.startsWith('process ')).map((s) => attr(s, 'weft.worker'))).size === 2, 60_000, 100);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    for (const w of spans.filter((s) => s.name.startsWith('process '))) {
      expect(byId.get(w.parentSpanId!)?.name, w.name).toMatch(/^(execute_tool|compensate) /);
      expect(w.traceId).toBe(dispatch.traceId);
    }

    // Redis goes away: liveness stays, readiness fails.
    await redis.kill();
    await waitFor('/readyz to fail', async () => (await get('/readyz')).status === 503, 60_000, 200);
    expect((await get('/healthz')).status).toBe(200);
    expect((await get('/metrics')).text).toMatch(/^weft_worker_jobs_total/m);
  }, 300_000);
});
