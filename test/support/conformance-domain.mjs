/**
 * The dispatcher conformance actuators as a domain, for a `weft worker` in a separate process:
 * `weft worker --domain test/support/conformance-domain.mjs --redis URL --queue Q`. Built from the
 * compiled package (dist/, so `npm run build` first). Every actuator call is appended as one JSON
 * line (with this process's pid) to the file WEFT_TEST_CALLS_FILE names, so the test process can
 * see what the worker's actuators were handed.
 */
import { appendFileSync } from 'node:fs';
import { ActuatorError, defineDomain, htn, z } from '../../dist/index.js';
import { CONF, conformanceActuators, conformanceLibrary } from './conformance-actuators.mjs';

const callsFile = process.env.WEFT_TEST_CALLS_FILE;
const record = (call) => {
  if (callsFile) appendFileSync(callsFile, `${JSON.stringify({ ...call, pid: process.pid })}\n`);
};

export default defineDomain({
  name: 'conformance',
  description: 'the dispatcher conformance actuators (tests only)',
  libraries: [conformanceLibrary(htn)],
  actuators: () => conformanceActuators({ z, ActuatorError, record }),
  observe: CONF.observe,
});
