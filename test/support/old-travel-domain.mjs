/**
 * An OLD build of the travel domain, as a worker left running during a rolling upgrade has it: its
 * library is another version (another digest: the runtime's new one is read from the store by
 * digest) and its build lacks one actuator the new one has — `airline.hold` by default, or the one
 * WEFT_TEST_OLD_LACKS names. A job naming it is refused (`worker.no_actuator`); every other job runs
 * as on the new build. Compiled travel (dist/): `npm run build` first. Load it with
 * `weft worker --domain test/support/old-travel-domain.mjs`.
 */
import { travelDomain } from '../../dist/examples/travel/domain.js';
import { defineDomain } from '../../dist/runtime/domain.js';

const lacks = process.env.WEFT_TEST_OLD_LACKS || 'airline.hold';

export default defineDomain({
  name: travelDomain.name,
  description: `${travelDomain.description} (an old build without ${lacks}, for tests)`,
  libraries: travelDomain.libraries.map((library) => ({ ...library, name: `${library.name}-old` })),
  actuators: (ctx) => travelDomain.actuators(ctx).filter((a) => a.name !== lacks),
  observe: travelDomain.observe,
  policy: travelDomain.policy,
  policies: travelDomain.policies,
  evaluables: travelDomain.evaluables,
  model: (ctx) => travelDomain.model(ctx),
  intent: travelDomain.intent,
  asOf: travelDomain.asOf,
});
