/**
 * The location a hint names (cli/hints.ts), as a table: the workspace is `--dir D`; Redis is
 * `--redis URL` plus the prefix, the relaxed durability and the folder only when they are not the
 * defaults, and the queue only for the commands that dispatch. `locate` adds it to every command
 * about the invocation (and to `weft ls`) in a text written without one, after the command's own
 * flags, and leaves alone a command that names a location, another invocation, or prose.
 */
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { command, locate, locationOf } from '../cli/hints.js';
import { shellWord } from '../queue/shell-words.js';

const here = path.resolve('.weft');
const redis = (over: Partial<{ url: string; prefix: string; durability: 'strict' | 'relaxed' }> = {}, dir = here) => ({
  dir,
  redis: { url: 'redis://127.0.0.1:7000/0', prefix: 'weft', durability: 'strict' as const, giveUpAfterMs: 10_000, ...over },
});

describe('locationOf', () => {
  test.each([
    ['the workspace', { dir: '/w/.weft' }, undefined, '--dir /w/.weft', ''],
    ['Redis, defaults', redis(), undefined, '--redis redis://127.0.0.1:7000/0', ''],
    ['Redis, a prefix and relaxed durability', redis({ prefix: 'p1', durability: 'relaxed' }), undefined, '--redis redis://127.0.0.1:7000/0 --redis-prefix p1 --redis-durability relaxed', ''],
    ['Redis, keys in another folder', redis({}, '/keys/ws'), undefined, '--redis redis://127.0.0.1:7000/0 --dir /keys/ws', ''],
    ['Redis, no queue given', redis(), undefined, '--redis redis://127.0.0.1:7000/0', ''],
    ['Redis, a queue given, even a domain\'s default (which the location cannot know)', redis(), 'weft-effects-travel', '--redis redis://127.0.0.1:7000/0', '--queue weft-effects-travel'],
    ['Redis, another queue', redis(), 'q2', '--redis redis://127.0.0.1:7000/0', '--queue q2'],
    ['a URL a shell would split', redis({ url: 'redis://h:1/0?x=1&y=2' }), undefined, `--redis 'redis://h:1/0?x=1&y=2'`, ''],
  ])('%s', (_name, choice, queue, store, queueFlags) => {
    expect(locationOf(choice, { queue })).toEqual({ store, queue: queueFlags });
  });

  test('the workspace never takes --queue; only resume and approve get it with Redis', () => {
    expect(locationOf({ dir: '/w' }, { queue: 'q2' }).queue).toBe('');
    const loc = locationOf(redis(), { queue: 'q2' });
    expect(command('resume', 'inv-1', loc)).toBe('weft resume inv-1 --redis redis://127.0.0.1:7000/0 --queue q2');
    expect(command('verify', 'inv-1', loc)).toBe('weft verify inv-1 --redis redis://127.0.0.1:7000/0');
  });
});

describe('locate', () => {
  const loc = locationOf({ dir: '/w/.weft' });
  test.each([
    ['a bare command', 'weft resume inv-1', 'weft resume inv-1 --dir /w/.weft'],
    ['before prose', 'weft resume inv-1 (or leave it to weft serve, which retries with backoff)', 'weft resume inv-1 --dir /w/.weft (or leave it to weft serve, which retries with backoff)'],
    ['after prose', 'fix the model key (WEFT_MODEL_KEY), then: weft resume inv-1', 'fix the model key (WEFT_MODEL_KEY), then: weft resume inv-1 --dir /w/.weft'],
    ['after its own flags', 'weft resume inv-1 --quarantine-torn', 'weft resume inv-1 --quarantine-torn --dir /w/.weft'],
    ['verify, then prose', 'weft verify inv-1 names the first bad record', 'weft verify inv-1 --dir /w/.weft names the first bad record'],
    ['weft ls in a message', 'no invocation inv-1 in file:/w/.weft (weft ls lists them)', 'no invocation inv-1 in file:/w/.weft (weft ls --dir /w/.weft lists them)'],
    ['two commands', 'weft resume inv-1 then weft replay inv-1', 'weft resume inv-1 --dir /w/.weft then weft replay inv-1 --dir /w/.weft'],
    ['one that names a location already', 'weft resume inv-1 --dir /elsewhere', 'weft resume inv-1 --dir /elsewhere'],
    ['one that names it after other flags', 'weft approve inv-1 --by <you> [--reject] --redis redis://h', 'weft approve inv-1 --by <you> [--reject] --redis redis://h'],
    ['a flag with a value: the location goes before it', 'weft approve inv-1 --by <you> [--reject]', 'weft approve inv-1 --dir /w/.weft --by <you> [--reject]'],
    ['another invocation', 'weft resume inv-10', 'weft resume inv-10'],
    ['an id that is a prefix of another', 'weft resume inv-1.2', 'weft resume inv-1.2'],
    ['prose about serve', 'weft serve wakes it when it is due', 'weft serve wakes it when it is due'],
  ])('%s', (_name, text, located) => {
    expect(locate(text, 'inv-1', loc)).toBe(located);
  });
});

test('shellWord quotes only what a shell would read otherwise', () => {
  expect(shellWord('/tmp/a-b_c.d/x:1@2%3+4=5,6')).toBe('/tmp/a-b_c.d/x:1@2%3+4=5,6');
  expect(shellWord("it's here")).toBe(`'it'\\''s here'`);
  expect(shellWord('a&b')).toBe(`'a&b'`);
});
