/**
 * Where a command's world effects run: `--dispatch in-process | bullmq | auto`. Without Redis,
 * always in this process. With Redis, `bullmq` sends them to `weft worker` processes (and waits for
 * one, saying so once when none consumes the queue); `in-process` keeps them here; `auto` — the
 * default — asks the queue once, before the run starts: workers consuming it → BullMQ, none →
 * in this process, with a notice naming the command that starts a worker. The choice is made once
 * per command, never per job, so one run's effects never move between the two mid-epoch.
 */
import { bullPrefix, DEFAULT_QUEUE, withReconnect } from '../queue/bullmq.js';
import { UsageError, type OptionSpec } from './args.js';
import { storeChoice, type StoreChoice } from './store-choice.js';

export const dispatchOptions: OptionSpec = { dispatch: { type: 'string' }, queue: { type: 'string' } };
export const dispatchUsage = '[--dispatch auto|bullmq|in-process] [--queue NAME]';

export type DispatchFlag = 'auto' | 'bullmq' | 'in-process';

export function dispatchFlag(strings: Record<string, string | undefined>): DispatchFlag {
  const value = strings.dispatch ?? 'auto';
  if (value !== 'auto' && value !== 'bullmq' && value !== 'in-process') throw new UsageError(`--dispatch is auto, bullmq or in-process, got ${JSON.stringify(value)}`);
  return value;
}

/** The store and dispatch flags of a command that continues an invocation (resume, approve); throws UsageError. */
export function continueFlags(dir: string, strings: Record<string, string | undefined>): { choice: StoreChoice; dispatch: DispatchFlag } {
  return { choice: storeChoice(dir, strings), dispatch: dispatchFlag(strings) };
}

/** Resolve `auto` against the queue (one question to Redis); undefined without Redis. */
export async function chooseDispatch(flag: DispatchFlag, choice: StoreChoice, queue: string | undefined, domain: string): Promise<'in-process' | 'bullmq' | undefined> {
  if (!choice.redis) return undefined;
  if (flag !== 'auto') return flag;
  const { Queue } = await import('bullmq'); // loaded only in the distributed mode
  const connection = withReconnect({ url: choice.redis.url }, choice.redis.giveUpAfterMs);
  const probe = new Queue(queue ?? DEFAULT_QUEUE, { connection, prefix: bullPrefix(choice.redis.prefix) });
  probe.on('error', () => undefined);
  try {
    if ((await probe.getWorkersCount()) > 0) return 'bullmq';
  } catch {
    // The store already answered; a queue that cannot be asked is treated as one without workers.
  } finally {
    await probe.close().catch(() => undefined);
  }
  process.stderr.write(
    `weft: no worker is consuming queue ${queue ?? DEFAULT_QUEUE}: world effects run in this process ` +
      `(start \`weft worker --domain ${domain} --redis ${choice.redis.url}\` to run them on workers, or pass --dispatch bullmq to wait for one)\n`,
  );
  return 'in-process';
}
