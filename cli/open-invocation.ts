/**
 * Opening the workspace of an invocation that exists — what resume, approve, cancel, fork and the
 * viewer's approver share: runtime/open.ts reads its pin and the store's metadata once and resolves,
 * through what is this host's, its domain (`--domain`, else the module recorded at start, else the
 * name the store recorded, else the built-in whose library it pinned: domain-map.ts) and its model
 * (the pinned one; see model-choice.ts); then a runtime is opened over them. The runtime
 * compares all of it with the pin, and its signing key with the key in force, before it writes
 * anything; a workspace without a key makes none for an invocation whose store names its key.
 */
import { FileStore } from '../stores/file.js';
import type { CrashHooks } from './faults.js';
import { openStore, type StoreChoice } from './store-choice.js';
import type { StatelyTap } from '../inspector/stately/runtime-tap.js';
import { chooseDispatch, type DispatchFlag } from './dispatch-choice.js';
import { modelForPin, type ModelFlags } from './model-choice.js';
import { openWorkspace, workspaceDir, type Workspace } from './workspace.js';
import { readInvocationMeta } from './invocation-meta.js';
import { domainForInvocation } from './domain-map.js';
import { openInvocation } from '../runtime/open.js';

export interface InvocationOpenOptions {
  dir: string | undefined;
  id: string;
  domain: string | undefined;
  model: ModelFlags;
  faults?: CrashHooks;
  /** The store the flags chose (default: the workspace's FileStore). */
  store?: StoreChoice;
  /** `--dispatch` / `--queue` (Redis mode). */
  dispatch?: DispatchFlag;
  queue?: string | undefined;
  /** `--refusal-wait-ms` (dispatch-choice.ts refusalWaitFlag). */
  refusalWaitMs?: number | undefined;
  /** `--signing-key FILE`. */
  signingKeyFile?: string | undefined;
  /** `--rekey`: the command may seal with its own key (made if the workspace has none). */
  rekey?: boolean | undefined;
  /** `--stately`: the relay's tap (cli/stately-choice.ts): its observer, and its view of durable appends. */
  stately?: StatelyTap | undefined;
  /** `--tenant T`: act only on that tenant's invocation (another's is refused as unknown, before anything else of it is read). */
  tenant?: string | undefined;
}

export async function openWorkspaceFor(options: InvocationOpenOptions): Promise<Workspace> {
  const dir = workspaceDir(options.dir);
  const opened = options.store ? await openStore(options.store) : new FileStore(dir);
  const store = options.stately ? options.stately.tapStore(opened) : opened;
  // The workspace remembers how an invocation it started was run; another machine's may not.
  const meta = readInvocationMeta(dir, options.id);
  // The pin and the store's metadata, read once: the domain, the model and the key recorded follow from them.
  const invocation = await openInvocation(store, options.id, {
    domain: (stored) => domainForInvocation(store, stored.id, stored.pin, options.domain, { meta, dir }, async () => stored.domainName),
    model: (stored) => modelForPin(stored.id, stored.pin, options.model, meta),
  }, options.tenant);
  const loaded = invocation.domain;
  const faults = options.faults;
  const dispatch = options.store ? await chooseDispatch(options.dispatch ?? 'auto', options.store, options.queue, loaded) : undefined;
  // An invocation whose store metadata names its sealing key is sealed by that key (runtime/seal-key.ts):
  // a key made here now could only be refused — unless re-keying. The runtime then refuses, naming the key.
  const recordedKey = invocation.recordedKey;
  const generateKey = recordedKey === undefined || options.rekey === true;
  const ws = await openWorkspace({ ...(options.stately ? { inspect: options.stately.inspect } : {}), dir, store, redis: options.store?.redis, dispatch, queue: options.queue, refusalWaitMs: options.refusalWaitMs, domain: loaded, model: invocation.model, signingKeyFile: options.signingKeyFile, generateKey, recordedKey, opened: { id: invocation.id, pinned: invocation.pinned }, wrapActuators: faults ? (a) => faults.wrapActuators(a, loaded.domain.observe) : undefined });
  faults?.wrapStore(ws.store);
  return ws;
}
