/**
 * The travel domain keeps the library version journals pinned before issue 30 (before
 * `book_transfer` bound its effects to the goal and counted its booking per run), the way it keeps
 * the travel@4 pack: a journal pinned to it replays and — a run hibernated waiting for a person —
 * resumes with the domain alone, in a store that holds no blob of it.
 *
 * - The kept version is byte for byte the library travel-v5 pinned (digest 7e848cef…), after
 *   today's, which new runs pin.
 * - A run pinned to it waits for a person (its third 35 EUR ride is over travel@5's 80 EUR this
 *   run); its library blob is removed from the store; a runtime of today's domain approves: the
 *   ride is booked under the old library's rules, the run completes, and replay on the domain alone
 *   gives its fingerprint. Before the domain kept it, approving threw PinMismatchError.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import type { Model, ModelRequest } from '../actors/model/model.js';
import { canonicalize } from '../journal/canonical.js';
import type { JournalRecord } from '../journal/records.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { MemoryStore } from '../stores/memory.js';
import { libraryDigest } from '../htn/library/digest.js';
import { createRuntime, Runtime } from '../runtime/index.js';
import { TRAVEL_STATE_FILE, travelDomain } from '../examples/travel/domain.js';
import { travelLibrary } from '../examples/travel/library.js';
import { TRAVEL_LIBRARY_BEFORE_BINDINGS_DIGEST, travelLibraryBeforeBindings } from '../examples/travel/library-before-bindings.js';
import { initialTravelState, readTravelState, seedTravelState } from '../examples/travel/index.js';

const root = mkdtempSync(join(tmpdir(), 'weft-travel-libraries-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const AS_OF = '2026-06-01T09:00:00Z';
const INTENT = 'Book me three taxis from Lisbon airport to my hotel';
const key = signingKeyFromSecret(new Uint8Array(32).fill(9));
type Body = Record<string, any>;

/** Names book_transfer for days 1, 2 and 3, authoring a 35 EUR ride for each; then says done. */
const threeRides: Model = {
  id: 'test:three-rides',
  params: {},
  async complete(request: ModelRequest) {
    if (request.purpose === 'author') {
      const [t, from, to, day] = request.goal!.args;
      return { text: JSON.stringify({ steps: [{ operator: 'quote_taxi', args: [t, from, to, day] }, { operator: 'book_taxi', args: [t, from, to, day, 35] }] }) };
    }
    if (request.epoch > 3) return { text: JSON.stringify({ done: true, summary: 'three rides booked' }) };
    return { text: JSON.stringify({ goal: { task: 'book_transfer', args: ['me', 'lisbon-airport', 'h-alfama', request.epoch, 120] } }) };
  },
};

const ofKind = (records: JournalRecord[], kind: string) => records.filter((r) => r.kind === kind);

describe('the travel library before the bindings', () => {
  test('is kept by the domain after today\'s, byte for byte the version travel-v5 pinned', () => {
    expect(libraryDigest(travelLibraryBeforeBindings)).toBe(TRAVEL_LIBRARY_BEFORE_BINDINGS_DIGEST);
    const blob = readFileSync(join(import.meta.dirname, 'fixtures', 'runtime', 'travel-v5', 'blobs', TRAVEL_LIBRARY_BEFORE_BINDINGS_DIGEST), 'utf8');
    expect(canonicalize(travelLibraryBeforeBindings as never)).toBe(canonicalize(JSON.parse(blob) as never));
    expect(travelDomain.libraries).toEqual([travelLibrary, travelLibraryBeforeBindings]);
    expect(libraryDigest(travelDomain.libraries[0]!)).not.toBe(TRAVEL_LIBRARY_BEFORE_BINDINGS_DIGEST);
    // What differs: book_transfer alone, without bindings and with its count per fragment.
    const transfer = travelLibraryBeforeBindings.tasks.find((t) => t.name === 'book_transfer')!;
    expect(transfer.constraints).toEqual([{ only: ['taxi.quote', 'taxi.book'] }, { count: 'taxi.book', atMost: 1 }, { sum: 'taxi.book', arg: 'amount', atMost: '?budget' }]);
    expect(travelLibraryBeforeBindings.tasks.filter((t) => t.name !== 'book_transfer')).toEqual(travelLibrary.tasks.filter((t) => t.name !== 'book_transfer'));
  });

  test('a run pinned to it, hibernated waiting for a person, resumes with the domain alone (no blob in the store): approved, the ride is booked and the run completes', async () => {
    const dir = join(root, 'ws');
    const store = new FileStore(dir);
    const stateDir = join(dir, 'state');
    const options = { tenant: 'old', seed: '3', asOf: AS_OF };
    const id = Runtime.defaultId(INTENT, options);
    seedTravelState(join(stateDir, id, TRAVEL_STATE_FILE), initialTravelState());
    const world = () => readTravelState(join(stateDir, id, TRAVEL_STATE_FILE));
    // Started when the old library was the one new runs pinned.
    const then = createRuntime({ store, domain: travelDomain, libraries: [travelLibraryBeforeBindings], stateDir, model: threeRides, signingKey: key, sleep: async () => undefined });
    const waiting = await (await then.start(INTENT, { ...options, id })).done;
    expect(waiting.status).toBe('awaiting_approval');
    let records = await store.read(id);
    expect((records[0] as JournalRecord<'invocation.pinned'>).body.pin.library).toBe(TRAVEL_LIBRARY_BEFORE_BINDINGS_DIGEST);
    // Its per-fragment count let the second ride through; the run-wide allowance stops the third.
    expect(records.at(-1)).toMatchObject({ kind: 'approval.requested', epoch: 3 });
    expect((world().transfers ?? []).map((r) => [r.day, r.status])).toEqual([[1, 'booked'], [2, 'booked']]);

    // The process stops; the store is moved without the library's blob.
    rmSync(join(dir, 'blobs', TRAVEL_LIBRARY_BEFORE_BINDINGS_DIGEST));
    const today = createRuntime({ store: new FileStore(dir), domain: travelDomain, stateDir, model: threeRides, signingKey: key, sleep: async () => undefined });
    const done = await (await today.approve(id, { decision: 'approved', by: 'ana' })).done;
    expect(done.status).toBe('completed');
    records = await store.read(id);
    expect(ofKind(records, 'approval.decided').map((r) => [r.epoch, (r.body as Body).decision, (r.body as Body).by])).toEqual([[3, 'approved', 'ana']]);
    expect(ofKind(records, 'step.dispatched').filter((r) => (r.body as Body).actuator === 'taxi.book').map((r) => [r.epoch, (r.body as Body).args.day, (r.body as Body).attempt])).toEqual([[1, 1, 1], [2, 2, 1], [3, 3, 1]]);
    expect(ofKind(records, 'epoch.derived').every((r) => (r.body as Body).library === TRAVEL_LIBRARY_BEFORE_BINDINGS_DIGEST)).toBe(true);
    expect((world().transfers ?? []).map((r) => [r.day, r.amount, r.status])).toEqual([[1, 35, 'booked'], [2, 35, 'booked'], [3, 35, 'booked']]);
    // Replay with the domain alone: a store that has nothing filed.
    const bare = createRuntime({ store: new MemoryStore(), domain: travelDomain, stateDir: join(root, 'bare'), signingKey: key });
    expect(await bare.replay({ records })).toMatchObject({ status: 'completed', fingerprint: done.fingerprint });
  });
});
