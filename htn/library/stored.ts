/**
 * A pinned method library read back from a store's blob area — where `start` files it by digest —
 * for resuming and replaying an invocation whose library this runtime's domain no longer has, and
 * for the CLI to learn a pinned library's name. The bytes are proven to be the library they are
 * filed under before they are used. Here, beside the library's schema and digest, so that every
 * floor that reads one back (the worker, the runtime, the viewer, the CLI) imports it downward.
 */
import { WeftError } from '../../journal/errors.js';
import type { JournalStore } from '../../journal/store.js';
import { libraryDigest } from './digest.js';
import type { Library } from './schema.js';
import { validateLibrary } from './validate.js';

/** The library filed under `digest`, or undefined when the store has no such blob. */
export async function readLibraryBlob(store: Pick<JournalStore, 'getBlob'>, digest: string): Promise<Library | undefined> {
  const bytes = await store.getBlob(digest);
  if (!bytes) return undefined;
  const library = validateLibrary(JSON.parse(new TextDecoder().decode(bytes)));
  if (libraryDigest(library) !== digest) throw new WeftError('runtime.blob_mismatch', 'permanent', `the store's blob ${digest} does not hold the library it is filed under`);
  return library;
}
