/**
 * Behaviour flag 2 — the spending cap counts only the actuators that spend (issue 19, point 8).
 *
 * A refund-like domain: refund 600 (`refund.issue`, which declares `spends: 'amount'`) and an
 * email that says how much was refunded (`email.send`, with an `amount` arg, no declaration),
 * under an envelope cap of 1000. A new invocation (flag 2 pinned) is admitted and spends 600; the
 * same domain and intent pinned without flag 2 — a journal an older weft wrote — is refused as
 * "would spend 1200", exactly as before, and replays as it was written.
 *
 * Which actuators spend is pinned (`pin.spenders`) and admission reads it from there: a runtime
 * with no actuators replays a flag-2 journal to its fingerprint, and a runtime whose `spends`
 * were edited is refused on resume (a pin mismatch naming `spenders`). A domain that declares
 * `spends` nowhere is not ambiguous: it defines, runs and replays under the rule before flag 2.
 * An ambiguous declaration in a domain that uses `spends` is refused when the domain is defined.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import '../journal/sha256-node.js';
import type { Actuator } from '../actors/actuator.js';
import { ScriptedModel } from '../actors/model/scripted.js';
import * as htn from '../htn/library/builder.js';
import { refundsLibrary } from './support/refunds-library.mjs';
import type { JournalRecord, Pin } from '../journal/records.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { MemoryStore } from '../stores/memory.js';
import { JournalWriter } from '../journal/writer.js';
import { InProcessDispatcher } from '../queue/in-process.js';
import { checkEnvelopeEpoch, envelopeSpend, type ContractEnvelope } from '../machines/envelope.js';
import type { EpochStep } from '../machines/context.js';
import { FLAG_DECLARED_SPEND, FLAG_FAIL_CLOSED, IMPLEMENTED_FLAGS } from '../machines/flags.js';
import { spendApprovalPolicy, type AdmissionPolicy } from '../machines/policy.js';
import { pinnedSpenders, pinnedSpendScope } from '../machines/spenders.js';
import { createRuntime, defineDomain, PinMismatchError, replayJournal, RuntimeUsageError } from '../runtime/index.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(31));
const intent = 'Refund ana 600 and tell her';
const asOf = '2026-06-01T09:00:00Z';

const library = refundsLibrary(htn, 'refunds');

const policy: AdmissionPolicy = { id: 'refunds@1', admitEpoch: () => ({ decision: 'allow' }), envelope: { spend: { arg: 'amount', cap: 1000 } } };

function actuators(applied: string[], spends: Partial<Record<string, unknown>> = { 'refund.issue': 'amount' }, readOnlyEmail = false): Actuator[] {
  const effect = (name: string, kind: 'tool' | 'message'): Actuator => ({
    name,
    kind,
    readOnly: name === 'email.send' ? readOnlyEmail : false,
    ...(spends[name] === undefined ? {} : { spends: spends[name] as string }),
    argsSchema: z.object({ amount: z.number() }).passthrough(),
    resultSchema: z.unknown(),
    async run(_args, ctx) {
      applied.push(`${name} ${ctx.key}`);
      return { ok: true };
    },
  });
  return [
    {
      name: 'refunds.observe',
      kind: 'state',
      readOnly: true,
      argsSchema: z.object({ goal: z.unknown() }),
      resultSchema: z.unknown(),
      async run() {
        return { objects: [{ name: 'ana', type: 'customer' }], facts: [['known', 'ana']] };
      },
    },
    effect('refund.issue', 'tool'),
    effect('email.send', 'message'),
  ];
}

const transcript = {
  model: 'refunds',
  entries: [
    { match: { intent, epoch: 1 }, reply: { goal: { task: 'refund_and_tell', args: ['ana', 600] } } },
    { match: { intent, epoch: 2 }, reply: { done: true, summary: 'refunded and told' } },
  ],
};

function refundsDomain(applied: string[], spends?: Partial<Record<string, unknown>>, envelopePolicy: AdmissionPolicy = policy) {
  return defineDomain({ name: 'refunds', libraries: [library], actuators: actuators(applied, spends), observe: 'refunds.observe', policy: envelopePolicy, model: new ScriptedModel(transcript), asOf });
}

/** A runtime that knows no actuators: the library, the observe actuator's name and the policy, nothing to dispatch with. */
function bareRuntime(store: MemoryStore, envelopePolicy: AdmissionPolicy = policy) {
  return createRuntime({ store, libraries: [library], observe: 'refunds.observe', policy: envelopePolicy });
}

/** Write `pin` (from a fresh start's) as invocation `id`'s genesis, as an older weft would have, so that resume runs it. */
async function pinnedAs(store: MemoryStore, id: string, pinned: JournalRecord<'invocation.pinned'>, pin: Pin): Promise<void> {
  const writer = await JournalWriter.create(store, { invocation: id, tenant: pinned.body.tenant, intent, pin }, { writer: 'test', now: () => new Date(0) });
  await writer.close();
}

/** The pin an older weft (flag 1 alone: no declared spend) would have written. */
function olderPin(pin: Pin): Pin {
  return { ...pin, flags: [FLAG_FAIL_CLOSED] };
}

const admissions = (records: JournalRecord[]) => records.filter((r) => r.kind === 'admission.decided').map((r) => (r as JournalRecord<'admission.decided'>).body);

describe('flag 2: the spending cap counts only the actuators that spend', () => {
  test('refund 600 + an email mentioning 600 under a cap of 1000: admitted (a new invocation pins flag 2)', async () => {
    const applied: string[] = [];
    const runtime = createRuntime({ store: new MemoryStore(), domain: refundsDomain(applied), signingKey: key });
    const result = await (await runtime.start(intent)).done;
    expect(result.status).toBe('completed');
    const records = await runtime.store.read(result.id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.flags).toContain(FLAG_DECLARED_SPEND);
    expect(admissions(records)[0]).toMatchObject({ subject: 'epoch', decision: 'allow' });
    expect(applied.map((a) => a.split(' ')[0])).toEqual(['refund.issue', 'email.send']);
    expect((await runtime.replay(result.id)).fingerprint).toBe(result.fingerprint);
  });

  test('the same invocation pinned without flag 2 (an older journal) is refused as before — would spend 1200 — and replays as written', async () => {
    const applied: string[] = [];
    const store = new MemoryStore();
    const runtime = createRuntime({ store, domain: refundsDomain(applied), signingKey: key });
    // The pin a new start makes, but with the flags an older weft pinned; then run it.
    const fresh = await (await runtime.start(intent, { id: 'new' })).done;
    const pinned = (await store.read(fresh.id, 0, 1))[0] as JournalRecord<'invocation.pinned'>;
    const pin = olderPin(pinned.body.pin);
    const writer = await JournalWriter.create(store, { invocation: 'old', tenant: pinned.body.tenant, intent, pin }, { writer: 'test', now: () => new Date(0) });
    await writer.close();
    applied.length = 0;
    const result = await (await runtime.resume('old')).done;
    const records = await store.read('old');
    const denied = admissions(records).find((a) => a.decision === 'deny');
    expect(denied?.reason).toMatch(/would spend 1200 .*caps amount at 1000/);
    expect(applied).toEqual([]); // nothing dispatched
    expect((await runtime.replay('old')).fingerprint).toBe(result.fingerprint);
  });

  test("spendApprovalPolicy's approval limit counts the same way: an email mentioning 600 no longer asks a person (flag 2), and still does without it", async () => {
    const approval = spendApprovalPolicy({ version: 'refunds-approval', limit: 1000, amountArg: 'amount' });
    const applied: string[] = [];
    const domain = defineDomain({ name: 'refunds', libraries: [library], actuators: actuators(applied), observe: 'refunds.observe', policy: approval, model: new ScriptedModel(transcript), asOf });
    const store = new MemoryStore();
    const runtime = createRuntime({ store, domain, signingKey: key });
    const fresh = await (await runtime.start(intent, { id: 'approval-new' })).done;
    expect(fresh.status).toBe('completed');
    expect(admissions(await store.read(fresh.id))[0]).toMatchObject({ decision: 'allow' });
    const pinned = (await store.read(fresh.id, 0, 1))[0] as JournalRecord<'invocation.pinned'>;
    const writer = await JournalWriter.create(store, { invocation: 'approval-old', tenant: pinned.body.tenant, intent, pin: olderPin(pinned.body.pin) }, { writer: 'test', now: () => new Date(0) });
    await writer.close();
    const old = await (await runtime.resume('approval-old')).done;
    expect(old.status).toBe('awaiting_approval');
    expect(admissions(await store.read('approval-old'))[0]).toMatchObject({ decision: 'require_approval', reason: 'the epoch spends 1200, above the 1000 limit' });
  });

  test('spendApprovalPolicy in a domain that declares no spends fails closed under flag 2: every world effect counts, a person is asked', async () => {
    const approval = spendApprovalPolicy({ version: 'refunds-approval', limit: 1000, amountArg: 'amount' });
    const domain = defineDomain({ name: 'refunds', libraries: [library], actuators: actuators([], {}), observe: 'refunds.observe', policy: approval, model: new ScriptedModel(transcript), asOf });
    const runtime = createRuntime({ store: new MemoryStore(), domain, signingKey: key });
    const result = await (await runtime.start(intent)).done;
    expect(result.status).toBe('awaiting_approval');
    expect(admissions(await runtime.store.read(result.id))[0]).toMatchObject({ decision: 'require_approval', reason: 'the epoch spends 1200, above the 1000 limit' });
  });

  test('pure: envelopeSpend counts declared spenders only when given them (flag 2), every world effect otherwise', () => {
    const step = (actuator: string, amount: number): EpochStep => ({ operator: actuator, args: [], actuator, actuatorArgs: { amount }, readOnly: false }) as EpochStep;
    const env: ContractEnvelope = { spend: { arg: 'amount', cap: 1000 } };
    const steps = [step('refund.issue', 600), step('email.send', 600)];
    expect(envelopeSpend(env, steps)).toBe(1200);
    expect(envelopeSpend(env, steps, new Set(['refund.issue']))).toBe(600);
    const plan = { source: 'htn', steps, digest: 'd' } as never;
    expect(checkEnvelopeEpoch(env, plan, 0)).toMatch(/would spend 1200/);
    expect(checkEnvelopeEpoch(env, plan, 0, new Set(['refund.issue']))).toBeUndefined();
  });
});

describe('flag 2 is pinned: which actuators spend is read from the pin, never from the runtime', () => {
  test('a new invocation pins its spending actuators (name and arg, sorted); an undeclared domain pins none', async () => {
    const runtime = createRuntime({ store: new MemoryStore(), domain: refundsDomain([], { 'refund.issue': 'amount', 'email.send': 'amount' }, { ...policy, id: 'refunds@both' }), signingKey: key });
    const handle = await runtime.start(intent);
    await handle.done;
    const pin = ((await runtime.store.read(handle.id, 0, 1))[0] as JournalRecord<'invocation.pinned'>).body.pin;
    expect(pin.spenders).toEqual([
      { actuator: 'email.send', arg: 'amount' },
      { actuator: 'refund.issue', arg: 'amount' },
    ]);
    const undeclared = createRuntime({ store: new MemoryStore(), domain: refundsDomain([], {}), signingKey: key });
    const other = await undeclared.start(intent);
    await other.done;
    expect(((await undeclared.store.read(other.id, 0, 1))[0] as JournalRecord<'invocation.pinned'>).body.pin).toMatchObject({ flags: [...IMPLEMENTED_FLAGS], spenders: [] });
  });

  test('a flag-2 journal replays to its fingerprint on a runtime with no actuators, and through replayJournal with no dispatcher', async () => {
    const store = new MemoryStore();
    const live = createRuntime({ store, domain: refundsDomain([]), signingKey: key });
    const result = await (await live.start(intent)).done;
    expect(result.status).toBe('completed');
    expect(admissions(await store.read(result.id))[0]).toMatchObject({ subject: 'epoch', decision: 'allow' });
    // Knows no actuators: the admission (refund 600, email 600, cap 1000) is re-derived from the pinned spenders.
    expect(await bareRuntime(store).replay(result.id)).toMatchObject({ status: 'completed', fingerprint: result.fingerprint });
    // The domain with its own dispatcher: the runtime has no actuators of its own either.
    const viaDispatcher = createRuntime({ store, domain: refundsDomain([]), dispatcher: new InProcessDispatcher(actuators([])) });
    expect((await viaDispatcher.replay(result.id)).fingerprint).toBe(result.fingerprint);
    const replayed = await replayJournal(await store.read(result.id), { loadLibrary: async () => library, policy: () => policy, observe: 'refunds.observe' });
    expect(replayed.fingerprint).toBe(result.fingerprint);
  });

  test('a runtime that dispatches through its own dispatcher starts and admits under the domain\'s declared spenders', async () => {
    const applied: string[] = [];
    const runtime = createRuntime({ store: new MemoryStore(), domain: refundsDomain([]), dispatcher: new InProcessDispatcher(actuators(applied)), signingKey: key });
    const result = await (await runtime.start(intent)).done;
    expect(result.status).toBe('completed');
    expect(((await runtime.store.read(result.id, 0, 1))[0] as JournalRecord<'invocation.pinned'>).body.pin.spenders).toEqual([{ actuator: 'refund.issue', arg: 'amount' }]);
    expect(applied.map((a) => a.split(' ')[0])).toEqual(['refund.issue', 'email.send']);
  });

  test('a runtime that knows no actuators (its own dispatcher, a factory domain) pins none declared: the rule that counts more, as the pin shows', async () => {
    const applied: string[] = [];
    const domain = defineDomain({ name: 'refunds', libraries: [library], actuators: () => actuators([]), observe: 'refunds.observe', policy, model: new ScriptedModel(transcript), asOf });
    const runtime = createRuntime({ store: new MemoryStore(), domain, dispatcher: new InProcessDispatcher(actuators(applied)), signingKey: key });
    const result = await (await runtime.start(intent)).done;
    const records = await runtime.store.read(result.id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin).toMatchObject({ flags: [...IMPLEMENTED_FLAGS], spenders: [] });
    expect(admissions(records).find((a) => a.decision === 'deny')?.reason).toMatch(/would spend 1200/);
    expect(applied).toEqual([]);
    expect((await bareRuntime(runtime.store as MemoryStore).replay(result.id)).fingerprint).toBe(result.fingerprint);
  });

  test('after an edit of spends: resume is refused naming spenders and writes nothing; replay still reads the pin; the unedited domain resumes', async () => {
    const store = new MemoryStore();
    const handle = await createRuntime({ store, domain: refundsDomain([]), signingKey: key }).start(intent, { id: 'edited' });
    handle.hibernate();
    expect((await handle.done).status).toBe('hibernated');
    const length = await store.length('edited');
    // The email now declares it spends too: an invocation pinned before the edit must not be admitted under it.
    const edited = createRuntime({ store, domain: refundsDomain([], { 'refund.issue': 'amount', 'email.send': 'amount' }), signingKey: key });
    const err = await edited.resume('edited').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PinMismatchError);
    const mismatch = (err as PinMismatchError).mismatches.find((m) => m.field === 'spenders');
    expect(mismatch).toMatchObject({ pinned: 'refund.issue (amount)', offered: 'email.send (amount), refund.issue (amount)' });
    expect((err as Error).message).toMatch(/spenders: pinned refund\.issue \(amount\), offered email\.send \(amount\), refund\.issue \(amount\) \(resume with actuators declaring exactly refund\.issue spends: 'amount'/);
    expect((err as Error).message).not.toContain('\n');
    expect(await store.length('edited')).toBe(length);
    // Dropping the declaration (an undeclared domain) is a change of the pin as well.
    const dropped = await createRuntime({ store, domain: refundsDomain([], {}), signingKey: key }).resume('edited').then(() => undefined, (e: unknown) => e);
    expect((dropped as PinMismatchError).mismatches.map((m) => [m.field, m.pinned, m.offered])).toEqual([['spenders', 'refund.issue (amount)', 'none declared']]);
    // The unedited domain resumes it to the end; the edited runtime replays the result (the pin decides).
    const applied: string[] = [];
    const result = await (await createRuntime({ store, domain: refundsDomain(applied), signingKey: key }).resume('edited')).done;
    expect(result.status).toBe('completed');
    expect((await edited.replay('edited')).fingerprint).toBe(result.fingerprint);
  });

  test('approve with edited spends is refused naming spenders, writing no record; with the pinned declaration it completes', async () => {
    const approval = spendApprovalPolicy({ version: 'refunds-low', limit: 500, amountArg: 'amount' });
    const store = new MemoryStore();
    const handle = await createRuntime({ store, domain: refundsDomain([], undefined, approval), signingKey: key }).start(intent, { id: 'to-approve' });
    expect((await handle.done).status).toBe('awaiting_approval');
    const before = await store.length('to-approve');
    const edited = createRuntime({ store, domain: refundsDomain([], { 'refund.issue': 'amount', 'email.send': 'amount' }, approval), signingKey: key });
    const err = await edited.approve('to-approve', { decision: 'approved', by: 'ana' }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(PinMismatchError);
    expect((err as PinMismatchError).command).toBe('approve');
    expect((err as PinMismatchError).mismatches.map((m) => m.field)).toEqual(['spenders']);
    expect(await store.length('to-approve')).toBe(before);
    const approved = await createRuntime({ store, domain: refundsDomain([], undefined, approval), signingKey: key }).approve('to-approve', { decision: 'approved', by: 'ana' });
    expect((await approved.done).status).toBe('completed');
  });
});

describe('a domain that declares spends nowhere is not ambiguous: it keeps the rule before flag 2', () => {
  test('a cap and no spends: defines fine; a new (flag 2) and an old (flag 1) journal are refused as would spend 1200 and replay, with actuators and without', async () => {
    const domain = refundsDomain([], {});
    const store = new MemoryStore();
    const runtime = createRuntime({ store, domain, signingKey: key });
    const fresh = await (await runtime.start(intent, { id: 'undeclared-new' })).done;
    const pinned = (await store.read(fresh.id, 0, 1))[0] as JournalRecord<'invocation.pinned'>;
    expect(pinned.body.pin.flags).toContain(FLAG_DECLARED_SPEND);
    await pinnedAs(store, 'undeclared-old', pinned, { ...olderPin(pinned.body.pin), spenders: undefined } as Pin);
    const old = await (await runtime.resume('undeclared-old')).done;
    for (const [id, result] of [['undeclared-new', fresh], ['undeclared-old', old]] as const) {
      expect(admissions(await store.read(id)).find((a) => a.decision === 'deny')?.reason).toMatch(/would spend 1200 .*caps amount at 1000/);
      expect((await runtime.replay(id)).fingerprint).toBe(result.fingerprint);
      expect((await bareRuntime(store).replay(id)).fingerprint).toBe(result.fingerprint);
    }
  });

  test('spend.actuators and no spends: defines fine and still scopes the cap, under flag 2 and before it', async () => {
    const scoped: AdmissionPolicy = { ...policy, id: 'refunds@scoped', envelope: { spend: { arg: 'amount', cap: 1000, actuators: ['refund.issue'] } } };
    const applied: string[] = [];
    const store = new MemoryStore();
    const runtime = createRuntime({ store, domain: refundsDomain(applied, {}, scoped), signingKey: key });
    const fresh = await (await runtime.start(intent, { id: 'scoped-new' })).done;
    expect(fresh.status).toBe('completed');
    expect(applied.map((a) => a.split(' ')[0])).toEqual(['refund.issue', 'email.send']);
    const pinned = (await store.read(fresh.id, 0, 1))[0] as JournalRecord<'invocation.pinned'>;
    await pinnedAs(store, 'scoped-old', pinned, olderPin(pinned.body.pin));
    const old = await (await runtime.resume('scoped-old')).done;
    expect(old.status).toBe('completed');
    expect((await bareRuntime(store, scoped).replay('scoped-new')).fingerprint).toBe(fresh.fingerprint);
    expect((await bareRuntime(store, scoped).replay('scoped-old')).fingerprint).toBe(old.fingerprint);
  });

  test('pure: the pinned list is sorted and skips reads; the scope is the pinned names under flag 2 with some declared, the rule before otherwise', () => {
    const declared = pinnedSpenders([
      { name: 'z.pay', readOnly: false, spends: 'amount' },
      { name: 'a.read', readOnly: true, spends: 'amount' },
      { name: 'b.refund', readOnly: false, spends: 'amount' },
      { name: 'm.mail', readOnly: false },
    ]);
    expect(declared).toEqual([
      { actuator: 'b.refund', arg: 'amount' },
      { actuator: 'z.pay', arg: 'amount' },
    ]);
    expect([...pinnedSpendScope({ flags: [FLAG_FAIL_CLOSED, FLAG_DECLARED_SPEND], spenders: declared })!]).toEqual(['b.refund', 'z.pay']);
    expect(pinnedSpendScope({ flags: [FLAG_FAIL_CLOSED, FLAG_DECLARED_SPEND], spenders: [] })).toBeUndefined();
    expect(pinnedSpendScope({ flags: [FLAG_FAIL_CLOSED, FLAG_DECLARED_SPEND] })).toBeUndefined();
    expect(pinnedSpendScope({ flags: [FLAG_FAIL_CLOSED], spenders: declared })).toBeUndefined();
  });
});

describe('an ambiguous declaration of spending is refused when the domain is defined', () => {
  const define = (acts: Actuator[], envelope: ContractEnvelope = { spend: { arg: 'amount', cap: 1000 } }) => () =>
    defineDomain({ name: 'refunds', libraries: [library], actuators: acts, observe: 'refunds.observe', policy: { ...policy, envelope }, model: new ScriptedModel(transcript), asOf });
  const refused = (fn: () => unknown, pattern: RegExp) => {
    let err: unknown;
    try {
      fn();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RuntimeUsageError);
    expect((err as RuntimeUsageError).code).toBe('domain.ambiguous_spend');
    expect((err as Error).message).toMatch(pattern);
    expect((err as Error).message).not.toContain('\n');
  };

  test('spends naming another arg than the one the envelope caps', () => refused(define(actuators([], { 'refund.issue': 'total' })), /declares spends: 'total' but the policy's envelope caps 'amount'/));
  test("spend.actuators that disagree with the actuators' declarations", () =>
    refused(define(actuators([]), { spend: { arg: 'amount', cap: 1000, actuators: ['email.send'] } }), /lists spend\.actuators email\.send but the actuators that declare spends are refund\.issue/));
  test('spends on a read-only actuator', () => refused(define(actuators([], { 'refund.issue': 'amount', 'email.send': 'amount' }, true)), /email\.send is readOnly/));
  test('spends that is not a name', () => refused(define(actuators([], { 'refund.issue': 'amount', 'email.send': 5 })), /spends must name its numeric arg/));
  test('a factory of actuators is checked when it is called (createRuntime)', () => {
    const domain = defineDomain({ name: 'refunds', libraries: [library], actuators: () => actuators([], { 'refund.issue': 'total' }), observe: 'refunds.observe', policy, model: new ScriptedModel(transcript), asOf });
    refused(() => createRuntime({ store: new MemoryStore(), domain, stateDir: '/nonexistent', signingKey: key }), /declares spends: 'total'/);
  });
  test('a runtime built from parts is checked too', () => {
    let err: unknown;
    try {
      createRuntime({ store: new MemoryStore(), libraries: [library], actuators: actuators([], { 'refund.issue': 'total' }), observe: 'refunds.observe', policy, model: new ScriptedModel(transcript), signingKey: key });
    } catch (e) {
      err = e;
    }
    expect((err as RuntimeUsageError).code).toBe('runtime.ambiguous_spend');
  });
  test('a consistent declaration is accepted (spend.actuators naming exactly the declared spenders)', () => {
    expect(define(actuators([]), { spend: { arg: 'amount', cap: 1000, actuators: ['refund.issue'] } })()).toBeDefined();
  });
  test('a cap and no spends on any actuator is not ambiguous (with or without spend.actuators), nor is a factory or a runtime from parts that declares none', () => {
    expect(define(actuators([], {}))()).toBeDefined();
    expect(define(actuators([], {}), { spend: { arg: 'amount', cap: 1000, actuators: ['email.send'] } })()).toBeDefined();
    const domain = defineDomain({ name: 'refunds', libraries: [library], actuators: () => actuators([], {}), observe: 'refunds.observe', policy, model: new ScriptedModel(transcript), asOf });
    expect(createRuntime({ store: new MemoryStore(), domain, stateDir: '/nonexistent', signingKey: key })).toBeDefined();
    expect(createRuntime({ store: new MemoryStore(), libraries: [library], actuators: actuators([], {}), observe: 'refunds.observe', policy, signingKey: key })).toBeDefined();
  });
});
