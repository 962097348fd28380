/**
 * Policy packs, the pure side (policy/): a pack validates or is refused naming the field; its digest
 * is that of its canonical JSON (key order and spacing do not change it, a rule does); travel's
 * pack says what travelPolicy v3 says (same envelope, same decisions, same reasons); and each rule
 * kind decides as documented — the strongest verdict wins whatever the order, read-only steps are
 * admitted freely when the pack says so, tenants get their own actuators, pivots are named, and a
 * predicate is resolved by name@version or the pack does not compile.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { AUTHORED_TAXI_ALLOWANCE, travelPolicy } from '../examples/travel/app.js';
import { travelDomain } from '../examples/travel/domain.js';
import { TRAVEL_POLICY_PACK, TRAVEL_POLICY_PACK_V4, travelPackPolicy, travelPackPolicyV4 } from '../examples/travel/policy-pack.js';
import type { EpochPlan, EpochStep } from '../machines/context.js';
import type { EpochAdmissionRequest } from '../machines/policy.js';
import {
  compileRulePack,
  packDigest,
  parsePackPolicyId,
  parseRulePack,
  parseRulePackText,
  PredicateMissingError,
  PredicateRegistry,
  RulePackError,
  type RulePack,
} from '../policy/index.js';

const travelDir = path.join(import.meta.dirname, '..', 'examples', 'travel');
const travelPackText = readFileSync(path.join(travelDir, 'policy-pack.json'), 'utf8');
const travelPack = parseRulePackText(travelPackText, 'policy-pack.json');
const approvalPack = parseRulePackText(readFileSync(path.join(travelDir, 'policy-approval.json'), 'utf8'), 'policy-approval.json');

const step = (operator: string, actuator: string, args: Record<string, string | number> = {}, extra: Partial<EpochStep> = {}): EpochStep => ({ operator, args: [], actuator, actuatorArgs: args, readOnly: false, ...extra });
const search = (op: string, actuator: string) => step(op, actuator, {}, { readOnly: true });
const plan = (steps: EpochStep[], source: EpochPlan['source'] = 'htn'): EpochPlan => ({ source, digest: '0'.repeat(64), steps });
const request = (steps: EpochStep[], tenant = 't1'): EpochAdmissionRequest => ({ tenant, epoch: 2, goal: { task: 'book_trip', args: [] }, plan: plan(steps), spenders: new Set(['card.charge', 'taxi.book']) });

/** The standard booking: holds, a 780 charge, confirmations (what the demo's epoch 2 plans). */
const booking = [
  step('hold_flight', 'airline.hold', { flight: 'TP1' }),
  step('hold_hotel', 'hotel.hold', { hotel: 'H1' }),
  step('charge_card', 'card.charge', { amount: 780 }),
  step('confirm_flight', 'airline.confirm', {}, { compensate: { actuator: 'airline.cancel', args: {} } }),
];
const sharing = [step('send_itinerary', 'message.send', { channel: 'email' }), step('set_checkin_reminder', 'reminder.set')];
const pack = (rules: unknown[]): RulePack => parseRulePack({ pack: 1, name: 'test', version: '1', rules }, 'test pack');

describe('a policy pack is validated, versioned and digested', () => {
  test("travel's packs validate; the digest is the canonical JSON's: key order and spacing do not change it, a rule does", () => {
    const digest = packDigest(travelPack);
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    const reordered = JSON.parse(travelPackText, (_key, value) => (value && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).reverse()) : value));
    expect(packDigest(parseRulePackText(JSON.stringify(reordered), 'reordered'))).toBe(digest);
    const changed = structuredClone(travelPack);
    (changed.rules.find((r) => r.rule === 'spend-cap') as { cap: number }).cap = 2001;
    expect(packDigest(changed)).not.toBe(digest);
    const policy = compileRulePack(travelPack);
    expect(policy.id).toBe(`pack:travel@5#${digest}`);
    expect(parsePackPolicyId(policy.id)).toEqual({ name: 'travel', version: '5', digest });
    // An allowance without \`per\` digests as it always did: travel@4, written before \`per\` existed, keeps its pinned digest.
    expect(packDigest(TRAVEL_POLICY_PACK_V4)).toBe('f7ae03ca754b10893d79825c0d2fd5f80a11b5e94571bafa2157710ab4b61fe0');
    expect(travelPackPolicyV4.id).toBe('pack:travel@4#f7ae03ca754b10893d79825c0d2fd5f80a11b5e94571bafa2157710ab4b61fe0');
    expect(parsePackPolicyId('spend-approval@3')).toBeUndefined();
    expect(compileRulePack(approvalPack).id).toMatch(/^pack:travel-approval@1#[0-9a-f]{64}$/);
  });

  test.each([
    ['not JSON', '{"pack": 1,', /not JSON/],
    ['an unknown field', JSON.stringify({ pack: 1, name: 'x', version: '1', rules: [], extra: true }), /Unrecognized key/i],
    ['a negative cap', JSON.stringify({ pack: 1, name: 'x', version: '1', rules: [{ id: 'cap', rule: 'spend-cap', arg: 'amount', cap: -1 }] }), /rules\[0\]\.cap/],
    ['an unknown rule kind', JSON.stringify({ pack: 1, name: 'x', version: '1', rules: [{ id: 'r', rule: 'be-nice' }] }), /rules\[0\]\.rule/],
    ['a rule id used twice', JSON.stringify({ pack: 1, name: 'x', version: '1', rules: [{ id: 'r', rule: 'pivot-last' }, { id: 'r', rule: 'approve-mutations' }] }), /rules\[1\]\.id: rule id "r" is used twice/],
    ['two spend caps', JSON.stringify({ pack: 1, name: 'x', version: '1', rules: [{ id: 'a', rule: 'spend-cap', arg: 'amount', cap: 1 }, { id: 'b', rule: 'spend-cap', arg: 'amount', cap: 2 }] }), /at most one spend-cap rule/],
    ['a step predicate that asks a person', JSON.stringify({ pack: 1, name: 'x', version: '1', rules: [{ id: 'p', rule: 'predicate', predicate: 'p@1', on: 'step', decision: 'require_approval', reason: 'r' }] }), /decides deny/],
    ['a pack version 2', JSON.stringify({ pack: 2, name: 'x', version: '1', rules: [] }), /^bad\.json is not a valid policy pack: pack:/],
  ])('%s is refused, naming where and which field', (_what, text, message) => {
    let caught: unknown;
    try {
      parseRulePackText(text, 'bad.json');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(RulePackError);
    expect((caught as RulePackError).code).toBe('policy.invalid_pack');
    expect((caught as Error).message).toMatch(/^bad\.json is not a valid policy pack: /);
    expect((caught as Error).message).toMatch(message);
  });
});

describe("travel's pack is today's policy as data", () => {
  test('travel@5 compiles to travelPolicy v3\'s envelope but for the allowance held per run (travel@4: v3\'s exactly), and decides as v3 does, with the same reasons', () => {
    const policy = compileRulePack(travelPack);
    expect(policy.envelope).toEqual({ ...travelPolicy.envelope, authoredEffects: { actuators: ['taxi.book'], spendAtMost: AUTHORED_TAXI_ALLOWANCE, per: 'run' } });
    expect(travelPackPolicyV4.envelope).toEqual(travelPolicy.envelope);
    expect(travelPackPolicyV4.envelopeRules).toEqual(policy.envelopeRules);
    expect(policy.envelopeRules).toEqual({ spend: 'spend-cap', actuators: 'library-actuators', recipients: 'message-channels', stepsPerFragment: 'fragment-size', dispatchesPerEpoch: 'epoch-dispatches', authoredEffects: 'model-taxi-allowance' });
    const big = [...booking.slice(0, 2), step('charge_card', 'card.charge', { amount: 1200 })];
    const message = [step('send', 'message.send', { amount: 5000 })]; // not a spender: counts nothing under flag 2
    for (const steps of [booking, big, sharing, message, [search('search_flights', 'flights.search')]]) {
      const v3 = travelPolicy.admitEpoch(request(steps));
      const { rule: _rule, ...v4 } = policy.admitEpoch(request(steps));
      expect(v4).toEqual(v3);
    }
    expect(policy.admitEpoch(request(big))).toEqual({ decision: 'require_approval', reason: 'the epoch spends 1200, above the 1000 limit', rule: 'approve-above-1000' });
    expect(policy.admitEpoch(request(booking))).toEqual({ decision: 'allow', rule: 'weft:default' });
  });

  test('the travel domain runs travel@5 by default: the pack in code is policy-pack.json byte for byte, and travel@4 and the coded versions stay for old journals', () => {
    // The built package carries the pack as code (dist/ ships no JSON); the file is the same pack, written as JSON.
    expect(JSON.stringify(TRAVEL_POLICY_PACK, null, 2) + '\n').toBe(travelPackText);
    expect(travelPackPolicy.id).toBe(compileRulePack(travelPack).id);
    expect(travelPackPolicy.digest).toBe(packDigest(travelPack));
    expect(travelDomain.policy).toBe(travelPackPolicy);
    expect(travelDomain.policies.map((p) => p.id)).toEqual([travelPackPolicyV4.id, 'spend-approval@3', 'spend-approval@2', 'spend-approval@1']);
    expect(travelPackPolicy.envelope?.authoredEffects).toEqual({ actuators: ['taxi.book'], spendAtMost: AUTHORED_TAXI_ALLOWANCE, per: 'run' });
    expect(travelPackPolicyV4.envelope?.authoredEffects).toEqual({ actuators: ['taxi.book'], spendAtMost: AUTHORED_TAXI_ALLOWANCE });
    // travel@5 is travel@4 but for its version, its description and the allowance's scope.
    const { version: _v5, description: _d5, rules: rules5, ...rest5 } = TRAVEL_POLICY_PACK;
    const { version: _v4, description: _d4, rules: rules4, ...rest4 } = TRAVEL_POLICY_PACK_V4;
    expect(rest5).toEqual(rest4);
    expect(rules5.filter((r) => r.id !== 'model-taxi-allowance')).toEqual(rules4.filter((r) => r.id !== 'model-taxi-allowance'));
  });

  test('the approval pack asks a person for the 780 booking, and admits the searches by its read-only rule', () => {
    const policy = compileRulePack(approvalPack);
    expect(policy.admitEpoch(request(booking))).toEqual({ decision: 'require_approval', reason: 'the epoch spends 780, above the 500 limit', rule: 'approve-above-500' });
    expect(policy.admitEpoch(request([search('search_flights', 'flights.search'), search('search_hotels', 'hotels.search')]))).toEqual({ decision: 'allow', rule: 'searches-free' });
    expect(policy.admitStep!({ tenant: 't1', epoch: 1, index: 0, step: search('search_flights', 'flights.search') })).toEqual({ decision: 'allow', rule: 'searches-free' });
  });
});

describe('each rule kind decides as documented', () => {
  test('a deny wins over an approval whatever their order, and among equals the first rule decides', () => {
    const approveFirst = compileRulePack(pack([{ id: 'ask', rule: 'approve-mutations' }, { id: 'pivots', rule: 'pivot-last' }, { id: 'ask-above', rule: 'approve-above', arg: 'amount', amount: 1 }]));
    const denial = approveFirst.admitEpoch(request(sharing));
    expect(denial).toMatchObject({ decision: 'deny', rule: 'pivots' });
    expect((denial as { reason: string }).reason).toBe(
      'step 0 (send_itinerary → message.send) is a pivot (a world effect with no declared compensation) and step 1 (set_checkin_reminder → reminder.set) may fail after it, when nothing can undo it; the pack puts pivots last',
    );
    expect(approveFirst.admitEpoch(request(booking.slice(3)))).toMatchObject({ decision: 'require_approval', rule: 'ask' });
  });

  test('pivot-last: a step undone by its declared compensation, or by an actuator the rule lists as undoable, is no pivot', () => {
    const listed = compileRulePack(pack([{ id: 'pivots', rule: 'pivot-last', undoable: ['airline.hold', 'hotel.hold', 'card.charge', 'reminder.set'] }]));
    expect(listed.admitEpoch(request(booking))).toEqual({ decision: 'allow', rule: 'weft:default' });
    const unlisted = compileRulePack(pack([{ id: 'pivots', rule: 'pivot-last' }]));
    expect(unlisted.admitEpoch(request(booking))).toMatchObject({ decision: 'deny', rule: 'pivots', reason: expect.stringMatching(/^step 0 \(hold_flight → airline\.hold\) is a pivot/) });
    // A pivot last in its epoch is allowed: nothing after it can fail.
    expect(listed.admitEpoch(request([sharing[1]!, sharing[0]!]))).toEqual({ decision: 'allow', rule: 'weft:default' });
  });

  test('tenant-actuators: each tenant its own actuators, "*" for the others, at the epoch and at dispatch', () => {
    const policy = compileRulePack(pack([{ id: 'per-tenant', rule: 'tenant-actuators', tenants: { acme: ['flights.search', 'message.send', 'reminder.set'], '*': ['flights.search'] } }]));
    expect(policy.admitEpoch(request(sharing, 'acme'))).toEqual({ decision: 'allow', rule: 'weft:default' });
    expect(policy.admitEpoch(request(sharing, 'globex'))).toEqual({ decision: 'deny', rule: 'per-tenant', reason: 'step 0 (send_itinerary) dispatches message.send; the pack allows tenant "globex" only flights.search' });
    expect(policy.admitStep!({ tenant: 'globex', epoch: 3, index: 1, step: sharing[1]! })).toMatchObject({ decision: 'deny', rule: 'per-tenant' });
  });

  test('approve-mutations asks for any world effect; read-only-free lets an epoch of reads through by name', () => {
    const policy = compileRulePack(pack([{ id: 'reads', rule: 'read-only-free' }, { id: 'any-effect', rule: 'approve-mutations' }]));
    expect(policy.admitEpoch(request(sharing))).toMatchObject({ decision: 'require_approval', rule: 'any-effect', reason: 'the epoch has 2 world effect(s), the first step 0 (send_itinerary); the pack asks a person to approve any epoch with a mutation' });
    expect(policy.admitEpoch(request([search('s', 'flights.search')]))).toEqual({ decision: 'allow', rule: 'reads' });
  });

  test('authoring: per goal task, allow, deny or ask a person — with the rule named', () => {
    const policy = compileRulePack(pack([
      { id: 'taxi-by-model', rule: 'authoring', decision: 'allow', tasks: ['book_transfer'] },
      { id: 'no-model-bookings', rule: 'authoring', decision: 'deny', tasks: ['book_trip'] },
      { id: 'ask-otherwise', rule: 'authoring', decision: 'require_approval', reason: 'a person reviews what the model may author' },
    ]));
    const ask = (task: string) => policy.admitAuthoring!({ tenant: 't1', epoch: 2, goal: { task, args: [] } });
    expect(ask('book_trip')).toEqual({ decision: 'deny', rule: 'no-model-bookings', reason: 'the pack lets no model author a fragment for book_trip' });
    expect(ask('book_transfer')).toEqual({ decision: 'require_approval', rule: 'ask-otherwise', reason: 'a person reviews what the model may author' });
    expect(compileRulePack(pack([{ id: 'taxi-by-model', rule: 'authoring', decision: 'allow', tasks: ['book_transfer'] }])).admitAuthoring!({ tenant: 't', epoch: 1, goal: { task: 'book_transfer', args: [] } })).toEqual({ decision: 'allow', rule: 'taxi-by-model' });
  });

  test('a predicate is resolved by name@version: the pack does not compile without it, and decides with it', () => {
    const rules = [{ id: 'no-sms-at-night', rule: 'predicate', predicate: 'sms@1', on: 'step', decision: 'deny', reason: 'no text messages for this tenant' }];
    expect(() => compileRulePack(pack(rules))).toThrow(PredicateMissingError);
    expect(() => compileRulePack(pack(rules), new PredicateRegistry([{ name: 'sms', version: '2', test: () => true }]))).toThrow(/predicate sms@1, which is not registered \(registered: sms@2\)/);
    const registry = new PredicateRegistry([{ name: 'sms', version: '1', test: (input) => input.subject === 'step' && input.request.step.actuatorArgs?.channel === 'sms' }]);
    const policy = compileRulePack(pack(rules), registry);
    expect(policy.predicates).toEqual(['sms@1']);
    const sms = step('send_itinerary', 'message.send', { channel: 'sms' });
    expect(policy.admitStep!({ tenant: 't1', epoch: 3, index: 0, step: sms })).toEqual({ decision: 'deny', rule: 'no-sms-at-night', reason: 'no text messages for this tenant' });
    expect(policy.admitStep!({ tenant: 't1', epoch: 3, index: 0, step: sharing[0]! })).toEqual({ decision: 'allow', rule: 'weft:default' });
  });
});
