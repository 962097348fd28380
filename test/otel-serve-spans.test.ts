/**
 * serve's own spans (telemetry/serve-spans.ts, issue 34): each poll is a span (`weft serve.repair`
 * for the first, which repairs the open set; `weft serve.poll` after), an error when the store did
 * not answer; an outage of the store is one `weft redis.outage` span from its start to its end, with
 * how long it lasted — and no error message (it may name the store's URL) in any of them.
 */
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Outage } from '../queue/outage.js';
import { serve, type ServeEvent } from '../runtime/serve.js';
import type { ServableRuntime } from '../runtime/servable-runtime.js';
import { MemoryStore } from '../stores/memory.js';
import { installTracing, type Tracing } from '../telemetry/setup.js';

const exporter = new InMemorySpanExporter();
let tracing: Tracing;

beforeAll(async () => {
  tracing = await installTracing({ exporter, processor: 'simple' });
});
afterAll(async () => {
  await tracing.shutdown(100);
});

const named = (prefix: string) => exporter.getFinishedSpans().filter((s) => s.name.startsWith(prefix));
const text = (s: ReadableSpan) => JSON.stringify({ attributes: s.attributes, status: s.status, events: s.events });

describe("serve's spans", () => {
  test('polls, a failed one an error, and the outage between a failed listing and the next good one', async () => {
    exporter.reset();
    const SECRET_URL = 'redis://:hunter2@db.internal:6379';
    const stop = new AbortController();
    const events: ServeEvent[] = [];
    let calls = 0;
    const runtime: ServableRuntime = {
      store: new MemoryStore(),
      options: {},
      resume: () => Promise.reject(new Error('nothing is servable here')),
      listOpen: async () => {
        calls++;
        if (calls === 1) throw new Error(`connect ECONNREFUSED ${SECRET_URL}`);
        if (calls >= 3) stop.abort();
        return [];
      },
      onWake: () => undefined,
    };
    await serve(runtime, { pollMs: 5, signal: stop.signal, onEvent: (e) => events.push(e), repairMs: 60_000 });
    expect(events.filter((e) => e.kind === 'outage').map((e) => (e as { state: string }).state)).toEqual(['started', 'ended']);

    const repair = named('weft serve.repair');
    const polls = named('weft serve.poll');
    // The first listing failed, so the next one repairs too (a repair counts once it answered).
    expect(repair.length).toBeGreaterThanOrEqual(1);
    expect(repair[0]!.status.code).toBe(2); // ERROR
    expect(repair[0]!.attributes['error.type']).toBe('store.unreachable');
    const answered = [...repair, ...polls].filter((s) => s.status.code !== 2);
    expect(answered.length).toBeGreaterThanOrEqual(1);
    for (const s of answered) expect(s.attributes['weft.serve.open']).toBe(0);

    const outages = named('weft redis.outage');
    expect(outages).toHaveLength(1);
    expect(outages[0]!.attributes['weft.outage.ongoing']).toBe(false);
    expect(typeof outages[0]!.attributes['weft.outage.ms']).toBe('number');
    for (const s of [...repair, ...polls, ...outages]) expect(text(s)).not.toContain('hunter2');
  });

  test('an outage still under way when the process stops is ended, marked ongoing', () => {
    exporter.reset();
    let now = 1_000_000;
    const outage = new Outage(() => undefined, () => now, 'weft worker');
    outage.unreachable('the connection closed');
    now += 1500;
    outage.stop();
    const [span] = named('weft redis.outage');
    expect(span).toBeDefined();
    expect(span!.attributes['weft.outage.ongoing']).toBe(true);
    expect(span!.attributes['weft.outage.ms']).toBe(1500);
    expect(span!.attributes['weft.outage.process']).toBe('weft worker');
  });
});
