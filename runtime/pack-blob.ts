/**
 * A pinned policy pack read back from a store's blob area — where `start` files it by digest, as it
 * files the pinned library — so that resume, approve, serve and replay in any process run the
 * pinned rules with no file to hand. The bytes are proven to be the pack the pin names (its
 * canonical digest) before they are compiled, against the predicates this runtime registers.
 *
 * `pinnedPackProblem` says, as a pin mismatch, why a pack-pinned invocation cannot be continued
 * here: no blob, bytes that are not that pack, or a predicate it references that is not
 * registered. Nothing is written either way.
 */
import type { JournalStore } from '../journal/store.js';
import { compileRulePack, type PackPolicy } from '../policy/compile.js';
import { packDigest, parsePackPolicyId } from '../policy/digest.js';
import { PredicateMissingError, RulePackDigestError, RulePackError } from '../policy/errors.js';
import { parseRulePackText } from '../policy/parse.js';
import type { PredicateRegistry } from '../policy/predicates.js';
import type { RulePack } from '../policy/schema.js';
import type { PinMismatch } from './pin-check.js';

export type PinnedPack = { policy: PackPolicy } | { mismatch: PinMismatch };

/**
 * The policy pack the policy id `id` pins, read from the store's blob and checked against the id (its
 * name, version and digest); undefined when `id` names no pack. Not compiled: a reader that only
 * shows the pack (`weft policy explain`) needs no predicates.
 */
export async function readPinnedRulePack(store: Pick<JournalStore, 'getBlob'>, id: string): Promise<{ pack: RulePack } | { mismatch: PinMismatch } | undefined> {
  const parts = parsePackPolicyId(id);
  if (!parts) return undefined;
  const mismatch = (offered: string, fix: string) => ({ mismatch: { field: 'policy', pinned: id, offered, fix } });
  let bytes: Uint8Array | undefined;
  try {
    bytes = await store.getBlob(parts.digest);
  } catch (err) {
    return mismatch(`a damaged blob ${parts.digest}`, `${(err as Error).message}`);
  }
  if (!bytes) return mismatch('no such pack in the store', `the store has no blob ${parts.digest}: copy the blobs with the journal (blobs/${parts.digest}), or start runs with that pack in this store`);
  try {
    const pack = parseRulePackText(new TextDecoder().decode(bytes), `the store's blob ${parts.digest}`);
    const digest = packDigest(pack);
    if (digest !== parts.digest || pack.name !== parts.name || pack.version !== parts.version) throw new RulePackDigestError(id, `pack:${pack.name}@${pack.version}#${digest}`);
    return { pack };
  } catch (err) {
    if (err instanceof RulePackError || err instanceof RulePackDigestError) return mismatch('another pack under that digest', err.message);
    throw err;
  }
}

/** The pack the policy id `id` pins, from the store's blob, compiled against `predicates`; undefined when `id` names no pack. */
export async function readPinnedPack(store: Pick<JournalStore, 'getBlob'>, id: string, predicates: PredicateRegistry): Promise<PinnedPack | undefined> {
  const read = await readPinnedRulePack(store, id);
  if (!read || 'mismatch' in read) return read;
  try {
    return { policy: compileRulePack(read.pack, predicates) };
  } catch (err) {
    if (err instanceof PredicateMissingError) {
      return { mismatch: { field: 'policy.predicates', pinned: err.predicate, offered: err.available.join(', ') || 'none', fix: `register policy predicate ${err.predicate} (createRuntime({ policyPredicates }) or the domain's policyPredicates)` } };
    }
    throw err;
  }
}
