/**
 * The start-a-worker command every hint names (queue/bullmq.ts workerCommand): it works as printed —
 * the domain as --domain loads it, --redis, and --redis-prefix / --queue only when the worker would
 * not pick them itself (a domain's own queue is weft-effects-<domain>), each word quoted for a shell
 * when it needs to be. A URL that holds a password is never printed: the command names it
 * "$WEFT_REDIS_URL", which works as printed once that variable holds it.
 */
import { describe, expect, test } from 'vitest';
import { queueForDomain, workerCommand } from '../queue/bullmq.js';

const URL = 'redis://127.0.0.1:7000/0';

describe('workerCommand', () => {
  test.each([
    ['the defaults', { domain: 'travel', redisUrl: URL }, `weft worker --domain travel --redis ${URL}`],
    ['the domain’s own queue is left out', { domain: 'travel', redisUrl: URL, queue: 'weft-effects-travel' }, `weft worker --domain travel --redis ${URL}`],
    ['another queue and prefix', { domain: 'travel', redisUrl: URL, redisPrefix: 'p1', queue: 'q2' }, `weft worker --domain travel --redis ${URL} --redis-prefix p1 --queue q2`],
    ['the default prefix is left out', { domain: 'travel', redisUrl: URL, redisPrefix: 'weft' }, `weft worker --domain travel --redis ${URL}`],
    ['a module path: its queue is its domain name’s', { domain: '/srv/refund domain.js', domainName: 'refunds', redisUrl: URL, queue: 'weft-effects-refunds' }, `weft worker --domain '/srv/refund domain.js' --redis ${URL}`],
    ['a URL a shell would split', { domain: 'travel', redisUrl: 'redis://h:1/0?x=1&y=2' }, `weft worker --domain travel --redis 'redis://h:1/0?x=1&y=2'`],
    ['a URL with a password: named by the variable that holds it', { domain: 'travel', redisUrl: 'redis://:p w@h:1/0?x=1&y=2' }, 'weft worker --domain travel --redis "$WEFT_REDIS_URL"'],
    ['a user and password', { domain: 'travel', redisUrl: 'rediss://me:hunter2@h:1/0', redisPrefix: 'p1' }, 'weft worker --domain travel --redis "$WEFT_REDIS_URL" --redis-prefix p1'],
    ['password= in the query', { domain: 'travel', redisUrl: 'redis://h:1/0?password=hunter2' }, 'weft worker --domain travel --redis "$WEFT_REDIS_URL"'],
  ])('%s', (_name, options, expected) => {
    expect(workerCommand(options)).toBe(expected);
  });

  test('a domain’s queue is named from the domain', () => {
    expect(queueForDomain('refunds')).toBe('weft-effects-refunds');
    expect(queueForDomain('travel')).not.toBe(queueForDomain('refunds'));
  });
});
