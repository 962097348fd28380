/**
 * Reproduction (not a test) of a race in BullMqDispatcher's direct look-up (queue/bullmq.ts,
 * `lookUp`): it reads the job (`Job.fromId`, one HGETALL) and only then its state
 * (`job.getState()`). A job that completes between the two reads is seen as `completed` with the
 * `returnvalue` of the earlier read — BullMQ's default, null — and is answered
 * `{ ok: false, failure: { class: 'permanent', code: 'worker.bad_outcome', message: 'a worker
 * returned null, not a job outcome' } }` although the worker returned `{ ok: true, … }`. The
 * runtime records that as a permanent step failure (step.failed, frontier.truncated, epoch
 * compensated) while the effect WAS applied by the worker.
 *
 * The look-up runs every `recheckMs` (default 1 s) for every waiting dispatch, and once before a
 * job is added, so the race is rare with short waits and frequent under load (1000 invocations ×
 * 10 steps on two workers: ~8 % of invocations hit it). Here `recheckMs: 2` makes it frequent.
 *
 *   npm run build && node test/support/bullmq-lookup-race-repro.mjs [redis://127.0.0.1:PORT/0]
 *
 * Without a URL it starts a private redis-server (bench/redis-server.ts, built into dist/bench; needs
 * it on PATH). Prints how many of 400 successful jobs the dispatcher answered as failures; exits 1 if any.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist');
const load = (file) => import(pathToFileURL(path.join(dist, file)).href);
const { defineDomain, htn, z } = await load('index.js');
const { startWorker } = await load('queue/worker.js');
const { BullMqDispatcher } = await load('queue/bullmq.js');

let url = process.argv[2];
let stopRedis = async () => undefined;
if (!url) {
  const { startPrivateRedis } = await load('bench/redis-server.js'); // the launcher the benches and tests share
  const server = await startPrivateRedis({ aof: false, orElse: 'pass a redis:// URL' });
  url = server.url;
  stopRedis = server.stop;
}

const prefix = `race${Date.now()}:bull`;
const library = new htn.LibraryBuilder('race')
  .type('t')
  .predicate('p', { '?x': 't' })
  .task('go', { '?x': 't' })
  .operator('op', { params: { '?x': 't' }, precondition: htn.not(htn.atom('p', '?x')), effect: htn.add('p', '?x'), actuator: { actuator: 'slow', args: { x: '?x' } } })
  .method('m', { task: ['go', '?x'], params: { '?x': 't' }, subtasks: [['op', '?x']] })
  .build();
const actuators = [
  { name: 'obs', kind: 'state', readOnly: true, argsSchema: z.any(), resultSchema: z.any(), run: async () => ({ objects: [], facts: [] }) },
  {
    name: 'slow',
    kind: 'tool',
    readOnly: false,
    argsSchema: z.object({ n: z.number() }),
    resultSchema: z.object({ n: z.number() }),
    run: async (args) => {
      await new Promise((r) => setTimeout(r, 5 + (args.n % 20)));
      return { n: args.n };
    },
  },
];
const domain = defineDomain({ name: 'race', libraries: [library], actuators, observe: 'obs' });
const worker = await startWorker({ domain, connection: url, prefix, concurrency: 16 });
const dispatcher = new BullMqDispatcher({ connection: url, prefix, domain: domain.name, actuators, recheckMs: 2 });
const N = 400;
const outcomes = await Promise.all(
  Array.from({ length: N }, (_, n) =>
    dispatcher.dispatch({ op: 'run', key: `inv-race.1.${n}`, attempt: 1, actuator: 'slow', args: { n }, invocation: 'inv-race', tenant: 't', epoch: 1, step: n, seed: '1', asOf: '2026-01-01T00:00:00Z' }),
  ),
);
const bad = outcomes.filter((o) => !o.ok);
console.log(`${N} jobs, each worker call returned { ok: true }; the dispatcher answered ${bad.length} as failures`);
if (bad[0]) console.log(`e.g. ${JSON.stringify(bad[0])}`);
await dispatcher.close();
await worker.close();
await stopRedis();
process.exit(bad.length ? 1 : 0);
