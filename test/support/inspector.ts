/**
 * The viewer served in the test's own process: what `weft inspect` builds from its flags (the store,
 * the approver, the trusted key, the domain, the tokens), served by createInspectorServer on a free
 * loopback port — without the process. The viewer's browser tests use it wherever what they check is
 * the viewer (its pages, routes, sockets, access and redaction), not the command's start-up; the
 * command itself (its flags, its printed URL, its priority) keeps real `weft inspect` children
 * (./inspect-viewer.ts startViewer) in inspect-viewer, inspect-security and inspect-nice.
 *
 * `serveInspector(args)` takes the same arguments as startViewer (`--dir`, `--redis`,
 * `--redis-prefix`, `--public-key`, `--token`, `--tenant-token T=…`, `--domain`, `--read-only`) and returns the same
 * Viewer (without a child). A decision made in a page with `--domain` is carried on by a runtime in
 * this process, as the command's would be in its own.
 *
 * It runs the compiled modules the command runs (dist/, imported by Node: ./dist.ts): the viewer
 * serves the page's scripts from beside its own module, and a user domain (./strict-travel.ts)
 * imports dist/ — one copy of the library in play, as in `weft inspect`.
 */
import type { AddressInfo } from 'node:net';
import type { JournalStore } from '../../dist/journal/store.js';
import { commandModules } from './commands-here.js';
import { fromDist } from './dist.js';
import type { Viewer } from './inspect-viewer.js';

/** A viewer as a test uses it, served by a `weft inspect` child or in this process. */
export type ServedViewer = Omit<Viewer, 'child' | 'output'>;

/** A viewer served in this process (see the header); `stop()` closes its server and its store. */
export async function serveInspector(args: string[]): Promise<ServedViewer> {
  // The command's own modules (./commands-here.ts, ./dist.ts), loaded once.
  const { FileStore, loadPublicKey, loadDomain, storeChoice, workspaceDir } = await commandModules();
  const { createInspectorServer } = await fromDist<typeof import('../../dist/inspector/server.js')>('inspector/server.js');
  const { RedisStore } = await fromDist<typeof import('../../dist/stores/redis.js')>('stores/redis.js');
  const { locationOf } = await fromDist<typeof import('../../dist/cli/hints.js')>('cli/hints.js');
  const { inspectApprover } = await fromDist<typeof import('../../dist/cli/inspect-approver.js')>('cli/inspect-approver.js');
  const { inspectActions } = await fromDist<typeof import('../../dist/cli/inspect-actions.js')>('cli/inspect-actions.js');
  const flags: Record<string, string | undefined> = {};
  const tenantTokens: Array<{ tenant: string; token: string }> = [];
  // `--read-only` is the one flag with no value.
  const readOnly = args.includes('--read-only');
  args = args.filter((a) => a !== '--read-only');
  for (let i = 0; i < args.length; i += 2) {
    const [name, value] = [args[i]!, args[i + 1]];
    if (value === undefined || !name.startsWith('--')) throw new Error(`serveInspector: ${name} needs a value`);
    if (name === '--tenant-token') {
      const eq = value.indexOf('=');
      tenantTokens.push({ tenant: value.slice(0, eq), token: value.slice(eq + 1) });
    } else flags[name.slice(2)] = value;
  }
  const known = new Set(['dir', 'redis', 'redis-prefix', 'public-key', 'token', 'domain']);
  for (const name of Object.keys(flags)) if (!known.has(name)) throw new Error(`serveInspector: --${name} is not one it takes (use startViewer for the command's own flags)`);

  const choice = storeChoice(workspaceDir(flags.dir), flags, { longLived: true });
  const keyFile = flags['public-key'];
  const trustedKey = keyFile === undefined ? undefined : { key: await loadPublicKey(keyFile), label: `${keyFile} (given with --public-key)` };
  const domain = flags.domain === undefined ? undefined : (await loadDomain(flags.domain)).domain;
  let store: JournalStore;
  if (choice.redis) {
    const { url, prefix, giveUpAfterMs } = choice.redis;
    const redisStore = new RedisStore({ redis: url, prefix, ...(giveUpAfterMs === undefined ? {} : { giveUpAfterMs }) });
    await redisStore.reachable(choice.redis.reachWithinMs);
    store = redisStore;
  } else store = new FileStore(choice.dir);
  const approver = await inspectApprover(store, choice, flags.domain);
  const actions = inspectActions(store, choice, { domain: flags.domain, readOnly, writable: approver.writable });
  const server = createInspectorServer({
    store,
    approver,
    actions,
    ...(domain ? { domain } : {}),
    location: locationOf(choice).store,
    loopback: true,
    ...(trustedKey ? { trustedKey } : {}),
    ...(flags.token === undefined ? {} : { token: flags.token }),
    ...(tenantTokens.length ? { tenantTokens } : {}),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/${flags.token === undefined ? '' : `?token=${encodeURIComponent(flags.token)}`}`,
    origin,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (store instanceof RedisStore) await store.close();
    },
  };
}
