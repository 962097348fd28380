/**
 * The built-in travel domain with a slow observer, for process-level tests that need a run to be
 * in flight for a known while (two runtimes racing for one lease, Redis killed mid-run). It is the
 * compiled travel domain (dist/, so `npm run build` first) with the same library, policy,
 * evaluables and model — the same pin, journal and fingerprint — except that the observe actuator
 * sleeps WEFT_TEST_OBSERVE_DELAY_MS (default 0) before its first answer in this process, so a run
 * or resume holds its lease (and has its Redis connection open) for at least that long. Load it with
 * `weft run|resume … --domain test/support/slow-travel-domain.mjs`.
 */
import { travelDomain } from '../../dist/examples/travel/domain.js';
import { defineDomain } from '../../dist/runtime/domain.js';

const delayMs = Number(process.env.WEFT_TEST_OBSERVE_DELAY_MS ?? 0);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let slept = false;

export default defineDomain({
  name: travelDomain.name,
  description: `${travelDomain.description} (slow observer, for tests)`,
  libraries: travelDomain.libraries,
  actuators: (ctx) =>
    travelDomain.actuators(ctx).map((a) =>
      a.name !== travelDomain.observe || delayMs <= 0
        ? a
        : {
            ...a,
            run: async (args, actx) => {
              if (!slept) {
                slept = true;
                await sleep(delayMs);
              }
              return a.run.call(a, args, actx);
            },
          },
    ),
  observe: travelDomain.observe,
  policy: travelDomain.policy,
  policies: travelDomain.policies,
  evaluables: travelDomain.evaluables,
  model: (ctx) => travelDomain.model(ctx),
  intent: travelDomain.intent,
  asOf: travelDomain.asOf,
});
