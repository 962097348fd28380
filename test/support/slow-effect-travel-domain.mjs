/**
 * The built-in travel domain with ONE slow actuator, for tests that must act while a given job is
 * in flight on a worker (freeze or kill the runtime while the worker still runs the job):
 * `weft worker --domain test/support/slow-effect-travel-domain.mjs …` with
 * WEFT_TEST_SLOW_ACTUATOR=<actuator name> and WEFT_TEST_SLOW_MS=<ms> (default 0: not slowed).
 * The actuator sleeps BEFORE its effect. Everything else — library, policy, evaluables, model — is
 * the compiled travel domain's (dist/, so `npm run build` first): the same pin, journal and
 * fingerprint.
 */
import { travelDomain } from '../../dist/examples/travel/domain.js';
import { defineDomain } from '../../dist/runtime/domain.js';

const slowActuator = process.env.WEFT_TEST_SLOW_ACTUATOR ?? '';
const delayMs = Number(process.env.WEFT_TEST_SLOW_MS ?? 0);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export default defineDomain({
  name: travelDomain.name,
  description: `${travelDomain.description} (${slowActuator || 'nothing'} slowed by ${delayMs} ms, for tests)`,
  libraries: travelDomain.libraries,
  actuators: (ctx) =>
    travelDomain.actuators(ctx).map((a) =>
      a.name !== slowActuator || delayMs <= 0
        ? a
        : {
            ...a,
            run: async (args, actx) => {
              await sleep(delayMs);
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
