/**
 * The dispatcher conformance suite (dispatcher-conformance.ts) against the embedded default,
 * InProcessDispatcher — the reference every other dispatcher must answer like.
 */
import path from 'node:path';
import { beforeAll, expect, test } from 'vitest';
import { InProcessDispatcher } from '../queue/in-process.js';
import { assertBuilt, repoRoot } from './support/cli.js';
import { runNodeWithin } from './support/weft-processes.js';
import { CONF, dispatcherConformance, testActuators, type ConformanceCall } from './dispatcher-conformance.js';

const CLOSE_CHECK = path.join(repoRoot, 'test', 'support', 'dispatcher-close-check.mjs');

beforeAll(() => assertBuilt());

dispatcherConformance({
  name: 'InProcessDispatcher',
  async open() {
    const calls: ConformanceCall[] = [];
    const dispatcher = new InProcessDispatcher(testActuators((c) => calls.push(c)));
    return { dispatcher, calls: () => calls, close: () => dispatcher.close() };
  },
  closeCheck: () => runNodeWithin(15_000, CLOSE_CHECK, ['in-process']),
  worker: 'in-process',
});

test('InProcessDispatcher refuses two actuators of one name', () => {
  const [echo] = testActuators().filter((a) => a.name === CONF.echo);
  expect(() => new InProcessDispatcher([echo!, { ...echo! }])).toThrow(/two actuators are named conf\.echo/);
});
