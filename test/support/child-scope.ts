/**
 * A setup file of every test file (vitest.config.ts): each test runs inside a ChildScope of its
 * own (test/support/children.ts), so the processes it starts — concurrent tests included — are
 * killed when it ends, passed, failed or timed out. Processes started outside a test (beforeAll,
 * top level) are killed after the file's own afterAll hooks, which run first and stop them politely.
 */
import { afterAll, aroundEach } from 'vitest';
import { ChildScope, currentScope, fileScope } from './children.js';

aroundEach(async (runTest, context) => {
  const scope = new ChildScope(context.task.name);
  try {
    await currentScope.run(scope, runTest);
  } finally {
    await scope.killAll();
  }
});

afterAll(() => fileScope.killAll());
