/**
 * Opening the workspace of an invocation that exists — what `resume` and `approve` share: find its
 * domain (`--domain`, else the module recorded at start, else the built-in whose library it pinned)
 * and its model (the pinned one; see model-choice.ts), then open a runtime over them. The runtime
 * compares all of it with the pin, and its signing key with the key in force, before it writes
 * anything; a workspace without a key makes none for an invocation whose store names its key.
 */
import { FileStore } from '../stores/file.js';
import type { CrashHooks } from './faults.js';
import { openStore, type StoreChoice } from './store-choice.js';
import type { StatelyTap } from '../inspector/stately/runtime-tap.js';
import { chooseDispatch, type DispatchFlag } from './dispatch-choice.js';
import { modelForPin, type ModelFlags } from './model-choice.js';
import { domainForInvocation, openWorkspace, pinnedRecord, readInvocationMeta, workspaceDir, type Workspace } from './workspace.js';

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
  const pinned = await pinnedRecord(store, options.id, options.tenant);
  const pin = pinned.body.pin;
  // The workspace remembers how an invocation it started was run; another machine's may not.
  const meta = readInvocationMeta(dir, options.id);
  const loaded = await domainForInvocation(store, options.id, pin, options.domain, { meta, dir });
  const model = modelForPin(options.id, pin, options.model, meta);
  const faults = options.faults;
  const dispatch = options.store ? await chooseDispatch(options.dispatch ?? 'auto', options.store, options.queue, loaded) : undefined;
  // An invocation whose store metadata names its sealing key is sealed by that key (runtime/seal-key.ts):
  // a key made here now could only be refused — unless re-keying. The runtime then refuses, naming the key.
  const recordedKey = (await store.getMetadata(options.id))?.sealKey;
  const generateKey = recordedKey === undefined || options.rekey === true;
  const ws = await openWorkspace({ ...(options.stately ? { inspect: options.stately.inspect } : {}), dir, store, redis: options.store?.redis, dispatch, queue: options.queue, refusalWaitMs: options.refusalWaitMs, domain: loaded, model, signingKeyFile: options.signingKeyFile, generateKey, recordedKey, wrapActuators: faults ? (a) => faults.wrapActuators(a, loaded.domain.observe) : undefined });
  faults?.wrapStore(ws.store);
  return ws;
}
