/**
 * A Weft workspace on disk — the embedded default: `<dir>/` is a FileStore (journals, snapshots,
 * blobs), `<dir>/keys/` holds the signing key (created on first use, 0600), `<dir>/state/<domain>/`
 * the domain's local state, and `<dir>/meta/<id>.json` what the CLI remembers about how an
 * invocation was started — the domain module and the model endpoint. That metadata is a
 * convenience for `resume`/`approve`/`replay`, never part of the hashed pin: the pin decides what
 * must match, the metadata only where to find it.
 *
 * Every store also keeps, beside the journal, the NAME of an invocation's domain (journal/store.ts,
 * invocation metadata), so a workspace that did not start it still finds its domain: as a built-in
 * of that name, or through `<dir>/domains.json`, this host's own map of domain names to modules. A
 * name read from a store is never imported as a path or package (domainForInvocation).
 */
import { homedir } from 'node:os';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Actuator } from '../actors/actuator.js';
import type { Model } from '../actors/model/model.js';
import { OpenAiModel } from '../actors/model/openai.js';
import { assertInvocationId } from '../stores/checks.js';
import { FileStore } from '../stores/file.js';
import type { JournalRecord, Pin } from '../journal/records.js';
import type { JournalStore } from '../journal/store.js';
import type { StoreChoice } from './store-choice.js';
import { closeAtExit } from './closing.js';
import { workerHint } from './dispatch-choice.js';
import type { SigningKey } from '../journal/seal.js';
import { builtinDomainForLibrary, loadBuiltinDomain } from '../examples/registry.js';
import type { Domain } from '../runtime/domain.js';
import type { Library } from '../htn/library/schema.js';
import { readLibraryBlob } from '../htn/library/stored.js';
import type { Runtime, RuntimeOptions } from '../runtime/runtime.js';
import type { InvocationLimits } from '../machines/context.js';
import type { AdmissionPolicy } from '../machines/policy.js';
import { DomainLoadError, domainFlag, loadDomain, loadDomainRef, type DomainRef, type LoadedDomain } from './domain-loader.js';
import { ensureKeyPair, loadSigningKey, PUBLIC_FILE, SECRET_FILE } from '../runtime/keys.js';

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

/** What the CLI remembers about an invocation it started (workspace metadata, unhashed). */
export interface InvocationMeta {
  domain: DomainRef;
  /** The OpenAI-compatible endpoint the invocation started with, if any (endpoints are not pinned). */
  modelUrl?: string;
}

/**
 * Where a user's own signing key lives: `$WEFT_HOME/keys`, else `$XDG_CONFIG_HOME/weft/keys`, else
 * `~/.config/weft/keys`. In the Redis mode the store is not a folder, so a key kept in the folder a
 * command ran from (`./.weft/keys`) would make a resume from another folder seal with another key;
 * the user's key is the same wherever they run weft on this host.
 */
export function userKeysDir(): string {
  const home = process.env.WEFT_HOME || path.join(process.env.XDG_CONFIG_HOME || path.join(homedir(), '.config'), 'weft');
  return path.join(path.resolve(home), 'keys');
}

export interface KeyChoice {
  key: SigningKey | undefined;
  publicKeyFile: string;
  /** The folder the key is in, and whether it was made now. */
  keysDir: string;
  generated: boolean;
}

/**
 * The signing key: `--signing-key FILE` (`file`), else `WEFT_SIGNING_KEY` (a key file made by
 * `weft keygen`) — what several hosts sharing a Redis store use so that one key seals every
 * journal — else a key made on first use (written 0600): with a workspace on disk, the
 * workspace's own (`<dir>/keys`: the key travels with the journals); with Redis, the user's
 * (`userKeysDir()`). `recorded`: the key id the store records for the invocation being resumed —
 * a key of the workspace or the user's that has it is chosen (invocations started before keys
 * moved to the user's folder). `generate: false` makes no key (resuming an invocation whose store
 * records its key: a fresh key could only be refused). `generated` says a key was made now.
 */
export async function workspaceKey(dir: string, options: { file?: string | undefined; generate?: boolean; redis?: boolean; recorded?: string | undefined } = {}): Promise<KeyChoice> {
  const given = options.file ?? (process.env.WEFT_SIGNING_KEY || undefined);
  if (given) {
    const file = path.resolve(given);
    const publicKeyFile = file.endsWith('.key') ? `${file.slice(0, -'.key'.length)}.pub` : `${file}.pub`;
    return { key: await loadSigningKey(file), publicKeyFile, keysDir: path.dirname(file), generated: false };
  }
  const workspaceKeys = path.join(dir, 'keys');
  const ownKeys = options.redis ? userKeysDir() : workspaceKeys;
  if (options.recorded !== undefined) {
    for (const keysDir of options.redis ? [ownKeys, workspaceKeys] : [ownKeys]) {
      const secretFile = path.join(keysDir, SECRET_FILE);
      if (!existsSync(secretFile)) continue;
      const key = await loadSigningKey(secretFile);
      if (key.keyId === options.recorded) return { key, publicKeyFile: path.join(keysDir, PUBLIC_FILE), keysDir, generated: false };
    }
  }
  if (options.generate === false) {
    const secretFile = path.join(ownKeys, SECRET_FILE);
    // The runtime refuses a key other than the recorded one, naming both: hand it the key there is.
    const key = existsSync(secretFile) ? await loadSigningKey(secretFile) : undefined;
    return { key, publicKeyFile: path.join(ownKeys, PUBLIC_FILE), keysDir: ownKeys, generated: false };
  }
  const { key, publicFile, generated } = await ensureKeyPair(ownKeys);
  return { key, publicKeyFile: publicFile, keysDir: ownKeys, generated };
}

/** What a command says on stderr when it made the key that journals in Redis — which other hosts may resume — are sealed by. */
export function generatedKeyNotice(keysDir: string): string {
  const file = path.join(keysDir, SECRET_FILE);
  return `weft: generated your signing key in ${keysDir} (no --signing-key or WEFT_SIGNING_KEY was given); it seals the invocations you start in Redis, ` +
    `and the store records its key id, so another host that resumes or approves them must be given it: copy ${file} there and pass --signing-key FILE (or set WEFT_SIGNING_KEY)\n`;
}

export function workspaceDir(dirOption: string | undefined): string {
  return path.resolve(dirOption ?? DEFAULT_DIR);
}

/** A chat model at an OpenAI-compatible endpoint; the key from WEFT_MODEL_KEY or OPENAI_API_KEY. */
export function endpointModel(baseUrl: string, model: string, params: { temperature?: number } = {}): Model {
  const apiKey = process.env.WEFT_MODEL_KEY ?? process.env.OPENAI_API_KEY;
  return new OpenAiModel({ baseUrl, model, ...(apiKey ? { apiKey } : {}), ...(params.temperature === undefined ? {} : { temperature: params.temperature }) });
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
  /** A policy new runs pin instead of the domain's (`weft run --policy FILE`: a rule pack); the domain's stay for the others. */
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
    ...(options.refusalWaitMs === undefined ? {} : { refusalWaitMs: options.refusalWaitMs }),
  });
  closeAtExit(runtime);
  return { dir, store, domain, domainRef: ref, runtime, publicKeyFile, ...(options.domain.note ? { domainNote: options.domain.note } : {}) };
}

// ── invocation metadata ─────────────────────────────────────────────────────────────────────

/** The id is checked like the store checks it, so it can never name a path outside `meta/`. */
function metaFile(dir: string, id: string): string {
  assertInvocationId(id);
  return path.join(dir, 'meta', `${id}.json`);
}

export function writeInvocationMeta(dir: string, id: string, meta: InvocationMeta): void {
  const file = metaFile(dir, id);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, JSON.stringify(meta) + '\n');
  renameSync(`${file}.tmp`, file);
}

export function readInvocationMeta(dir: string, id: string): InvocationMeta | undefined {
  const file = metaFile(dir, id);
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as InvocationMeta;
  } catch {
    return undefined;
  }
}

/** The pinned record of an invocation in a workspace, or a one-line error. */
/** The invocation's pin record; with `tenant`, only if it is that tenant's (another tenant's is as unknown as a missing one). */
export async function pinnedRecord(store: JournalStore, id: string, tenant?: string): Promise<JournalRecord<'invocation.pinned'>> {
  const first = (await store.read(id, 0, 1))[0];
  if (!first || first.kind !== 'invocation.pinned' || (tenant !== undefined && (first as JournalRecord<'invocation.pinned'>).body.tenant !== tenant)) {
    // The CLI adds the location flags of the store it used to `weft ls` (cli/hints.ts).
    throw new DomainLoadError(`no invocation ${id}${tenant === undefined ? '' : ` of tenant ${JSON.stringify(tenant)}`} in ${store.name} (weft ls lists them)`, 'invocation.not_found');
  }
  return first as JournalRecord<'invocation.pinned'>;
}

/** What this host knows locally about an invocation's domain: the workspace's meta file, and the workspace whose `domains.json` maps names to modules. */
export interface LocalKnowledge {
  meta?: InvocationMeta | undefined;
  dir?: string | undefined;
}

/**
 * The domain of an existing invocation, in every mode:
 * 1. `--domain`, if given;
 * 2. else the module this workspace recorded when it started it (its local meta file, which may
 *    hold a path: it is this host's own);
 * 3. else the domain NAME the store's metadata holds, resolved only to code this host has — a
 *    built-in of that name, or the module `<workspace>/domains.json` maps it to. Never a module path
 *    read from the store: whoever can write to the store cannot make this process import code;
 * 4. else (a journal from before the store kept metadata) the built-in whose library it pinned.
 * Otherwise an error saying which `--domain` to pass.
 */
export async function domainForInvocation(
  store: JournalStore,
  id: string,
  pin: Pin,
  flag: string | undefined,
  local: LocalKnowledge = store instanceof FileStore ? { meta: readInvocationMeta(store.dir, id), dir: store.dir } : {},
): Promise<LoadedDomain & { note?: string }> {
  if (flag !== undefined) return loadDomain(flag);
  const { meta } = local;
  if (meta?.domain) {
    try {
      return await loadDomainRef(meta.domain);
    } catch (err) {
      throw new DomainLoadError(`${id} was started with domain ${domainFlag(meta.domain)}, which cannot be loaded now (${(err as Error).message}); pass --domain <name | path | package>`, 'domain.load_failed');
    }
  }
  const named = (await store.getMetadata(id).catch(() => undefined))?.domain;
  if (named !== undefined) return domainByName(named, id, local.dir);
  const guessed = await domainForLibrary((await readLibraryBlob(store, pin.library))?.name, pin.library, id);
  const note = `the domain was found as the built-in ${guessed.domain.name} by the pinned library's name (this workspace has no record of ${id}'s domain); if it was started with another module, pass --domain <path | package>`;
  return { ...guessed, note };
}

/** The local mapping of domain names to modules: `<workspace>/domains.json`, `{ "<name>": "<path | package>" }` (paths from the workspace folder). */
export const DOMAIN_MAP_FILE = 'domains.json';

/**
 * A domain by the name a store recorded: a built-in, or what this workspace's domains.json maps it
 * to — nothing else (see domainForInvocation). The loaded domain must carry that name.
 */
export async function domainByName(name: string, id: string, dir: string | undefined): Promise<LoadedDomain> {
  const builtin = await loadBuiltinDomain(name);
  if (builtin) return { domain: builtin, ref: { builtin: name } };
  const mapFile = dir === undefined ? undefined : path.join(dir, DOMAIN_MAP_FILE);
  const map = mapFile === undefined ? {} : readDomainMap(mapFile);
  // Own keys only: a name from the store such as `constructor` is no member of Object.prototype here.
  const spec = Object.hasOwn(map, name) ? map[name] : undefined;
  const where = mapFile ?? `<workspace>/${DOMAIN_MAP_FILE}`;
  if (spec === undefined) {
    throw new DomainLoadError(`${id} belongs to domain ${name}, which is not a built-in and not mapped in ${where}: pass --domain <path | package> of domain ${name}, or map it there ({ "${name}": "./path/to/domain.js" })`);
  }
  const loaded = await loadDomain(spec, dir);
  if (loaded.domain.name !== name) throw new DomainLoadError(`${where} maps domain ${name} to ${spec}, which defines domain ${loaded.domain.name}: fix the mapping, or pass --domain`, 'domain.not_a_domain');
  return loaded;
}

/** The name → module map of a workspace ({} when there is none); a file that is not such a map is a one-line error. */
function readDomainMap(file: string): Record<string, string> {
  if (!existsSync(file)) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new DomainLoadError(`${file} is not JSON (${(err as Error).message}): it maps domain names to modules, { "<name>": "<path | package>" }`, 'domain.load_failed');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Object.values(parsed).every((v) => typeof v === 'string')) {
    throw new DomainLoadError(`${file} must map domain names to modules, { "<name>": "<path | package>" }`, 'domain.load_failed');
  }
  return Object.fromEntries(Object.entries(parsed as Record<string, string>));
}

/** The built-in domain for a pinned library name, or an error saying which `--domain` to pass. */
export async function domainForLibrary(libraryName: string | undefined, digest: string, id: string): Promise<LoadedDomain> {
  const domain = libraryName === undefined ? undefined : await builtinDomainForLibrary(libraryName);
  if (domain) return { domain, ref: { builtin: domain.name } };
  throw new DomainLoadError(
    `${id} pinned library ${libraryName ?? '(not in this store)'} ${digest}, which no built-in domain has, and this workspace did not record the module it started with: ` +
      `pass --domain <path | package> of the domain that defines it`,
  );
}

