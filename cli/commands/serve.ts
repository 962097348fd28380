/**
 * `weft serve --domain D [--redis URL | --dir D] [--tenant T] [--signing-key FILE] [--poll-ms N] [--dispatch …] [--queue NAME] [--json]`
 * — a long-running runtime process (runtime/serve.ts): it takes over every invocation of domain D
 * whose runtime died (its lease expired, or its holder is a dead process on this host) and retries
 * transiently suspended ones with backoff, until SIGTERM or SIGINT, when it stops taking work and
 * lets the runs it started reach their next resting point. Invocations of other domains are left
 * alone, silently. Several serve processes may share a store; the lease decides who runs each
 * invocation. One line per event on stdout (`--json`: one JSON object per event); a store outage is
 * two lines, when it starts and when it ends, whatever the number of polls in between.
 *
 * `--dispatch auto` (the default, with Redis) decides per resumed invocation, when it is taken:
 * BullMQ when a worker consumes D's queue (`weft-effects-D`, or --queue) at that moment, else this
 * process — so a serve started before its workers uses them once they come.
 *
 * `--tenant T` scopes the process to one tenant: it lists, resumes, records decisions for and seals
 * only T's invocations (another tenant's are not seen at all). With `--signing-key FILE`, the
 * tenant's own key: a deployment runs one `serve --tenant T --signing-key keys/T.key` per tenant,
 * and since a journal is sealed by the key it started with (seal-key.ts), one tenant's serve could
 * not seal another's even if it saw it.
 */
import { serve } from '../../runtime/serve.js';
import type { Runtime } from '../../runtime/runtime.js';
import { bullPrefix, queueForDomain } from '../../queue/bullmq.js';
import { metricsListen, startMetricsEndpoint } from '../../telemetry/metrics-server.js';
import { parseCommandArgs, positiveInt, UsageError, usageFailure } from '../args.js';
import { loadDomain } from '../domain-loader.js';
import { dispatchFlag, dispatchOptions, dispatchUsage, refusalWaitFlag, workerCounter } from '../dispatch-choice.js';
import { openStore, storeChoice, storeOptions, storeUsage } from '../store-choice.js';
import { openWorkspace, workspaceDir } from '../workspace.js';
import { startStately, statelyChoice, statelyOptions, statelyUsage, type StatelyChoice } from '../stately-choice.js';
import { signingKeyOptions, signingKeyUsage } from '../signing-key-choice.js';
import { tenantOption, tenantUsage } from '../tenant-scope.js';
import { EXIT } from '../exit-codes.js';

export const usage =
  `serve --domain D [--dir D] ${storeUsage} ${dispatchUsage} ${tenantUsage} ${signingKeyUsage} [--poll-ms N] [--metrics-port [HOST:]PORT] ${statelyUsage} [--json]\n` +
  '                                       keep domain D\'s invocations moving (one tenant\'s with --tenant): take over those whose runtime died, retry transient suspensions;\n' +
  '                                       --metrics-port: Prometheus /metrics, /healthz and /readyz on 127.0.0.1 (docs/operations.md)';

export async function run(argv: string[]): Promise<number> {
  let args;
  let choice;
  let dispatch;
  let refusalWaitMs: number | undefined;
  let pollMs = 1_000;
  let stately: StatelyChoice | undefined;
  try {
    args = parseCommandArgs(argv, { domain: { type: 'string' }, dir: { type: 'string' }, 'poll-ms': { type: 'string' }, 'metrics-port': { type: 'string' }, json: { type: 'boolean' }, ...tenantOption, ...signingKeyOptions, ...storeOptions, ...dispatchOptions, ...statelyOptions }, { min: 0, max: 0 });
    if (!args.strings.domain) throw new UsageError('--domain is required: the domain whose invocations this process runs');
    choice = storeChoice(workspaceDir(args.strings.dir), args.strings, { longLived: true });
    dispatch = dispatchFlag(args.strings);
    refusalWaitMs = refusalWaitFlag(args.strings);
    stately = statelyChoice(args.flags, args.strings);
    if (args.strings['poll-ms'] !== undefined) pollMs = positiveInt('--poll-ms', args.strings['poll-ms'], 7);
    const listen = args.strings['metrics-port'] === undefined ? undefined : metricsListen(args.strings['metrics-port']);
    if (typeof listen === 'string') throw new UsageError(listen);
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('serve', usage, err);
    throw err;
  }
  const loaded = await loadDomain(args.strings.domain!);
  let tap;
  try {
    // serve runs for long: a client that connects later is sent each invocation where it stands.
    tap = stately ? await startStately(stately, 'serve', { waitForClient: false }) : undefined;
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('serve', usage, err);
    throw err;
  }
  const opened = await openStore(choice);
  const store = tap ? tap.tapStore(opened) : opened;
  const queue = args.strings.queue;
  const tenant = args.strings.tenant;
  const open = (to: 'in-process' | 'bullmq' | undefined) =>
    openWorkspace({ ...(tap ? { inspect: tap.inspect } : {}), dir: args.strings.dir, store, redis: choice.redis, dispatch: to, queue, refusalWaitMs, domain: loaded, tenant, signingKeyFile: args.strings['signing-key'] });
  // Without Redis, in this process; with it, BullMQ or in-process as asked, or — auto — per invocation.
  const fixed = !choice.redis ? undefined : dispatch === 'auto' ? 'bullmq' : dispatch;
  const ws = await open(fixed);
  let runtimeFor: ((id: string) => Promise<{ runtime: Runtime; dispatch: string }>) | undefined;
  let counter: { count(): Promise<number>; close(): Promise<void> } | undefined;
  if (choice.redis && dispatch === 'auto') {
    const local = (await open('in-process')).runtime;
    const workers = workerCounter(choice, queue ?? queueForDomain(loaded.domain.name));
    counter = workers;
    // Asked once now: a Redis user that may not count workers is told so before serve takes anything up.
    try {
      await workers.count();
    } catch (err) {
      await workers.close();
      throw err;
    }
    runtimeFor = async () => ((await workers.count()) > 0 ? { runtime: ws.runtime, dispatch: 'bullmq' } : { runtime: local, dispatch: 'in-process' });
  }
  const json = args.flags.json === true;
  const stop = new AbortController();
  // Stopping on a signal is said, and clean: no new take-overs, the running ones come to rest, then exit.
  const onSignal = (signal: string) => {
    process.stderr.write(`weft serve: ${signal}: taking no more invocations; letting the running ones come to rest, then exiting\n`);
    stop.abort();
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));
  const metrics = args.strings['metrics-port'] === undefined ? undefined : await startMetricsEndpoint({ listen: args.strings['metrics-port'], ...(choice.redis ? { redisUrl: choice.redis.url, queues: { names: [queue ?? queueForDomain(loaded.domain.name), `${queue ?? queueForDomain(loaded.domain.name)}-timers`], prefix: bullPrefix(choice.redis.prefix) } } : {}) });
  if (metrics) process.stderr.write(`weft serve: metrics on http://${metrics.address}/metrics (also /healthz, /readyz)\n`);
  const dispatching = !choice.redis ? 'in-process' : dispatch === 'auto' ? `auto (per invocation, on queue ${queue ?? queueForDomain(loaded.domain.name)})` : dispatch;
  process.stderr.write(`weft serve: domain ${loaded.domain.name}${tenant === undefined ? '' : `, tenant ${JSON.stringify(tenant)} only`}, store ${store.name}, dispatch ${dispatching}, every ${pollMs} ms, pid ${process.pid} — ready\n`);
  try {
    await serve(ws.runtime, {
      pollMs,
      signal: stop.signal,
      domain: loaded.domain,
      ...(runtimeFor ? { runtimeFor } : {}),
      onEvent: (event) => {
        if (json) process.stdout.write(`${JSON.stringify(event)}\n`);
        else if (event.kind === 'resuming') process.stdout.write(`resuming  ${event.id} (${event.why}${event.reason ? `: ${event.reason}` : ''})${event.dispatch ? ` — effects ${event.dispatch === 'bullmq' ? 'on workers' : 'in this process'}` : ''}\n`);
        else if (event.kind === 'stopped') process.stdout.write(`stopped   ${event.id} ${event.status}${event.reason ? ` — ${event.reason}` : ''}\n`);
        else if (event.kind === 'skipped') process.stdout.write(`skipped   ${event.id}: ${event.reason}\n`);
        else if (event.kind === 'outage') {
          process.stdout.write(
            event.state === 'started'
              ? `outage    since ${event.since}: ${event.message}; retrying\n`
              : `outage    ended after ${event.ms} ms (since ${event.since})\n`,
          );
        } else process.stdout.write(`error     ${event.id ?? ''} ${event.message}\n`);
      },
    });
  } finally {
    await counter?.close();
    await metrics?.close();
  }
  if (stop.signal.aborted) process.stderr.write('weft serve: stopped\n');
  return EXIT.done;
}
