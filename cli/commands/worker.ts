/**
 * `weft worker --domain <d> --redis URL [--concurrency N] [--queue NAME] [--lock-ms MS] [--quiet] [--redis-prefix P] [--dir D]`
 * — a long-running process that runs a domain's actuators for the world-effect jobs runtimes put on
 * its domain's BullMQ queue (`weft-effects-<domain>` unless --queue says otherwise; queue/worker.ts).
 * It runs jobs of any library version of its domain whose actuators it has (the pinned library is
 * read from the store by digest), and refuses, with a coded reason, a job of another domain or one
 * naming an actuator it lacks. One line per job on stdout (key, attempt, outcome, duration) unless
 * --quiet; a Redis outage is logged once when it starts and once when it ends, on stderr, while the
 * worker keeps reconnecting with a bounded backoff. SIGTERM or SIGINT: stop taking jobs, finish the running ones, exit 0; SIGKILL loses
 * nothing (the runtime records the stalled job as a transient failure and dispatches the next
 * attempt, which the actuator dedupes on its idempotency key). A Redis that refuses the URL's
 * credentials or the user's ACL at start (`store.auth_refused`) ends the worker at once, exit 1.
 *
 * `--lock-ms` is the job lock (default 30 000): a worker that dies holding a job is noticed within
 * 1.5 × that (queue/worker.ts), and its job's attempt is recorded as stalled. A shorter lock notices
 * sooner but needs every job to renew it in time. `WEFT_WORKER_LOCK_MS` sets it where no flag does.
 */
import { isWeftError, type StoreAuthRefusedError } from '../../journal/errors.js';
import { RedisStore } from '../../stores/redis.js';
import { QueueOwnedError } from '../../queue/queue-owner.js';
import { bullPrefix, queueForDomain } from '../../queue/bullmq.js';
import { OutageLog } from '../../queue/outage.js';
import { metricsListen, startMetricsEndpoint } from '../../telemetry/metrics-server.js';
import { parseCommandArgs, positiveInt, UsageError, usageFailure } from '../args.js';
import { crashHooks } from '../faults.js';
import { loadDomain } from '../domain-loader.js';
import { storeChoice, storeOptions } from '../store-choice.js';
import { domainStateDir, workspaceDir } from '../workspace.js';
import { EXIT } from '../exit-codes.js';

export const usage =
  'worker --domain D --redis URL [--concurrency N] [--queue NAME] [--lock-ms MS] [--quiet] [--redis-prefix P] [--dir D] [--metrics-port [HOST:]PORT]\n' +
  '                                       run a domain\'s actuators for the jobs on its queue (default weft-effects-<domain>) until SIGTERM;\n' +
  '                                       --lock-ms: the job lock (default 30000): a worker that dies is noticed within 1.5 × it;\n' +
  '                                       --quiet: no line per job; --metrics-port: Prometheus /metrics, /healthz and /readyz on 127.0.0.1';

/** The server's refusal of this client (store.auth_refused), from one PING; unreachable is no refusal: the worker waits for it. */
async function refusedAtConnect(url: string, withinMs: number | undefined): Promise<StoreAuthRefusedError | undefined> {
  const probe = new RedisStore({ redis: url, ...(withinMs === undefined ? {} : { giveUpAfterMs: withinMs }) });
  try {
    await probe.reachable(withinMs);
    return undefined;
  } catch (err) {
    return isWeftError(err) && err.code === 'store.auth_refused' ? (err as StoreAuthRefusedError) : undefined;
  } finally {
    await probe.close();
  }
}

export async function run(argv: string[]): Promise<number> {
  let args;
  let concurrency = 1;
  let lockMs = 30_000;
  let choice;
  try {
    args = parseCommandArgs(argv, { domain: { type: 'string' }, concurrency: { type: 'string' }, queue: { type: 'string' }, 'lock-ms': { type: 'string' }, quiet: { type: 'boolean' }, dir: { type: 'string' }, 'metrics-port': { type: 'string' }, ...storeOptions }, { min: 0, max: 0 });
    if (!args.strings.domain) throw new UsageError('--domain is required: the domain whose actuators this worker runs');
    choice = storeChoice(workspaceDir(args.strings.dir), args.strings, { longLived: true });
    if (!choice.redis) throw new UsageError('--redis URL (or WEFT_REDIS_URL) is required: the Redis the runtimes queue their jobs in');
    if (args.strings.concurrency !== undefined) concurrency = positiveInt('--concurrency', args.strings.concurrency, 4);
    const lock = args.strings['lock-ms'] ?? process.env.WEFT_WORKER_LOCK_MS;
    if (lock !== undefined && lock !== '') lockMs = positiveInt('--lock-ms', lock, 7);
    if (lockMs < 500) throw new UsageError(`--lock-ms is at least 500 (a job must renew its lock in time), got ${lockMs}`);
    const listen = args.strings['metrics-port'] === undefined ? undefined : metricsListen(args.strings['metrics-port']);
    if (typeof listen === 'string') throw new UsageError(listen);
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('worker', usage, err);
    throw err;
  }
  // A server that refuses the URL's credentials or the user's ACL is not an outage to wait out.
  const refusal = await refusedAtConnect(choice.redis!.url, choice.redis!.reachWithinMs);
  if (refusal) {
    process.stderr.write(`weft worker: ${refusal.message}\n`);
    return EXIT.failed;
  }
  const loaded = await loadDomain(args.strings.domain!);
  const domain = loaded.domain;
  const redis = { url: choice.redis!.url, prefix: choice.redis!.prefix };
  const stateDir = domainStateDir(choice.dir, domain);
  const faults = crashHooks();
  const actuators = faults.wrapActuators(domain.actuators({ stateDir, redis }), domain.observe);
  const queue = args.strings.queue ?? queueForDomain(domain.name);
  const quiet = args.flags.quiet === true;
  // Metrics and health first: a probe sees the worker live (and not ready) while it connects.
  const metrics = args.strings['metrics-port'] === undefined ? undefined : await startMetricsEndpoint({ listen: args.strings['metrics-port'], redisUrl: redis.url, queues: { names: [queue, `${queue}-timers`], prefix: bullPrefix(redis.prefix) } });
  // BullMQ is loaded by a worker that starts, not by `weft worker --help` or `weft --help`.
  const { startWorker } = await import('../../queue/worker.js');
  let running;
  try {
    running = await startWorker({
      domain,
      actuators,
      connection: redis.url,
      redis,
      queue,
      prefix: bullPrefix(redis.prefix),
      concurrency,
      lockDurationMs: lockMs,
      ...(quiet ? {} : { log: (line: string) => process.stdout.write(`${line}\n`) }),
      outage: new OutageLog('weft worker', (line) => process.stderr.write(`${line}\n`)),
    });
  } catch (err) {
    // A queue another domain owns: say whose it is and what to run instead; nothing was taken.
    if (!(err instanceof QueueOwnedError)) throw err;
    process.stderr.write(`weft worker: ${err.message}\n`);
    await metrics?.close();
    return EXIT.usage;
  }
  if (metrics) process.stderr.write(`weft worker: metrics on http://${metrics.address}/metrics (also /healthz, /readyz)\n`);
  process.stderr.write(`weft worker: domain ${domain.name}, queue ${queue}, concurrency ${concurrency}, lock ${lockMs} ms, pid ${process.pid} — ready\n`);
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      process.stderr.write(`weft worker: ${signal}: finishing the running jobs, then exiting\n`);
      void running.close().finally(() => void (metrics?.close() ?? Promise.resolve()).finally(resolve));
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  return EXIT.done;
}
