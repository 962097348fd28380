/**
 * A plain-JS domain for the distributed cancel test (test/cancel.workers.test.ts): one epoch of
 * three world effects — effect.a, effect.b, effect.c — each of which undoes itself (`compensate`).
 * effect.b waits, in whichever process runs it (a `weft worker`), until the file
 * WEFT_TEST_GATE_FILE names exists: a test holds the run mid-epoch there, for as long as it needs,
 * without guessing at timings. The scripted model asks for the three effects, then says done.
 *
 * Every call is appended to the file WEFT_TEST_CALLS_FILE names, one JSON line
 * `{ op, actuator, key, pid }`, so a test sees what ran, what was undone, in which order and where.
 * Imports the BUILT package (dist/index.js): run `npm run build` first.
 */
import { appendFileSync, existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const weftIndex = pathToFileURL(path.resolve(here, '..', '..', 'dist', 'index.js')).href;
const { defineDomain, htn, ScriptedModel, z } = await import(weftIndex);
const { LibraryBuilder, atom, not, add } = htn;

const library = new LibraryBuilder('gated')
  .type('customer')
  .predicate('known', { '?c': 'customer' })
  .predicate('a-done', { '?c': 'customer' })
  .predicate('b-done', { '?c': 'customer' })
  .predicate('c-done', { '?c': 'customer' })
  .task('three_effects', { '?c': 'customer' })
  .operator('do_a', { params: { '?c': 'customer' }, precondition: not(atom('a-done', '?c')), effect: add('a-done', '?c'), actuator: { actuator: 'effect.a', args: { customer: '?c' } } })
  .operator('do_b', { params: { '?c': 'customer' }, precondition: atom('a-done', '?c'), effect: add('b-done', '?c'), actuator: { actuator: 'effect.b', args: { customer: '?c' } } })
  .operator('do_c', { params: { '?c': 'customer' }, precondition: atom('b-done', '?c'), effect: add('c-done', '?c'), actuator: { actuator: 'effect.c', args: { customer: '?c' } } })
  .method('a-then-b-then-c', {
    task: ['three_effects', '?c'],
    params: { '?c': 'customer' },
    subtasks: [['do_a', '?c'], ['do_b', '?c'], ['do_c', '?c']],
  })
  .build();

function note(op, actuator, ctx) {
  const file = process.env.WEFT_TEST_CALLS_FILE;
  if (file) appendFileSync(file, `${JSON.stringify({ op, actuator, key: ctx.key, pid: process.pid })}\n`);
}

async function gate() {
  const file = process.env.WEFT_TEST_GATE_FILE;
  while (file && !existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 20));
}

function effect(name) {
  return {
    name,
    kind: 'tool',
    readOnly: false,
    argsSchema: z.object({ customer: z.string() }),
    resultSchema: z.object({ id: z.string() }),
    async run(_args, ctx) {
      note('run', name, ctx);
      if (name === 'effect.b') await gate();
      return { id: `${name}:${ctx.key}` };
    },
    async compensate(_args, result, ctx) {
      note('compensate', name, ctx);
      return { undone: result.id };
    },
  };
}

const actuators = () => [
  {
    name: 'gated.observe',
    kind: 'state',
    readOnly: true,
    argsSchema: z.object({ goal: z.unknown() }),
    resultSchema: z.unknown(),
    async run() {
      return { objects: [{ name: 'ana', type: 'customer' }], facts: [['known', 'ana']] };
    },
  },
  effect('effect.a'),
  effect('effect.b'),
  effect('effect.c'),
];

const transcript = {
  model: 'gated',
  entries: [
    { match: { purpose: 'parse', epoch: 1 }, reply: { goal: { task: 'three_effects', args: ['ana'] } } },
    { match: { purpose: 'parse', epoch: 2 }, reply: { done: true, summary: 'three effects for ana' } },
  ],
};

export default defineDomain({
  name: 'gated',
  description: 'Three world effects in one epoch, the second held at a gate file (distributed cancel test).',
  libraries: [library],
  actuators,
  observe: 'gated.observe',
  model: () => new ScriptedModel(transcript),
  intent: 'Three effects for ana',
  asOf: '2026-06-01T09:00:00Z',
});
