/**
 * travel@4 — the travel example's default policy, as data: travelPolicy v3 (`spend-approval@3`,
 * app.ts) said as a rule pack (policy/), so `weft run travel` pins `pack:travel@4#<digest>` and
 * every admission names the rule that decided it (flag 7). examples/travel/policy-pack.json is the
 * same pack as a file, for `weft policy check` and `weft run --policy`; a test holds the file equal,
 * byte for byte, to this object written as JSON (two-space indent, a final newline).
 *
 * The pack is an object here rather than a file read at runtime so that the built package (dist/,
 * which ships compiled code and no JSON) carries it, whatever the working directory.
 *
 * Invariants:
 * - It decides what travelPolicy v3 decides (test/policy-pack.test.ts): at most 2000 EUR spent per
 *   invocation, only the library's actuators, messages by email or sms, at most 12 steps in a
 *   model-authored fragment and 24 dispatches per epoch, model-authored taxi bookings up to
 *   AUTHORED_TAXI_ALLOWANCE (80 EUR) without a person — a method mined from such fragments too,
 *   until a person removes its `origin: "mined"` (the runtime applies the `authored-effects` rule
 *   to both, runtime/epoch/admit-steps.ts) — and a person approves an epoch spending over 1000.
 * - Any change to it is a new version of the pack (a new pinned policy id): journals pinned to this
 *   one replay against the pack filed in their store under its digest.
 */
import { compileRulePack, type PackPolicy } from '../../policy/compile.js';
import { parseRulePack } from '../../policy/parse.js';
import type { RulePack } from '../../policy/schema.js';

/** The rules of travel@4, exactly as examples/travel/policy-pack.json says them. */
export const TRAVEL_POLICY_PACK: RulePack = {
  pack: 1,
  name: 'travel',
  version: '4',
  description:
    'The travel example\'s policy as data: travelPolicy v3 (spend-approval@3) as rules. At most 2000 EUR spent per invocation, only the library\'s actuators, messages by email or sms, at most 12 steps in a model-authored fragment and 24 dispatches per epoch, model-authored taxi bookings up to 80 EUR without a person, and a person approves an epoch spending more than 1000.',
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
    { id: 'model-taxi-allowance', rule: 'authored-effects', admit: { actuators: ['taxi.book'], spendAtMost: 80 } },
    { id: 'approve-above-1000', rule: 'approve-above', arg: 'amount', amount: 1000 },
  ],
};

/** travel@4 compiled (validated by the pack schema first): the travel domain's default policy. */
export const travelPackPolicy: PackPolicy = compileRulePack(parseRulePack(TRAVEL_POLICY_PACK, 'examples/travel/policy-pack.ts'));
