/**
 * The contract envelope (machines/envelope.ts): each rule at the epoch (over the whole plan) and at
 * dispatch (one step, with what the invocation spent and the epoch dispatched so far); bounded
 * reasons that say what the envelope allows; the policy carrying it; and the travel example's v2
 * policy, whose envelope admits the demo and lists exactly the actuators its library binds.
 */
import { describe, expect, test } from 'vitest';
import { allowAll, spendApprovalPolicy } from '../machines/policy.js';
import { authoredEffectsProblem, checkEnvelopeEpoch, checkEnvelopeStep, envelopeSpend, type ContractEnvelope } from '../machines/envelope.js';
import type { EpochPlan, EpochStep } from '../machines/context.js';
import { travelLibrary } from '../examples/travel/library.js';
import { travelPolicy, travelPolicyV1, travelPolicyV2 } from '../examples/travel/app.js';
import { travelDomain } from '../examples/travel/domain.js';
import { travelPackPolicy, travelPackPolicyV4 } from '../examples/travel/policy-pack.js';

const step = (actuator: string, args: Record<string, string | number> = {}, readOnly = false, extra: Partial<EpochStep> = {}): EpochStep => ({
  operator: actuator.replace('.', '_'),
  args: [],
  actuator,
  actuatorArgs: args,
  readOnly,
  ...extra,
});
const charge = (amount: number | string) => step('card.charge', { amount });
const search = step('flights.search', { amount: 9999 }, true);
const send = (channel: string | number) => step('message.send', { channel });
const epoch = (steps: EpochStep[], source: EpochPlan['source'] = 'htn'): EpochPlan => ({ source, digest: 'd', steps });

describe('envelopeSpend', () => {
  test('sums the arg over world-effect steps (of the listed actuators, if any); reads, non-numbers and negatives add nothing', () => {
    const env: ContractEnvelope = { spend: { arg: 'amount', cap: 100 } };
    expect(envelopeSpend(env, [charge(30), search, charge(20), step('bank.refund', { amount: -500 }), charge('x')])).toBe(50);
    expect(envelopeSpend({ spend: { arg: 'amount', cap: 100, actuators: ['hotel.pay'] } }, [charge(30), step('hotel.pay', { amount: 7 })])).toBe(7);
    expect(envelopeSpend({}, [charge(30)])).toBe(0);
  });
});

describe('authoredEffectsProblem (what the model authored, admitted without a person)', () => {
  const taxi = (amount: number) => step('taxi.book', { amount });
  const allowance = { actuators: ['taxi.book'], spendAtMost: 80 };
  test('an allowance admits listed actuators up to its spend, and sends the rest to a person', () => {
    const env: ContractEnvelope = { spend: { arg: 'amount', cap: 2000 }, authoredEffects: allowance };
    expect(authoredEffectsProblem(env, [search, taxi(35)])).toBeUndefined();
    expect(authoredEffectsProblem(env, [taxi(110)])).toMatch(/spending 110, above the 80 .*a person approves/);
    expect(authoredEffectsProblem(env, [charge(5)])).toMatch(/card_charge dispatches card\.charge .*a person approves/);
    expect(authoredEffectsProblem(env, [search])).toBeUndefined(); // reads only
  });

  test('with no spend rule, what is spent cannot be counted: a person approves, whatever the amount', () => {
    const env: ContractEnvelope = { authoredEffects: allowance };
    expect(authoredEffectsProblem(env, [taxi(5000)])).toMatch(/names no spend argument.*a person approves them/);
    expect(authoredEffectsProblem(env, [taxi(1)])).toMatch(/a person approves them/);
    expect(authoredEffectsProblem({ authoredEffects: 'allow' }, [taxi(5000)])).toBeUndefined();
  });
});

describe('checkEnvelopeEpoch', () => {
  test('an empty envelope admits anything', () => {
    expect(checkEnvelopeEpoch({}, epoch([charge(1e9), send('fax'), ...Array(100).fill(search)], 'authored'), 1e9)).toBeUndefined();
  });

  test('actuators: every step, and every declared compensation, is on the list', () => {
    const env: ContractEnvelope = { actuators: ['card.charge', 'airline.confirm'] };
    expect(checkEnvelopeEpoch(env, epoch([charge(1)]), 0)).toBeUndefined();
    expect(checkEnvelopeEpoch(env, epoch([charge(1), search]), 0)).toBe('step 1 (flights_search) dispatches flights.search; the envelope allows only card.charge, airline.confirm');
    const confirm = step('airline.confirm', {}, false, { compensate: { actuator: 'airline.cancel', args: {} } });
    expect(checkEnvelopeEpoch(env, epoch([confirm]), 0)).toBe('step 0 (airline_confirm) is undone by airline.cancel; the envelope allows only card.charge, airline.confirm');
    const bare: EpochStep = { operator: 'think', args: [], readOnly: true };
    expect(checkEnvelopeEpoch(env, epoch([bare]), 0)).toMatch(/^step 0 \(think\) dispatches no actuator; the envelope allows only/);
    expect(checkEnvelopeEpoch({ actuators: [] }, epoch([charge(1)]), 0)).toMatch(/the envelope allows only none$/);
  });

  test('recipients: a step passing the arg passes an allowed value (only on the listed actuators, if any)', () => {
    const env: ContractEnvelope = { recipients: { arg: 'channel', allowed: ['email', 'sms'] } };
    expect(checkEnvelopeEpoch(env, epoch([send('email'), send('sms'), charge(5)]), 0)).toBeUndefined();
    expect(checkEnvelopeEpoch(env, epoch([send('email'), send('fax')]), 0)).toBe('step 1 (message_send) sends to channel "fax"; the envelope allows channel email, sms');
    expect(checkEnvelopeEpoch(env, epoch([send(7)]), 0)).toMatch(/sends to channel 7;/);
    const scoped: ContractEnvelope = { recipients: { arg: 'channel', allowed: ['email'], actuators: ['message.send'] } };
    expect(checkEnvelopeEpoch(scoped, epoch([step('pager.page', { channel: 'fax' })]), 0)).toBeUndefined();
    expect(checkEnvelopeEpoch(scoped, epoch([send('sms')]), 0)).toMatch(/sends to channel "sms"; the envelope allows channel email$/);
    const undo = send('email');
    undo.compensate = { actuator: 'message.send', args: { channel: 'fax' } };
    expect(checkEnvelopeEpoch(env, epoch([undo]), 0)).toMatch(/^the compensation of step 0 \(message_send\) sends to channel "fax"/);
  });

  test('stepsPerFragment bounds model-authored plans only', () => {
    const env: ContractEnvelope = { stepsPerFragment: 3 };
    const many = Array(500).fill(search) as EpochStep[];
    expect(checkEnvelopeEpoch(env, epoch(many.slice(0, 3), 'authored'), 0)).toBeUndefined();
    expect(checkEnvelopeEpoch(env, epoch(many, 'authored'), 0)).toBe('the authored fragment has 500 steps; the envelope allows at most 3 per fragment');
    expect(checkEnvelopeEpoch(env, epoch(many.slice(0, 4), 'htn'), 0)).toBeUndefined();
  });

  test('dispatchesPerEpoch: a plan with more steps than dispatches is refused before it runs', () => {
    const env: ContractEnvelope = { dispatchesPerEpoch: 2 };
    expect(checkEnvelopeEpoch(env, epoch([search, search]), 0)).toBeUndefined();
    expect(checkEnvelopeEpoch(env, epoch([search, search, search]), 0)).toBe('the epoch has 3 steps; the envelope allows at most 2 dispatches per epoch');
  });

  test('spend: what was spent so far plus the plan is at most the cap; a non-number amount is refused', () => {
    const env: ContractEnvelope = { spend: { arg: 'amount', cap: 2000 } };
    expect(checkEnvelopeEpoch(env, epoch([charge(780), search]), 0)).toBeUndefined();
    expect(checkEnvelopeEpoch(env, epoch([charge(780)]), 1220)).toBeUndefined();
    expect(checkEnvelopeEpoch(env, epoch([charge(780)]), 1221)).toBe(
      'the epoch would spend 780 with 1221 already spent in this invocation (2001 in all); the envelope caps amount at 2000 per invocation',
    );
    expect(checkEnvelopeEpoch(env, epoch([charge(2400), charge(2400)]), 0)).toMatch(/^the epoch would spend 4800 with 0 already spent/);
    expect(checkEnvelopeEpoch(env, epoch([search, charge('2400')]), 0)).toBe('step 1 (card_charge) has amount "2400", not a number; the envelope caps amount at 2000 per invocation');
    // A cap that is not a number admits nothing that spends (fail closed).
    expect(checkEnvelopeEpoch({ spend: { arg: 'amount', cap: Number.NaN } }, epoch([charge(1)]), 0)).toMatch(/would spend 1/);
  });

  test('reasons are bounded', () => {
    const long = 'y'.repeat(1000);
    const env: ContractEnvelope = { actuators: Array.from({ length: 100 }, (_, i) => `actuator.number${i}`), recipients: { arg: 'channel', allowed: ['email'] } };
    expect(checkEnvelopeEpoch(env, epoch([step(long)]), 0)!.length).toBeLessThan(400);
    expect(checkEnvelopeEpoch({ recipients: env.recipients! }, epoch([send(long)]), 0)!.length).toBeLessThan(200);
  });
});

describe('checkEnvelopeStep', () => {
  const env: ContractEnvelope = {
    spend: { arg: 'amount', cap: 1000 },
    actuators: ['card.charge', 'message.send', 'flights.search'],
    recipients: { arg: 'channel', allowed: ['email'] },
    dispatchesPerEpoch: 3,
  };

  test('admits an allowed step within the limits', () => {
    expect(checkEnvelopeStep(env, charge(400), 0, 600)).toBeUndefined();
    expect(checkEnvelopeStep(env, send('email'), 2, 1000)).toBeUndefined();
    expect(checkEnvelopeStep(env, search, 2, 1000)).toBeUndefined(); // reads spend nothing
  });

  test('actuator and recipient', () => {
    expect(checkEnvelopeStep(env, step('airline.hold'), 0, 0)).toBe('step airline_hold dispatches airline.hold; the envelope allows only card.charge, message.send, flights.search');
    expect(checkEnvelopeStep(env, send('sms'), 0, 0)).toBe('step message_send sends to channel "sms"; the envelope allows channel email');
  });

  test('dispatches this epoch', () => {
    expect(checkEnvelopeStep(env, search, 3, 0)).toBe('the epoch already made 3 dispatches; the envelope allows at most 3 per epoch');
  });

  test('spend', () => {
    expect(checkEnvelopeStep(env, charge(401), 0, 600)).toBe(
      'step card_charge would spend 401 with 600 already spent in this invocation (1001 in all); the envelope caps amount at 1000 per invocation',
    );
    expect(checkEnvelopeStep(env, charge('lots'), 0, 0)).toBe('step card_charge has amount "lots", not a number; the envelope caps amount at 1000 per invocation');
  });
});

describe('policies carry the envelope', () => {
  test('spendApprovalPolicy passes it through; the id format and its decisions are unchanged', () => {
    const envelope: ContractEnvelope = { spend: { arg: 'amount', cap: 5 } };
    const p = spendApprovalPolicy({ version: '7', limit: 10, amountArg: 'amount', envelope });
    expect(p.id).toBe('spend-approval@7');
    expect(p.envelope).toBe(envelope);
    expect(p.admitEpoch({ tenant: 't', epoch: 1, goal: { task: 'x', args: [] }, plan: epoch([charge(8)]) })).toEqual({ decision: 'allow' });
    expect(p.admitEpoch({ tenant: 't', epoch: 1, goal: { task: 'x', args: [] }, plan: epoch([charge(11)]) }).decision).toBe('require_approval');
    expect('envelope' in spendApprovalPolicy({ version: '1', limit: 10, amountArg: 'amount' })).toBe(false);
    expect(allowAll.envelope).toBeUndefined();
    expect(allowAll.admitAuthoring).toBeUndefined();
  });
});

describe('the travel policy', () => {
  const bound = new Set(travelLibrary.operators.flatMap((o) => [o.actuator?.actuator, o.compensate?.actuator]).filter((a): a is string => a !== undefined));

  test('v3 carries the envelope over every actuator the library binds and admits authored taxi bookings up to 80; v2 and v1 stay as they were, kept in the domain for old journals', () => {
    expect(travelPolicy.id).toBe('spend-approval@3');
    expect(travelPolicyV2.id).toBe('spend-approval@2');
    expect(travelPolicyV1.id).toBe('spend-approval@1');
    expect(travelPolicyV1.envelope).toBeUndefined();
    // New runs pin v3's rules as the pack travel@5, the model's allowance held per run (test/policy-pack.test.ts); travel@4 (v3's
    // rules exactly) and v3, coded, stay for the journals pinned to them.
    expect(travelPackPolicy.id).toMatch(/^pack:travel@5#[0-9a-f]{64}$/);
    expect(travelPackPolicy.envelope).toEqual({ ...travelPolicy.envelope, authoredEffects: { actuators: ['taxi.book'], spendAtMost: 80, per: 'run' } });
    expect(travelPackPolicyV4.envelope).toEqual(travelPolicy.envelope);
    expect(travelDomain.policies).toEqual([travelPackPolicyV4, travelPolicy, travelPolicyV2, travelPolicyV1]);
    const env = travelPolicy.envelope!;
    expect(new Set(env.actuators)).toEqual(bound);
    expect(env).toMatchObject({ spend: { arg: 'amount', cap: 2000 }, recipients: { arg: 'channel', allowed: ['email', 'sms'] }, stepsPerFragment: 12, dispatchesPerEpoch: 24, authoredEffects: { actuators: ['taxi.book'], spendAtMost: 80 } });
    // v2 as it shipped: the library's actuators before the taxi, and every authored effect asks a person.
    const v2 = travelPolicyV2.envelope!;
    expect(new Set(v2.actuators)).toEqual(new Set([...bound].filter((a) => !a.startsWith('taxi.'))));
    expect(v2).toMatchObject({ spend: { arg: 'amount', cap: 2000 }, recipients: { arg: 'channel', allowed: ['email', 'sms'] }, stepsPerFragment: 12, dispatchesPerEpoch: 24 });
    expect(v2.authoredEffects).toBeUndefined();
  });

  test("the demo's booking epoch is admitted; the overspending authored fragment is not", () => {
    const env = travelPolicy.envelope!;
    const t = { traveller: 'me' };
    const booking = [
      step('airline.hold', { ...t, flight: 'f-tp1353' }),
      step('hotel.hold', { ...t, hotel: 'h-alfama' }),
      step('card.charge', { ...t, card: 'card-visa-4242', flight: 'f-tp1353', hotel: 'h-alfama', amount: 780 }),
      step('airline.confirm', { ...t, flight: 'f-tp1353' }, false, { compensate: { actuator: 'airline.cancel', args: { ...t, flight: 'f-tp1353' } } }),
      step('hotel.confirm', { ...t, hotel: 'h-alfama' }, false, { compensate: { actuator: 'hotel.cancel', args: { ...t, hotel: 'h-alfama' } } }),
    ];
    expect(checkEnvelopeEpoch(env, epoch(booking), 0)).toBeUndefined();
    expect(checkEnvelopeEpoch(env, epoch([send('email'), step('reminder.set', { ...t, flight: 'f-tp1353' })]), 780)).toBeUndefined();
    const overspent = booking.map((s) => (s.actuator === 'card.charge' ? { ...s, actuatorArgs: { ...s.actuatorArgs, amount: 2400 } } : s));
    expect(checkEnvelopeEpoch(env, epoch(overspent, 'authored'), 0)).toMatch(/^the epoch would spend 2400 .* caps amount at 2000 per invocation$/);
    expect(checkEnvelopeEpoch(env, epoch(Array(500).fill(step('flights.search', {}, true)), 'authored'), 0)).toMatch(/has 500 steps; the envelope allows at most 12 per fragment/);
    expect(checkEnvelopeEpoch(env, epoch([step('travel.observe', {}, true)]), 0)).toMatch(/dispatches travel\.observe; the envelope allows only/);
  });
});
