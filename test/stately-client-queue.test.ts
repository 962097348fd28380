/** The relay's per-client queue (inspector/stately/client-queue.ts): FIFO, bounded by dropping the oldest droppable message, never an actor. */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ClientQueue } from '../inspector/stately/client-queue.js';

type Item = { id: number; droppable: boolean };

describe('ClientQueue', () => {
  test('behaves as an array model under any mix of push, shift and dropOldest (across compactions)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constant('shift' as const), fc.constant('drop' as const), fc.boolean()), { maxLength: 5000 }), (ops) => {
        const queue = new ClientQueue<Item>();
        const model: Item[] = [];
        let n = 0;
        for (const op of ops) {
          if (op === 'shift') expect(queue.shift()).toEqual(model.shift());
          else if (op === 'drop') {
            const at = model.findIndex((i) => i.droppable);
            expect(queue.dropOldest()).toBe(at >= 0);
            if (at >= 0) model.splice(at, 1);
          } else {
            const item = { id: n++, droppable: op };
            queue.push(item);
            model.push(item);
          }
          expect(queue.length).toBe(model.length);
        }
        const rest: Item[] = [];
        for (let i = queue.shift(); i !== undefined; i = queue.shift()) rest.push(i);
        expect(rest).toEqual(model);
      }),
      { numRuns: 200 },
    );
  });

  test('a full queue of snapshots keeps its actor messages: only droppable ones go', () => {
    const queue = new ClientQueue<Item>();
    queue.push({ id: 0, droppable: false });
    for (let i = 1; i <= 3000; i++) queue.push({ id: i, droppable: true });
    for (let i = 0; i < 3000; i++) expect(queue.dropOldest()).toBe(true);
    expect(queue.dropOldest()).toBe(false);
    expect(queue.shift()).toEqual({ id: 0, droppable: false });
  });
});
