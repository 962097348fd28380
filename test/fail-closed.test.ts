/**
 * Fail closed (behaviour flag 1), one regression test per defect, through the library API on the
 * travel domain (MemoryStore / FileStore, model objects whose behaviour a test switches, and a
 * local OpenAI-compatible HTTP server for the transport failures). Each test asserts what a user
 * relies on and what the runtime before flag 1 did not do:
 *
 * 1. transport and configuration failures end recorded and resumable (suspended) or sealed (failed),
 *    never as a thrown error and an open journal; a runtime-side error suspends with its reason;
 * 2. a reply or an actuator result holding a lone surrogate is recorded well-formed and refused;
 * 3. the gap path: authored fragments pass the task's constraints and the policy's envelope, the
 *    authoring call is admitted, authored effects need a person and every step's admission is recorded;
 * 4. the authoring prompt carries the goal, the operators, the observed state and the format;
 * 5. oversized replies are kept bounded in the journal, the snapshot and the reasons;
 * 6. a reply with duplicate member names is rejected, never "last one wins".
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import type { Actuator } from '../actors/actuator.js';
import type { Model, ModelRequest } from '../actors/model/model.js';
import { OpenAiModel } from '../actors/model/openai.js';
import { renderPrompt } from '../actors/model/prompt.js';
import { travelPolicy } from '../examples/travel/app.js';
import { travelPackPolicy } from '../examples/travel/policy-pack.js';
import { travelDomain } from '../examples/travel/domain.js';
import { readTravelState } from '../examples/travel/state.js';
import { TRAVEL_GOALS, TRAVEL_INTENT, TRAVEL_SUMMARY } from '../examples/travel/transcript.js';
import type { JournalRecord } from '../journal/records.js';
import { publicKeyOf, signingKeyFromSecret } from '../journal/seal.js';
import type { JournalStore, Lease } from '../journal/store.js';
import { FileStore } from '../stores/file.js';
import { MemoryStore } from '../stores/memory.js';
import type { InvocationLimits } from '../machines/context.js';
import type { AdmissionPolicy } from '../machines/policy.js';
import { createRuntime } from '../runtime/index.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(11));
const publicKey = publicKeyOf(key);
const root = mkdtempSync(path.join(tmpdir(), 'weft-fail-closed-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let seedCounter = 0;
/** A fresh start (its own seed, so its own invocation id). */
const startOpts = () => ({ tenant: 't1', seed: `fc-${++seedCounter}`, asOf: travelDomain.asOf! });

type Body = Record<string, any>;
const bodies = (records: JournalRecord[], kind: string): Body[] => records.filter((r) => r.kind === kind).map((r) => r.body as Body);
const kinds = (records: JournalRecord[]) => records.map((r) => r.kind);

/** A model whose answer a test switches; it keeps one id, so the pin matches on resume. */
class SwitchModel implements Model {
  readonly params = {};
  readonly requests: ModelRequest[] = [];
  constructor(
    readonly id: string,
    public answer: (request: ModelRequest) => string | Promise<string>,
  ) {}
  async complete(request: ModelRequest): Promise<{ text: string }> {
    this.requests.push(request);
    return { text: await this.answer(request) };
  }
}

const goalText = (g: { task: string; args: ReadonlyArray<string | number> }) => JSON.stringify({ goal: { task: g.task, args: [...g.args] } });

/** The travel demo's goals, one per epoch, then done — what a good model answers to a parse request. */
function travelAnswer(request: ModelRequest): string {
  if (request.purpose !== 'parse') throw new Error(`no authoring expected (epoch ${request.epoch})`);
  const goals = [TRAVEL_GOALS.findOptions, TRAVEL_GOALS.bookTrip, TRAVEL_GOALS.shareItinerary];
  return request.epoch <= goals.length ? goalText(goals[request.epoch - 1]!) : JSON.stringify({ done: true, summary: TRAVEL_SUMMARY });
}

interface TravelSetup {
  model?: Model;
  store?: JournalStore;
  stateDir?: string;
  limits?: Partial<InvocationLimits>;
  policy?: AdmissionPolicy;
  wrap?: (actuators: Actuator[]) => Actuator[];
}

function travel(setup: TravelSetup = {}) {
  const store = setup.store ?? new MemoryStore();
  const stateDir = setup.stateDir ?? mkdtempSync(path.join(root, 'state-'));
  const actuators = travelDomain.actuators({ stateDir });
  const runtime = createRuntime({
    store,
    domain: travelDomain,
    stateDir,
    actuators: setup.wrap ? setup.wrap(actuators) : actuators,
    ...(setup.model ? { model: setup.model } : {}),
    ...(setup.policy ? { policy: setup.policy, policies: [travelPolicy] } : {}),
    ...(setup.limits ? { limits: setup.limits } : {}),
    signingKey: key,
    sleep: async () => undefined,
  });
  return { runtime, store, stateDir };
}

/** SHA-256 (hex) of the UTF-16LE code units of `text`, computed here independently of the runtime. */
function utf16Sha256(text: string): string {
  const bytes = new Uint8Array(text.length * 2);
  for (let i = 0; i < text.length; i++) {
    bytes[2 * i] = text.charCodeAt(i) & 0xff;
    bytes[2 * i + 1] = text.charCodeAt(i) >> 8;
  }
  return createHash('sha256').update(bytes).digest('hex');
}

const isWellFormed = (text: string) => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Sealed and intact: the last record is the seal, the chain verifies with the key, the fingerprint matches. */
async function expectSealed(runtime: ReturnType<typeof travel>['runtime'], id: string, fingerprint: string | undefined) {
  expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
  const records = await runtime.store.read(id);
  expect(records.at(-1)!.kind).toBe('invocation.sealed');
  const report = await runtime.verify(id, publicKey);
  expect(report.ok, String(report.error)).toBe(true);
  expect(report.fingerprint).toBe(fingerprint);
  return records;
}

// ── a local OpenAI-compatible endpoint ───────────────────────────────────────────────────────

type Answer = { status: number; body: string };
let server: Server;
let baseUrl = '';
let respond: (req: IncomingMessage, body: { messages: Array<{ role: string; content: string }> }) => Answer = () => ({ status: 500, body: 'unset' });
let hits = 0;

const completion = (content: string): Answer => ({ status: 200, body: JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }) });

/** The travel goals by the "Epoch: N" line the parse prompt carries. */
function travelOverHttp(body: { messages: Array<{ role: string; content: string }> }): Answer {
  const user = body.messages.find((m) => m.role === 'user')!.content;
  const epoch = Number(/Epoch: (\d+)/.exec(user)?.[1] ?? 0);
  const goals = [TRAVEL_GOALS.findOptions, TRAVEL_GOALS.bookTrip, TRAVEL_GOALS.shareItinerary];
  return completion(epoch >= 1 && epoch <= 3 ? goalText(goals[epoch - 1]!) : JSON.stringify({ done: true, summary: TRAVEL_SUMMARY }));
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      hits++;
      const answer = respond(req, JSON.parse(raw));
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  hits = 0;
});

const endpoint = (apiKey = 'sk-test') => new OpenAiModel({ baseUrl, model: 'm', apiKey, timeoutMs: 5_000 });

// ── 1 ────────────────────────────────────────────────────────────────────────────────────────

describe('defect 1: transport and configuration failures are recorded and end suspended or sealed, never thrown', () => {
  test('HTTP 500 is transient: each attempt recorded, then suspended (resumable); fixed, resume completes sealed', async () => {
    respond = () => ({ status: 500, body: 'upstream down' });
    const store = new MemoryStore();
    const first = travel({ model: endpoint(), store, limits: { modelAttempts: 2 } });
    const handle = await first.runtime.start(TRAVEL_INTENT, startOpts());
    const result = await handle.done;
    expect(result).toMatchObject({ status: 'suspended', suspension: { class: 'transient', state: 'parse' } });
    expect(result.fingerprint).toBeUndefined();
    const records = await store.read(handle.id);
    expect(kinds(records)).toEqual(['invocation.pinned', 'model.requested', 'model.failed', 'model.requested', 'model.failed']);
    expect(bodies(records, 'model.failed').map((b) => [b.attempt, b.class])).toEqual([[1, 'transient'], [2, 'transient']]);
    expect(hits).toBe(2);
    expect((await first.runtime.verify(handle.id)).ok).toBe(true);

    respond = (_req, body) => travelOverHttp(body);
    const again = travel({ model: endpoint(), store, stateDir: first.stateDir, limits: { modelAttempts: 2 } });
    const done = await (await again.runtime.resume(handle.id)).done;
    expect(done.status).toBe('completed');
    await expectSealed(again.runtime, handle.id, done.fingerprint);
    expect((await again.runtime.replay(handle.id)).fingerprint).toBe(done.fingerprint);
  });

  test('HTTP 401 suspends (class credentials); with a good key, resume completes and replays to its fingerprint', async () => {
    respond = (req, body) => (req.headers.authorization === 'Bearer sk-good' ? travelOverHttp(body) : { status: 401, body: '{"error":"invalid api key"}' });
    const store = new MemoryStore();
    const first = travel({ model: endpoint('sk-bad'), store });
    const handle = await first.runtime.start(TRAVEL_INTENT, startOpts());
    const result = await handle.done;
    expect(result.status).toBe('suspended');
    expect(result.suspension).toMatchObject({ class: 'credentials', code: 'model.credentials' });
    expect(result.suspension!.fix).toContain(`weft resume ${handle.id}`);
    const records = await store.read(handle.id);
    expect(records.at(-1)!.kind).toBe('model.failed');
    expect(records.at(-1)!.body).toMatchObject({ class: 'credentials', attempt: 1 });
    expect(hits).toBe(1); // not retried: a bad key does not get better by asking again

    const fixed = travel({ model: endpoint('sk-good'), store, stateDir: first.stateDir });
    const done = await (await fixed.runtime.resume(handle.id)).done;
    expect(done.status).toBe('completed');
    const all = await expectSealed(fixed.runtime, handle.id, done.fingerprint);
    expect(bodies(all, 'model.failed')).toHaveLength(1);
    const replay = await fixed.runtime.replay(handle.id);
    expect(replay).toMatchObject({ status: 'completed', sealed: true, fingerprint: done.fingerprint });
  });

  test('HTTP 404 before any reply fails sealed, telling to start a new run with the right model', async () => {
    respond = () => ({ status: 404, body: '{"error":"model m not found"}' });
    const { runtime, store } = travel({ model: endpoint() });
    const handle = await runtime.start(TRAVEL_INTENT, startOpts());
    const result = await handle.done;
    expect(result.status).toBe('failed');
    expect(result.reason).toMatch(/start a new run with the right model/);
    const records = await expectSealed(runtime, handle.id, result.fingerprint);
    expect(bodies(records, 'model.failed')).toEqual([expect.objectContaining({ class: 'permanent', code: 'model.not_found' })]);
    expect(bodies(records, 'invocation.failed')[0]).toMatchObject({ code: 'model.not_found' });
    expect(hits).toBe(1);
    void store;
  });

  test('a 2xx that is not a chat completion, or a 404 after replies came: suspended (class endpoint), recorded', async () => {
    respond = () => ({ status: 200, body: '<html><body>Welcome to nginx!</body></html>' });
    const html = travel({ model: endpoint() });
    const first = await html.runtime.start(TRAVEL_INTENT, startOpts());
    expect(await first.done).toMatchObject({ status: 'suspended', suspension: { class: 'endpoint', code: 'model.bad_envelope' } });
    expect((await html.store.read(first.id)).at(-1)!.body).toMatchObject({ class: 'endpoint', code: 'model.bad_envelope' });

    // Epoch 1 is answered; the endpoint then moves (404): a person fixes --model-url and resumes.
    respond = (_req, body) => (/Epoch: 1\b/.test(body.messages.find((m) => m.role === 'user')!.content) ? travelOverHttp(body) : { status: 404, body: 'gone' });
    const moved = travel({ model: endpoint() });
    const second = await moved.runtime.start(TRAVEL_INTENT, startOpts());
    const result = await second.done;
    expect(result).toMatchObject({ status: 'suspended', suspension: { class: 'endpoint', code: 'model.not_found', state: 'parse' } });
    expect(result.fingerprint).toBeUndefined();
    respond = (_req, body) => travelOverHttp(body);
    const done = await (await moved.runtime.resume(second.id)).done;
    expect(done.status).toBe('completed');
    await expectSealed(moved.runtime, second.id, done.fingerprint);
  });

  test('an intent the scripted model has no reply for fails sealed (model.no_scripted_reply) and verifies', async () => {
    const { runtime } = travel(); // the domain's own ScriptedModel
    const handle = await runtime.start('Find me a cheap hotel in Porto next month', startOpts());
    const result = await handle.done;
    expect(result.status).toBe('failed');
    expect(result.reason).toMatch(/no reply for this request/);
    const records = await expectSealed(runtime, handle.id, result.fingerprint);
    expect(bodies(records, 'invocation.failed')[0]).toMatchObject({ code: 'model.no_scripted_reply', class: 'permanent' });
    expect((await runtime.replay(handle.id)).fingerprint).toBe(result.fingerprint);
  });

  test.each([
    ['empty', ''],
    ['whitespace only', '  \n\t '],
  ])('an %s intent fails sealed with intent.empty before any model call', async (_name, intent) => {
    const model = new SwitchModel('switch:travel', travelAnswer);
    const { runtime } = travel({ model });
    const handle = await runtime.start(intent, startOpts());
    const result = await handle.done;
    expect(result.status).toBe('failed');
    const records = await expectSealed(runtime, handle.id, result.fingerprint);
    expect(bodies(records, 'invocation.failed')[0]).toMatchObject({ code: 'intent.empty' });
    expect(kinds(records)).not.toContain('model.requested');
    expect(model.requests).toHaveLength(0);
  });

  test('a 120 KB intent is pinned as a bounded prefix with intentCut, then fails sealed with intent.too_large', async () => {
    const intent = `Book Lisbon. ${'please '.repeat(20_000)}`.slice(0, 120 * 1024);
    expect(intent.length).toBe(122_880);
    const model = new SwitchModel('switch:travel', travelAnswer);
    const { runtime } = travel({ model });
    const handle = await runtime.start(intent, startOpts());
    const result = await handle.done;
    expect(result.status).toBe('failed');
    const records = await expectSealed(runtime, handle.id, result.fingerprint);
    const pinned = records[0]!.body as Body;
    expect(pinned.intent.length).toBeLessThanOrEqual(16_384);
    expect(intent.startsWith(pinned.intent)).toBe(true);
    expect(pinned.intentCut).toEqual({ chars: 122_880, digest: utf16Sha256(intent) });
    expect(bodies(records, 'invocation.failed')[0]).toMatchObject({ code: 'intent.too_large' });
    expect(model.requests).toHaveLength(0);
    expect(JSON.stringify(records).length).toBeLessThan(20_000);
    // The journal is its own evidence: replay re-derives the same refusal from the pinned record.
    expect((await runtime.replay(handle.id)).fingerprint).toBe(result.fingerprint);
  });

  test('a store whose append throws once mid-run: suspended (class runtime) with the reason in the status index; resume completes', async () => {
    class FlakyStore extends MemoryStore {
      tripped = false;
      override async append(lease: Lease, expectedSeq: number, records: readonly JournalRecord[]): Promise<void> {
        if (!this.tripped && records.some((r) => r.kind === 'step.dispatched')) {
          this.tripped = true;
          throw new Error('disk full (injected)');
        }
        return super.append(lease, expectedSeq, records);
      }
    }
    const store = new FlakyStore();
    const model = new SwitchModel('switch:travel', travelAnswer);
    const { runtime } = travel({ model, store });
    const handle = await runtime.start(TRAVEL_INTENT, startOpts());
    const result = await handle.done;
    expect(result.status).toBe('suspended');
    expect(result.suspension).toMatchObject({ class: 'runtime' });
    expect(result.reason).toMatch(/disk full \(injected\)/);
    const note = await store.getStatus(handle.id);
    expect(note).toMatchObject({ status: 'suspended', class: 'runtime' });
    expect(note!.reason).toMatch(/disk full \(injected\)/);
    expect(note!.fix).toContain(`weft resume ${handle.id}`);
    expect(kinds(await store.read(handle.id))).not.toContain('step.dispatched');

    const done = await (await runtime.resume(handle.id)).done;
    expect(done.status).toBe('completed');
    await expectSealed(runtime, handle.id, done.fingerprint);
    expect((await runtime.replay(handle.id)).fingerprint).toBe(done.fingerprint);
    expect((await runtime.list()).find((row) => row.id === handle.id)).toMatchObject({ status: 'completed' });
  });
});

// ── 2 ────────────────────────────────────────────────────────────────────────────────────────

describe('defect 2: a lone surrogate in a reply or an actuator result is recorded well-formed and refused', () => {
  test('raw in the reply text: model.completed keeps a well-formed prefix, refused reply.not_well_formed with the UTF-16 digest; re-prompted; resume and replay work', async () => {
    const raw = `{"goal":{"task":"find_options","args":["me\ud800","lisbon",12]}}`;
    expect(isWellFormed(raw)).toBe(false);
    // The re-prompt itself fails (transient, one attempt): the run suspends right after the refusal.
    const feedbackSeen: string[] = [];
    const model = new SwitchModel('switch:travel', (req) => {
      if (req.epoch === 1 && req.feedback === undefined) return raw;
      feedbackSeen.push(req.feedback ?? '');
      throw new Error('connection reset (injected)');
    });
    const { runtime, store } = travel({ model, limits: { modelAttempts: 1 } });
    const handle = await runtime.start(TRAVEL_INTENT, startOpts());
    const first = await handle.done;
    expect(first.status).toBe('suspended');
    const records = await store.read(handle.id);
    const completed = bodies(records, 'model.completed')[0]!;
    expect(completed.refused).toEqual({ code: 'reply.not_well_formed', chars: raw.length, digest: utf16Sha256(raw) });
    expect(typeof completed.reply).toBe('string');
    expect(isWellFormed(completed.reply)).toBe(true);
    expect(bodies(records, 'model.rejected')[0]!.reason).toMatch(/not well-formed/);
    expect(feedbackSeen[0]).toMatch(/not well-formed/);
    expect((await runtime.verify(handle.id)).ok).toBe(true);

    // Resume reads the refused record back (never re-asks for it) and goes on to completion.
    model.answer = travelAnswer;
    const done = await (await runtime.resume(handle.id)).done;
    expect(done.status).toBe('completed');
    const all = await expectSealed(runtime, handle.id, done.fingerprint);
    expect(bodies(all, 'model.completed').filter((b) => b.refused)).toHaveLength(1);
    expect(bodies(all, 'epoch.derived')[0]!.goal).toEqual({ task: 'find_options', args: ['me', 'lisbon', 12] });
    expect((await runtime.replay(handle.id)).fingerprint).toBe(done.fingerprint);
  });

  test('an intent holding a lone surrogate: start resolves, the pin records a well-formed prefix with intentCut, and the run fails sealed (intent.not_well_formed)', async () => {
    const intent = 'Take me to Lisbon \ud800 on the 12th';
    const model = new SwitchModel('switch:travel', travelAnswer);
    const { runtime } = travel({ model });
    const handle = await runtime.start(intent, startOpts());
    const result = await handle.done;
    expect(result.status).toBe('failed');
    const records = await expectSealed(runtime, handle.id, result.fingerprint);
    const pinned = records[0]!.body as Body;
    expect(isWellFormed(pinned.intent)).toBe(true);
    expect(pinned.intentCut).toEqual({ chars: intent.length, digest: utf16Sha256(intent) });
    expect(bodies(records, 'invocation.failed')[0]).toMatchObject({ code: 'intent.not_well_formed' });
    expect(model.requests).toHaveLength(0);
    expect((await runtime.replay(handle.id)).fingerprint).toBe(result.fingerprint);
  });

  test('as a "\\ud800" escape inside an arg: the reply is recorded verbatim and rejected; re-prompted to completion; replay works', async () => {
    const escaped = String.raw`{"goal":{"task":"find_options","args":["me\ud800","lisbon",12]}}`;
    expect(isWellFormed(escaped)).toBe(true);
    const model = new SwitchModel('switch:travel', (req) => (req.epoch === 1 && req.feedback === undefined ? escaped : travelAnswer(req)));
    const { runtime, store } = travel({ model });
    const handle = await runtime.start(TRAVEL_INTENT, startOpts());
    const result = await handle.done;
    expect(result.status).toBe('completed');
    const records = await expectSealed(runtime, handle.id, result.fingerprint);
    const completed = bodies(records, 'model.completed')[0]!;
    expect(completed.reply).toBe(escaped);
    expect(completed.refused).toBeUndefined();
    const rejected = bodies(records, 'model.rejected');
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.reason).toMatch(/surrogate/);
    expect(bodies(records, 'state.observed')[0]!.key).toContain('.1.0.observe');
    expect(bodies(records, 'epoch.derived')[0]!.goal).toEqual({ task: 'find_options', args: ['me', 'lisbon', 12] });
    expect((await runtime.replay(handle.id)).fingerprint).toBe(result.fingerprint);
    void store;
  });

  test('an actuator returning a lone surrogate: that step fails permanent actuator.bad_result, recorded; the run ends without throwing; replay works', async () => {
    const wrap = (actuators: Actuator[]) =>
      actuators.map((a) =>
        a.name === 'flights.search' ? { ...a, run: async (args: unknown, ctx: Parameters<Actuator['run']>[1]) => ({ ...(await a.run(args, ctx)), from: 'lon\udc00don' }) } : a,
      );
    const model = new SwitchModel('switch:travel', (req) => (req.epoch === 1 ? goalText(TRAVEL_GOALS.findOptions) : JSON.stringify({ done: true, summary: 'no flights could be searched' })));
    const { runtime, store } = travel({ model, wrap });
    const handle = await runtime.start(TRAVEL_INTENT, startOpts());
    const result = await handle.done;
    expect(['completed', 'failed', 'handed_off']).toContain(result.status);
    const records = await expectSealed(runtime, handle.id, result.fingerprint);
    const failed = bodies(records, 'step.failed');
    expect(failed).toEqual([expect.objectContaining({ step: 0, code: 'actuator.bad_result', class: 'permanent' })]);
    expect(failed[0]!.key).toBe(`${handle.id}.1.0`);
    expect(bodies(records, 'step.completed').filter((b) => b.step === 0 && b.key === `${handle.id}.1.0`)).toHaveLength(0);
    expect((await runtime.replay(handle.id)).fingerprint).toBe(result.fingerprint);
    void store;
  });
});

// ── 3 ────────────────────────────────────────────────────────────────────────────────────────

/** Below every trip-total the searches find (the cheapest pair is 130 + 260 = 390): no method covers book_trip. */
const LOW_BUDGET = 300;
const gapGoal = { task: 'book_trip', args: ['me', 'lisbon', 12, LOW_BUDGET] };
const WORLD_EFFECTS = ['airline.hold', 'hotel.hold', 'card.charge', 'airline.confirm', 'hotel.confirm'];

/** Epoch 1 searches, epoch 2 names a book_trip no method covers and `fragment` is the authored reply, then done. */
function gapModel(fragment: unknown) {
  return new SwitchModel('switch:travel-gap', (req) => {
    if (req.purpose === 'author') return JSON.stringify(fragment);
    if (req.epoch === 1) return goalText(TRAVEL_GOALS.findOptions);
    if (req.epoch === 2) return goalText(gapGoal);
    return JSON.stringify({ done: true, summary: 'stopped after the booking was refused or held' });
  });
}

function worldEffectsApplied(stateDir: string, id: string): string[] {
  const file = path.join(stateDir, id, 'providers.json');
  if (!existsSync(file)) return [];
  return Object.values(readTravelState(file).ledger)
    .filter((e) => WORLD_EFFECTS.includes(e.actuator) && e.applied > 0)
    .map((e) => e.actuator);
}

const step = (operator: string, ...args: Array<string | number>) => ({ operator, args });

describe('defect 3: the gap path is admitted like everything else', () => {
  test('an authored hold, hold, charge 2400, confirm, confirm over the budget is denied at admission by book_trip\'s constraint; no world effect', async () => {
    const model = gapModel({
      steps: [
        step('hold_flight', 'me', 'f-tp1353'),
        step('hold_hotel', 'me', 'h-alfama'),
        step('charge_card', 'me', 'card-visa-4242', 'f-tp1353', 'h-alfama', 2400),
        step('confirm_flight', 'me', 'f-tp1353'),
        step('confirm_hotel', 'me', 'h-alfama'),
      ],
    });
    const { runtime, stateDir } = travel({ model });
    const handle = await runtime.start(TRAVEL_INTENT, startOpts());
    const result = await handle.done;
    expect(['completed', 'failed', 'handed_off']).toContain(result.status);
    const records = await expectSealed(runtime, handle.id, result.fingerprint);
    expect(bodies(records, 'epoch.derived')[1]).toMatchObject({ source: 'authored', goal: gapGoal, steps: 5 });
    const epoch2 = records.filter((r) => r.epoch === 2);
    const admission = bodies(epoch2, 'admission.decided').find((b) => b.subject === 'epoch')!;
    expect(admission).toMatchObject({ decision: 'deny' });
    expect(admission.reason).toMatch(/book_trip's constraint .*card\.charge.*amount.*fails: 2400 > 300/);
    expect(kinds(epoch2)).not.toContain('step.dispatched');
    expect(kinds(epoch2)).not.toContain('approval.requested');
    expect(worldEffectsApplied(stateDir, handle.id)).toEqual([]);
    expect((await runtime.replay(handle.id)).fingerprint).toBe(result.fingerprint);
  });

  test('an authored fragment of 500 searches is denied by the envelope (steps per fragment); nothing dispatched', async () => {
    const model = gapModel({ steps: Array.from({ length: 500 }, () => step('search_hotels', 'lisbon', 12)) });
    const { runtime } = travel({ model });
    const handle = await runtime.start(TRAVEL_INTENT, startOpts());
    const result = await handle.done;
    const records = await expectSealed(runtime, handle.id, result.fingerprint);
    const epoch2 = records.filter((r) => r.epoch === 2);
    expect(bodies(epoch2, 'epoch.derived')[0]).toMatchObject({ source: 'authored', steps: 500 });
    const admission = bodies(epoch2, 'admission.decided').find((b) => b.subject === 'epoch')!;
    expect(admission.decision).toBe('deny');
    expect(admission.reason).toMatch(/500 steps; the envelope allows at most (12 per fragment|24 dispatches)/);
    expect(kinds(epoch2)).not.toContain('step.dispatched');
  });

  test('a policy whose admitAuthoring denies: admission.decided {subject authoring, deny} is recorded and the model is never asked to author', async () => {
    const policy: AdmissionPolicy = {
      ...travelPolicy,
      id: 'no-authoring@1',
      admitEpoch: (request) => travelPolicy.admitEpoch(request),
      admitAuthoring: () => ({ decision: 'deny', reason: 'this tenant may not have plans authored by a model' }),
    };
    const model = gapModel({ steps: [step('hold_flight', 'me', 'f-ux1016')] });
    const { runtime } = travel({ model, policy });
    const handle = await runtime.start(TRAVEL_INTENT, startOpts());
    const result = await handle.done;
    expect(['failed', 'handed_off']).toContain(result.status);
    const records = await expectSealed(runtime, handle.id, result.fingerprint);
    expect(bodies(records, 'admission.decided')).toContainEqual({
      subject: 'authoring',
      decision: 'deny',
      policy: 'no-authoring@1',
      reason: 'this tenant may not have plans authored by a model',
    });
    expect(bodies(records, 'model.requested').filter((b) => b.purpose === 'author')).toHaveLength(0);
    expect(model.requests.filter((r) => r.purpose === 'author')).toHaveLength(0);
  });

  test('an allowed authored fragment with world effects awaits approval; approved, each step has its recorded allow before its dispatch', async () => {
    const model = gapModel({ steps: [step('hold_flight', 'me', 'f-ux1016'), step('hold_hotel', 'me', 'h-belem')] });
    const { runtime, stateDir } = travel({ model });
    const handle = await runtime.start(TRAVEL_INTENT, startOpts());
    const waiting = await handle.done;
    expect(waiting.status).toBe('awaiting_approval');
    const before = await runtime.store.read(handle.id);
    // The domain's default policy, the travel@5 pack: each admission names its rule.
    expect(bodies(before, 'admission.decided')).toContainEqual({ subject: 'authoring', decision: 'allow', policy: travelPackPolicy.id, rule: 'weft:default' });
    expect(bodies(before.filter((r) => r.epoch === 2), 'admission.decided').find((b) => b.subject === 'epoch')).toMatchObject({
      decision: 'require_approval',
      reason: expect.stringMatching(/authored .* 2 world effect/),
      rule: 'model-taxi-allowance',
    });
    expect(worldEffectsApplied(stateDir, handle.id)).toEqual([]);

    const done = await (await runtime.approve(handle.id, { decision: 'approved', by: 'ops' })).done;
    expect(done.status).toBe('completed');
    const records = await expectSealed(runtime, handle.id, done.fingerprint);
    const epoch2 = records.filter((r) => r.epoch === 2);
    const order = epoch2
      .filter((r) => (r.kind === 'admission.decided' && (r.body as Body).subject === 'step') || r.kind === 'step.dispatched')
      .map((r) => `${r.kind === 'step.dispatched' ? 'dispatch' : `admit:${(r.body as Body).decision}`}#${(r.body as Body).step}`);
    expect(order).toEqual(['admit:allow#0', 'dispatch#0', 'admit:allow#1', 'dispatch#1']);
    // Each step of the approved authored fragment is admitted by the rule that governs what the model authors (flag 11), not weft:default.
    expect(bodies(epoch2, 'admission.decided').filter((b) => b.subject === 'step').map((b) => b.rule)).toEqual(['model-taxi-allowance', 'model-taxi-allowance']);
    expect(worldEffectsApplied(stateDir, handle.id).sort()).toEqual(['airline.hold', 'hotel.hold']);
    expect((await runtime.replay(handle.id)).fingerprint).toBe(done.fingerprint);
  });
});

// ── 4 ────────────────────────────────────────────────────────────────────────────────────────

describe('defect 4: the authoring prompt tells the model what it may use and how to answer', () => {
  test('the author request renders the goal, the operators with actuators and args, the observed state, the format and the explicit-args rule', async () => {
    const model = gapModel({ steps: [step('hold_flight', 'me', 'f-ux1016')] });
    const { runtime } = travel({ model });
    await (await runtime.start(TRAVEL_INTENT, startOpts())).done;
    const authorRequest = model.requests.find((r) => r.purpose === 'author');
    expect(authorRequest, 'the model was asked to author').toBeDefined();
    const text = renderPrompt(authorRequest!).map((m) => m.content).join('\n');
    expect(text).toContain(`book_trip("me", "lisbon", 12, ${LOW_BUDGET})`);
    // Every operator, with the actuator it dispatches and that actuator's arg names.
    expect(text).toMatch(/hold_flight\(.*\).*airline\.hold.*"flight"/);
    expect(text).toMatch(/charge_card\(.*\).*card\.charge.*"amount"/);
    expect(text).toMatch(/search_hotels\(.*\).*hotels\.search.*\[read-only\]/);
    expect(text).toMatch(/confirm_hotel\(.*\).*hotel\.confirm.*\[world effect\]/);
    // The observed state: the offers the searches recorded, with their package prices.
    expect(text).toContain('f-ux1016');
    expect(text).toContain('h-belem');
    expect(text).toMatch(/trip-total/);
    expect(text).toContain('{"steps"');
    expect(text).toMatch(/every argument is explicit/);

    const parseRequest = model.requests.find((r) => r.purpose === 'parse')!;
    const parse = renderPrompt(parseRequest).map((m) => m.content).join('\n');
    expect(parse).toMatch(/Do not plan steps/);
    expect(parse).not.toContain('{"steps"');
  });
});

// ── 5 ────────────────────────────────────────────────────────────────────────────────────────

describe('defect 5: oversized replies stay out of the journal, the snapshot and the reasons', () => {
  test('an 8 MB reply: the journal file and the snapshot stay under 1 MB, the rejection reason under 1 KB; the run goes on', async () => {
    const huge = JSON.stringify({ goal: { task: 'find_options', args: ['me', 'lisbon', 12] }, padding: 'x'.repeat(8 * 1024 * 1024) });
    const dir = mkdtempSync(path.join(root, 'big-'));
    const store = new FileStore(dir);
    const model = new SwitchModel('switch:travel', (req) => (req.epoch === 1 && req.feedback === undefined ? huge : travelAnswer(req)));
    const { runtime } = travel({ model, store });
    const handle = await runtime.start(TRAVEL_INTENT, startOpts());
    handle.hibernate(); // rest at the first boundary: the snapshot then holds the epoch's context
    const result = await handle.done;
    expect(result.status).toBe('hibernated');
    const journal = runtime.journalPath(handle.id)!;
    expect(statSync(journal).size).toBeLessThan(1024 * 1024);
    const snapshot = path.join(path.dirname(journal), 'snapshot.json');
    expect(statSync(snapshot).size).toBeLessThan(1024 * 1024);
    const records = await store.read(handle.id);
    const completed = bodies(records, 'model.completed')[0]!;
    expect(completed.refused).toMatchObject({ code: 'reply.too_large', chars: huge.length, digest: utf16Sha256(huge) });
    const reason = bodies(records, 'model.rejected')[0]!.reason as string;
    expect(reason.length).toBeLessThan(1024);
    expect(model.requests[1]!.feedback!.length).toBeLessThan(1024);
    const resumed = await runtime.resume(handle.id);
    resumed.send({ type: 'resume' }); // a hibernated run waits to be told to go on
    const done = await resumed.done;
    expect(done.status).toBe('completed');
    expect(statSync(journal).size).toBeLessThan(1024 * 1024);
    await store.close();
  });

  test('a task name of 1 MB (under a raised reply cap): the rejection quotes at most ~100 characters of it', async () => {
    const name = 'z'.repeat(1024 * 1024);
    const model = new SwitchModel('switch:travel', (req) => (req.epoch === 1 && req.feedback === undefined ? goalText({ task: name, args: [] }) : travelAnswer(req)));
    const { runtime, store } = travel({ model, limits: { maxReplyChars: 2 * 1024 * 1024 } });
    const handle = await runtime.start(TRAVEL_INTENT, startOpts());
    handle.hibernate();
    expect((await handle.done).status).toBe('hibernated');
    const reason = bodies(await store.read(handle.id), 'model.rejected')[0]!.reason as string;
    expect(reason).toMatch(/unknown task/);
    const longest = Math.max(...(reason.match(/z+/g) ?? ['']).map((run) => run.length));
    expect(longest).toBeGreaterThan(0);
    expect(longest).toBeLessThanOrEqual(100);
    expect(reason.length).toBeLessThan(1024);
  });

  test('an 8 MB done summary is refused, never accepted as the summary; a summary over the 2000-char cap too', async () => {
    const hugeSummary = JSON.stringify({ done: true, summary: 's'.repeat(8 * 1024 * 1024) });
    const model = new SwitchModel('switch:travel', () => hugeSummary);
    const { runtime, store } = travel({ model });
    const handle = await runtime.start(TRAVEL_INTENT, startOpts());
    const result = await handle.done;
    expect(result.status).toBe('handed_off');
    expect(result.summary).toBeUndefined();
    const records = await expectSealed(runtime, handle.id, result.fingerprint);
    expect(kinds(records)).not.toContain('invocation.completed');
    expect(bodies(records, 'model.rejected')).toHaveLength(3);
    expect(JSON.stringify(records).length).toBeLessThan(64 * 1024);

    const long = JSON.stringify({ done: true, summary: 'booked. '.repeat(400) });
    model.answer = (req) => (req.feedback === undefined ? long : JSON.stringify({ done: true, summary: 'Nothing to do.' }));
    const second = await runtime.start(TRAVEL_INTENT, startOpts());
    const done = await second.done;
    expect(done).toMatchObject({ status: 'completed', summary: 'Nothing to do.' });
    const rejected = bodies(await store.read(second.id), 'model.rejected');
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.reason).toMatch(/summary is 3200 characters, over the pinned cap of 2000/);
  });
});

// ── 6 ────────────────────────────────────────────────────────────────────────────────────────

describe('defect 6: duplicate member names are rejected, never "last one wins"', () => {
  test('{"goal":…,"goal":…} is rejected with a reason naming the member, recorded; the later goal is never planned', async () => {
    const duplicate = `{"goal":${JSON.stringify(TRAVEL_GOALS.findOptions)},"goal":${JSON.stringify(TRAVEL_GOALS.bookTrip)}}`;
    const model = new SwitchModel('switch:travel', () => duplicate);
    const { runtime, stateDir } = travel({ model });
    const handle = await runtime.start(TRAVEL_INTENT, startOpts());
    const result = await handle.done;
    expect(result.status).toBe('handed_off');
    const records = await expectSealed(runtime, handle.id, result.fingerprint);
    const rejected = bodies(records, 'model.rejected');
    expect(rejected).toHaveLength(3);
    for (const r of rejected) expect(r.reason).toMatch(/member "goal" twice/);
    expect(bodies(records, 'model.completed')[0]!.reply).toBe(duplicate);
    expect(kinds(records)).not.toContain('state.observed');
    expect(kinds(records)).not.toContain('epoch.derived');
    expect(worldEffectsApplied(stateDir, handle.id)).toEqual([]);
    expect(model.requests[1]!.feedback).toMatch(/member "goal" twice/);
  });

  test('a nested duplicate ("args" twice) is rejected too, and a correct re-prompt goes on', async () => {
    const duplicate = `{"goal":{"task":"find_options","args":["me","lisbon",12],"args":["me","porto",12]}}`;
    const model = new SwitchModel('switch:travel', (req) => (req.epoch === 1 && req.feedback === undefined ? duplicate : travelAnswer(req)));
    const { runtime } = travel({ model });
    const handle = await runtime.start(TRAVEL_INTENT, startOpts());
    const result = await handle.done;
    expect(result.status).toBe('completed');
    const records = await expectSealed(runtime, handle.id, result.fingerprint);
    expect(bodies(records, 'model.rejected')[0]!.reason).toMatch(/member "args" twice/);
    expect(bodies(records, 'epoch.derived')[0]!.goal).toEqual({ task: 'find_options', args: ['me', 'lisbon', 12] });
    expect((await runtime.replay(handle.id)).fingerprint).toBe(result.fingerprint);
  });
});

