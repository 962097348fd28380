/**
 * A Weft workspace on disk — the embedded default: `<dir>/` is a FileStore (journals, snapshots,
 * blobs), `<dir>/keys/` holds the signing key (created on first use, 0600), `<dir>/state/<domain>/`
 * the domain's local state, and `<dir>/meta/<id>.json` what the CLI remembers about how an
 * invocation was started — the domain module and the model endpoint. That metadata is a
 * convenience for `resume`/`approve`/`replay`, never part of the hashed pin: the pin decides what
 * must match, the metadata only where to find it.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Actuator } from '../actors/actuator.js';
import type { Model } from '../actors/model/model.js';
import { OpenAiModel } from '../actors/model/openai.js';
import { assertInvocationId } from '../journal/stores/checks.js';
import { FileStore } from '../journal/stores/file.js';
import type { JournalRecord, Pin } from '../journal/records.js';
import type { JournalStore } from '../journal/store.js';
import { closeAtExit, type StoreChoice } from './store-choice.js';
import { signingKeyFromSecret, type SigningKey } from '../journal/seal.js';
import { builtinDomainForLibrary } from '../examples/registry.js';
import type { Domain } from '../runtime/domain.js';
import { readLibraryBlob } from '../runtime/library-blob.js';
import { createRuntime, type Runtime } from '../runtime/runtime.js';
import type { InvocationLimits } from '../machines/context.js';
import { DomainLoadError, domainFlag, loadDomain, loadDomainRef, type DomainRef, type LoadedDomain } from './domain-loader.js';
import { loadSigningKey, PUBLIC_FILE, SECRET_FILE, writeKeyPair } from '../runtime/keys.js';

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
 * The signing key: `--signing-key FILE` (`file`), else `WEFT_SIGNING_KEY` (a key file made by
 * `weft keygen`) — what several processes sharing a Redis store use so that one key seals every
 * journal — else the workspace's own, generated (and written 0600) the first time it is needed
 * unless `generate` is false (resuming an invocation that pinned another key: a fresh key could
 * only be refused). `generated` says a key was made now.
 */
export async function workspaceKey(dir: string, options: { file?: string | undefined; generate?: boolean } = {}): Promise<{ key: SigningKey | undefined; publicKeyFile: string; generated: boolean }> {
  const given = options.file ?? (process.env.WEFT_SIGNING_KEY || undefined);
  if (given) {
    const file = path.resolve(given);
    const publicKeyFile = file.endsWith('.key') ? `${file.slice(0, -'.key'.length)}.pub` : `${file}.pub`;
    return { key: await loadSigningKey(file), publicKeyFile, generated: false };
  }
  const keysDir = path.join(dir, 'keys');
  const secretFile = path.join(keysDir, SECRET_FILE);
  const publicKeyFile = path.join(keysDir, PUBLIC_FILE);
  let generated = false;
  if (!existsSync(secretFile)) {
    if (options.generate === false) return { key: undefined, publicKeyFile, generated };
    await writeKeyPair(keysDir, signingKeyFromSecret(randomBytes(32)));
    generated = true;
  }
  return { key: await loadSigningKey(secretFile), publicKeyFile, generated };
}

/** What a command says on stderr when it made a key that journals in Redis — which other hosts resume — are sealed by. */
export function generatedKeyNotice(keysDir: string): string {
  const file = path.join(keysDir, SECRET_FILE);
  return `weft: generated a signing key in ${keysDir} (no --signing-key or WEFT_SIGNING_KEY was given); the invocations sealed with it in Redis pin its key id, ` +
    `so any other host that resumes or approves them must be given it: copy ${file} there and pass --signing-key FILE (or set WEFT_SIGNING_KEY)\n`;
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
  /** Make the workspace's key when it has none (default true). */
  generateKey?: boolean | undefined;
}

/** Where a domain keeps its local state in a workspace (handed to its factories as `stateDir`). */
export function domainStateDir(workspace: string, domain: { name: string }): string {
  return path.join(workspace, 'state', domain.name);
}

export async function openWorkspace(options: OpenOptions): Promise<Workspace> {
  const dir = workspaceDir(options.dir);
  const { domain, ref } = options.domain;
  const store = options.store ?? new FileStore(dir);
  const { key, publicKeyFile, generated } = await workspaceKey(dir, { file: options.signingKeyFile, generate: options.generateKey ?? true });
  // In Redis mode another host may resume what this one seals: a key made here must not go unnoticed.
  if (generated && options.redis) process.stderr.write(generatedKeyNotice(path.join(dir, 'keys')));
  const stateDir = domainStateDir(dir, domain);
  const redis = options.redis ? { url: options.redis.url, prefix: options.redis.prefix, giveUpAfterMs: options.redis.giveUpAfterMs } : undefined;
  const actuators = domain.actuators({ stateDir, ...(redis ? { redis } : {}) });
  const runtime = createRuntime({
    store,
    ...(redis ? { redis: redis.url, redisPrefix: redis.prefix, redisGiveUpMs: redis.giveUpAfterMs } : {}),
    ...(options.dispatch ? { dispatch: options.dispatch } : {}),
    ...(options.queue ? { queue: options.queue } : {}),
    domain,
    stateDir,
    actuators: options.wrapActuators ? options.wrapActuators(actuators) : actuators,
    ...(options.model ? { model: options.model } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    // WEFT_LEASE_TTL_MS: how soon another process may take over a run whose runtime died on another host (tests).
    ...(Number(process.env.WEFT_LEASE_TTL_MS) > 0 ? { leaseTtlMs: Number(process.env.WEFT_LEASE_TTL_MS) } : {}),
    ...(key ? { signingKey: key } : {}),
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
export async function pinnedRecord(store: JournalStore, id: string): Promise<JournalRecord<'invocation.pinned'>> {
  const first = (await store.read(id, 0, 1))[0];
  if (!first || first.kind !== 'invocation.pinned') {
    // The CLI adds the location flags of the store it used to `weft ls` (cli/hints.ts).
    throw new DomainLoadError(`no invocation ${id} in ${store.name} (weft ls lists them)`, 'invocation.not_found');
  }
  return first as JournalRecord<'invocation.pinned'>;
}

/**
 * The domain of an existing invocation: `--domain` if given, else the module recorded when it
 * started, else the built-in whose library it pinned — otherwise an error saying which `--domain`
 * to pass.
 */
export async function domainForInvocation(
  store: JournalStore,
  id: string,
  pin: Pin,
  flag: string | undefined,
  meta: InvocationMeta | undefined = store instanceof FileStore ? readInvocationMeta(store.dir, id) : undefined,
): Promise<LoadedDomain & { note?: string }> {
  if (flag !== undefined) return loadDomain(flag);
  if (meta?.domain) {
    try {
      return await loadDomainRef(meta.domain);
    } catch (err) {
      throw new DomainLoadError(`${id} was started with domain ${domainFlag(meta.domain)}, which cannot be loaded now (${(err as Error).message}); pass --domain <name | path | package>`, 'domain.load_failed');
    }
  }
  const guessed = await domainForLibrary((await readLibraryBlob(store, pin.library))?.name, pin.library, id);
  const note = `the domain was found as the built-in ${guessed.domain.name} by the pinned library's name (this workspace has no record of ${id}'s domain); if it was started with another module, pass --domain <path | package>`;
  return { ...guessed, note };
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

