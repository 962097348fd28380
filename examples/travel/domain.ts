/**
 * The travel domain — what `weft run travel` (and `npm start`) loads: the pinned method library,
 * the simulated providers over a world per invocation (a file in the domain's state folder, or a
 * key in the runtime's Redis), the spend policy, the evaluables, the scripted model that plays the
 * transcript, the default intent and the pinned `asOf`, so the demo is the same on every machine.
 * It is a domain like any user's: built with `defineDomain`, the default export of
 * examples/travel/index.ts.
 *
 * Invariants:
 * - Each invocation's providers keep their world in `<stateDir>/<invocation>/providers.json` (the
 *   embedded mode), or — when the runtime keeps its journals in Redis (`DomainContext.redis`, the
 *   distributed mode) — under `<prefix>:travel:{<invocation>}:providers` in that Redis, so a
 *   runtime or worker in any process, on any machine, sees the same world. Either way it is seeded
 *   from the seed world the first time an actuator runs and reused afterwards, changed only by
 *   atomic read-modify-writes (state.ts), so a resumed run sees what a crashed run applied, any
 *   number of runs and workers share it, and replaying a journal elsewhere writes nothing.
 * - `asOf` is before the conference (the 12th), so the check-in reminder lands on the 11th.
 * - New invocations pin the policy pack travel@5 (policy-pack.ts: `pack:travel@5#<digest>`, filed in
 *   the store at start) — travelPolicy v3's rules as data, the model's taxi allowance held per run,
 *   so each admission records the rule that decided it (flags 7 and 11). travel@4 (the allowance per
 *   fragment) and the coded `travelPolicy` (v3), `travelPolicyV2` and `travelPolicyV1` stay in
 *   `policies`, so journals pinned to them still resume and replay. Likewise the library: new runs
 *   pin today's, and the one before `book_transfer` bound its effects and counted its booking per
 *   run (library-before-bindings.ts) stays in `libraries`.
 * - Besides the demo's intent, the taxi intents (transfer-script.ts) run offline too: their
 *   `book_transfer` goal has no method, so the model authors it — the gap path, from the CLI:
 *   `weft run travel "Take me to Porto for the summit on the 20th, under 1200 EUR, and book me a taxi from the airport"`.
 */
import { join } from 'node:path';
import { defineDomain } from '../../runtime/domain.js';
import { TRAVEL_OBSERVE, travelActuators, travelPolicy, travelPolicyV1, travelPolicyV2 } from './app.js';
import { travelPackPolicy, travelPackPolicyV4 } from './policy-pack.js';
import { fileStateBackend, redisStateBackend } from './state.js';
import { travelEvaluables, travelLibrary } from './library.js';
import { travelLibraryBeforeBindings } from './library-before-bindings.js';
import { TRAVEL_INTENT, travelTranscript } from './transcript.js';
import { TravelScriptedModel } from './transfer-script.js';

export const TRAVEL_AS_OF = '2026-06-01T09:00:00.000Z';
export const TRAVEL_STATE_FILE = 'providers.json';

export const travelDomain = defineDomain({
  name: 'travel',
  description: 'Book a conference trip to Lisbon under a budget: search, hold, pay, confirm, then send the itinerary and set a reminder.',
  // Today's library first (new runs pin it), then the one before book_transfer's bindings (issue 30), so journals pinned to it still resume and replay.
  libraries: [travelLibrary, travelLibraryBeforeBindings],
  // Each invocation books in a world of its own, seeded from the same initial world: in the
  // runtime's Redis when it has one (read `redis` first: `stateDir` throws when the runtime has
  // none), else in the state folder.
  actuators: (ctx) => {
    const redis = ctx.redis;
    if (redis) return travelActuators({ state: redisStateBackend({ url: redis.url, prefix: redis.prefix, giveUpAfterMs: redis.giveUpAfterMs }) });
    const stateDir = ctx.stateDir;
    return travelActuators({ state: fileStateBackend((invocation) => join(stateDir, invocation, TRAVEL_STATE_FILE)) });
  },
  observe: TRAVEL_OBSERVE,
  policy: travelPackPolicy,
  // Older versions (travel@4 as a pack, then coded), so journals pinned to them still resume and replay.
  policies: [travelPackPolicyV4, travelPolicy, travelPolicyV2, travelPolicyV1],
  evaluables: travelEvaluables(),
  model: () => new TravelScriptedModel(travelTranscript),
  intent: TRAVEL_INTENT,
  asOf: TRAVEL_AS_OF,
});
