/**
 * `weft inspect [--dir D | --redis URL [--redis-prefix P]] [--domain D] [--public-key F] [--port N] [--host H] [--token T] [--tenant-token TENANT=T …] [--nice N] [--read-only]`
 * — serve the viewer (inspector/server.ts) over a workspace or a Redis store, and print its URL.
 *
 * It reads only: a Redis store is opened without the durability check that refuses writers a
 * server that could lose appends (a viewer appends nothing), and no lease is taken. It binds
 * 127.0.0.1 by default (port 7391; `--port 0` picks a free one). Any other `--host` needs a token
 * — `--token T`, which sees every invocation, or `--tenant-token TENANT=T` (repeatable), which sees,
 * searches and approves only that tenant's — and every request must then carry one (a usage error,
 * exit 2, otherwise). The key
 * given with `--public-key` (a weft.pub, or a weft.key whose public half is used) is the one the
 * page verifies seals against. Runs until SIGINT or SIGTERM, then exits 0.
 *
 * The viewer runs at a lower CPU priority than the runs it watches (cli/yield-cpu.ts: nice 10 by
 * default, `--nice N` from 0, unchanged, to 19): on a busy machine its pages lag a little rather
 * than the runs slowing down. (With `--domain`, runs the viewer continues after an approval run at
 * that priority too: `--nice 0` keeps the normal one.)
 *
 * Approve and Reject in the page write the decision to the invocation's inbox (cli/inspect-approver.ts);
 * with `--domain D` over a workspace, this process then continues the invocation itself. A Redis
 * store that fails the writers' durability check takes no decision from the page.
 * Cancel, Resume and Fork in the page are requests written as the CLI writes them
 * (cli/inspect-actions.ts); `--read-only` leaves Approve and Reject the page's only actions.
 */
import type { AddressInfo } from 'node:net';
import type { JournalStore } from '../../journal/store.js';
import { FileStore } from '../../stores/file.js';
import { RedisStore } from '../../stores/redis.js';
import { isLoopback } from '../../inspector/access.js';
import { createInspectorServer } from '../../inspector/server.js';
import { KeyFileError, loadPublicKey } from '../../runtime/keys.js';
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { DomainLoadError, loadDomain } from '../domain-loader.js';
import { locationOf } from '../hints.js';
import { inspectApprover } from '../inspect-approver.js';
import { inspectActions } from '../inspect-actions.js';
import { closeAtExit, storeChoice, type StoreChoice } from '../store-choice.js';
import { workspaceDir } from '../workspace.js';
import { NICE_RANGE, yieldCpu } from '../yield-cpu.js';
import { EXIT } from '../exit-codes.js';

export const usage =
  'inspect [--dir D] [--redis URL [--redis-prefix P]] [--domain D] [--public-key F] [--port N] [--host H] [--token T] [--tenant-token TENANT=T ...] [--nice N] [--read-only]\n' +
  '                                       serve the viewer on http://127.0.0.1:7391/ (reads; writes only decisions): every invocation, each one\n' +
  '                                       with its steps and journal, verified in the page against --public-key;\n' +
  '                                       approvals decided in the page (with --domain, resumed by the viewer);\n' +
  "                                       --tenant-token: a token that sees only that tenant's invocations;\n" +
  '                                       cancel, resume and fork from the page (--read-only: approve is the only action)';

export const DEFAULT_PORT = 7391;
/** The nice value the viewer takes unless told otherwise (cli/yield-cpu.ts). */
export const DEFAULT_NICE = 10;

export async function run(argv: string[]): Promise<number> {
  let choice: StoreChoice;
  let host: string;
  let port: number;
  let token: string | undefined;
  const tenantTokens: Array<{ tenant: string; token: string }> = [];
  let keyFile: string | undefined;
  let domain: string | undefined;
  let nice: number;
  let readOnly = false;
  try {
    const args = parseCommandArgs(
      argv,
      {
        dir: { type: 'string' },
        redis: { type: 'string' },
        'redis-prefix': { type: 'string' },
        'public-key': { type: 'string', short: 'k' },
        domain: { type: 'string' },
        port: { type: 'string' },
        host: { type: 'string' },
        token: { type: 'string' },
        'tenant-token': { type: 'string', multiple: true },
        nice: { type: 'string' },
        'read-only': { type: 'boolean' },
      },
      { min: 0, max: 0 },
    );
    choice = storeChoice(workspaceDir(args.strings.dir), args.strings, { longLived: true });
    host = args.strings.host ?? '127.0.0.1';
    token = args.strings.token;
    keyFile = args.strings['public-key'];
    domain = args.strings.domain;
    readOnly = args.flags['read-only'] === true;
    const portText = args.strings.port ?? String(DEFAULT_PORT);
    if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) > 65535) throw new UsageError(`--port takes a port number 0–65535 (0: any free one), got ${JSON.stringify(portText)}`);
    port = Number(portText);
    const niceText = args.strings.nice ?? String(DEFAULT_NICE);
    if (!/^[0-9]{1,2}$/.test(niceText) || Number(niceText) > NICE_RANGE.max) throw new UsageError(`--nice takes a nice value ${NICE_RANGE.min}–${NICE_RANGE.max} (0: keep this process's priority), got ${JSON.stringify(niceText)}`);
    nice = Number(niceText);
    if (token !== undefined && token.length < 16) throw new UsageError('--token must be at least 16 characters (every request must carry it: make it hard to guess)');
    for (const given of args.lists['tenant-token'] ?? []) {
      const eq = given.indexOf('=');
      const tenant = eq < 0 ? '' : given.slice(0, eq);
      const secret = eq < 0 ? '' : given.slice(eq + 1);
      if (tenant === '' || secret === '') throw new UsageError(`--tenant-token takes TENANT=TOKEN, got ${JSON.stringify(given.slice(0, 40))}`);
      if (secret.length < 16) throw new UsageError(`--tenant-token ${tenant}=…: the token must be at least 16 characters (make it hard to guess)`);
      if (secret === token || tenantTokens.some((t) => t.token === secret)) throw new UsageError(`--tenant-token ${tenant}=…: that token is already given (each token must be its own, or it would see more than one scope)`);
      if (tenantTokens.some((t) => t.tenant === tenant)) throw new UsageError(`--tenant-token: tenant ${JSON.stringify(tenant)} is given twice`);
      tenantTokens.push({ tenant, token: secret });
    }
    if (!isLoopback(host) && token === undefined && tenantTokens.length === 0) {
      throw new UsageError(`--host ${host} is reachable beyond this machine: pass --token T or --tenant-token TENANT=T (at least 16 characters; every request must then carry one), or leave --host out to bind 127.0.0.1`);
    }
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('inspect', usage, err);
    throw err;
  }

  const yielded = yieldCpu(nice);
  if ('error' in yielded) process.stderr.write(`weft inspect: could not lower its CPU priority to nice ${nice} (${yielded.error}); it runs at the priority it was given\n`);

  let trustedKey;
  if (keyFile !== undefined) {
    try {
      trustedKey = { key: await loadPublicKey(keyFile), label: `${keyFile} (given with --public-key)` };
    } catch (err) {
      if (err instanceof KeyFileError) return usageFailure('inspect', usage, new UsageError(err.message));
      throw err;
    }
  }
  // The domain given replays its invocations for time travel (inspector/replay-trail.ts), besides the built-ins.
  let loaded;
  try {
    loaded = domain === undefined ? undefined : (await loadDomain(domain)).domain;
  } catch (err) {
    if (err instanceof DomainLoadError) return usageFailure('inspect', usage, new UsageError(err.message));
    throw err;
  }
  const store = await openForReading(choice);
  const approver = await inspectApprover(store, choice, domain);
  const actions = inspectActions(store, choice, { domain, readOnly, writable: approver.writable });
  const server = createInspectorServer({ store, approver, actions, ...(loaded ? { domain: loaded } : {}), location: locationOf(choice).store, loopback: isLoopback(host), ...(trustedKey ? { trustedKey } : {}), ...(token === undefined ? {} : { token }), ...(tenantTokens.length ? { tenantTokens } : {}) });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    process.stderr.write(`weft inspect: cannot listen on ${host}:${port} (${code ?? (err as Error).message})${code === 'EADDRINUSE' ? ': pass --port N for another port, or --port 0 for any free one' : ''}\n`);
    return EXIT.failed;
  }
  const bound = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  const base = `http://${shownHost}:${bound}/`;
  const url = `${base}${token === undefined ? '' : `?token=${encodeURIComponent(token)}`}`;
  process.stdout.write(`weft inspect: ${store.name} at ${url}${trustedKey ? '' : ' (no --public-key: seals are not checked against a key you trust)'}\n`);
  for (const t of tenantTokens) process.stdout.write(`weft inspect: tenant ${t.tenant} at ${base}?token=${encodeURIComponent(t.token)}\n`);

  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return EXIT.done;
}

/** The store, opened to be read: a Redis one without the writers' durability refusal (nothing is appended). */
async function openForReading(choice: StoreChoice): Promise<JournalStore> {
  if (!choice.redis) return new FileStore(choice.dir);
  const { url, prefix, giveUpAfterMs } = choice.redis;
  const store = new RedisStore({ redis: url, prefix, ...(giveUpAfterMs === undefined ? {} : { giveUpAfterMs }) });
  closeAtExit(store);
  await store.reachable(choice.redis.reachWithinMs);
  return store;
}
