/**
 * Where a command's world effects run: `--dispatch in-process | bullmq | auto`. Without Redis,
 * always in this process. With Redis, `bullmq` sends them to `weft worker` processes on the
 * domain's queue (`weft-effects-<domain>`, or `--queue NAME`) and waits for one, saying so once when
 * none consumes it; `in-process` keeps them here; `auto` — the default — asks that queue, before
 * the run starts: workers consuming it → BullMQ, none → in this process, with a notice naming the
 * command that starts a worker (as printed, it works: domain, --redis, and --redis-prefix / --queue
 * when not the defaults). Only that domain's queue is asked, so workers of another domain never
 * count. The choice is made once per run (serve: once per resumed invocation), never per job, so
 * one run's effects never move between the two mid-epoch.
 */
import { isAccessRefused } from '../stores/access-refused.js';
import { bullPrefix, closeWithin, queueForDomain, withReconnect } from '../queue/bullmq.js';
import { positiveInt, UsageError, type OptionSpec } from './args.js';
import { namesOf, workerHint, type DomainNames } from './hints.js';
import { storeChoice, type StoreChoice } from './store-choice.js';

export const dispatchOptions: OptionSpec = { dispatch: { type: 'string' }, queue: { type: 'string' }, 'refusal-wait-ms': { type: 'string' } };
export const dispatchUsage = '[--dispatch auto|bullmq|in-process] [--queue NAME] [--refusal-wait-ms MS]';

export type DispatchFlag = 'auto' | 'bullmq' | 'in-process';

export function dispatchFlag(strings: Record<string, string | undefined>): DispatchFlag {
  const value = strings.dispatch ?? 'auto';
  if (value !== 'auto' && value !== 'bullmq' && value !== 'in-process') throw new UsageError(`--dispatch is auto, bullmq or in-process, got ${JSON.stringify(value)}`);
  return value;
}

/**
 * `--refusal-wait-ms MS` (else WEFT_REFUSAL_WAIT_MS): how long a step that workers refuse waits for
 * one that can run it before the run rests suspended (runtime/epoch/refusals.ts; default 5 min).
 * Undefined: the runtime's default. Throws UsageError.
 */
export function refusalWaitFlag(strings: Record<string, string | undefined>): number | undefined {
  const flag = strings['refusal-wait-ms'];
  const text = flag ?? process.env.WEFT_REFUSAL_WAIT_MS;
  if (text === undefined || text === '') return undefined;
  return positiveInt(flag === undefined ? 'WEFT_REFUSAL_WAIT_MS' : '--refusal-wait-ms', text, 9);
}

/** The store and dispatch flags of a command that continues an invocation (continue-command.ts); throws UsageError. */
export function continueFlags(dir: string, strings: Record<string, string | undefined>): { choice: StoreChoice; dispatch: DispatchFlag; refusalWaitMs?: number } {
  const dispatch = dispatchFlag(strings);
  const refusalWaitMs = refusalWaitFlag(strings);
  return { choice: storeChoice(dir, strings), dispatch, ...(refusalWaitMs === undefined ? {} : { refusalWaitMs }) };
}

/**
 * Redis refused to say which workers consume a queue (`NOPERM`: a Redis ACL user without
 * `CLIENT LIST`, as a per-tenant user may be). `auto` cannot choose then, and must not guess: a
 * guess of "no worker" would run a deployment's world effects in this process.
 */
export class WorkerCountRefusedError extends Error {
  override readonly name = 'WorkerCountRefusedError';
  constructor(queue: string, reason: string) {
    super(
      `Redis refused to say which workers consume queue ${queue} (${reason}), so --dispatch auto cannot choose: ` +
        'pass --dispatch bullmq to send world effects to `weft worker` processes, or --dispatch in-process to run them here ' +
        '(or let this Redis user run CLIENT LIST)',
    );
  }
}

/**
 * Counts the workers consuming `queue`, as often as asked, on one connection (serve asks once per
 * resumed invocation). A queue that cannot be asked counts 0: no worker to count on — except when
 * Redis refuses the question (WorkerCountRefusedError), which is no answer at all.
 */
export function workerCounter(choice: StoreChoice, queue: string): { count(): Promise<number>; close(): Promise<void> } {
  const redis = choice.redis;
  if (!redis) return { count: async () => 0, close: async () => undefined };
  const probe = import('bullmq').then(({ Queue }) => { // loaded only in the distributed mode
    const made = new Queue(queue, { connection: withReconnect({ url: redis.url }, redis.giveUpAfterMs), prefix: bullPrefix(redis.prefix) });
    made.on('error', () => undefined);
    return made;
  });
  // A queue that cannot be made counts 0 and has nothing to close: never an unhandled rejection, even when nobody asks.
  const queueOrNone = probe.catch(() => undefined);
  return {
    count: async () => {
      const made = await queueOrNone;
      if (!made) return 0;
      return made.getWorkersCount().catch((err: unknown) => {
        if (isAccessRefused(err)) throw new WorkerCountRefusedError(queue, (err as Error).message.split('\n')[0]!);
        return 0;
      });
    },
    close: async () => {
      const made = await queueOrNone;
      if (made) await closeWithin(made, 2_000).catch(() => undefined);
    },
  };
}

/** How many workers consume `queue` now (one question, one connection). */
export async function workersOn(choice: StoreChoice, queue: string): Promise<number> {
  const counter = workerCounter(choice, queue);
  try {
    return await counter.count();
  } finally {
    await counter.close();
  }
}

/** Resolve `auto` against the domain's queue (one question to Redis); undefined without Redis. */
export async function chooseDispatch(flag: DispatchFlag, choice: StoreChoice, queue: string | undefined, domain: DomainNames, notice: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Promise<'in-process' | 'bullmq' | undefined> {
  if (!choice.redis) return undefined;
  if (flag !== 'auto') return flag;
  const consumed = queue ?? queueForDomain(namesOf(domain).name);
  if ((await workersOn(choice, consumed)) > 0) return 'bullmq';
  notice(
    `weft: no worker is consuming queue ${consumed}: world effects run in this process ` +
      `(start \`${workerHint(choice, queue, domain, { printed: true })}\` to run them on workers, or pass --dispatch bullmq to wait for one)`,
  );
  return 'in-process';
}
