/**
 * In-process stand-ins for the `weft` commands whose outcome a CLI test only reads, beside
 * ./workspace-run.ts (whose `runInWorkspace` this extends):
 * - `runAs`: `weft run DOMAIN [INTENT] --dir D --json` with the flags those tests pass to make a
 *   fixture — `--id`, `--seed`, `--as-of`, `--hibernate`, `--policy FILE` (a rule pack, read as the
 *   command reads it: cli/policy-choice.ts), `--library FILE|DIGEST` (cli/library-choice.ts) — the
 *   same domain loader, workspace key, metadata and JSON line as the command;
 * - `inWorkspace`: a workspace opened as the commands open it, for the runtime's own `cancel`,
 *   `replay`, `verify` and `list` on a run the test made;
 * - `exportAs`: what `weft export ID --dir D` prints (the bundle, by the command's own exportBundle,
 *   one JSON line);
 * - `verifyExit`: the exit code `weft verify JOURNAL [--public-key FILE | --no-signature]` gives a
 *   journal file, computed by the command's own functions (cli/commands/verify.ts) without its
 *   process.
 *
 * Each costs no process: a `weft` start is 0.3–0.9 s of CPU. The commands themselves keep their
 * end-to-end tests (the files that use this say where). It runs the compiled modules (dist/, through
 * ./dist.ts), as ./workspace-run.ts does, so a user domain that imports dist/ shares one library.
 */
import { fromDist } from './dist.js';
import type { RunLine } from './workspace-run.js';

const modules = async () => {
  await fromDist('journal/sha256-node.js');
  await fromDist('journal/ed25519-node.js');
  return {
    ...(await fromDist<typeof import('../../dist/cli/domain-loader.js')>('cli/domain-loader.js')),
    ...(await fromDist<typeof import('../../dist/cli/workspace.js')>('cli/workspace.js')),
    ...(await fromDist<typeof import('../../dist/cli/policy-choice.js')>('cli/policy-choice.js')),
    ...(await fromDist<typeof import('../../dist/cli/library-choice.js')>('cli/library-choice.js')),
    ...(await fromDist<typeof import('../../dist/journal/store.js')>('journal/store.js')),
    ...(await fromDist<typeof import('../../dist/journal/stores/file.js')>('journal/stores/file.js')),
    ...(await fromDist<typeof import('../../dist/runtime/index.js')>('runtime/index.js')),
  };
};

export interface RunAsOptions {
  dir: string;
  intent?: string;
  id?: string;
  tenant?: string;
  seed?: string;
  asOf?: string;
  hibernate?: boolean;
  /** `--policy FILE`: a rule pack pinned instead of the domain's policy. */
  policy?: string;
  /** `--library FILE|DIGEST`: a version of the domain's library to pin. */
  library?: string;
}

/** `weft run <domain> [intent] --dir D --json …` in this process (see the header). */
export async function runAs(domainSpec: string, options: RunAsOptions): Promise<RunLine> {
  const m = await modules();
  const loaded = await m.loadDomain(domainSpec);
  const { domain } = loaded;
  const intent = options.intent ?? domain.intent;
  const asOf = options.asOf ?? domain.asOf;
  if (intent === undefined || asOf === undefined) throw new Error(`runAs: domain ${domain.name} needs an intent and an asOf`);
  const policy = options.policy === undefined ? undefined : await m.readPolicyFile(options.policy, domain.policyPredicates);
  const start = { tenant: options.tenant ?? 'default', seed: options.seed ?? '1', asOf };
  const id = options.id ?? m.Runtime.defaultId(intent, start);
  const store = new m.FileStore(m.workspaceDir(options.dir));
  const library = options.library === undefined ? undefined : await m.libraryChoice(options.library, domain, store);
  const ws = await m.openWorkspace({ dir: options.dir, store, domain: loaded, ...(policy ? { policy } : {}), ...(library ? { library } : {}) });
  try {
    if (!m.readInvocationMeta(ws.dir, id)) m.writeInvocationMeta(ws.dir, id, { domain: ws.domainRef });
    const handle = await ws.runtime.start(intent, { ...start, id });
    if (options.hibernate) handle.hibernate();
    const result = await handle.done;
    return { id: result.id, status: result.status, reason: result.reason ?? null, journal: m.journalFileOf(ws.store, result.id)!, fingerprint: result.fingerprint ?? null, publicKey: ws.publicKeyFile };
  } finally {
    await ws.runtime.close();
  }
}

type Workspace = Awaited<ReturnType<typeof import('../../dist/cli/workspace.js').openWorkspace>>;

/** The workspace `dir` opened as the commands open it (with `domainSpec`, default travel), handed to `use`, then closed. */
export async function inWorkspace<T>(dir: string, use: (ws: Workspace) => Promise<T>, domainSpec = 'travel'): Promise<T> {
  const m = await modules();
  const ws = await m.openWorkspace({ dir, domain: await m.loadDomain(domainSpec), generateKey: false });
  try {
    return await use(ws);
  } finally {
    await ws.runtime.close();
  }
}

/** The exit code of `weft verify <journal file> [--public-key FILE | --no-signature]`, by the command's own check (see the header). */
export async function verifyExit(journal: string, how: { publicKey: string } | { noSignature: true }): Promise<number> {
  const verify = await fromDist<typeof import('../../dist/cli/commands/verify.js')>('cli/commands/verify.js');
  const { loadPublicKey } = await fromDist<typeof import('../../dist/runtime/keys.js')>('runtime/keys.js');
  await fromDist('journal/sha256-node.js');
  await fromDist('journal/ed25519-node.js');
  if ('publicKey' in how) {
    const key = await loadPublicKey(how.publicKey);
    return verify.verifyExitCode(await verify.verifyJournalFile(journal, key), { signature: { by: 'file', file: how.publicKey, key }, input: 'journal' });
  }
  return verify.verifyExitCode(await verify.verifyJournalFile(journal, undefined), { signature: { by: 'none', skipped: true }, input: 'journal' });
}

/** What `weft export <id> --dir D` prints for a run in a workspace on disk: its bundle, by the command's own function, as one line (see the header). */
export async function exportAs(dir: string, id: string): Promise<string> {
  const { exportBundle } = await fromDist<typeof import('../../dist/cli/commands/export.js')>('cli/commands/export.js');
  await fromDist('journal/sha256-node.js');
  return JSON.stringify(await exportBundle(dir, id)) + '\n';
}
