/**
 * The built-in travel domain with ONE slow actuator, for tests that must act while a given job is
 * in flight on a worker (freeze or kill the runtime while the worker still runs the job):
 * `weft worker --domain test/support/slow-effect-travel-domain.mjs …` with
 * WEFT_TEST_SLOW_ACTUATOR=<actuator name> and WEFT_TEST_SLOW_MS=<ms> (default 0: not slowed).
 * The actuator sleeps BEFORE its effect — with WEFT_TEST_SLOW_UNTIL=<file>, only until that file
 * exists (at most WEFT_TEST_SLOW_MS): a test that must see the job in flight releases it once it has,
 * however slow a busy machine makes the seeing. Everything else — library, policy, evaluables, model — is
 * the compiled travel domain's (dist/, so `npm run build` first): the same pin, journal and
 * fingerprint.
 */
import { existsSync } from 'node:fs';
import { travelDomain } from '../../dist/examples/travel/domain.js';
import { defineDomain } from '../../dist/runtime/domain.js';

const slowActuator = process.env.WEFT_TEST_SLOW_ACTUATOR ?? '';
const delayMs = Number(process.env.WEFT_TEST_SLOW_MS ?? 0);
const releaseFile = process.env.WEFT_TEST_SLOW_UNTIL ?? '';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** Wait `ms`, or until the release file exists when there is one. */
async function hold(ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (releaseFile && existsSync(releaseFile)) return;
    await sleep(releaseFile ? Math.min(50, end - Date.now()) : end - Date.now());
  }
}

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
              await hold(delayMs);
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
