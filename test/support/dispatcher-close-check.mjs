/**
 * "close() releases everything": a process that opens a dispatcher from dist/, dispatches one job,
 * prints its outcome as one JSON line, closes the dispatcher — and then simply returns. It never
 * calls process.exit, so it exits only if the dispatcher left no timer, socket or connection
 * behind; the test gives it a deadline.
 *
 *   node dispatcher-close-check.mjs in-process
 *   node dispatcher-close-check.mjs bullmq <redis-url> <queue> <prefix>   (a worker must consume the queue)
 */
import { ActuatorError, InProcessDispatcher, z } from '../../dist/index.js';
import { BullMqDispatcher } from '../../dist/queue/bullmq.js';
import { CONF, conformanceActuators } from './conformance-actuators.mjs';

const [mode, url, queue, prefix] = process.argv.slice(2);
const actuators = conformanceActuators({ z, ActuatorError, record: () => undefined });
const dispatcher =
  mode === 'in-process'
    ? new InProcessDispatcher(actuators)
    : new BullMqDispatcher({ connection: url, queue, prefix, actuators, waitTimeoutMs: 20_000, warn: () => undefined });
// Let a BullMQ dispatcher's event reader start before the first dispatch: a job that completes
// before it has issued its first read is never answered (a known race, tested on its own in
// dispatcher.bullmq.test.ts) — this script is about close(), not that race.
await new Promise((resolve) => setTimeout(resolve, 500));
const key = `close-check-${process.pid}.1.0`;
const outcome = await dispatcher.dispatch({
  op: 'run',
  actuator: CONF.echo,
  args: { text: 'bye', n: 1 },
  key,
  attempt: 1,
  invocation: `close-check-${process.pid}`,
  tenant: 'default',
  epoch: 1,
  step: 0,
  asOf: '2026-06-01T09:00:00.000Z',
  seed: '1',
});
process.stdout.write(`${JSON.stringify(outcome)}\n`);
await dispatcher.close();
process.stderr.write('closed\n');
