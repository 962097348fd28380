/**
 * Opening a Weft workspace: the runtime a command runs with. The embedded default is a folder —
 * `<dir>/` is a FileStore (journals, snapshots, blobs), `<dir>/keys/` the signing key
 * (key-files.ts), `<dir>/state/<domain>/` the domain's local state, `<dir>/meta/<id>.json` what the
 * CLI remembers of an invocation it started (invocation-meta.ts), `<dir>/domains.json` this host's
 * map of domain names to modules (domain-map.ts). With Redis (store-choice.ts) the store is not the
 * folder, but the folder still holds the rest.
 *
 * openWorkspace builds the runtime from what the command chose: the store, the domain, the key
 * file, the dispatch. Opening an invocation that exists from its pin is open-invocation.ts.
 */
import path from 'node:path';
import type { Actuator } from '../actors/actuator.js';
import type { Model } from '../actors/model/model.js';
import { FileStore } from '../stores/file.js';
import type { JournalStore } from '../journal/store.js';
import type { StoreChoice } from './store-choice.js';
import { closeAtExit } from './closing.js';
import { workerHint } from './hints.js';
import type { Domain } from '../runtime/domain.js';
import type { Library } from '../htn/library/schema.js';
import type { Runtime, RuntimeOptions } from '../runtime/runtime.js';
import type { InvocationLimits } from '../machines/context.js';
import type { AdmissionPolicy } from '../machines/policy.js';
import type { DomainRef, LoadedDomain } from './domain-loader.js';
import { generatedKeyNotice, workspaceKey } from './key-files.js';

export interface Workspace {
  dir: string;
  store: JournalStore;
  domain: Domain;
  domainRef: DomainRef;
  runtime: Runtime;
  publicKeyFile: string;
  /** Set when the domain was guessed (the built-in with the pinned library's name): refusals add it. */
  domainNote?: string;
}

export const DEFAULT_DIR = '.weft';

export function workspaceDir(dirOption: string | undefined): string {
  return path.resolve(dirOption ?? DEFAULT_DIR);
}

export interface OpenOptions {
  dir?: string | undefined;
  /** The store (from store-choice.ts): default the workspace's FileStore. */
  store?: JournalStore | undefined;
  /** The Redis the store lives in, handed to the domain (DomainContext.redis) for its shared state. */
  redis?: StoreChoice['redis'];
  /** Where world effects run in the Redis mode (default BullMQ workers). */
  dispatch?: 'in-process' | 'bullmq' | undefined;
  queue?: string | undefined;
  domain: LoadedDomain & { note?: string };
  /** Replaces the domain's own model. */
  model?: Model | undefined;
  /** Wraps the domain's actuators (crash injection in tests). */
  wrapActuators?: ((actuators: Actuator[]) => Actuator[]) | undefined;
  /** Limits a new invocation pins (`weft run --model-timeout-ms / --model-attempts`). */
  limits?: Partial<InvocationLimits> | undefined;
  /** `--signing-key FILE` (signing-key-choice.ts); default WEFT_SIGNING_KEY, then the workspace's key. */
  signingKeyFile?: string | undefined;
  /** Make a key when there is none (default true). */
  generateKey?: boolean | undefined;
  /** The key id the store records for the invocation being resumed (workspaceKey picks a key that has it). */
  recordedKey?: string | undefined;
  /** An XState inspection observer for the runtime's runs (`--stately`: cli/stately-choice.ts). */
  inspect?: RuntimeOptions['inspect'];
  /** A library version to run with before the domain's own (`weft run --library`): new runs pin it. */
  library?: Library | undefined;
  /** `--refusal-wait-ms` / WEFT_REFUSAL_WAIT_MS: how long a step workers refuse waits for a capable one (dispatch-choice.ts refusalWaitFlag). */
  refusalWaitMs?: number | undefined;
  /** Scope the runtime to one tenant (`weft serve --tenant T`): it lists, resumes and seals only that tenant's invocations. */
  tenant?: string | undefined;
  /** An invocation runtime/open.ts opened: the runtime does not read its pin again. */
  opened?: RuntimeOptions['opened'];
  /** A policy new runs pin instead of the domain's (`weft run --policy FILE`: a policy pack); the domain's stay for the others. */
  policy?: AdmissionPolicy | undefined;
}

/** Where a domain keeps its local state in a workspace (handed to its factories as `stateDir`). */
export function domainStateDir(workspace: string, domain: { name: string }): string {
  return path.join(workspace, 'state', domain.name);
}

export async function openWorkspace(options: OpenOptions): Promise<Workspace> {
  const dir = workspaceDir(options.dir);
  const { domain, ref } = options.domain;
  const store = options.store ?? new FileStore(dir);
  const { key, publicKeyFile, keysDir, generated } = await workspaceKey(dir, { file: options.signingKeyFile, generate: options.generateKey ?? true, redis: options.redis !== undefined, recorded: options.recordedKey });
  // In Redis mode another host may resume what this one seals: a key made here must not go unnoticed.
  if (generated && options.redis) process.stderr.write(generatedKeyNotice(keysDir));
  const stateDir = domainStateDir(dir, domain);
  const redis = options.redis ? { url: options.redis.url, prefix: options.redis.prefix, giveUpAfterMs: options.redis.giveUpAfterMs } : undefined;
  const actuators = domain.actuators({ stateDir, ...(redis ? { redis } : {}) });
  // The runtime (machines, planner, policy, XState) is loaded by the commands that run one, not by
  // those that only read a workspace (ls, show, export…), which import this module too.
  const { createRuntime } = await import('../runtime/runtime.js');
  const runtime = createRuntime({
    store,
    ...(redis ? { redis: redis.url, redisPrefix: redis.prefix, redisGiveUpMs: redis.giveUpAfterMs } : {}),
    ...(options.dispatch ? { dispatch: options.dispatch } : {}),
    ...(options.queue ? { queue: options.queue } : {}),
    ...(options.redis ? { workerHint: workerHint({ dir, redis: options.redis }, options.queue, options.domain) } : {}),
    domain,
    ...(options.library ? { libraries: [options.library, ...domain.libraries] } : {}),
    ...(options.policy ? { policy: options.policy, policies: [...(domain.policy ? [domain.policy] : []), ...domain.policies] } : {}),
    stateDir,
    actuators: options.wrapActuators ? options.wrapActuators(actuators) : actuators,
    ...(options.model ? { model: options.model } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    // WEFT_LEASE_TTL_MS: how soon another process may take over a run whose runtime died on another host (tests).
    ...(Number(process.env.WEFT_LEASE_TTL_MS) > 0 ? { leaseTtlMs: Number(process.env.WEFT_LEASE_TTL_MS) } : {}),
    ...(key ? { signingKey: key } : {}),
    ...(options.inspect ? { inspect: options.inspect } : {}),
    ...(options.tenant === undefined ? {} : { tenant: options.tenant }),
    ...(options.opened ? { opened: options.opened } : {}),
    ...(options.refusalWaitMs === undefined ? {} : { refusalWaitMs: options.refusalWaitMs }),
  });
  closeAtExit(runtime);
  return { dir, store, domain, domainRef: ref, runtime, publicKeyFile, ...(options.domain.note ? { domainNote: options.domain.note } : {}) };
}
