/**
 * A plain-JS domain for the scale tests (test/workers-scale.test.ts): one goal, `ten_steps`, that
 * decomposes into 10 world-effect steps (operators s1…s10, each dispatching `ten.apply` with its
 * step number), an observer, and a scripted model that answers epoch 1 with the goal and epoch 2
 * with done — matched by purpose and epoch only, so any intent works.
 *
 * The world lives in Redis — the `redis` the runtime or `weft worker` passes in the DomainContext
 * (`actuators: ({ redis }) => …`), under its prefix P:
 *
 * - `P:done:<idempotency key>` — the effect's result, written `SET … NX` (then `GET`): the dedupe.
 *   Every attempt of a step gets the value the first one wrote; only the one whose SET won applies.
 * - `P:applied` (hash: key → times the effect was applied, i.e. SET NX won — must be 1) and
 *   `P:runs` (hash: key → times the actuator ran for that key, every attempt counted).
 * - `P:by:<pid>` — world-effect runs by the process `pid` (spread over workers);
 *   `P:observed:<pid>` — observations made by `pid`.
 * - `P:steps:{<invocation>}` — the step numbers applied for an invocation (what the observer reports).
 *
 * The client is made on first use, one per URL per process, and its socket holds the process open
 * only while a command is in flight; `closeTenStepRedis()` quits it. Imports the BUILT package
 * (dist/index.js, by absolute path): run `npm run build` first.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const weftIndex = pathToFileURL(path.resolve(here, '..', '..', 'dist', 'index.js')).href;
const { defineDomain, htn, ScriptedModel, z } = await import(weftIndex);
const { LibraryBuilder, atom, not, add } = htn;

export const STEPS = 10;
export const GOAL_TASK = 'ten_steps';
export const BATCH = 'main';

// ── 1. the library: ten_steps(?b) → s1(?b) … s10(?b), each a world effect on ten.apply ─────────
let builder = new LibraryBuilder('ten-steps').type('batch');
for (let n = 1; n <= STEPS; n++) builder = builder.predicate(`did-s${n}`, { '?b': 'batch' });
builder = builder.task(GOAL_TASK, { '?b': 'batch' });
for (let n = 1; n <= STEPS; n++) {
  builder = builder.operator(`s${n}`, {
    params: { '?b': 'batch' },
    precondition: not(atom(`did-s${n}`, '?b')),
    effect: add(`did-s${n}`, '?b'),
    actuator: { actuator: 'ten.apply', args: { batch: '?b', step: n } },
  });
}
builder = builder.method('all-ten', {
  task: [GOAL_TASK, '?b'],
  params: { '?b': 'batch' },
  subtasks: Array.from({ length: STEPS }, (_, i) => [`s${i + 1}`, '?b']),
});
export const library = builder.build();

// ── 2. the world, in Redis ──────────────────────────────────────────────────────────────────
const clients = new Map(); // url → { created: Promise<Redis>, inFlight: number }

function settleRef(entry, client) {
  const socket = client.stream;
  if (entry.inFlight > 0) socket?.ref?.();
  else socket?.unref?.();
}

async function withClient(url, work) {
  let entry = clients.get(url);
  if (!entry) {
    entry = { inFlight: 0, created: undefined };
    const made = entry;
    entry.created = import('ioredis').then(({ Redis }) => {
      const client = new Redis(url, { lazyConnect: true });
      client.on('error', () => undefined); // command failures reach their callers
      client.on('connect', () => settleRef(made, client));
      return client;
    });
    clients.set(url, entry);
  }
  const client = await entry.created;
  entry.inFlight += 1;
  settleRef(entry, client);
  try {
    return await work(client);
  } finally {
    entry.inFlight -= 1;
    settleRef(entry, client);
  }
}

/** Quit every client this module made in this process. */
export async function closeTenStepRedis() {
  const all = [...clients.values()];
  clients.clear();
  await Promise.all(
    all.map(async ({ created }) => {
      const client = await created.catch(() => undefined);
      if (!client) return;
      try {
        if (client.status === 'wait') client.disconnect();
        else await client.quit();
      } catch {
        client.disconnect();
      }
    }),
  );
}

/** The world's keys under `prefix` (the test reads them too). */
export const tenStepKeys = (prefix) => ({
  done: (key) => `${prefix}:done:${key}`,
  applied: `${prefix}:applied`,
  runs: `${prefix}:runs`,
  by: (pid) => `${prefix}:by:${pid}`,
  observed: (pid) => `${prefix}:observed:${pid}`,
  steps: (invocation) => `${prefix}:steps:{${invocation}}`,
});

function needRedis(redis) {
  if (!redis || typeof redis.url !== 'string') {
    throw new Error('the ten-steps domain keeps its world in Redis: run it with createRuntime({ redis: URL }) or `weft worker --redis URL`');
  }
  return redis;
}

function actuators({ redis }) {
  const goalArgs = z.object({ task: z.string(), args: z.array(z.union([z.string(), z.number()])) });
  return [
    {
      name: 'ten.observe',
      kind: 'state',
      readOnly: true,
      argsSchema: z.object({ goal: goalArgs }),
      resultSchema: z.object({
        objects: z.array(z.object({ name: z.string(), type: z.string() })),
        facts: z.array(z.array(z.union([z.string(), z.number()]))),
      }),
      async run(_args, ctx) {
        const { url, prefix } = needRedis(redis);
        const keys = tenStepKeys(prefix);
        const applied = await withClient(url, async (client) => {
          const [[, members]] = await client.multi().smembers(keys.steps(ctx.invocation)).incr(keys.observed(process.pid)).exec();
          return members;
        });
        return {
          objects: [{ name: BATCH, type: 'batch' }],
          facts: applied.map(Number).sort((a, b) => a - b).map((n) => [`did-s${n}`, BATCH]),
        };
      },
    },
    {
      name: 'ten.apply',
      kind: 'tool',
      readOnly: false,
      argsSchema: z.object({ batch: z.literal(BATCH), step: z.number().int().min(1).max(STEPS) }),
      resultSchema: z.object({ receipt: z.string() }),
      async run(args, ctx) {
        const { url, prefix } = needRedis(redis);
        const keys = tenStepKeys(prefix);
        // Deterministic for the key: every attempt, on any process, would compute the same receipt.
        const receipt = `R-${args.step}-${ctx.random.stream('receipt').int(1_000_000)}`;
        return withClient(url, async (client) => {
          const won = (await client.set(keys.done(ctx.key), receipt, 'NX')) === 'OK';
          const multi = client.multi().hincrby(keys.runs, ctx.key, 1).incr(keys.by(process.pid));
          if (won) multi.hincrby(keys.applied, ctx.key, 1).sadd(keys.steps(ctx.invocation), String(args.step));
          await multi.exec();
          const stored = await client.get(keys.done(ctx.key));
          if (stored === null) throw new Error(`${keys.done(ctx.key)} vanished right after SET NX`);
          return { receipt: stored };
        });
      },
    },
  ];
}

// ── 3. the model: epoch 1 names the goal, epoch 2 says done — for any intent ──────────────────
const transcript = {
  model: 'ten-steps',
  entries: [
    { match: { purpose: 'parse', epoch: 1 }, reply: { goal: { task: GOAL_TASK, args: [BATCH] } } },
    { match: { purpose: 'parse', epoch: 2 }, reply: { done: true, summary: 'Applied all ten steps.' } },
  ],
};

export default defineDomain({
  name: 'ten-steps',
  description: 'One goal, ten world effects, deduped in Redis on their idempotency keys (scale tests).',
  libraries: [library],
  actuators,
  observe: 'ten.observe',
  model: () => new ScriptedModel(transcript),
  intent: 'Apply the ten steps.',
  asOf: '2026-06-01T09:00:00Z',
});
