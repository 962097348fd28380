/**
 * A plain-JS domain for the distributed shadow-run test (test/shadow.redis.test.ts): a refund and
 * an email per goal, both world effects WITH a `shadow(args, ctx)` — what `run` would return,
 * changing nothing — so a shadow run of it pins `results: 'actuators'` and goes on past its first
 * epoch. The scripted model asks for two refunds (epochs 1 and 2), then says done.
 *
 * Every call is appended to the file WEFT_TEST_CALLS_FILE names, one JSON line `{ op, actuator,
 * key, pid }`, so a test sees which process ran what — `run` must never appear in a shadow run.
 * Imports the BUILT package (dist/index.js): run `npm run build` first.
 */
import { appendFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { refundsLibrary } from './refunds-library.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const weftIndex = pathToFileURL(path.resolve(here, '..', '..', 'dist', 'index.js')).href;
const { defineDomain, htn, ScriptedModel, z } = await import(weftIndex);

const library = refundsLibrary(htn, 'shadow-refunds');

function note(op, actuator, ctx) {
  const file = process.env.WEFT_TEST_CALLS_FILE;
  if (file) appendFileSync(file, `${JSON.stringify({ op, actuator, key: ctx.key, pid: process.pid })}\n`);
}

function effect(name) {
  return {
    name,
    kind: name === 'email.send' ? 'message' : 'tool',
    readOnly: false,
    argsSchema: z.object({ amount: z.number() }).passthrough(),
    resultSchema: z.object({ id: z.string(), amount: z.number() }),
    async run(args, ctx) {
      note('run', name, ctx);
      return { id: `${name}:${ctx.key}`, amount: args.amount };
    },
    async shadow(args, ctx) {
      note('shadow', name, ctx);
      return { id: `would-be:${name}`, amount: args.amount };
    },
  };
}

const actuators = () => [
  {
    name: 'refunds.observe',
    kind: 'state',
    readOnly: true,
    argsSchema: z.object({ goal: z.unknown() }),
    resultSchema: z.unknown(),
    async run(_args, ctx) {
      note('observe', 'refunds.observe', ctx);
      return { objects: [{ name: 'ana', type: 'customer' }, { name: 'bob', type: 'customer' }], facts: [['known', 'ana'], ['known', 'bob']] };
    },
  },
  effect('refund.issue'),
  effect('email.send'),
];

const transcript = {
  model: 'shadow-refunds',
  entries: [
    { match: { purpose: 'parse', epoch: 1 }, reply: { goal: { task: 'refund_and_tell', args: ['ana', 600] } } },
    { match: { purpose: 'parse', epoch: 2 }, reply: { goal: { task: 'refund_and_tell', args: ['bob', 100] } } },
    { match: { purpose: 'parse', epoch: 3 }, reply: { done: true, summary: 'refunded ana and bob, and told them' } },
  ],
};

export default defineDomain({
  name: 'shadow-refunds',
  description: 'Two refunds and their emails, each world effect with a shadow result (shadow-run tests).',
  libraries: [library],
  actuators,
  observe: 'refunds.observe',
  model: () => new ScriptedModel(transcript),
  intent: 'Refund ana 600, then bob 100',
  asOf: '2026-06-01T09:00:00Z',
});
