/**
 * `weft resume` and `weft approve` give the signals back however they end (cli/interrupt.ts): after
 * a refusal, Ctrl-C is Node's again — no handler is left to print "interrupted — resume with" for an
 * invocation that was never running. Run in this process to count the handlers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, test, vi } from 'vitest';
import * as approve from '../cli/commands/approve.js';
import * as resume from '../cli/commands/resume.js';

const dir = mkdtempSync(path.join(tmpdir(), 'weft-interrupt-refused-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test.each([
  ['resume', () => resume.run(['inv-none', '--dir', dir])],
  ['approve', () => approve.run(['inv-none', '--by', 'me', '--dir', dir])],
])('a refused %s leaves no SIGINT or SIGTERM handler behind', async (_verb, command) => {
  const before = { int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') };
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  let code: number;
  try {
    code = await command();
  } finally {
    stderr.mockRestore();
  }
  expect(code).toBe(2); // no such invocation: refused after the handlers were installed
  expect({ int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') }).toEqual(before);
});
