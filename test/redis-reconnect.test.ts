/**
 * A command's Redis clients give up on a server gone for longer than their budget
 * (redis/reconnect.ts): a bounded backoff while it may come back, then no more
 * reconnects — so nothing waits on a dead server for ever. The budget restarts with each outage.
 */
import { describe, expect, test } from 'vitest';
import { isConnectionLoss, reconnectStrategy } from '../redis/index.js';
import { withReconnect } from '../queue/bullmq.js';

describe('reconnectStrategy', () => {
  test('backs off from 100 ms to at most 1 s, and gives up once the server has been gone for the budget', () => {
    let now = 1_000;
    const retry = reconnectStrategy(10_000, () => now);
    const delays: Array<number | null> = [];
    for (let times = 1; times <= 6; times++) {
      const delay = retry(times);
      delays.push(delay);
      now += delay ?? 0;
    }
    expect(delays).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    now = 1_000 + 9_000;
    expect(retry(7)).toBe(1_000);
    now = 1_000 + 10_000;
    expect(retry(8)).toBeNull();
  });

  test('the last wait is cut to what is left of the budget: the client gives up at the budget, not up to a second after it', () => {
    let now = 0;
    const retry = reconnectStrategy(2_000, () => now);
    expect(retry(1)).toBe(100);
    now = 1_700;
    expect(retry(5)).toBe(300);
    now = 2_000;
    expect(retry(6)).toBeNull();
  });

  test('each outage gets the whole budget: the count restarts after a successful connection', () => {
    let now = 0;
    const retry = reconnectStrategy(5_000, () => now);
    retry(1);
    now = 4_000;
    expect(retry(2)).toBe(200);
    now = 60_000; // reconnected meanwhile; a new outage starts at attempt 1
    expect(retry(1)).toBe(100);
    now = 64_000;
    expect(retry(2)).toBe(200);
    now = 65_000;
    expect(retry(3)).toBeNull();
  });

  test('without a budget it reconnects for ever, its backoff still bounded', () => {
    let now = 0;
    const retry = reconnectStrategy(undefined, () => now);
    retry(1);
    now = 86_400_000;
    expect(retry(500)).toBe(1_000);
  });
});

describe('withReconnect: the BullMQ connections of a worker, serve and a run', () => {
  type Retry = (times: number) => number | null;
  const retryOf = (c: unknown) => (c as { retryStrategy?: Retry }).retryStrategy;

  test("without a budget (a worker, serve) it reconnects for ever at most a second apart — not BullMQ's default, which backs off to 20 s, so jobs are taken again within a second of an outage's end", () => {
    const retry = retryOf(withReconnect({ url: 'redis://127.0.0.1:1' }, undefined))!;
    expect(retry).toBeTypeOf('function');
    expect([1, 2, 5, 10, 50, 1_000].map((times) => retry(times))).toEqual([100, 200, 1_000, 1_000, 1_000, 1_000]);
  });

  test("with a budget (a command) it gives up; a strategy the caller gave, and a client instance, are left as they are", () => {
    const bounded = withReconnect({ url: 'redis://127.0.0.1:1' }, 5_000) as { maxRetriesPerRequest?: unknown };
    expect(bounded.maxRetriesPerRequest).toBeNull();
    const own: Retry = () => 42;
    expect(retryOf(withReconnect({ url: 'redis://127.0.0.1:1', retryStrategy: own } as never, undefined))).toBe(own);
    const instance = { connect: () => undefined } as never;
    expect(withReconnect(instance, undefined)).toBe(instance);
  });
});

describe('isConnectionLoss: one test for a connection to Redis that is gone (the store and the worker both use it)', () => {
  const coded = (message: string, code: string) => Object.assign(new Error(message), { code });
  const named = (message: string, name: string) => Object.assign(new Error(message), { name });
  test.each([
    ['ioredis: the client ended', new Error('Connection is closed.'), true],
    ['ioredis: a command outlived its reconnects', named('Reached the max retries per request limit', 'MaxRetriesPerRequestError'), true],
    ['a socket refused, by code', coded('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'), true],
    ['a reset, by code only', coded('read failed', 'ECONNRESET'), true],
    ['a timeout in the message (BullMQ passes it on)', new Error('connect ETIMEDOUT'), true],
    ['a host that cannot be resolved', coded('getaddrinfo ENOTFOUND nowhere', 'ENOTFOUND'), true],
    ['a lost job lock', new Error('Missing lock for job 7. moveToFinished'), false],
    ['a script error', new Error('ERR Error running script'), false],
    ['not an Error', 'ECONNREFUSED', false],
  ])('%s', (_what, err, lost) => {
    expect(isConnectionLoss(err)).toBe(lost);
  });
});
