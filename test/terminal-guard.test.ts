/**
 * No line the CLI writes can act on a terminal: an intent carrying escape sequences (OSC retitle,
 * clear screen, the 8-bit CSI, a bidi override) is echoed by `run`'s progress and outcome, by `ls`,
 * by `log` and by refusals; every one of those shows it as visible `\uXXXX`, and a JSON line still
 * parses to the very same intent. guardText's own table: what is kept (tab, newline, the styles
 * `weft log` draws) and what is escaped.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { guardText } from '../cli/terminal-guard.js';
import { inert } from '../cli/terminal-text.js';
import { assertBuilt, weft } from './support/cli.js';

const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const intent = 'Lisbon on the 12th \u001b]0;pwned\u0007\u001b[2J \u009b31m red \u202e evil\u2028x\r';

describe('guardText', () => {
  test.each([
    ['plain text', 'status      completed\n', 'status      completed\n'],
    ['tab and newline are kept', 'a\tb\n', 'a\tb\n'],
    ['ESC, BEL, CR are escaped', '\u001b]0;t\u0007\r', '\\u001b]0;t\\u0007\\u000d'],
    ['C1 and bidi are escaped', '\u009b2J \u202e \u2066', '\\u009b2J \\u202e \\u2066'],
    ["the log's own styles pass", '\u001b[2mdim\u001b[22m \u001b[31mbad\u001b[39m', '\u001b[2mdim\u001b[22m \u001b[31mbad\u001b[39m'],
    ['any other style is escaped', '\u001b[8mhidden\u001b[0m', '\\u001b[8mhidden\\u001b[0m'],
  ])('%s', (_name, input, output) => {
    expect(guardText(input)).toBe(output);
  });

  test('in a JSON line the escape is the same value once parsed', () => {
    const line = JSON.stringify({ intent });
    expect(guardText(line)).not.toMatch(ACTIVE);
    expect((JSON.parse(guardText(line)) as { intent: string }).intent).toBe(intent);
  });
});

describe('weft: an intent with escape sequences never reaches the terminal raw', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'weft-guard-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  beforeAll(() => assertBuilt());

  test('run (text and --json), ls (text and --json), log, and a refusal', async () => {
    const dir = path.join(root, 'w');
    const text = await weft(['run', 'travel', intent, '--dir', dir, '--id', 'evil-1']);
    // The scripted model has no reply for this intent: the run fails, and its reason quotes the intent.
    expect(text.stdout).toContain('status      failed');
    const json = await weft(['run', 'travel', intent, '--dir', dir, '--id', 'evil-2', '--json']);
    expect((JSON.parse(json.stdout.trim().split('\n').at(-1)!) as { status: string }).status).toBe('failed');
    const ls = await weft(['ls', '--dir', dir]);
    expect(ls.stdout).toContain('\\u001b]0;pwned\\u0007');
    const lsJson = await weft(['ls', '--dir', dir, '--json']);
    expect((JSON.parse(lsJson.stdout) as Array<{ intent: string }>).map((r) => r.intent)).toEqual([intent, intent]);
    const log = await weft(['log', 'evil-1', '--dir', dir]);
    // A refusal that repeats what the user typed: an id is checked, an intent given twice is refused.
    const refused = await weft(['run', 'travel', intent, '--intent-file', '-', '--dir', dir]);
    expect(refused.code).toBe(2);
    for (const out of [text, json, ls, lsJson, log, refused]) {
      expect(out.stdout).not.toMatch(ACTIVE);
      expect(out.stderr).not.toMatch(ACTIVE);
    }
  });
});

describe('inert (cli/terminal-text.ts) and the guard escape one set of characters', () => {
  test('inert escapes exactly what the guard escapes, plus tab and newline, each as \\uXXXX', () => {
    for (let code = 0; code < 0x3000; code++) {
      const char = String.fromCharCode(code);
      const escaped = `\\u${code.toString(16).padStart(4, '0')}`;
      const guarded = guardText(char) !== char;
      expect(inert(char), `U+${code.toString(16)}`).toBe(guarded || char === '\t' || char === '\n' ? escaped : char);
    }
  });
});
