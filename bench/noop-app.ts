/**
 * The benchmark app: one epoch of N no-op world-effect steps. The observation lists N pending
 * items; the library's recursive method does one `touch` step per item (each dispatches the
 * `noop` actuator), so what is measured is the runtime's per-step cost — write-ahead dispatch,
 * completion, hashing, the store — not the actuator's.
 */
import { z } from 'zod';
import type { Actuator } from '../actors/actuator.js';
import { ScriptedModel } from '../actors/model/scripted.js';
import { LibraryBuilder, add, atom, del, not, exists } from '../htn/library/builder.js';

export const BENCH_INTENT = 'touch every pending item';

export const noopLibrary = new LibraryBuilder('bench-noop')
  .type('item')
  .predicate('pending', { '?i': 'item' })
  .predicate('touched', { '?i': 'item' })
  .task('touch_all', {})
  .operator('touch', {
    params: { '?i': 'item' },
    precondition: atom('pending', '?i'),
    effect: [del('pending', '?i'), add('touched', '?i')],
    actuator: { actuator: 'noop', args: { item: '?i' } },
  })
  .method('touch-next', { task: ['touch_all'], params: { '?i': 'item' }, precondition: atom('pending', '?i'), subtasks: [['touch', '?i'], ['touch_all']] })
  .method('all-touched', { task: ['touch_all'], precondition: not(exists({ '?i': 'item' }, atom('pending', '?i'))), subtasks: [] })
  .build();

export const noopActuator: Actuator = {
  name: 'noop',
  kind: 'tool',
  readOnly: false,
  argsSchema: z.object({ item: z.string() }),
  resultSchema: z.object({ ok: z.literal(true) }),
  run: async () => ({ ok: true as const }),
};

export function noopActuators(steps: number): Actuator[] {
  const items = Array.from({ length: steps }, (_, i) => `item-${String(i).padStart(6, '0')}`);
  const observe: Actuator = {
    name: 'bench.observe',
    kind: 'state',
    readOnly: true,
    argsSchema: z.object({ goal: z.unknown() }),
    resultSchema: z.unknown(),
    run: async () => ({ objects: items.map((name) => ({ name, type: 'item' })), facts: items.map((i) => ['pending', i]) }),
  };
  return [observe, noopActuator];
}

export function noopModel(): ScriptedModel {
  return new ScriptedModel({
    model: 'bench',
    entries: [
      { match: { intent: BENCH_INTENT, epoch: 1 }, reply: { goal: { task: 'touch_all', args: [] } } },
      { match: { intent: BENCH_INTENT, epoch: 2 }, reply: { done: true, summary: 'touched' } },
    ],
  });
}
