/**
 * Which domain owns a queue: recorded in Redis the first time a runtime of a domain dispatches on it,
 * and asked by `weft worker` before it takes a job, so that a worker started with `--queue` naming
 * another domain's queue refuses to start (with the command that is right) instead of refusing
 * every job it takes.
 *
 * - One hash per BullMQ prefix: `<bull prefix>:queue-domains`, field = queue name, value = the
 *   domain's name. Written with HSETNX: the first domain to use a queue owns it, and no later
 *   runtime overwrites that (a runtime of another domain that dispatches there is warned instead;
 *   its jobs are refused by the owner's workers — runtime/epoch/refusals.ts).
 * - Nothing here is journaled: which queue ran a job is no part of an invocation's record.
 * - To give a queue to another domain, delete its field (`redis-cli HDEL <prefix>:queue-domains <queue>`).
 *
 * Each question uses a short-lived connection of its own (or the client given), so neither the
 * dispatcher's nor the worker's BullMQ connections are borrowed.
 */
import type { ConnectionOptions } from 'bullmq';

/** The hash that maps each queue under a BullMQ prefix to the domain that owns it. */
export function queueOwnersKey(bullPrefix: string): string {
  return `${bullPrefix}:queue-domains`;
}

type Client = { hsetnx(key: string, field: string, value: string): Promise<number>; hget(key: string, field: string): Promise<string | null>; disconnect(): void };

/** Run `use` on a connection made from `connection` (or on the client it is), then let that connection go. */
async function withClient<T>(connection: ConnectionOptions, use: (client: Client) => Promise<T>): Promise<T> {
  if (typeof (connection as { hget?: unknown }).hget === 'function') return use(connection as unknown as Client);
  const { Redis } = await import('ioredis');
  const { url, ...rest } = connection as ConnectionOptions & { url?: string };
  const options = { ...rest, lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: true };
  const client = (url === undefined ? new Redis(options as never) : new Redis(url, options as never)) as unknown as Client & { on(event: string, fn: () => void): void };
  client.on('error', () => undefined);
  try {
    return await use(client);
  } finally {
    client.disconnect();
  }
}

/**
 * Record that `domain` owns `queue` unless a domain already does; answers the owner (the one
 * recorded before, or `domain` now).
 */
export async function claimQueue(connection: ConnectionOptions, bullPrefix: string, queue: string, domain: string): Promise<string> {
  return withClient(connection, async (client) => {
    const key = queueOwnersKey(bullPrefix);
    if ((await client.hsetnx(key, queue, domain)) === 1) return domain;
    return (await client.hget(key, queue)) ?? domain;
  });
}

/** The domain recorded as owning `queue`, or undefined when no runtime has dispatched on it yet. */
export async function queueOwner(connection: ConnectionOptions, bullPrefix: string, queue: string): Promise<string | undefined> {
  return withClient(connection, async (client) => (await client.hget(queueOwnersKey(bullPrefix), queue)) ?? undefined);
}

/** A worker asked to consume a queue another domain owns: it does not start. */
export class QueueOwnedError extends Error {
  override readonly name = 'QueueOwnedError';
  readonly code = 'worker.queue_owned';
  constructor(
    readonly queue: string,
    readonly owner: string,
    readonly domain: string,
    /** The command that runs this worker's domain on its own queue, and the one that runs the owner's jobs. */
    commands: { own: string; owner: string },
  ) {
    super(
      `queue ${queue} belongs to domain ${owner} (a runtime of ${owner} dispatches on it), and this worker runs domain ${domain}: ` +
        `it would refuse every job there. Start \`${commands.own}\` for ${domain}'s jobs (drop --queue), or \`${commands.owner}\` for ${owner}'s`,
    );
  }
}
