/**
 * OpenTelemetry (issue 34), in this process with the SDK's in-memory exporter: the span tree of a
 * travel run (invocation → segment → epochs → model calls and step attempts, every parent link and
 * the attributes a backend reads); the same fingerprint with no provider as with the SDK on; a
 * throwing and a hanging exporter neither fail the run nor keep it from completing; a resume stays
 * in the invocation's trace, under a segment of its own; a fork is a trace of its own linked to its
 * parent's; a redacted argument — quoted in a failure message too — appears in no span.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import '../journal/ed25519-node.js';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { createRuntime, Runtime, type RuntimeOptions } from '../runtime/index.js';
import { defineDomain, type DomainContext } from '../runtime/domain.js';
import { travelDomain } from '../examples/travel/domain.js';
import { travelLibrary } from '../examples/travel/library.js';
import { installTracing, type Tracing } from '../telemetry/setup.js';
import { invocationSpanIdOf, traceIdOf } from '../telemetry/ids.js';
import { ActuatorError, type Actuator } from '../actors/actuator.js';
import type { Library } from '../htn/library/schema.js';

const root = mkdtempSync(join(tmpdir(), 'weft-otel-'));
const key = signingKeyFromSecret(new Uint8Array(32).fill(9));
const INTENT = travelDomain.intent!;
const CARD = 'card-visa-4242';
let n = 0;

/** An exporter that keeps spans, throws, or never answers, as the test says. */
class SwitchExporter {
  readonly memory = new InMemorySpanExporter();
  mode: 'keep' | 'throw' | 'hang' = 'keep';
  export(spans: ReadableSpan[], done: (r: { code: number }) => void): void {
    if (this.mode === 'throw') throw new Error('the collector is down');
    if (this.mode === 'hang') return;
    this.memory.export(spans, done);
  }
  async shutdown(): Promise<void> {}
  async forceFlush(): Promise<void> {}
}

const exporter = new SwitchExporter();
let tracing: Tracing | undefined;
let untracedFingerprint: string | undefined;

function workspace(options: Partial<RuntimeOptions> = {}) {
  const dir = join(root, `ws${n++}`);
  return createRuntime({ store: new FileStore(join(dir, 'store')), domain: travelDomain, stateDir: join(dir, 'state'), signingKey: key, sleep: async () => undefined, ...options });
}

const start = { seed: '7', asOf: travelDomain.asOf! };

beforeAll(async () => {
  // The same run with no provider registered first: its fingerprint is what tracing must not change.
  const runtime = workspace();
  untracedFingerprint = (await (await runtime.start(INTENT, start)).done).fingerprint;
  await runtime.close();
  tracing = await installTracing({ exporter, processor: 'simple' });
}, 120_000);

afterAll(async () => {
  await tracing?.shutdown(100);
  rmSync(root, { recursive: true, force: true });
});

const spansOf = (id: string) => exporter.memory.getFinishedSpans().filter((s) => s.spanContext().traceId === traceIdOf(id));
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const attr = (s: ReadableSpan, name: string) => s.attributes[name];

describe('the span tree of a travel run (embedded)', () => {
  let id = '';
  let spans: ReadableSpan[] = [];
  let fingerprint: string | undefined;

  beforeAll(async () => {
    exporter.mode = 'keep';
    const runtime = workspace();
    const result = await (await runtime.start(INTENT, start)).done;
    await runtime.close();
    id = result.id;
    fingerprint = result.fingerprint;
    spans = spansOf(id);
  }, 120_000);

  test('tracing changes no fingerprint', () => {
    expect(fingerprint).toBeDefined();
    expect(fingerprint).toBe(untracedFingerprint);
  });

  test('one trace, its id derived from the invocation id; the invocation span has the derived id and its attributes', () => {
    expect(spans.length).toBeGreaterThan(10);
    const root = spans.find((s) => s.name === 'invoke_agent weft')!;
    expect(root).toBeDefined();
    expect(root.spanContext().spanId).toBe(invocationSpanIdOf(id));
    expect(parentOf(root)).toBeUndefined();
    expect(root.attributes).toMatchObject({ 'weft.invocation.id': id, 'weft.tenant': 'default', 'weft.invocation.status': 'completed', 'weft.fingerprint': fingerprint, 'gen_ai.operation.name': 'invoke_agent', 'weft.library.digest': expect.stringMatching(/^[0-9a-f]{64}$/), 'weft.model.id': expect.any(String) });
  });

  test('segment → epochs → model calls and step attempts, every parent link', () => {
    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    const segment = spans.find((s) => s.name === 'weft run')!;
    expect(parentOf(segment)).toBe(invocationSpanIdOf(id));
    const epochs = spans.filter((s) => s.name.startsWith('epoch '));
    expect(epochs.map((s) => s.name).sort()).toEqual(['epoch 1', 'epoch 2', 'epoch 3', 'epoch 4']);
    for (const e of epochs) expect(parentOf(e)).toBe(segment.spanContext().spanId);
    const epoch2 = epochs.find((e) => e.name === 'epoch 2')!;
    expect(epoch2.attributes).toMatchObject({ 'weft.epoch': 2, 'weft.epoch.source': 'htn', 'weft.epoch.goal': 'book_trip', 'weft.epoch.outcome': 'completed' });
    for (const s of spans.filter((s) => s.name.startsWith('chat ') || s.name.startsWith('execute_tool '))) {
      expect(byId.get(parentOf(s)!)?.name, s.name).toMatch(/^epoch \d$/);
    }
    const actuators = spans.filter((s) => s.name.startsWith('execute_tool ')).map((s) => attr(s, 'weft.actuator'));
    expect(actuators).toEqual(expect.arrayContaining(['flights.search', 'hotels.search', 'airline.hold', 'hotel.hold', 'card.charge', 'airline.confirm', 'hotel.confirm', 'message.send', 'reminder.set', 'travel.observe']));
  });

  test('a model call is a CLIENT span named by the GenAI conventions', () => {
    const chats = spans.filter((s) => s.name.startsWith('chat '));
    expect(chats.length).toBe(5); // epoch 1 re-prompts once after a reply that is not JSON
    for (const c of chats) {
      expect(c.kind).toBe(2); // SpanKind.CLIENT
      expect(c.name).toBe(`chat ${attr(c, 'gen_ai.request.model')}`);
      expect(c.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': expect.any(String), 'weft.model.purpose': 'parse', 'weft.attempt': expect.any(Number) });
    }
    const epoch1 = spans.find((s) => s.name === 'epoch 1')!;
    expect(epoch1.events.map((e) => e.name)).toContain('model.rejected');
  });

  test('a step attempt carries its actuator, idempotency key, attempt, outcome and admission', () => {
    const charge = spans.find((s) => attr(s, 'weft.actuator') === 'card.charge')!;
    expect(charge.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'card.charge',
      'weft.idempotency_key': `${id}.2.2`,
      'weft.attempt': 1,
      'weft.step.outcome': 'ok',
      'weft.step.read_only': false,
      'weft.admission.decision': 'allow',
      'weft.admission.rule': 'weft:default',
    });
    const observe = spans.find((s) => attr(s, 'weft.actuator') === 'travel.observe')!;
    expect(attr(observe, 'weft.step.read_only')).toBe(true);
  });
});

describe('failure paths', () => {
  test.each(['throw', 'hang'] as const)('an exporter that %ss neither fails the run nor changes its fingerprint', async (mode) => {
    exporter.mode = mode;
    try {
      const runtime = workspace();
      const result = await (await runtime.start(INTENT, start)).done;
      await runtime.close();
      expect(result.status).toBe('completed');
      expect(result.fingerprint).toBe(untracedFingerprint);
    } finally {
      exporter.mode = 'keep';
    }
  }, 120_000);
});

describe('one trace across segments; a fork is a trace of its own', () => {
  test('a resume in another runtime continues the same trace under a segment of its own; records read back emit nothing', async () => {
    const dir = join(root, `ws${n++}`);
    const options = { store: new FileStore(join(dir, 'store')), domain: travelDomain, stateDir: join(dir, 'state'), signingKey: key, sleep: async () => undefined };
    const first = createRuntime(options);
    const id = Runtime.defaultId(INTENT, { ...start, tenant: 'acme' });
    const handle = await first.start(INTENT, { ...start, tenant: 'acme', id });
    handle.hibernate();
    expect((await handle.done).status).toBe('hibernated');
    await first.close();
    // Another runtime, as another process would be: nothing shared but the store and the id.
    const second = createRuntime({ ...options, store: new FileStore(join(dir, 'store')) });
    expect((await (await second.resume(id)).done).status).toBe('completed');
    await second.close();
    const spans = spansOf(id);
    const segments = spans.filter((s) => s.name.startsWith('weft '));
    expect(segments.map((s) => s.name).sort()).toEqual(['weft resume', 'weft run']);
    for (const s of segments) expect(parentOf(s)).toBe(invocationSpanIdOf(id));
    expect(segments.find((s) => s.name === 'weft run')!.attributes['weft.invocation.status']).toBe('hibernated');
    // Replay emits nothing: the resume read back the first segment's records, and no span repeats them.
    expect(spans.filter((s) => attr(s, 'weft.actuator') === 'flights.search')).toHaveLength(1);
    expect(spans.filter((s) => s.name === 'invoke_agent weft')).toHaveLength(1);
  }, 120_000);

  test('a fork is a new trace whose spans link to the parent invocation', async () => {
    const dir = join(root, `ws${n++}`);
    const runtime = createRuntime({ store: new FileStore(join(dir, 'store')), domain: travelDomain, stateDir: join(dir, 'state'), signingKey: key, sleep: async () => undefined });
    const parent = Runtime.defaultId(INTENT, { ...start, tenant: 'acme' });
    const first = await runtime.start(INTENT, { ...start, tenant: 'acme', id: parent });
    first.hibernate();
    expect((await first.done).status).toBe('hibernated');
    const v2 = JSON.parse(JSON.stringify(travelLibrary)) as Library;
    v2.methods.find((m) => m.name === 'direct-flight-hotel-near-venue')!.name = 'direct-flight-hotel-by-the-venue';
    const fork = await runtime.fork(parent, { atEpoch: 1, library: v2 });
    const result = await fork.done;
    await runtime.close();
    expect(result.status).toBe('completed');
    expect(traceIdOf(result.id)).not.toBe(traceIdOf(parent));
    const spans = spansOf(result.id);
    const linked = spans.filter((s) => s.links.some((l) => l.context.traceId === traceIdOf(parent) && l.context.spanId === invocationSpanIdOf(parent)));
    expect(linked.map((s) => s.name).sort()).toEqual(['invoke_agent weft', 'weft fork']);
    expect(linked[0]!.attributes['weft.fork.parent']).toBe(parent);
  }, 120_000);
});

describe('redaction', () => {
  test('a redacted argument appears in no span, not even quoted in a failure message', async () => {
    // The card is marked; the charge's first attempt fails with a message that quotes it.
    let failed = false;
    const quoting = (a: Actuator): Actuator =>
      a.name !== 'card.charge'
        ? a
        : { ...a, run: async (args, ctx) => {
            if (!failed) {
              failed = true;
              throw new ActuatorError('card.declined', 'transient', `card ${(args as { card: string }).card} declined, try again`);
            }
            return a.run.call(a, args, ctx);
          } };
    const domain = defineDomain({
      name: 'travel',
      libraries: travelDomain.libraries,
      observe: travelDomain.observe,
      evaluables: travelDomain.evaluables,
      actuators: (ctx: DomainContext) => { const given = travelDomain.actuators; return (typeof given === 'function' ? given(ctx) : given).map(quoting); },
      model: travelDomain.model,
      policy: travelDomain.policy,
      policies: travelDomain.policies,
      intent: travelDomain.intent,
      asOf: travelDomain.asOf,
      redact: { args: { 'card.charge': ['card'] } },
    } as never);
    const runtime = workspace({ domain });
    const result = await (await runtime.start(INTENT, start)).done;
    await runtime.close();
    const spans = spansOf(result.id);
    const charges = spans.filter((s) => attr(s, 'weft.actuator') === 'card.charge');
    expect(failed).toBe(true);
    expect(charges.length).toBeGreaterThanOrEqual(1);
    const text = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status, links: s.links })));
    expect(text).not.toContain(CARD);
    // The failed attempt's span says why, with the card cut out of the message.
    const declined = charges.find((s) => s.attributes['error.type'] === 'card.declined')!;
    expect(declined.status.message).toBe('card [redacted] declined, try again');
  }, 120_000);
});
