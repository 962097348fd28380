/**
 * `--library <…>`: which method-library version a command means — one module for `weft run` and
 * `weft mine`.
 *
 * - a digest (64 hex, not a file of that name): one of the domain's versions, one a bundle carries
 *   (mine), or one a store holds by digest (`weft mine --apply`, or filed when a run started);
 * - a file: a library's JSON, validated (a file that is not a library is a usage error, nothing is
 *   written); a name ending in .json is always a file;
 * - a name (mine only): a library of `--domain`, or of the built-in domain that has it.
 *
 * `weft run --library <file | digest>` (libraryChoice): the version a new run pins instead of the
 * domain's own — a mined version above all. The runtime files it in the store by digest when the
 * run starts (runtime/start.ts), so replay, resume, serve and workers anywhere find it. It must be
 * one of the domain's (same name): a domain's policy, evaluables and actuators are written for its
 * libraries.
 *
 * `weft mine --library <name | digest | file> [--domain D]` (miningLibraryChoice): the version to
 * extend, and the domain whose evaluable predicates the planner needs (--domain, else the built-in
 * domain that has a library of that name).
 */
import { existsSync, readFileSync } from 'node:fs';
import type { JournalStore } from '../journal/store.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Library } from '../htn/library/schema.js';
import { validateLibrary } from '../htn/library/validate.js';
import { builtinDomainForLibrary } from '../examples/registry.js';
import type { Domain } from '../runtime/domain.js';
import { readLibraryBlob } from '../htn/library/stored.js';
import { UsageError } from './args.js';
import { loadDomain } from './domain-loader.js';

const DIGEST = /^[0-9a-f]{64}$/;

/** Where a digest or a name is looked up. */
interface Lookup {
  domain: Domain | undefined;
  stores: readonly JournalStore[];
  bundled?: ReadonlyMap<string, Library>;
  /** What to say when a digest is found nowhere, and when a spec is neither a digest nor a file (undefined: names are allowed). */
  missingDigest: string;
  missingFile: string | undefined;
}

function fromFile(spec: string): Library {
  try {
    return validateLibrary(JSON.parse(readFileSync(spec, 'utf8')));
  } catch (err) {
    throw new UsageError(`--library ${spec}: not a method library (${(err as Error).message.split('\n')[0]})`);
  }
}

/** The library a digest or a file names; `undefined` for a name (when names are allowed). */
async function byDigestOrFile(spec: string, lookup: Lookup): Promise<Library | undefined> {
  if (DIGEST.test(spec) && !existsSync(spec)) {
    let library = lookup.domain?.libraries.find((l) => libraryDigest(l) === spec) ?? lookup.bundled?.get(spec);
    for (const store of lookup.stores) library ??= await readLibraryBlob(store, spec);
    if (!library) throw new UsageError(`--library ${spec}: no library with that digest in ${lookup.missingDigest}`);
    return library;
  }
  if (existsSync(spec)) return fromFile(spec);
  if (lookup.missingFile !== undefined || /\.json$/.test(spec)) throw new UsageError(`--library ${spec}: no such file${lookup.missingFile !== undefined ? ` (${lookup.missingFile})` : ''}`);
  return undefined;
}

/** `weft run --library <file | digest>`: the version to pin, one of `domain`'s libraries by name. */
export async function libraryChoice(spec: string, domain: Domain, store: JournalStore): Promise<Library> {
  const library = (await byDigestOrFile(spec, {
    domain,
    stores: [store],
    missingDigest: `domain ${domain.name} or ${store.name} (pass the library's file, or file it with weft mine --apply)`,
    missingFile: 'pass a library file written by weft mine, or a digest',
  }))!;
  const names = [...new Set(domain.libraries.map((l) => l.name))];
  if (!names.includes(library.name)) throw new UsageError(`--library ${spec}: it is library ${library.name}, and domain ${domain.name} runs ${names.join(', ')}`);
  return library;
}

/** `weft mine --library <name | digest | file> [--domain D]`: the version to extend and the domain that implements its evaluables (if any is known). */
export async function miningLibraryChoice(
  spec: string,
  domainSpec: string | undefined,
  stores: readonly JournalStore[],
  bundled: ReadonlyMap<string, Library>,
): Promise<{ library: Library; domain: Domain | undefined }> {
  const domain = domainSpec ? (await loadDomain(domainSpec)).domain : undefined;
  const where = `${domain ? `domain ${domain.name}, ` : ''}the bundles or the stores read (pass a file, or --dir/--redis of the store that has it)`;
  const library = await byDigestOrFile(spec, { domain, stores, bundled, missingDigest: where, missingFile: undefined });
  if (library) return { library, domain: domain ?? (await builtinDomainForLibrary(library.name)) };
  const owner = domain ?? (await builtinDomainForLibrary(spec));
  const named = owner?.libraries.find((l) => l.name === spec);
  if (!named) throw new UsageError(`--library ${spec}: no library of that name ${domain ? `in domain ${domain.name}` : 'in a built-in domain'} (pass --domain D, a digest or a file)`);
  return { library: named, domain: owner };
}
