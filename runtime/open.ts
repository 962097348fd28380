/**
 * Opening an invocation that exists — the one place a command that continues one (resume, approve,
 * cancel, fork, the viewer's approver) reads what it needs before a runtime is built for it:
 *
 * - its pin: the genesis record, of this tenant (another tenant's is as unknown as a missing one);
 * - the store's metadata beside the journal (journal/store.ts): the domain's NAME, the library
 *   digest, the id of the key recorded as sealing it;
 * - from those, through what the caller resolves, the domain that defines its code and the model
 *   the pin names — then the key id recorded, which a runtime's signing key is held to
 *   (key-in-force.ts; the journal's last re-key wins over it there).
 *
 * The store is read once here — the pin and the metadata — and in that order: a refusal (unknown
 * id, a domain that cannot be found, a model endpoint not given, damaged metadata) comes before
 * anything else is opened. This floor knows neither the built-in domains nor files on a host (key
 * files, a workspace's `domains.json`): the caller passes how a domain is found and how a model is
 * rebuilt (cli/open-invocation.ts), and this module decides what is read, once, and when.
 */
import type { Model } from '../actors/model/model.js';
import type { JournalRecord, Pin } from '../journal/records.js';
import type { InvocationMetadata, JournalStore } from '../journal/store.js';
import { InvocationNotFoundError } from './errors.js';

/** What the store holds about an invocation before a runtime is built for it. */
export interface StoredInvocation {
  id: string;
  pinned: JournalRecord<'invocation.pinned'>;
  pin: Pin;
  /** The domain's name the store's metadata records (undefined: none recorded, or the metadata cannot be read). */
  domainName: string | undefined;
}

/** What `openInvocation` resolves: the stored invocation, its domain and model, and the key recorded as sealing it. */
export interface OpenedInvocation<D> extends StoredInvocation {
  domain: D;
  model: Model | undefined;
  /** The key id the store's metadata records as sealing it (undefined: none; any key may seal it). */
  recordedKey: string | undefined;
}

/** How the caller finds what this floor cannot: the domain (by flag, local records, or the name stored) and the model for the pin. */
export interface OpenResolvers<D> {
  domain(stored: StoredInvocation): Promise<D>;
  model(stored: StoredInvocation, domain: D): Model | undefined;
}

/** The invocation's pin record; with `tenant`, only if it is that tenant's (another tenant's is as unknown as a missing one). */
export async function pinnedRecord(store: JournalStore, id: string, tenant?: string): Promise<JournalRecord<'invocation.pinned'>> {
  const first = (await store.read(id, 0, 1))[0];
  if (!first || first.kind !== 'invocation.pinned' || (tenant !== undefined && (first as JournalRecord<'invocation.pinned'>).body.tenant !== tenant)) {
    // The CLI adds the location flags of the store it used to `weft ls` (cli/hints.ts).
    throw new InvocationNotFoundError(id, store.name, tenant);
  }
  return first as JournalRecord<'invocation.pinned'>;
}

/**
 * Open invocation `id` of `store` (see the header): its pin and metadata read once, then its domain,
 * its model and the key recorded. Throws, having written nothing.
 */
export async function openInvocation<D>(store: JournalStore, id: string, resolve: OpenResolvers<D>, tenant?: string): Promise<OpenedInvocation<D>> {
  const pinned = await pinnedRecord(store, id, tenant);
  // Read once; a damaged record is refused only where the key is needed (after the domain and model, as before).
  const metadata: { value?: InvocationMetadata | undefined; error?: unknown } = await store.getMetadata(id).then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  const stored: StoredInvocation = { id, pinned, pin: pinned.body.pin, domainName: metadata.value?.domain };
  const domain = await resolve.domain(stored);
  const model = resolve.model(stored, domain);
  if ('error' in metadata) throw metadata.error;
  return { ...stored, domain, model, recordedKey: metadata.value?.sealKey };
}
