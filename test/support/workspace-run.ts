/**
 * A run made in the test's own process, in a workspace exactly as `weft run DOMAIN --dir D --json`
 * makes one: the same domain loader, the workspace's own key (made on first use), the CLI's
 * metadata beside the journal (so `weft resume|approve|inspect --domain` find the domain), the same
 * defaults (tenant `default`, seed `1`, the domain's intent and asOf) — and the same JSON line back.
 *
 * For the tests whose subject is something else (a viewer's page, `weft show`, `weft mine`): the
 * invocation they look at is a fixture, and a fixture costs a CLI start (0.3–0.5 s of CPU, several
 * seconds on a loaded machine) only where the run itself is what is tested. `weft run` keeps its own
 * end-to-end tests (cli.test.ts and the files that test its flags and output).
 *
 * It runs the compiled modules the command runs (dist/, imported by Node: ./dist.ts): a user domain
 * (test/support/strict-travel.ts, private-travel.ts) imports dist/, so the runtime that runs it must be
 * that copy of the library.
 */
import type { Actuator, ActuatorContext } from '../../dist/actors/actuator.js';
import { fromDist } from './dist.js';

/** The command's own modules, loaded once (./dist.ts). */
const modules = async () => {
  await fromDist('journal/sha256-node.js');
  await fromDist('journal/ed25519-node.js');
  return {
    ...(await fromDist<typeof import('../../dist/cli/domain-loader.js')>('cli/domain-loader.js')),
    ...(await fromDist<typeof import('../../dist/cli/workspace.js')>('cli/workspace.js')),
    ...(await fromDist<typeof import('../../dist/cli/open-invocation.js')>('cli/open-invocation.js')),
    ...(await fromDist<typeof import('../../dist/journal/store.js')>('journal/store.js')),
    ...(await fromDist<typeof import('../../dist/runtime/index.js')>('runtime/index.js')),
  };
};

/** What `weft run --json` prints, as one object. */
export interface RunLine {
  id: string;
  status: string;
  reason: string | null;
  journal: string;
  fingerprint: string | null;
  publicKey: string;
}

export interface WorkspaceRunOptions {
  /** The workspace (`--dir`). */
  dir: string;
  /** The intent (the positional after the domain); default the domain's. */
  intent?: string;
  tenant?: string;
  seed?: string;
  /** `--as-of`; default the domain's. */
  asOf?: string;
  /** `--hibernate`: rest at the first epoch boundary. */
  hibernate?: boolean;
  /** `--signing-key FILE` (else WEFT_SIGNING_KEY, else the workspace's own key, as the command chooses). */
  signingKey?: string;
  /**
   * Holds the run before its domain observes the world, until this settles: a run a test watches
   * while it is in flight (the viewer's live pages), released when the test has seen what it needs.
   */
  observeGate?: Promise<void>;
}

/** `weft run <domain> [intent] --dir D --json …` in this process (see the header). */
export async function runInWorkspace(domainSpec: string, options: WorkspaceRunOptions): Promise<RunLine> {
  const { loadDomain, openWorkspace, readInvocationMeta, writeInvocationMeta, journalFileOf, Runtime } = await modules();
  const loaded = await loadDomain(domainSpec);
  const { domain } = loaded;
  const intent = options.intent ?? domain.intent;
  const asOf = options.asOf ?? domain.asOf;
  if (intent === undefined || asOf === undefined) throw new Error(`runInWorkspace: domain ${domain.name} needs an intent and an asOf`);
  const start = { tenant: options.tenant ?? 'default', seed: options.seed ?? '1', asOf };
  const id = Runtime.defaultId(intent, start);
  const gate = options.observeGate;
  const wrapActuators = gate === undefined ? undefined : (actuators: Actuator[]) => actuators.map((a) => (a.name !== domain.observe ? a : { ...a, run: async (args: unknown, ctx: ActuatorContext) => (await gate, a.run.call(a, args as never, ctx)) }));
  const ws = await openWorkspace({ dir: options.dir, domain: loaded, ...(options.signingKey ? { signingKeyFile: options.signingKey } : {}), ...(wrapActuators ? { wrapActuators } : {}) });
  try {
    if (!readInvocationMeta(ws.dir, id)) writeInvocationMeta(ws.dir, id, { domain: ws.domainRef });
    const handle = await ws.runtime.start(intent, { ...start, id });
    if (options.hibernate) handle.hibernate();
    const result = await handle.done;
    return { id: result.id, status: result.status, reason: result.reason ?? null, journal: journalFileOf(ws.store, result.id)!, fingerprint: result.fingerprint ?? null, publicKey: ws.publicKeyFile };
  } finally {
    await ws.runtime.close();
  }
}

/**
 * `weft resume <id> --dir D --json` in this process: the invocation's workspace opened as the command
 * opens it (its recorded domain, its pinned model, the workspace's key), then resumed to its end.
 */
export async function resumeInWorkspace(id: string, options: { dir: string }): Promise<RunLine> {
  const { openWorkspaceFor, journalFileOf } = await modules();
  const ws = await openWorkspaceFor({ dir: options.dir, id, domain: undefined, model: { url: undefined, name: undefined } });
  try {
    const result = await (await ws.runtime.resume(id)).done;
    return { id: result.id, status: result.status, reason: result.reason ?? null, journal: journalFileOf(ws.store, result.id)!, fingerprint: result.fingerprint ?? null, publicKey: ws.publicKeyFile };
  } finally {
    await ws.runtime.close();
  }
}
