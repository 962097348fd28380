/**
 * The domain of an invocation that exists, found only in code this host has. Every store keeps,
 * beside the journal, the NAME of an invocation's domain (journal/store.ts, invocation metadata),
 * so a workspace that did not start it still finds its domain: as a built-in of that name, or
 * through `<dir>/domains.json`, this host's own map of domain names to modules. A name read from a
 * store is never imported as a path or package: whoever can write the store cannot make this
 * process import code. The order of the search is domainForInvocation's.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Pin } from '../journal/records.js';
import type { JournalStore } from '../journal/store.js';
import { FileStore } from '../stores/file.js';
import { builtinDomainForLibrary, loadBuiltinDomain } from '../examples/registry.js';
import { readLibraryBlob } from '../htn/library/stored.js';
import { DomainLoadError, domainFlag, loadDomain, loadDomainRef, type LoadedDomain } from './domain-loader.js';
import { readInvocationMeta, type InvocationMeta } from './invocation-meta.js';

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
  /** The name the store's metadata records (runtime/open.ts reads it once); default: read it now. */
  storedName: () => Promise<string | undefined> = async () => (await store.getMetadata(id).catch(() => undefined))?.domain,
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
  const named = await storedName();
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

