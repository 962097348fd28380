/**
 * Mined methods keep the binding (issue 30): a method mined from a gap-path run is checked against
 * its task's constraints — the bindings of an effect's args to the goal's above all — on the plan it
 * derives, before it is accepted.
 *
 * A run pinned to the travel library before the bindings authored the Madrid ride for a Lisbon
 * goal, in a world whose only fare was Madrid's, and it completed. Its fragment generalises (the
 * airport, hotel and fare come from the observed fare) and its method re-derives it — so on that
 * library it is accepted; on today's library, which binds `taxi.quote` and `taxi.book` to the goal,
 * the plan it derives breaks the binding: refused, `breaks-constraints`, with the reason, and the
 * library stays as it was. Lisbon's own ride is still mined.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import type { Model } from '../actors/model/model.js';
import type { JournalRecord } from '../journal/records.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Library } from '../htn/library/schema.js';
import { createRuntime, Runtime, type RuntimeOptions } from '../runtime/index.js';
import { TRAVEL_STATE_FILE, travelDomain } from '../examples/travel/domain.js';
import { initialTravelState, seedTravelState, travelTranscript, type TravelState } from '../examples/travel/index.js';
import { travelEvaluables, travelLibrary } from '../examples/travel/library.js';
import { TRAVEL_TRANSFER_INTENTS, TravelScriptedModel } from '../examples/travel/transfer-script.js';
import { derivedEpochsOf, gapSourcesOf, mine } from '../mining/index.js';

const root = mkdtempSync(join(tmpdir(), 'weft-binding-mining-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const AS_OF = '2026-06-01T09:00:00Z';
const planning = { evaluables: travelEvaluables() };
type Body = Record<string, unknown>;

/** The travel library before book_transfer bound its quote and booking to the goal (issue 30). */
const unbound: Library = {
  ...travelLibrary,
  tasks: travelLibrary.tasks.map((t) => (t.name !== 'book_transfer' ? t : { ...t, constraints: t.constraints!.filter((c) => !('bind' in c)) })),
};

const store = new FileStore(join(root, 'store'));
const stateDir = join(root, 'state');
let seed = 0;

async function run(options: { model?: Model; library?: Library; world?: (w: TravelState) => void }) {
  const runtime = createRuntime({
    store,
    domain: travelDomain,
    stateDir,
    signingKey: signingKeyFromSecret(new Uint8Array(32).fill(9)),
    sleep: async () => undefined,
    ...(options.library ? { libraries: [options.library, travelLibrary] } : {}),
    ...(options.model ? { model: options.model } : {}),
  } as RuntimeOptions);
  const start = { tenant: 'mining', seed: String(++seed), asOf: AS_OF };
  const id = Runtime.defaultId(TRAVEL_TRANSFER_INTENTS.lisbon, start);
  const world = initialTravelState();
  options.world?.(world);
  seedTravelState(join(stateDir, id, TRAVEL_STATE_FILE), world);
  const result = await (await runtime.start(TRAVEL_TRANSFER_INTENTS.lisbon, { ...start, id })).done;
  return { id, result, records: await store.read(id) };
}

/** Authors the Madrid ride whatever the goal asks. */
function madridModel(): Model {
  const inner = new TravelScriptedModel(travelTranscript);
  return {
    id: inner.id,
    params: inner.params,
    async complete(request) {
      if (request.purpose !== 'author') return inner.complete(request);
      const [t, , , day] = request.goal!.args;
      return { text: JSON.stringify({ steps: [{ operator: 'quote_taxi', args: [t, 'madrid-airport', 'h-prado', day] }, { operator: 'book_taxi', args: [t, 'madrid-airport', 'h-prado', day, 42] }] }) };
    },
  };
}

const inEpoch = (records: JournalRecord[], epoch: number, kind: string) => records.filter((r) => r.epoch === epoch && r.kind === kind).map((r) => r.body as Body);
let drifted: Awaited<ReturnType<typeof run>>;
let lisbon: Awaited<ReturnType<typeof run>>;

beforeAll(async () => {
  // The only fare the provider offers is Madrid's: the drifted fragment is the one that applies.
  drifted = await run({ model: madridModel(), library: unbound, world: (w) => void (w.catalogue.taxis = w.catalogue.taxis!.filter((t) => t.from === 'madrid-airport' && t.to === 'h-prado')) });
  lisbon = await run({});
}, 120_000);

describe('mining keeps the binding', () => {
  test('the drifted run completed on the library before the bindings (the evidence mining reads)', () => {
    expect(drifted.result.status).toBe('completed');
    expect(drifted.records[0]!.body).toMatchObject({ pin: { library: libraryDigest(unbound) } });
    expect(inEpoch(drifted.records, 3, 'step.dispatched').map((b) => [b.actuator, (b.args as Body).from, (b.args as Body).to])).toEqual([
      ['taxi.quote', 'madrid-airport', 'h-prado'],
      ['taxi.book', 'madrid-airport', 'h-prado'],
    ]);
  });

  test('on the library before the bindings its method is accepted — on today\'s it is refused, breaks-constraints, with the reason', () => {
    const gaps = gapSourcesOf(drifted.records);
    const corpus = [...derivedEpochsOf(drifted.records), ...derivedEpochsOf(lisbon.records)];
    const then = mine({ library: unbound, gaps, corpus, planning });
    expect(then.report.candidates).toEqual([expect.objectContaining({ task: 'book_transfer', verdict: 'accepted' })]);
    const today = mine({ library: travelLibrary, gaps, corpus, planning });
    expect(today.report.candidates).toEqual([
      expect.objectContaining({
        task: 'book_transfer',
        verdict: 'breaks-constraints',
        sources: [{ invocation: drifted.id, epoch: 3 }],
        reason:
          `on the state recorded in ${drifted.id}#3 the plan it derives breaks a constraint: book_transfer's constraint "taxi.quote binds day = ?day, from = ?from, to = ?to" fails: ` +
          `step 0 (quote_taxi) passes from "madrid-airport" where the goal binds ?from to "lisbon-airport"; to "h-prado" where the goal binds ?to to "h-alfama"`,
      }),
    ]);
    expect(today.report.accepted).toBe(0);
    expect(today.digest).toBe(libraryDigest(travelLibrary));
  });

  test("a ride that keeps to its goal is still mined on today's library, and the mined version keeps the bindings", () => {
    const result = mine({ library: travelLibrary, gaps: gapSourcesOf(lisbon.records), corpus: derivedEpochsOf(lisbon.records), planning });
    expect(result.report.candidates).toEqual([expect.objectContaining({ task: 'book_transfer', verdict: 'accepted' })]);
    expect(result.library.tasks.find((t) => t.name === 'book_transfer')!.constraints).toEqual(travelLibrary.tasks.find((t) => t.name === 'book_transfer')!.constraints);
  });
});
