/**
 * The worker counter behind `--dispatch auto` (cli/dispatch-choice.ts): a queue that cannot be made
 * (here a name BullMQ refuses) counts 0 workers, closes without error, and leaves no unhandled
 * rejection behind — even when the counter is made and never asked.
 */
import { afterEach, beforeEach, expect, test } from 'vitest';
import { workerCounter } from '../cli/dispatch-choice.js';

const choice = { dir: '/nowhere', redis: { url: 'redis://127.0.0.1:1/0', prefix: 'weft', durability: 'strict' as const, giveUpAfterMs: 100 } };
let unhandled: unknown[] = [];
const record = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', record);
});
afterEach(() => {
  process.off('unhandledRejection', record);
});
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

test('a counter never asked leaves no unhandled rejection', async () => {
  workerCounter(choice, 'not:a:queue');
  await settle();
  expect(unhandled).toEqual([]);
});

test('a queue that cannot be made counts 0 workers and closes', async () => {
  const counter = workerCounter(choice, 'not:a:queue');
  await expect(counter.count()).resolves.toBe(0);
  await expect(counter.close()).resolves.toBeUndefined();
  await settle();
  expect(unhandled).toEqual([]);
});
