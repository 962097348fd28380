/**
 * The Stately relay (`--stately`, inspector/stately/), seen by a WebSocket client as Stately's inspector
 * would see it (no internet here: the client stands in for the hosted page):
 * - actors keyed by invocation id, their snapshots walking the epoch boundaries in the journal's
 *   order, per-step events from durable records, bounded snapshots with no intent or args;
 * - a hibernated invocation resumed in a second process appears at its restored state under the
 *   same actor, with `weft.resumed` instead of `xstate.init`; so does one that `serve` takes over
 *   once a decision is left for it;
 * - a client's messages are never relayed; a browser needs the token and the relay's own page; a
 *   slow client loses messages with a count while publishing never waits;
 * - an inspection observer that throws does not fail the run (nor change its fingerprint); one that
 *   is slow is detached after three slow calls, with a warning; one that returns a promise is not
 *   waited for.
 */
import { mkdtempSync, readFileSync, rmSync, mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import WebSocket from 'ws';
import '../journal/sha256-node.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { MemoryStore } from '../stores/memory.js';
import { StatelyRelay } from '../inspector/stately/relay.js';
import { eventMessage, MAX_SNAPSHOT_BYTES, snapshotMessage, boundedSnapshot } from '../inspector/stately/protocol.js';
import { createRuntime } from '../runtime/index.js';
import { travelDomain } from '../examples/travel/domain.js';
import { assertBuilt, repoRoot, weft, weftBin } from './support/cli.js';
import { spawnTracked } from './support/children.js';
import { requireRedis, startRedis, type RedisServer } from './support/redis-server.js';
import { startWeftWorker, type WorkerProcess } from './support/weft-processes.js';
import { writeStrictTravelDomain } from './support/strict-travel.js';

const root = mkdtempSync(path.join(tmpdir(), 'weft-stately-'));
const LISBON = 'Take me to Lisbon for the conference on the 12th, under 900 EUR';
const TRAVEL = ['--seed', '8', '--as-of', '2026-06-01T09:00:00Z'];

beforeAll(() => assertBuilt());
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Message {
  type: string;
  sessionId: string;
  snapshot?: { value: unknown; context: Record<string, unknown> };
  event?: { type: string; [k: string]: unknown };
  definition?: string;
}

/** A client of `url` that keeps every message until `close`. */
function client(url: string): Promise<{ messages: Message[]; ws: WebSocket; closed: Promise<void> }> {
  const ws = new WebSocket(url);
  const messages: Message[] = [];
  ws.on('message', (data) => messages.push(JSON.parse(String(data)) as Message));
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ messages, ws, closed }));
    ws.once('error', reject);
  });
}

/** Run `weft <args>` with --stately --port 0, connect a client once it prints the relay, and collect until it exits. */
async function watched(args: string[]): Promise<{ messages: Message[]; stdout: string; stderr: string; code: number | null }> {
  const child = spawnTracked(process.execPath, [weftBin, ...args, '--stately', '--port', '0', '--stately-wait', '60'], { label: `weft ${args[0]} --stately` });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c) => (stdout += c));
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (c) => {
      stderr += c;
      const m = /relay at (ws:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`weft exited (${code}) before its relay: ${stderr}`)));
  });
  const { messages, closed } = await client(url);
  const code = await new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (c) => resolve(c))));
  await closed;
  return { messages, stdout, stderr, code };
}

const journalOf = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { seq: number; kind: string; body: Record<string, unknown> });

describe('weft run --stately, seen by an inspector client', () => {
  let run: { messages: Message[]; result: { id: string; status: string; journal: string } };

  beforeAll(async () => {
    const out = await watched(['run', 'travel', LISBON, ...TRAVEL, '--dir', path.join(root, 'run'), '--json']);
    expect(out.code, out.stderr).toBe(0);
    run = { messages: out.messages, result: JSON.parse(out.stdout.trim().split('\n').at(-1)!) };
    expect(run.result.status).toBe('completed');
  });

  test('one actor, keyed by the invocation id, announced before anything else with the machine definition', () => {
    const actors = run.messages.filter((m) => m.type === '@xstate.actor');
    expect(actors.map((a) => a.sessionId)).toEqual([run.result.id]);
    expect(run.messages[0]!.type).toBe('@xstate.actor');
    expect(JSON.parse(actors[0]!.definition!).id).toBe('invocation');
    expect(new Set(run.messages.map((m) => m.sessionId))).toEqual(new Set([run.result.id]));
  });

  test("the snapshots walk the epoch boundaries in the journal's order", () => {
    const values = run.messages.filter((m) => m.type === '@xstate.snapshot').map((m) => m.snapshot!.value);
    const journal = journalOf(run.result.journal);
    const epochs = journal.filter((r) => r.kind === 'epoch.closed').length;
    // parse → decompose → admit → execute → boundary, once per epoch that planned; parse once more; then the end.
    const planned = journal.filter((r) => r.kind === 'epoch.derived').length;
    expect(epochs).toBe(planned);
    const expected = ['parse', ...Array.from({ length: planned }, () => ['decompose', 'admit', 'execute', 'boundary', 'parse']).flat(), 'finishing', 'completed'];
    expect(values).toEqual(expected);
    // The epoch in the snapshots only ever goes up, and reaches the journal's last.
    const seen = run.messages.filter((m) => m.type === '@xstate.snapshot').map((m) => m.snapshot!.context.epoch as number);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
  });

  test('per-step events: one per dispatch and completion the journal holds, in its order', () => {
    const journal = journalOf(run.result.journal);
    const fromJournal = journal.filter((r) => r.kind === 'step.dispatched' || r.kind === 'step.completed').map((r) => `${r.kind}#${String(r.body.step)}@${r.seq}`);
    const fromRelay = run.messages
      .filter((m) => m.type === '@xstate.event' && /^weft\.step\./.test(m.event!.type))
      .map((m) => `${m.event!.type.replace('weft.', '')}#${String(m.event!.step)}@${String(m.event!.seq)}`);
    expect(fromRelay).toEqual(fromJournal);
    expect(fromRelay.length).toBeGreaterThan(4);
  });

  test('snapshots are bounded and carry no intent, args or results', () => {
    const text = JSON.stringify(run.messages);
    expect(text).not.toContain('Lisbon');
    expect(text).not.toContain('conference');
    for (const m of run.messages) if (m.snapshot) expect(JSON.stringify(m.snapshot).length).toBeLessThanOrEqual(MAX_SNAPSHOT_BYTES);
    const huge = boundedSnapshot({ value: 'execute', context: { invocation: 'x'.repeat(10_000), done: Array(10_000).fill({ result: 'y'.repeat(100) }) } });
    expect(JSON.stringify(huge).length).toBeLessThanOrEqual(MAX_SNAPSHOT_BYTES);
  });
});

type Rec = ReturnType<typeof journalOf>[number];

/** What any relayed run must show: its one actor, its boundaries in order, a step event per step record. */
function expectFaithful(messages: Message[], id: string, journal: Rec[]): void {
  expect(messages[0]!.type).toBe('@xstate.actor');
  expect(messages.filter((m) => m.type === '@xstate.actor').map((m) => m.sessionId)).toEqual([id]);
  const values = messages.filter((m) => m.type === '@xstate.snapshot').map((m) => m.snapshot!.value);
  const planned = journal.filter((r) => r.kind === 'epoch.derived').length;
  expect(values).toEqual(['parse', ...Array.from({ length: planned }, () => ['decompose', 'admit', 'execute', 'boundary', 'parse']).flat(), 'finishing', 'completed']);
  const fromJournal = journal.filter((r) => r.kind.startsWith('step.')).map((r) => `${r.kind}#${String(r.body.step)}@${r.seq}`);
  const fromRelay = messages.filter((m) => /^weft\.step\./.test(m.event?.type ?? '')).map((m) => `${m.event!.type.replace('weft.', '')}#${String(m.event!.step)}@${String(m.event!.seq)}`);
  expect(fromRelay).toEqual(fromJournal);
  expect(fromRelay.length).toBeGreaterThan(1);
}

const HELPDESK = path.join(repoRoot, 'examples', 'helpdesk', 'helpdesk-domain.js');

describe("the README's domain (examples/helpdesk), embedded", () => {
  test('relayed like travel: its actor, boundaries and steps', async () => {
    const out = await watched(['run', HELPDESK, '--dir', path.join(root, 'helpdesk'), '--json']);
    expect(out.code, out.stderr).toBe(0);
    const result = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { id: string; status: string; journal: string };
    expect(result.status).toBe('completed');
    expectFaithful(out.messages, result.id, journalOf(result.journal));
  });
});

const redis = requireRedis();
describe.runIf(redis || process.env.CI === 'true')('on Redis, with a worker process', () => {
  let server: RedisServer;
  let worker: WorkerProcess | undefined;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await worker?.stop();
    await server?.stop();
  });

  const bundleJournal = async (id: string, dir: string): Promise<Rec[]> => {
    const exported = await weft(['export', id, '--redis', server.url, '--dir', dir]);
    expect(exported.code, exported.stderr).toBe(0);
    const bundle = JSON.parse(exported.stdout) as { journal: string };
    return bundle.journal.trim().split('\n').map((line) => JSON.parse(line) as Rec);
  };

  test('a travel run whose steps a worker runs, and the README domain in-process: each relayed faithfully', async () => {
    const dir = path.join(root, 'redis');
    worker = await startWeftWorker(['--domain', 'travel', '--redis', server.url, '--dir', dir]);
    const travel = await watched(['run', 'travel', LISBON, ...TRAVEL, '--redis', server.url, '--dir', dir, '--dispatch', 'bullmq', '--json']);
    expect(travel.code, travel.stderr).toBe(0);
    const t = JSON.parse(travel.stdout.trim().split('\n').at(-1)!) as { id: string; status: string };
    expect(t.status).toBe('completed');
    expectFaithful(travel.messages, t.id, await bundleJournal(t.id, dir));

    const helpdesk = await watched(['run', HELPDESK, '--redis', server.url, '--dir', dir, '--dispatch', 'in-process', '--json']);
    expect(helpdesk.code, helpdesk.stderr).toBe(0);
    const h = JSON.parse(helpdesk.stdout.trim().split('\n').at(-1)!) as { id: string; status: string };
    expect(h.status).toBe('completed');
    expectFaithful(helpdesk.messages, h.id, await bundleJournal(h.id, dir));
  });

  test('a run hibernated in Redis and resumed by another process on another folder continues the same actor at its restored state', async () => {
    const on = ['--redis', server.url, '--dispatch', 'in-process'];
    const first = await watched(['run', 'travel', LISBON, '--seed', '81', '--as-of', '2026-06-01T09:00:00Z', ...on, '--dir', path.join(root, 'redis-a'), '--hibernate', '--json']);
    const paused = JSON.parse(first.stdout.trim().split('\n').at(-1)!) as { id: string; status: string };
    expect(paused.status).toBe('hibernated');
    const second = await watched(['resume', paused.id, ...on, '--dir', path.join(root, 'redis-b'), '--json']);
    expect(second.code, second.stderr).toBe(0);
    const [actor, next] = second.messages;
    expect(actor).toMatchObject({ type: '@xstate.actor', sessionId: paused.id, snapshot: { value: 'hibernated' } });
    expect(next!.event).toEqual({ type: 'weft.resumed', state: 'hibernated' });
    expect(second.messages.filter((m) => m.type === '@xstate.snapshot').at(-1)!.snapshot!.value).toBe('completed');
    // Between them, the two processes relayed every step the journal holds, once, in its order.
    const journal = await bundleJournal(paused.id, path.join(root, 'redis-b'));
    const steps = (messages: Message[]) => messages.filter((m) => /^weft\.step\./.test(m.event?.type ?? '')).map((m) => `${m.event!.type.replace('weft.', '')}@${String(m.event!.seq)}`);
    expect([...steps(first.messages), ...steps(second.messages)]).toEqual(journal.filter((r) => r.kind.startsWith('step.')).map((r) => `${r.kind}@${r.seq}`));
    expect(steps(second.messages).length).toBeGreaterThan(1);
  });
});

describe('a hibernated invocation resumed in a second process', () => {
  test('appears at its restored state under the same actor, with weft.resumed instead of xstate.init', async () => {
    const dir = path.join(root, 'hibernate');
    const first = await watched(['run', 'travel', LISBON, ...TRAVEL, '--dir', dir, '--hibernate', '--json']);
    const paused = JSON.parse(first.stdout.trim().split('\n').at(-1)!) as { id: string; status: string };
    expect(paused.status).toBe('hibernated');
    expect(first.messages.filter((m) => m.type === '@xstate.snapshot').at(-1)!.snapshot!.value).toBe('hibernated');

    const second = await watched(['resume', paused.id, '--dir', dir, '--json']);
    expect(second.code, second.stderr).toBe(0);
    const [actor, next] = second.messages;
    expect(actor!.type).toBe('@xstate.actor');
    expect(actor!.sessionId).toBe(paused.id); // the same actor as in the first process
    expect(actor!.snapshot!.value).toBe('hibernated');
    expect(next!.event).toEqual({ type: 'weft.resumed', state: 'hibernated' });
    expect(second.messages.some((m) => m.event?.type === 'xstate.init')).toBe(false);
    expect(second.messages.filter((m) => m.type === '@xstate.snapshot').at(-1)!.snapshot!.value).toBe('completed');
  });
});

describe('an invocation that serve takes over', () => {
  test('continues the same actor: announced at awaitingApproval with weft.resumed, then walked to completed', async () => {
    const dir = path.join(root, 'takeover');
    mkdirSync(dir, { recursive: true });
    const domain = writeStrictTravelDomain(dir, { version: 'stately-takeover' });
    const first = await watched(['run', domain, '--dir', dir, '--json']);
    expect(first.code, first.stderr).toBe(0);
    const paused = JSON.parse(first.stdout.trim().split('\n').at(-1)!) as { id: string; status: string };
    expect(paused.status).toBe('awaiting_approval');
    expect(first.messages[0]!.sessionId).toBe(paused.id);
    expect(first.messages.filter((m) => m.type === '@xstate.snapshot').at(-1)!.snapshot!.value).toBe('awaitingApproval');
    const serve = spawnTracked(process.execPath, [weftBin, 'serve', '--domain', domain, '--dir', dir, '--poll-ms', '200', '--stately', '--port', '0'], { label: 'weft serve --stately' });
    let stderr = '';
    try {
      const url = await new Promise<string>((resolve, reject) => {
        serve.stderr!.on('data', (c) => {
          stderr += c;
          const m = /relay at (ws:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
          if (m) resolve(m[1]!);
        });
        serve.once('exit', (code) => reject(new Error(`weft serve exited (${code}) before its relay: ${stderr}`)));
      });
      const watcher = await client(url);
      // The decision is left for serve once its inspector client is there (serve does not wait for
      // one: a client that comes later is sent the actor where it stands, not its resumption).
      const approve = await weft(['approve', paused.id, '--by', 'ana', '--leave-to-serve', '--domain', domain, '--dir', dir, '--json']);
      expect(approve.code, approve.stderr).toBe(0);
      const completed = () => watcher.messages.some((m) => m.sessionId === paused.id && m.type === '@xstate.snapshot' && m.snapshot!.value === 'completed');
      for (let waited = 0; !completed() && waited < 60_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
      const mine = watcher.messages.filter((m) => m.sessionId === paused.id);
      expect(completed(), JSON.stringify(mine.map((m) => [m.type, m.event?.type, m.snapshot?.value]))).toBe(true);
      const [actor, next] = mine;
      expect(actor!.type).toBe('@xstate.actor'); // the same actor as the first process's, keyed by the invocation id
      expect(actor!.snapshot!.value).toBe('awaitingApproval');
      expect(next!.event).toEqual({ type: 'weft.resumed', state: 'awaitingApproval' });
      expect(mine.some((m) => m.event?.type === 'xstate.init')).toBe(false);
      expect(mine.some((m) => /^weft\.step\./.test(m.event?.type ?? ''))).toBe(true);
      watcher.ws.close();
    } finally {
      serve.kill('SIGTERM');
      await new Promise((resolve) => (serve.exitCode !== null || serve.signalCode !== null ? resolve(null) : serve.once('exit', resolve)));
    }
  });
});

describe('the relay', () => {
  let relay: StatelyRelay;
  beforeAll(async () => {
    relay = await StatelyRelay.start({ port: 0, maxQueued: 50, highWaterBytes: 16 * 1024 });
  });
  afterAll(async () => relay.close());

  test("a client's message is not relayed to another client", async () => {
    const a = await client(relay.url);
    const b = await client(relay.url);
    b.ws.send(JSON.stringify({ type: '@xstate.event', sessionId: 'intruder', event: { type: 'injected' } }));
    relay.publish(eventMessage('inv-1', { type: 'weft.step.completed' }, 1));
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (const c of [a, b]) {
      expect(c.messages.map((m) => m.event?.type)).toEqual(['weft.step.completed']);
      c.ws.close();
    }
  });

  test('a browser connection needs the token and the relay\'s own page as its Origin; a foreign Host is refused', async () => {
    const refused = (url: string, headers: Record<string, string>) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(url, { headers });
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.once('open', () => (ws.close(), resolve(101)));
        ws.once('error', () => resolve(-1));
      });
    const own = `http://127.0.0.1:${relay.port}`;
    expect(await refused(relay.url, { origin: 'https://evil.example' })).toBe(401);
    expect(await refused(relay.url, { origin: own })).toBe(401);
    expect(await refused(`${relay.url}/?token=${relay.token}`, { origin: 'https://evil.example' })).toBe(401);
    expect(await refused(`${relay.url}/?token=${relay.token}`, { origin: own })).toBe(101);
    expect(await refused(relay.url, { host: 'evil.example' })).toBe(403);
    expect((await fetch(`http://127.0.0.1:${relay.port}/`)).status).toBe(401);
    const page = await fetch(relay.pageUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("frame-src https://stately.ai");
  });

  test('a client that does not read loses messages with a count; publishing never waits; actors are never dropped', async () => {
    // A raw socket that completes the handshake and then never reads.
    const socket = connect(relay.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${relay.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.pause();
    const before = relay.stats();
    const big = boundedSnapshot({ value: 'execute', context: { invocation: 'inv-slow', tenant: 't'.repeat(150) } });
    for (let i = 0; i < 20_000; i++) relay.publish(snapshotMessage('inv-slow', big, { type: `e${i}` }, i)); // synchronous: returns at once
    const after = relay.stats();
    expect(after.published - before.published).toBe(20_000);
    expect(after.dropped - before.dropped).toBeGreaterThan(10_000);
    // A reading client that joins now is sent the actor table and the latest snapshot, not the backlog.
    const late = await client(relay.url);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(late.messages.length).toBeLessThan(100);
    late.ws.close();
    socket.destroy();
  });
});

describe('inspection is observation only', () => {
  test('an observer that throws on every event neither fails the run nor changes its fingerprint', async () => {
    const dir = path.join(root, 'throwing');
    mkdirSync(dir, { recursive: true });
    const key = signingKeyFromSecret(new Uint8Array(32).fill(9));
    const go = async (inspect?: () => void) => {
      const runtime = createRuntime({ store: new MemoryStore(), domain: travelDomain, stateDir: path.join(dir, inspect ? 'a' : 'b'), signingKey: key, sleep: async () => undefined, ...(inspect ? { inspect } : {}) });
      const handle = await runtime.start(travelDomain.intent!, { tenant: 't1', seed: 1, asOf: travelDomain.asOf!, id: 'inv-throwing' });
      return handle.done;
    };
    let calls = 0;
    const thrown = await go(() => {
      calls++;
      throw new Error('an observer that breaks');
    });
    const plain = await go();
    expect(calls).toBeGreaterThan(10);
    expect(thrown.status).toBe('completed');
    expect(thrown.fingerprint).toBe(plain.fingerprint);
  });

  test('a slow observer is detached after three slow calls, with one warning; the run completes with the same fingerprint', async () => {
    const dir = path.join(root, 'slow');
    mkdirSync(dir, { recursive: true });
    const key = signingKeyFromSecret(new Uint8Array(32).fill(9));
    const go = async (id: string, inspect?: () => void) => {
      const runtime = createRuntime({ store: new MemoryStore(), domain: travelDomain, stateDir: path.join(dir, id), signingKey: key, sleep: async () => undefined, ...(inspect ? { inspect } : {}) });
      const handle = await runtime.start(travelDomain.intent!, { tenant: 't1', seed: 1, asOf: travelDomain.asOf!, id: 'inv-slow' });
      return handle.done;
    };
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    let calls = 0;
    try {
      const slowed = await go('slow', () => {
        calls++;
        const until = performance.now() + 80; // holds the transition it is called in
        while (performance.now() < until) {
          /* busy */
        }
      });
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      const plain = await go('plain');
      expect(slowed.status).toBe('completed');
      expect(slowed.fingerprint).toBe(plain.fingerprint);
      // Called until it had been slow three times, then never again for the rest of the run.
      expect(calls).toBe(3);
      const detached = warnings.filter((w) => (w as { code?: string }).code === 'WEFT_INSPECT_OBSERVER_DETACHED');
      expect(detached).toHaveLength(1);
      expect(detached[0]!.message).toMatch(/detached: 3 of its calls took more than 50 ms/);
    } finally {
      process.off('warning', onWarning);
    }
  });

  test('an observer that returns a promise that never settles is not waited for', async () => {
    const key = signingKeyFromSecret(new Uint8Array(32).fill(9));
    let calls = 0;
    const runtime = createRuntime({
      store: new MemoryStore(),
      domain: travelDomain,
      stateDir: path.join(root, 'pending-observer'),
      signingKey: key,
      sleep: async () => undefined,
      inspect: (() => {
        calls++;
        return new Promise<void>(() => undefined);
      }) as unknown as () => void,
    });
    const handle = await runtime.start(travelDomain.intent!, { tenant: 't1', seed: 1, asOf: travelDomain.asOf!, id: 'inv-pending-observer' });
    expect((await handle.done).status).toBe('completed');
    expect(calls).toBeGreaterThan(10);
  });
});
