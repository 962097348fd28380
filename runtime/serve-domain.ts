/**
 * Which invocations a `serve` of one domain takes (serve.ts): those whose store metadata names the
 * domain, or — for a journal from before the store kept metadata — whose pinned library is one of
 * the domain's (by digest, or by the stored library's name). With no domain, every invocation.
 *
 * An answer never changes, so it is remembered per invocation — but only while the invocation is
 * open: serve hands over each listing (`keepOnly`), and what ended is forgotten, so a serve that runs
 * for months remembers no more than what is open. A store that cannot answer now is no answer: the
 * invocation is asked about again at the next poll, and nothing is said (the listing reports an
 * outage; an error here may concern another domain's invocation, which this serve must not name).
 */
import { libraryDigest } from '../htn/library/digest.js';
import type { Library } from '../htn/library/schema.js';
import type { JournalRecord } from '../journal/records.js';
import type { JournalStore } from '../journal/store.js';
import { readLibraryBlob } from '../htn/library/stored.js';

export interface DomainFilter {
  /** Whether invocation `id` belongs to the domain; false, and asked again later, when the store cannot say now. */
  belongs(id: string): Promise<boolean>;
  /** Forget the answers about every invocation but these (the open ones, just listed). */
  keepOnly(ids: Iterable<string>): void;
  /** How many answers are remembered. */
  readonly remembered: number;
}

export function domainFilter(store: Pick<JournalStore, 'getMetadata' | 'read' | 'getBlob'>, domain: { name: string; libraries: readonly Library[] } | undefined): DomainFilter {
  if (!domain) return { belongs: async () => true, keepOnly: () => undefined, remembered: 0 };
  const digests = new Set(domain.libraries.map((l) => libraryDigest(l)));
  const names = new Set(domain.libraries.map((l) => l.name));
  const known = new Map<string, boolean>();
  const ask = async (id: string): Promise<boolean | undefined> => {
    const meta = await store.getMetadata(id);
    if (meta?.domain !== undefined) return meta.domain === domain.name;
    const first = (await store.read(id, 0, 1))[0] as JournalRecord<'invocation.pinned'> | undefined;
    const digest = meta?.library ?? (first?.kind === 'invocation.pinned' ? first.body.pin.library : undefined);
    if (digest === undefined) return undefined; // no pin yet: asked again at the next poll
    return digests.has(digest) || names.has((await readLibraryBlob(store, digest).catch(() => undefined))?.name ?? '');
  };
  return {
    async belongs(id) {
      const cached = known.get(id);
      if (cached !== undefined) return cached;
      const answer = await ask(id).catch(() => undefined);
      if (answer === undefined) return false;
      known.set(id, answer);
      return answer;
    },
    keepOnly(ids) {
      const keep = new Set(ids);
      for (const id of [...known.keys()]) if (!keep.has(id)) known.delete(id);
    },
    get remembered() {
      return known.size;
    },
  };
}
