/**
 * `weft serve --domain D [--redis URL | --dir D] [--poll-ms N] [--dispatch …] [--json]` — a
 * long-running runtime process (runtime/serve.ts): it takes over every invocation of the store
 * whose runtime died (its lease expired, or its holder is a dead process on this host) and retries
 * transiently suspended ones with backoff, until SIGTERM or SIGINT, when it stops taking work and
 * lets the runs it started reach their next resting point. Several serve processes may share a
 * store; the lease decides who runs each invocation. One line per event on stdout (`--json`: one
 * JSON object per event).
 */
import { serve } from '../../runtime/serve.js';
import { parseCommandArgs, positiveInt, UsageError, usageFailure } from '../args.js';
import { loadDomain } from '../domain-loader.js';
import { chooseDispatch, dispatchFlag, dispatchOptions, dispatchUsage } from '../dispatch-choice.js';
import { openStore, storeChoice, storeOptions, storeUsage } from '../store-choice.js';
import { openWorkspace, workspaceDir } from '../workspace.js';

export const usage =
  `serve --domain D [--dir D] ${storeUsage} ${dispatchUsage} [--poll-ms N] [--json]\n` +
  '                                       keep invocations moving: take over those whose runtime died, retry transient suspensions';

export async function run(argv: string[]): Promise<number> {
  let args;
  let choice;
  let dispatch;
  let pollMs = 1_000;
  try {
    args = parseCommandArgs(argv, { domain: { type: 'string' }, dir: { type: 'string' }, 'poll-ms': { type: 'string' }, json: { type: 'boolean' }, ...storeOptions, ...dispatchOptions }, { min: 0, max: 0 });
    if (!args.strings.domain) throw new UsageError('--domain is required: the domain whose invocations this process runs');
    choice = storeChoice(workspaceDir(args.strings.dir), args.strings, { longLived: true });
    dispatch = dispatchFlag(args.strings);
    if (args.strings['poll-ms'] !== undefined) pollMs = positiveInt('--poll-ms', args.strings['poll-ms'], 7);
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('serve', usage, err);
    throw err;
  }
  const loaded = await loadDomain(args.strings.domain!);
  const store = await openStore(choice);
  const dispatchTo = await chooseDispatch(dispatch, choice, args.strings.queue, loaded.domain.name);
  const ws = await openWorkspace({ dir: args.strings.dir, store, redis: choice.redis, dispatch: dispatchTo, queue: args.strings.queue, domain: loaded });
  const json = args.flags.json === true;
  const stop = new AbortController();
  process.once('SIGTERM', () => stop.abort());
  process.once('SIGINT', () => stop.abort());
  process.stderr.write(`weft serve: domain ${loaded.domain.name}, store ${store.name}, every ${pollMs} ms, pid ${process.pid} — ready\n`);
  await serve(ws.runtime, {
    pollMs,
    signal: stop.signal,
    onEvent: (event) => {
      if (json) process.stdout.write(`${JSON.stringify(event)}\n`);
      else if (event.kind === 'resuming') process.stdout.write(`resuming  ${event.id} (${event.why}${event.reason ? `: ${event.reason}` : ''})\n`);
      else if (event.kind === 'stopped') process.stdout.write(`stopped   ${event.id} ${event.status}${event.reason ? ` — ${event.reason}` : ''}\n`);
      else if (event.kind === 'skipped') process.stdout.write(`skipped   ${event.id}: ${event.reason}\n`);
      else process.stdout.write(`error     ${event.id ?? ''} ${event.message}\n`);
    },
  });
  return 0;
}
