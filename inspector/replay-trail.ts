/**
 * An invocation's trail through its statechart, for the viewer (`GET /api/invocations/<id>/trail`):
 * its journal replayed through the real machine with no side effects — runtime/replay.ts
 * `replayJournal`, the path `weft replay` takes — recording, for each record seq k, the state the
 * machine is in once record k has been passed (and before record k+1 is), and every transition it
 * takes on the way (from → to, its event and guard, and the id machine-graph.ts gives its edge).
 *
 * A transition happens "after" the last record passed when it is taken: `states[k]` is the target
 * of the last transition after k or before, or the initial state. A replay that runs out of
 * journal (a run still going) or diverges keeps what it reached; the machine's move into
 * `suspended` on that error is the replay's, not the run's, and is not part of the trail. A
 * divergence is reported as the trail's error, never thrown.
 *
 * Replay needs the pinned library (the store's blob, or the domain's own), the policy and the
 * domain's evaluables and observe actuator: the domain the store's metadata names when it is the
 * one `weft inspect --domain D` loaded, or a built-in (examples/registry.ts); a domain the viewer
 * has not loaded gives "not replayed: domain not loaded", and the page falls back on the status.
 */
import type { InspectionEvent } from 'xstate';
import type { JournalRecord } from '../journal/records.js';
import type { JournalStore } from '../journal/store.js';
import { isWeftError } from '../journal/errors.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Library } from '../htn/library/schema.js';
import { allowAll, type AdmissionPolicy } from '../machines/policy.js';
import type { Domain } from '../runtime/domain.js';
import { readPinnedPack } from '../runtime/pack-blob.js';
import { predicateRegistry } from '../policy/predicates.js';
import { readLibraryBlob } from '../htn/library/stored.js';
import { replayJournal, type ReplayResult } from '../runtime/replay.js';
import { builtinDomainForLibrary, builtinDomainNames, loadBuiltinDomain } from '../examples/registry.js';
import { edgeId, eventName, guardName, transitionIndex } from './machine-edges.js';
import { invocationMachine } from '../machines/invocation-machine.js';

export interface TrailTransition {
  /** The seq of the last record passed when it was taken (0: before any record after the pin). */
  after: number;
  from: string;
  to: string;
  event: string;
  guard: string | null;
  /** The edge's id in machine-graph.ts's graph. */
  edge: string;
}

export type Trail =
  | {
      replayed: true;
      domain: string;
      /** Where replay stopped (ReplayResult's status), or `diverged` when it failed. */
      status: ReplayResult['status'] | 'diverged';
      error: { code: string; seq: number | null; message: string } | null;
      records: number;
      /** The seq of the last record replay passed. */
      passed: number;
      /** `states[k]`: the state once record k was passed; null past where replay got. */
      states: Array<string | null>;
      transitions: TrailTransition[];
    }
  | { replayed: false; reason: string; /** What would let the viewer replay it. */ hint?: string; records: number };

/** The domains a viewer can replay with: the one given with `--domain` (if any), and the built-ins. */
export interface TrailDomains {
  given?: Domain | undefined;
}

const INITIAL = (invocationMachine.root.config.initial as string | undefined) ?? 'parse';
const STATES = new Set(Object.keys(invocationMachine.root.states));

/** The domain to replay `id` with, or undefined (see the header). */
async function domainFor(store: JournalStore, id: string, library: Library | undefined, digest: string, domains: TrailDomains): Promise<Domain | undefined> {
  const named = (await store.getMetadata(id).catch(() => undefined))?.domain;
  const given = domains.given;
  if (named !== undefined) {
    if (given?.name === named) return given;
    return builtinDomainNames().includes(named) ? loadBuiltinDomain(named) : undefined;
  }
  // No name recorded (a runtime made without a domain): the one whose libraries hold the pinned one.
  const holds = (d: Domain) => d.libraries.some((l) => libraryDigest(l) === digest);
  if (given && holds(given)) return given;
  return library ? builtinDomainForLibrary(library.name) : undefined;
}

function policyOf(domain: Domain, id: string, pinnedPack?: AdmissionPolicy): AdmissionPolicy {
  const found = [domain.policy ?? allowAll, ...domain.policies, ...(pinnedPack ? [pinnedPack] : []), allowAll].find((p) => p.id === id);
  if (!found) throw new Error(`the invocation is pinned to policy ${id}, which domain ${domain.name} does not have`);
  return found;
}

/** Replay `records` (an invocation's journal) and record its trail with `domain`. */
export async function trailOfRecords(records: readonly JournalRecord[], domain: Domain, library: Library, pinnedPack?: AdmissionPolicy): Promise<Trail> {
  const transitions: TrailTransition[] = [];
  let passed = 0;
  let started = false;
  let status: ReplayResult['status'] | 'diverged';
  let error: { code: string; seq: number | null; message: string } | null = null;
  const inspect = (event: InspectionEvent) => {
    started = true;
    if (event.type !== '@xstate.microstep') return;
    for (const t of event._transitions) {
      const from = t.source.key;
      const to = t.target?.[0]?.key;
      if (to === undefined || !STATES.has(from) || !STATES.has(to) || t.source.parent?.parent !== undefined) continue;
      const name = eventName(t.eventType);
      transitions.push({ after: passed, from, to, event: name, guard: guardName(t.guard), edge: edgeId(from, name, transitionIndex(t)) });
    }
  };
  try {
    const result = await replayJournal(records, {
      loadLibrary: async () => library,
      policy: (id) => policyOf(domain, id, pinnedPack),
      observe: domain.observe,
      evaluables: domain.evaluables,
      inspect,
      onRecord: (record) => {
        passed = record.seq;
      },
    });
    status = result.status;
  } catch (err) {
    status = 'diverged';
    const seq = (err as { seq?: unknown }).seq;
    error = { code: isWeftError(err) ? err.code : 'replay.error', seq: typeof seq === 'number' ? seq : null, message: err instanceof Error ? err.message : String(err) };
  }
  // The move into `suspended` that a replay's own error causes (out of journal, or diverged) is not the run's.
  if (status === 'unfinished' || status === 'diverged') {
    while (transitions.length > 0 && transitions.at(-1)!.after === passed && transitions.at(-1)!.event === 'onError') transitions.pop();
  }
  const states: Array<string | null> = new Array<string | null>(records.length).fill(null);
  let current = INITIAL;
  let t = 0;
  const reached = started ? passed : -1; // a journal refused before the machine started reached nothing
  for (let k = 0; k <= reached && k < records.length; k++) {
    while (t < transitions.length && transitions[t]!.after <= k) current = transitions[t++]!.to;
    states[k] = current;
  }
  return { replayed: true, domain: domain.name, status, error, records: records.length, passed, states, transitions };
}

/** The trail of invocation `id` in `store` (see the header). */
export async function trailOf(store: JournalStore, id: string, domains: TrailDomains): Promise<Trail> {
  const records = await store.read(id);
  const first = records[0];
  if (first?.kind !== 'invocation.pinned') return { replayed: false, reason: 'not replayed: the journal does not start with its pin', records: records.length };
  const digest = (first as JournalRecord<'invocation.pinned'>).body.pin.library;
  let library: Library | undefined;
  try {
    library = await readLibraryBlob(store, digest);
  } catch (err) {
    return { replayed: false, reason: `not replayed: ${err instanceof Error ? err.message : String(err)}`, records: records.length };
  }
  const domain = await domainFor(store, id, library, digest, domains);
  if (!domain) {
    const named = (await store.getMetadata(id).catch(() => undefined))?.domain;
    const hint = `start weft inspect with --domain <the module of ${named === undefined ? 'its domain' : `domain ${named}`}> to replay it`;
    return { replayed: false, reason: 'not replayed: domain not loaded', hint, records: records.length };
  }
  library ??= domain.libraries.find((l) => libraryDigest(l) === digest);
  if (!library) return { replayed: false, reason: `not replayed: the pinned library ${digest} is neither in the store nor in domain ${domain.name}`, records: records.length };
  // A policy pack the run pinned is read back from the store (runtime/pack-blob.ts), as a resume does.
  const pinned = await readPinnedPack(store, (first as JournalRecord<'invocation.pinned'>).body.pin.policy, predicateRegistry(domain.policyPredicates)).catch(() => undefined);
  if (pinned && 'mismatch' in pinned) return { replayed: false, reason: `not replayed: ${pinned.mismatch.fix}`, records: records.length };
  return trailOfRecords(records, domain, library, pinned?.policy);
}

const CACHE_SIZE = 64;
const cache = new Map<string, Promise<Trail>>();

/**
 * `trailOf`, kept per journal version (id, length, last hash): a page that asks again for an
 * unchanged journal (a redraw, another tab) does not replay it again.
 */
export async function cachedTrailOf(store: JournalStore, id: string, domains: TrailDomains): Promise<Trail> {
  const tail = await store.tail(id);
  const key = `${store.name}\u0000${domains.given?.name ?? ''}\u0000${id}\u0000${tail?.seq ?? -1}\u0000${tail?.hash ?? ''}`;
  let hit = cache.get(key);
  if (!hit) {
    hit = trailOf(store, id, domains);
    cache.set(key, hit);
    hit.catch(() => cache.delete(key));
    while (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
  }
  return hit;
}
