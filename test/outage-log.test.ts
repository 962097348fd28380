/**
 * OutageLog (queue/outage.ts): a long-lived process's Redis outage is one line when it starts and one
 * when it ends, with its duration — however many failures and reconnects it reports in between.
 */
import { expect, test } from 'vitest';
import { OutageLog } from '../queue/outage.js';

test('one line at the start of each outage and one at its end, whatever is reported in between', () => {
  const lines: string[] = [];
  let now = Date.parse('2026-11-26T10:00:00.000Z');
  const outage = new OutageLog('weft worker', (line) => lines.push(line), () => now);
  outage.reachable(); // no outage yet: nothing to say
  expect(lines).toEqual([]);
  outage.unreachable('connect ECONNREFUSED 127.0.0.1:6380');
  for (let i = 0; i < 50; i++) {
    now += 100;
    outage.unreachable('connect ECONNREFUSED 127.0.0.1:6380');
  }
  expect(outage.down).toBe(true);
  now += 2_000;
  outage.reachable();
  outage.reachable();
  expect(outage.down).toBe(false);
  expect(lines).toEqual([
    'weft worker: Redis unreachable since 2026-11-26T10:00:00.000Z (connect ECONNREFUSED 127.0.0.1:6380); retrying',
    'weft worker: Redis reachable again at 2026-11-26T10:00:07.000Z, after an outage of 7000 ms (since 2026-11-26T10:00:00.000Z)',
  ]);
  // A second outage is logged again.
  outage.unreachable('the connection closed');
  expect(lines).toHaveLength(3);
});
