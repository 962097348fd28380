/**
 * The pin is law, through the library API: resume, approve and replay compare what the runtime
 * offers with what the invocation pinned and refuse a difference — naming each field, the pinned
 * value and what to pass — before anything is written, so the invocation stays resumable with the
 * right parts. A journal filed under another invocation's id is refused and listed as damaged.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { ScriptedModel } from '../actors/model/scripted.js';
import { OpenAiModel } from '../actors/model/openai.js';
import { classifyFailure } from '../actors/actuator.js';
import { MemoryStore } from '../stores/memory.js';
import { FileStore } from '../stores/file.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { JournalWriter } from '../journal/writer.js';
import { EvaluableRegistry } from '../htn/library/evaluables.js';
import { libraryDigest } from '../htn/library/digest.js';
import { spendApprovalPolicy } from '../machines/policy.js';
import { travelDomain, travelLibrary, travelPackPolicy, travelTranscript } from '../examples/travel/index.js';
import { createRuntime, ForeignJournalError, PinMismatchError, Runtime, type RuntimeOptions } from '../runtime/index.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(5));
const start = { tenant: 'pin', seed: '3', asOf: travelDomain.asOf! };
const scratch = mkdtempSync(path.join(tmpdir(), 'weft-pin-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let n = 0;
const stateDir = () => path.join(scratch, `state-${++n}`);

function runtimeOver(store: RuntimeOptions['store'], extra: Partial<RuntimeOptions> = {}): Runtime {
  return createRuntime({ store, domain: travelDomain, stateDir: stateDir(), signingKey: key, sleep: async () => undefined, ...extra });
}

/** The whole run, uninterrupted: the fingerprint a refused-then-resumed run must reach. */
async function uninterrupted(): Promise<string> {
  const result = await (await runtimeOver(new MemoryStore()).start(travelDomain.intent!, start)).done;
  expect(result.status).toBe('completed');
  return result.fingerprint!;
}

/** An invocation hibernated at its first epoch boundary, in `store`. */
async function hibernated(store: MemoryStore | FileStore, dir = stateDir()): Promise<{ id: string; dir: string }> {
  const handle = await runtimeOver(store, { stateDir: dir }).start(travelDomain.intent!, start);
  handle.hibernate();
  expect((await handle.done).status).toBe('hibernated');
  return { id: handle.id, dir };
}

async function refusal(promise: Promise<unknown>): Promise<PinMismatchError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PinMismatchError);
  return err as PinMismatchError;
}

describe('the pin is law', () => {
  test('resume with another model is refused by field, writes nothing, and the pinned model then finishes the run', async () => {
    const expected = await uninterrupted();
    const store = new MemoryStore();
    const { id, dir } = await hibernated(store);
    const before = await store.length(id);
    const other = new OpenAiModel({ baseUrl: 'http://127.0.0.1:9/v1', model: 'someone-else' });
    const err = await refusal(runtimeOver(store, { stateDir: dir, model: other }).resume(id));
    expect(err.mismatches).toEqual([expect.objectContaining({ field: 'model.id', pinned: 'scripted:travel-demo', offered: 'openai-compatible:someone-else' })]);
    expect(err.message).toMatch(/refusing to resume .*model\.id: pinned scripted:travel-demo, offered openai-compatible:someone-else/);
    expect(err.message).toContain('no --model-url/--model');
    expect(await store.length(id)).toBe(before);
    const handle = await runtimeOver(store, { stateDir: dir }).resume(id);
    handle.send({ type: 'resume' });
    expect(await handle.done).toMatchObject({ status: 'completed', fingerprint: expected });
  });

  test('a scripted model of another transcript id is refused too', async () => {
    const store = new MemoryStore();
    const { id, dir } = await hibernated(store);
    const other = new ScriptedModel({ ...travelTranscript, model: 'travel-demo-2' });
    const err = await refusal(runtimeOver(store, { stateDir: dir, model: other }).resume(id));
    expect(err.mismatches.map((m) => m.field)).toEqual(['model.id']);
  });

  test('model parameters that shape replies are compared; the endpoint is not pinned', async () => {
    const store = new MemoryStore();
    const model = (baseUrl: string, temperature: number) => new OpenAiModel({ baseUrl, model: 'm', temperature, fetch: async () => new Response('{}', { status: 500 }), maxAttempts: 1 });
    const handle = await runtimeOver(store, { model: model('http://a.example/v1', 0) }).start('anything', { ...start, id: 'inv-params' });
    await handle.done.catch(() => undefined);
    const pinned = (await store.read('inv-params', 0, 1))[0]!.body as { pin: { model: { params: Record<string, unknown> } } };
    expect(pinned.pin.model.params).toEqual({ model: 'm', temperature: 0 });
    const err = await refusal(runtimeOver(store, { model: model('http://a.example/v1', 0.7) }).resume('inv-params'));
    expect(err.mismatches).toEqual([expect.objectContaining({ field: 'model.params.temperature', pinned: '0', offered: '0.7' })]);
    // Another endpoint for the same model and parameters is not a mismatch: the refusal, if any, is not the pin's.
    const moved = await runtimeOver(store, { model: model('http://b.example/v1', 0) }).resume('inv-params').then(
      (h) => h.done.catch((e: unknown) => e),
      (e: unknown) => e,
    );
    expect(moved).not.toBeInstanceOf(PinMismatchError);
  });

  test('approve with a model of another id is refused before the decision is recorded', async () => {
    const store = new MemoryStore();
    const strict = spendApprovalPolicy({ version: 'strict', limit: 100, amountArg: 'amount' });
    const dir = stateDir();
    const handle = await runtimeOver(store, { stateDir: dir, policy: strict }).start(travelDomain.intent!, start);
    expect((await handle.done).status).toBe('awaiting_approval');
    const before = await store.length(handle.id);
    const other = new ScriptedModel({ ...travelTranscript, model: 'impostor' });
    const err = await refusal(runtimeOver(store, { stateDir: dir, policy: strict, model: other }).approve(handle.id, { decision: 'approved', by: 'ana' }));
    expect(err.command).toBe('approve');
    expect(err.mismatches.map((m) => m.field)).toEqual(['model.id']);
    expect(await store.length(handle.id)).toBe(before);
    const approved = await runtimeOver(store, { stateDir: dir, policy: strict }).approve(handle.id, { decision: 'approved', by: 'ana' });
    expect((await approved.done).status).toBe('completed');
  });

  test('replay with another library version, policy or evaluables is refused, naming the digests and versions', async () => {
    const store = new MemoryStore();
    const done = await (await runtimeOver(store).start(travelDomain.intent!, start)).done;
    const records = await store.read(done.id);
    const changed = { ...structuredClone(travelLibrary), methods: structuredClone(travelLibrary.methods).reverse() };
    // A fresh store without the pinned library's blob: the domain's library is the only candidate.
    const elsewhere = runtimeOver(new MemoryStore(), {
      libraries: [changed],
      policy: spendApprovalPolicy({ version: '9', limit: 1000, amountArg: 'amount' }),
      policies: [],
      evaluables: new EvaluableRegistry(),
    });
    const err = await refusal(elsewhere.replay({ records }));
    expect(err.command).toBe('replay');
    const byField = Object.fromEntries(err.mismatches.map((m) => [m.field, m]));
    expect(byField.library).toMatchObject({ pinned: libraryDigest(travelLibrary), offered: `travel ${libraryDigest(changed)}` });
    // The run pinned the travel@5 pack, which this fresh store does not hold: the pin names the pack and says what is missing.
    expect(byField.policy).toMatchObject({ pinned: travelPackPolicy.id, offered: 'no such pack in the store' });
    expect(err.message).toContain(libraryDigest(travelLibrary));
    // The bundle's library satisfies the pin; the evaluables it references are still checked.
    const withBundle = await refusal(elsewhere.replay({ records, libraries: [travelLibrary] }));
    expect(withBundle.mismatches.find((m) => m.field === 'evaluables')).toMatchObject({ pinned: 'le@1' });
    // With the domain's own parts, it replays to the same fingerprint.
    expect(await runtimeOver(new MemoryStore()).replay({ records })).toMatchObject({ status: 'completed', fingerprint: done.fingerprint });
  });

  test('behaviour flags and limits this runtime does not implement are refused, naming them', async () => {
    const store = new MemoryStore();
    const pin = {
      library: libraryDigest(travelLibrary),
      runtime: 'weft@9.0.0',
      flags: [41],
      model: { id: 'scripted:travel-demo', params: {} },
      seed: '1',
      asOf: start.asOf,
      policy: 'spend-approval@1',
      limits: { maxReprompts: 2, maxTeleports: 1 },
    };
    const writer = await JournalWriter.create(store, { invocation: 'inv-future', tenant: 't', intent: 'x', pin }, { writer: 'test', now: () => new Date(0) });
    await writer.close();
    const err = await refusal(runtimeOver(store).resume('inv-future'));
    expect(err.mismatches.map((m) => [m.field, m.pinned])).toEqual([
      ['flags', '41'],
      ['limits', 'maxTeleports'],
    ]);
  });

  test('a journal copied from another invocation is refused by resume and replay, and listed as damaged', async () => {
    const dir = path.join(scratch, 'foreign');
    const store = new FileStore(dir);
    const a = await hibernated(store);
    const b = await (await runtimeOver(store).start(travelDomain.intent!, { ...start, seed: '4' })).done;
    cpSync(path.join(dir, 'invocations', a.id, 'journal.jsonl'), path.join(dir, 'invocations', b.id, 'journal.jsonl'));
    const runtime = runtimeOver(new FileStore(dir));
    await expect(runtime.resume(b.id)).rejects.toBeInstanceOf(ForeignJournalError);
    await expect(runtime.replay(b.id)).rejects.toThrow(`the journal filed as invocation ${b.id} belongs to invocation ${a.id}`);
    const rows = await runtime.list();
    expect(rows.find((r) => r.id === b.id)).toMatchObject({ status: 'damaged', problem: expect.stringContaining(`belongs to invocation ${a.id}`) });
    expect(rows.find((r) => r.id === a.id)).toMatchObject({ status: 'hibernated' });
  });
});

describe('errors across copies of weft', () => {
  test('a permanent error from another copy of weft (branded, not our class) keeps its class', () => {
    const brand = Symbol.for('weft.error');
    class ForeignActuatorError extends Error {
      constructor(
        readonly code: string,
        readonly failureClass: string,
        message: string,
      ) {
        super(message);
        Object.defineProperty(this, brand, { value: true });
      }
    }
    expect(classifyFailure(new ForeignActuatorError('shop.closed', 'permanent', 'the shop is closed'))).toEqual({ class: 'permanent', code: 'shop.closed', message: 'the shop is closed' });
    // Without the brand, or with a class that is not one of ours, it is an unknown (transient) failure.
    expect(classifyFailure(Object.assign(new Error('x'), { code: 'a', failureClass: 'permanent' })).class).toBe('transient');
    expect(classifyFailure(new ForeignActuatorError('a', 'fatal', 'x')).class).toBe('transient');
  });
});
