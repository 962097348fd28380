/**
 * travel@5 — the travel example's default policy, as data: travelPolicy v3 (`spend-approval@3`,
 * app.ts) said as a policy pack (policy/), with the model's taxi allowance held per run, so `weft run
 * travel` pins `pack:travel@5#<digest>` and every admission names the rule that decided it (flags 7
 * and 11). examples/travel/policy-pack.json is the same pack as a file, for `weft policy check` and
 * `weft run --policy`; a test holds the file equal, byte for byte, to this object written as JSON
 * (two-space indent, a final newline).
 *
 * The pack is an object here rather than a file read at runtime so that the built package (dist/,
 * which ships compiled code and no JSON) carries it, whatever the working directory.
 *
 * Invariants:
 * - It decides what travelPolicy v3 decides (test/policy-pack.test.ts): at most 2000 EUR spent per
 *   invocation, only the library's actuators, messages by email or sms, at most 12 steps in a
 *   model-authored fragment and 24 dispatches per epoch, and a person approves an epoch spending
 *   over 1000 — but for the model's allowance: model-authored taxi bookings up to
 *   AUTHORED_TAXI_ALLOWANCE (80 EUR) IN ALL THIS RUN without a person (`per: 'run'`, under flag 11:
 *   the sum over the run's authored bookings so far plus the fragment's; v3 and travel@4 held each
 *   fragment to it alone) — a method mined from such fragments too, until a person removes its
 *   `origin: "mined"` (the runtime applies the `authored-effects` rule to both,
 *   runtime/epoch/admit-steps.ts).
 * - Any change to it is a new version of the pack (a new pinned policy id): journals pinned to an
 *   older one replay against the pack filed in their store under its digest — and travel@4
 *   (`TRAVEL_POLICY_PACK_V4`) stays in the domain's `policies`, so they need not have it filed.
 */
import { compileRulePack, type PackPolicy } from '../../policy/compile.js';
import { parseRulePack } from '../../policy/parse.js';
import type { RulePack } from '../../policy/schema.js';

/** The rules of travel@5, exactly as examples/travel/policy-pack.json says them. */
export const TRAVEL_POLICY_PACK: RulePack = {
  pack: 1,
  name: 'travel',
  version: '5',
  description:
    'The travel example\'s policy as data: travelPolicy v3 (spend-approval@3) as rules, the model\'s allowance held per run. At most 2000 EUR spent per invocation, only the library\'s actuators, messages by email or sms, at most 12 steps in a model-authored fragment and 24 dispatches per epoch, model-authored taxi bookings up to 80 EUR in all per run without a person, and a person approves an epoch spending more than 1000.',
  rules: [
    { id: 'spend-cap', rule: 'spend-cap', arg: 'amount', cap: 2000 },
    {
      id: 'library-actuators',
      rule: 'actuators',
      allow: [
        'flights.search', 'hotels.search',
        'airline.hold', 'hotel.hold', 'card.charge', 'airline.confirm', 'hotel.confirm', 'airline.cancel', 'hotel.cancel',
        'message.send', 'reminder.set',
        'taxi.quote', 'taxi.book', 'taxi.cancel',
      ],
    },
    { id: 'message-channels', rule: 'recipients', arg: 'channel', allowed: ['email', 'sms'] },
    { id: 'fragment-size', rule: 'steps-per-fragment', max: 12 },
    { id: 'epoch-dispatches', rule: 'dispatches-per-epoch', max: 24 },
    { id: 'model-taxi-allowance', rule: 'authored-effects', admit: { actuators: ['taxi.book'], spendAtMost: 80, per: 'run' } },
    { id: 'approve-above-1000', rule: 'approve-above', arg: 'amount', amount: 1000 },
  ],
};

/** travel@5 compiled (validated by the pack schema first): the travel domain's default policy. */
export const travelPackPolicy: PackPolicy = compileRulePack(parseRulePack(TRAVEL_POLICY_PACK, 'examples/travel/policy-pack.ts'));

/**
 * travel@4, the default before the allowance was held per run: travel@5 but for its version, its
 * description and the allowance (per fragment). Kept, unchanged to the byte (its digest is pinned),
 * for the journals pinned to it.
 */
export const TRAVEL_POLICY_PACK_V4: RulePack = {
  ...TRAVEL_POLICY_PACK,
  version: '4',
  description:
    'The travel example\'s policy as data: travelPolicy v3 (spend-approval@3) as rules. At most 2000 EUR spent per invocation, only the library\'s actuators, messages by email or sms, at most 12 steps in a model-authored fragment and 24 dispatches per epoch, model-authored taxi bookings up to 80 EUR without a person, and a person approves an epoch spending more than 1000.',
  rules: TRAVEL_POLICY_PACK.rules.map((rule) => (rule.id === 'model-taxi-allowance' ? { id: 'model-taxi-allowance', rule: 'authored-effects', admit: { actuators: ['taxi.book'], spendAtMost: 80 } } : rule)),
};

/** travel@4 compiled: an older default, kept so journals pinned to it resume and replay. */
export const travelPackPolicyV4: PackPolicy = compileRulePack(parseRulePack(TRAVEL_POLICY_PACK_V4, 'examples/travel/policy-pack.ts (travel@4)'));
