/**
 * A method mined from the model's fragments keeps the model's allowance (issue 22: "a booking over
 * the envelope still asks for approval"): travel admits a taxi the model books without a person up
 * to 80 EUR, and a plan through a mined method — `origin: "mined"`, which no person has reviewed —
 * is held to the same allowance. Once a person removes the mark, the method is the library's own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import type { JournalRecord } from '../journal/records.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Library } from '../htn/library/schema.js';
import { createRuntime } from '../runtime/index.js';
import { TRAVEL_STATE_FILE, travelDomain } from '../examples/travel/domain.js';
import { travelPackPolicy } from '../examples/travel/policy-pack.js';
import { fileStateBackend, travelActuators } from '../examples/travel/index.js';
import { travelEvaluables, travelLibrary } from '../examples/travel/library.js';
import { initialTravelState, type TravelState } from '../examples/travel/state.js';
import { TRAVEL_TRANSFER_INTENTS } from '../examples/travel/transfer-script.js';
import { derivedEpochsOf, gapSourcesOf, mine } from '../mining/index.js';

const root = mkdtempSync(join(tmpdir(), 'weft-mining-allowance-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let runs = 0;

/** A Lisbon taxi run in a world where the airport → h-alfama fare is `fare`, on `library` (or travel's own). */
async function lisbonRun(fare: number, library?: Library) {
  const world: TravelState = initialTravelState();
  world.catalogue.taxis = world.catalogue.taxis!.map((t) => (t.to === 'h-alfama' ? { ...t, price: fare } : t));
  const dir = join(root, `run-${runs++}`);
  const store = new FileStore(join(dir, 'store'));
  const runtime = createRuntime({
    store,
    domain: travelDomain,
    stateDir: join(dir, 'state'),
    actuators: travelActuators({ state: fileStateBackend((id) => join(dir, 'state', id, TRAVEL_STATE_FILE), { initialState: world }) }),
    ...(library ? { libraries: [library, travelLibrary] } : {}),
    signingKey: signingKeyFromSecret(new Uint8Array(32).fill(9)),
    sleep: async () => undefined,
  });
  const handle = await runtime.start(TRAVEL_TRANSFER_INTENTS.lisbon, { tenant: 't', seed: '11', asOf: '2026-06-01T09:00:00Z' });
  const result = await handle.done;
  const records = await store.read(handle.id);
  await runtime.close();
  return { result, records };
}

const inEpoch3 = (records: JournalRecord[], kind: string) => records.filter((r) => r.epoch === 3 && r.kind === kind).map((r) => r.body as Record<string, unknown>);
const taxiBooked = (records: JournalRecord[]) => records.some((r) => r.kind === 'step.dispatched' && (r.body as { actuator: string }).actuator === 'taxi.book');

let mined: Library;

beforeAll(async () => {
  const lisbon = await lisbonRun(35);
  expect(lisbon.result.status).toBe('completed');
  const result = mine({ library: travelLibrary, gaps: gapSourcesOf(lisbon.records), corpus: derivedEpochsOf(lisbon.records), planning: { evaluables: travelEvaluables() } });
  expect(result.report.accepted).toBe(1);
  mined = result.library;
}, 120_000);

describe('a mined method keeps the model allowance', () => {
  test('the mined method is marked origin "mined"; the library it joined is otherwise unmarked', () => {
    expect(mined.methods.filter((m) => m.origin === 'mined').map((m) => m.task.task)).toEqual(['book_transfer']);
    expect(travelLibrary.methods.some((m) => m.origin !== undefined)).toBe(false);
  });

  test('within the allowance (35 EUR) the mined plan runs with no person and no authoring', async () => {
    const run = await lisbonRun(35, mined);
    expect(run.result.status).toBe('completed');
    expect(inEpoch3(run.records, 'epoch.derived')[0]).toMatchObject({ source: 'htn' });
    expect(inEpoch3(run.records, 'approval.requested')).toEqual([]);
    expect(taxiBooked(run.records)).toBe(true);
  });

  test('over it (110 EUR) the mined plan asks a person, naming the mined method, and books nothing meanwhile', async () => {
    const run = await lisbonRun(110, mined);
    expect(run.result.status).toBe('awaiting_approval');
    const [asked] = inEpoch3(run.records, 'approval.requested');
    expect(asked!.reason).toMatch(/mined from the model's fragments \(mined-book_transfer-[0-9a-f]{12}\).*spending 110, above the 80/);
    // Under the travel@5 pack (the domain's default) the allowance is its rule, and the admission names it.
    expect(inEpoch3(run.records, 'admission.decided').find((b) => b.subject === 'epoch')).toMatchObject({ decision: 'require_approval', policy: travelPackPolicy.id, rule: 'model-taxi-allowance' });
    expect(taxiBooked(run.records)).toBe(false);
  });

  test('the same method with its mark removed by a person who reviewed it is the library\'s own: 110 EUR goes by the policy for methods', async () => {
    const reviewed: Library = { ...mined, methods: mined.methods.map(({ origin: _origin, ...m }) => m) };
    expect(libraryDigest(reviewed)).not.toBe(libraryDigest(mined)); // the review is a new version, pinned as such
    const run = await lisbonRun(110, reviewed);
    expect(run.result.status).toBe('completed');
    expect(inEpoch3(run.records, 'approval.requested')).toEqual([]);
    expect(taxiBooked(run.records)).toBe(true);
  });
});
