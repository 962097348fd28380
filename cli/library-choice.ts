/**
 * `weft run --library <file | digest>`: the library version a new run pins instead of the domain's
 * own — a mined version (`weft mine`) above all. A file is a library's JSON (validated: a file that
 * is not a library is a usage error, nothing is written); a digest is one of the domain's versions
 * or one the store holds by digest (`weft mine --apply`). The runtime files the version in the store
 * by digest when the run starts (runtime.ts start), so replay, resume, serve and workers anywhere
 * find it. The library must be one of the domain's (same name): a domain's policy, evaluables and
 * actuators are written for its libraries.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { JournalStore } from '../journal/store.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Library } from '../htn/library/schema.js';
import { validateLibrary } from '../htn/library/validate.js';
import type { Domain } from '../runtime/domain.js';
import { readLibraryBlob } from '../runtime/library-blob.js';
import { UsageError } from './args.js';

const DIGEST = /^[0-9a-f]{64}$/;

export async function libraryChoice(spec: string, domain: Domain, store: JournalStore): Promise<Library> {
  let library: Library | undefined;
  if (DIGEST.test(spec) && !existsSync(spec)) {
    library = domain.libraries.find((l) => libraryDigest(l) === spec) ?? (await readLibraryBlob(store, spec));
    if (!library) throw new UsageError(`--library ${spec}: no library with that digest in domain ${domain.name} or ${store.name} (pass the library's file, or file it with weft mine --apply)`);
  } else {
    if (!existsSync(spec)) throw new UsageError(`--library ${spec}: no such file (pass a library file written by weft mine, or a digest)`);
    try {
      library = validateLibrary(JSON.parse(readFileSync(spec, 'utf8')));
    } catch (err) {
      throw new UsageError(`--library ${spec}: not a method library (${(err as Error).message.split('\n')[0]})`);
    }
  }
  const names = [...new Set(domain.libraries.map((l) => l.name))];
  if (!names.includes(library.name)) throw new UsageError(`--library ${spec}: it is library ${library.name}, and domain ${domain.name} runs ${names.join(', ')}`);
  return library;
}
