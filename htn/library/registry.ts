/**
 * The library registry: every version ever registered, kept by digest, so an invocation that
 * pinned a digest re-loads exactly that version on replay — even after newer versions exist.
 *
 * Invariants: an entry is never replaced or removed; `register` of an equal library is idempotent
 * (same digest); `get` of an unknown digest fails closed with `UnknownLibraryError`. Stored data is
 * a deep copy frozen at registration (or, for a library already frozen valid — a builder's — the
 * object itself), so a caller mutating its object later cannot change a pinned version behind the digest.
 */
import { libraryDigest } from './digest.js';
import type { Library } from './schema.js';
import { freezeValidLibrary, isFrozenValidLibrary, validateLibrary } from './validate.js';

export class UnknownLibraryError extends Error {
  override readonly name = 'UnknownLibraryError';
  constructor(readonly digest: string) {
    super(`no method library with digest ${digest} is registered (register that exact version before replaying)`);
  }
}

export interface LibraryVersion {
  readonly digest: string;
  readonly name: string;
  readonly library: Library;
}

export class LibraryRegistry {
  private readonly byDigest = new Map<string, LibraryVersion>();
  /** Digests in registration order (a deterministic history per name). */
  private readonly order: string[] = [];

  /** Validates, stores and returns the version; registering the same data twice is a no-op. */
  register(data: unknown): LibraryVersion {
    // A library already frozen valid is stored as it is; any other is copied first (its owner may change it).
    const library = isFrozenValidLibrary(data) ? data : freezeValidLibrary(structuredClone(validateLibrary(data)));
    const digest = libraryDigest(library);
    const existing = this.byDigest.get(digest);
    if (existing) return existing;
    const version: LibraryVersion = Object.freeze({ digest, name: library.name, library });
    this.byDigest.set(digest, version);
    this.order.push(digest);
    return version;
  }

  has(digest: string): boolean {
    return this.byDigest.has(digest);
  }

  /** The exact version pinned by `digest`; throws `UnknownLibraryError` if absent. */
  get(digest: string): LibraryVersion {
    const v = this.byDigest.get(digest);
    if (!v) throw new UnknownLibraryError(digest);
    return v;
  }

  /** Every version of library `name`, oldest first. */
  versions(name: string): LibraryVersion[] {
    return this.order.map((d) => this.byDigest.get(d)!).filter((v) => v.name === name);
  }

  /** The most recently registered version of `name`, if any. */
  latest(name: string): LibraryVersion | undefined {
    const all = this.versions(name);
    return all[all.length - 1];
  }
}
