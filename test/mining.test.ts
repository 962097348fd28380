/**
 * Method mining (issue 22): the gap path recedes as methods are learned from recorded runs.
 *
 * - Lisbon's gap journal is mined into a new library version; Porto then runs on it and decomposes
 *   `book_transfer` with no authoring — its model has no authoring reply at all, and the taxi it
 *   books carries Porto's airport, hotel, day and fare (a method memorising Lisbon's constants
 *   could not produce them).
 * - A fragment with a constant from nowhere is reported as not generalising, and not added.
 * - A candidate that would change a decomposition recorded in another journal is refused.
 * - A fragment whose booking failed (the epoch closed compensated) is not mined.
 * - A fragment whose method would re-derive another fragment on its own state is refused.
 * - One fragment seen with different constants is one method; `minSupport` counts its epochs.
 * - Old journals replay on their pinned version after a mined version exists and ran.
 * - Mining is deterministic: the same journals in any order (duplicates, and prefixes of them, too)
 *   give the same digest; one id with two different histories is refused.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { ActuatorError, type Actuator } from '../actors/actuator.js';
import type { ModelReply, ModelRequest } from '../actors/model/model.js';
import { canonicalize } from '../journal/canonical.js';
import type { JournalRecord } from '../journal/records.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { LibraryBuilder, add, atom } from '../htn/library/builder.js';
import { libraryDigest } from '../htn/library/digest.js';
import type { Library } from '../htn/library/schema.js';
import { createRuntime, Runtime, type RuntimeOptions } from '../runtime/index.js';
import { TRAVEL_STATE_FILE, travelDomain } from '../examples/travel/domain.js';
import { fileStateBackend, travelActuators, travelTranscript } from '../examples/travel/index.js';
import { travelEvaluables, travelLibrary } from '../examples/travel/library.js';
import { TRAVEL_TRANSFER_INTENTS, TravelScriptedModel } from '../examples/travel/transfer-script.js';
import { DivergentJournalsError, derivedEpochsOf, gapSourcesOf, mergeJournal, mine, type DerivedEpoch, type GapSource, type MiningResult, type SourcedJournal } from '../mining/index.js';
import { digestOfPlanned, planOn, stepsOf } from '../mining/planning.js';

const root = mkdtempSync(join(tmpdir(), 'weft-mining-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const AS_OF = '2026-06-01T09:00:00Z';
const planning = { evaluables: travelEvaluables() };
type Body = Record<string, unknown>;

/** The travel model, refusing to author: a run that reaches the gap path fails the test. */
class NoAuthoringModel extends TravelScriptedModel {
  readonly purposes: string[] = [];
  constructor() {
    super(travelTranscript);
  }
  override async complete(request: ModelRequest): Promise<ModelReply> {
    this.purposes.push(request.purpose);
    if (request.purpose === 'author') throw new Error('this model has no authoring reply: the gap path was reached');
    return super.complete(request);
  }
}

/** The travel model, authoring the taxi for a day no goal or fact holds (27): a fragment that cannot generalise. */
class OddDayModel extends TravelScriptedModel {
  constructor() {
    super(travelTranscript);
  }
  override async complete(request: ModelRequest): Promise<ModelReply> {
    if (request.purpose !== 'author') return super.complete(request);
    const reply = await super.complete(request);
    const steps = (JSON.parse(reply.text) as { steps: Array<{ operator: string; args: Array<string | number> }> }).steps.map((s) => ({ ...s, args: s.args.map((a, i) => (i === 3 ? 27 : a)) }));
    return { text: canonicalize({ steps }) };
  }
}

/** The travel library as it was before book_transfer bound its quote and booking to the goal's args (issue 30). */
const unboundTravelLibrary: Library = {
  ...travelLibrary,
  tasks: travelLibrary.tasks.map((t) => (t.name !== 'book_transfer' ? t : { ...t, constraints: t.constraints!.filter((c) => !('bind' in c)) })),
};

/** The store every run of this file shares (the corpus `weft mine` would read) and the worlds' folder. */
const store = new FileStore(join(root, 'store'));
const stateDir = join(root, 'state');
let runs = 0;

function actuators(failBooking: boolean): Actuator[] {
  const all = travelActuators({ state: fileStateBackend((invocation) => join(stateDir, invocation, TRAVEL_STATE_FILE)) });
  if (!failBooking) return all;
  return all.map((a) =>
    a.name !== 'taxi.book'
      ? a
      : ({ ...a, run: async () => { throw new ActuatorError('taxi.no_driver', 'permanent', 'no driver is free for that ride'); } } as Actuator),
  );
}

async function travelRun(intent: string, options: { library?: Library; model?: RuntimeOptions['model']; failBooking?: boolean; store?: FileStore } = {}) {
  const into = options.store ?? store;
  const runtime = createRuntime({
    store: into,
    domain: travelDomain,
    stateDir,
    actuators: actuators(options.failBooking ?? false),
    ...(options.library ? { libraries: [options.library, travelLibrary] } : {}),
    ...(options.model ? { model: options.model } : {}),
    signingKey: signingKeyFromSecret(new Uint8Array(32).fill(9)),
    sleep: async () => undefined,
  });
  const start = { tenant: 'mining', seed: String(11 + runs++), asOf: AS_OF };
  const handle = await runtime.start(intent, { ...start, id: `${Runtime.defaultId(intent, start)}` });
  const result = await handle.done;
  return { runtime, id: handle.id, result, records: await into.read(handle.id) };
}

async function corpus(): Promise<DerivedEpoch[]> {
  const all: DerivedEpoch[] = [];
  for (const id of (await store.list()).sort()) all.push(...derivedEpochsOf(await store.read(id)));
  return all;
}

const inEpoch = (records: JournalRecord[], epoch: number, kind: string) => records.filter((r) => r.epoch === epoch && r.kind === kind).map((r) => r.body as Body);

let lisbon: Awaited<ReturnType<typeof travelRun>>;
let madrid: Awaited<ReturnType<typeof travelRun>>;
let mined: MiningResult;

beforeAll(async () => {
  lisbon = await travelRun(TRAVEL_TRANSFER_INTENTS.lisbon);
  madrid = await travelRun(TRAVEL_TRANSFER_INTENTS.madrid);
  expect(lisbon.result.status).toBe('completed');
  expect(madrid.result.status).toBe('completed');
  mined = mine({ library: travelLibrary, gaps: gapSourcesOf(lisbon.records), corpus: await corpus(), planning });
}, 120_000);

describe('Lisbon mined, Porto decomposed', () => {
  test('the Lisbon gap epoch becomes one method of book_transfer: goal args as params, the fare bound by a precondition', () => {
    expect(mined.report.accepted).toBe(1);
    expect(mined.digest).not.toBe(libraryDigest(travelLibrary));
    expect(mined.digest).toBe(libraryDigest(mined.library));
    const [candidate] = mined.report.candidates;
    expect(candidate).toMatchObject({ task: 'book_transfer', verdict: 'accepted', sources: [{ invocation: lisbon.id, epoch: 3 }] });
    const method = mined.library.methods.find((m) => m.task.task === 'book_transfer')!;
    expect(method.name).toBe(candidate!.candidate);
    expect(method.task.args).toEqual(['?t', '?from', '?to', '?day', '?budget']);
    expect(method.subtasks).toEqual([
      { task: 'quote_taxi', args: ['?t', '?from', '?to', '?day'] },
      { task: 'book_taxi', args: ['?t', '?from', '?to', '?day', '?v1'] },
    ]);
    // taxi-quoted is established by quote_taxi, so only the fare (binding ?v1) and "not booked yet" remain.
    expect(method.precondition).toEqual({
      op: 'and',
      args: [
        { op: 'atom', pred: 'taxi-fare', args: ['?from', '?to', '?v1'] },
        { op: 'not', arg: { op: 'atom', pred: 'taxi-booked', args: ['?t', '?from', '?to', '?day'] } },
      ],
    });
    // After the task's existing methods (it had none): the other methods keep their order.
    expect(mined.library.methods.filter((m) => m !== method)).toEqual(travelLibrary.methods);
    expect(JSON.stringify(mined.library)).not.toMatch(/lisbon|h-alfama/);
  });

  test('Porto runs on the mined version with no authoring: source htn, Porto constants, certified, completed', async () => {
    const model = new NoAuthoringModel();
    const porto = await travelRun(TRAVEL_TRANSFER_INTENTS.porto, { library: mined.library, model });
    expect(porto.result.status, porto.result.reason ?? '').toBe('completed');
    expect(model.purposes).not.toContain('author');
    expect(porto.records.filter((r) => r.kind === 'model.requested').map((r) => (r.body as Body).purpose)).not.toContain('author');
    expect((porto.records[0]!.body as { pin: { library: string } }).pin.library).toBe(mined.digest);
    const derived = inEpoch(porto.records, 3, 'epoch.derived');
    expect(derived).toEqual([expect.objectContaining({ source: 'htn', library: mined.digest, goal: { task: 'book_transfer', args: ['me', 'porto-airport', 'h-infante', 20, 490] } })]);
    expect(inEpoch(porto.records, 3, 'epoch.certified')).toHaveLength(1);
    expect(inEpoch(porto.records, 3, 'step.dispatched').map((b) => [b.actuator, b.args])).toEqual([
      ['taxi.quote', { from: 'porto-airport', to: 'h-infante', day: 20 }],
      ['taxi.book', { traveller: 'me', from: 'porto-airport', to: 'h-infante', day: 20, amount: 28 }],
    ]);
    expect(inEpoch(porto.records, 3, 'epoch.closed')).toEqual([{ outcome: 'completed', steps: 2 }]);

    // Old journals keep their pin and replay byte for byte; the new one replays on the mined version (from the store's blob).
    const plain = createRuntime({ store, domain: travelDomain, stateDir, signingKey: signingKeyFromSecret(new Uint8Array(32).fill(9)) });
    for (const run of [lisbon, madrid, porto]) {
      const replay = await plain.replay(run.id);
      expect(replay, run.id).toMatchObject({ status: 'completed', fingerprint: run.result.fingerprint, records: run.records.length });
    }
    expect((lisbon.records[0]!.body as { pin: { library: string } }).pin.library).toBe(libraryDigest(travelLibrary));
  }, 120_000);

  test('the same fragment seen with other constants (Lisbon, Madrid) is one method with two sources; --min-support counts them', async () => {
    const gaps = [...gapSourcesOf(lisbon.records), ...gapSourcesOf(madrid.records)];
    const both = mine({ library: travelLibrary, gaps, corpus: await corpus(), planning });
    expect(both.report.candidates).toHaveLength(1);
    expect(both.report.candidates[0]!.sources.map((s) => s.invocation).sort()).toEqual([lisbon.id, madrid.id].sort());
    expect(both.digest).toBe(mined.digest);
    const strict = mine({ library: travelLibrary, gaps: gapSourcesOf(lisbon.records), corpus: await corpus(), planning, minSupport: 2 });
    expect(strict.report.candidates[0]).toMatchObject({ verdict: 'below-min-support', reason: expect.stringContaining('seen only once') });
    expect(strict.digest).toBe(libraryDigest(travelLibrary));
    expect(mine({ library: travelLibrary, gaps, corpus: await corpus(), planning, minSupport: 2 }).digest).toBe(mined.digest);
  });

  test('mining again on the mined version finds the method already there: no new version', async () => {
    const again = mine({ library: mined.library, gaps: gapSourcesOf(madrid.records), corpus: await corpus(), planning });
    expect(again.report.candidates[0]).toMatchObject({ verdict: 'already-in-library' });
    expect(again.digest).toBe(mined.digest);
  });
});

describe('candidates refused', () => {
  test('a fragment using a constant from nowhere (a day no goal or fact holds) does not generalise and is not added', async () => {
    // Today's library binds the ride's day to the goal's (the odd day is refused at admission): a library before the bindings ran it.
    const odd = await travelRun(TRAVEL_TRANSFER_INTENTS.lisbon, { model: new OddDayModel(), library: unboundTravelLibrary });
    expect(odd.result.status).toBe('completed');
    expect(inEpoch(odd.records, 3, 'step.dispatched').map((b) => (b.args as Body).day)).toEqual([27, 27]);
    const result = mine({ library: travelLibrary, gaps: gapSourcesOf(odd.records), corpus: await corpus(), planning });
    expect(result.report.candidates).toEqual([
      expect.objectContaining({ task: 'book_transfer', verdict: 'does-not-generalise', reason: expect.stringContaining('the constant 27') }),
    ]);
    expect(result.report.accepted).toBe(0);
    expect(result.digest).toBe(libraryDigest(travelLibrary));
  }, 120_000);

  test('a fragment whose booking failed (epoch closed compensated) is not mined', async () => {
    const failed = await travelRun(TRAVEL_TRANSFER_INTENTS.lisbon, { failBooking: true });
    expect(inEpoch(failed.records, 3, 'epoch.closed').map((b) => b.outcome)).toEqual(['compensated']);
    const result = mine({ library: travelLibrary, gaps: gapSourcesOf(failed.records), corpus: await corpus(), planning });
    expect(result.report.candidates).toEqual([expect.objectContaining({ verdict: 'failed-or-compensated', sources: [{ invocation: failed.id, epoch: 3 }] })]);
    expect(result.digest).toBe(libraryDigest(travelLibrary));
    // With a good Lisbon run beside it, the shape came from a fragment that failed: still refused.
    const mixed = mine({ library: travelLibrary, gaps: [...gapSourcesOf(lisbon.records), ...gapSourcesOf(failed.records)], corpus: await corpus(), planning });
    expect(mixed.report.candidates).toEqual([
      expect.objectContaining({ verdict: 'failed-or-compensated', reason: expect.stringContaining(`compensated in ${failed.id}#3`), sources: [{ invocation: lisbon.id, epoch: 3 }, { invocation: failed.id, epoch: 3 }].sort((a, b) => (a.invocation < b.invocation ? -1 : 1)) }),
    ]);
    expect(mixed.digest).toBe(libraryDigest(travelLibrary));
  }, 120_000);

  test('an epoch the policy denied never ran: it is reported, not counted, and does not block the shape', () => {
    const [good] = gapSourcesOf(lisbon.records);
    const denied: GapSource = { ...good!, invocation: 'inv-denied', outcome: 'denied' };
    const result = mine({ library: travelLibrary, gaps: [good!, denied], corpus: [], planning });
    expect(result.report.candidates).toEqual([
      expect.objectContaining({ candidate: 'inv-denied#3', verdict: 'failed-or-compensated', reason: expect.stringContaining('denied before any step ran') }),
      expect.objectContaining({ verdict: 'accepted', sources: [{ invocation: lisbon.id, epoch: 3 }] }),
    ]);
    expect(result.digest).toBe(mined.digest);
  });

  test('a method that would re-derive another fragment on the recorded state (the model chose the dearer of two fares) is refused', () => {
    const [source] = gapSourcesOf(lisbon.records);
    const fares = (s: GapSource) => s.state.facts.filter((f) => f[0] === 'taxi-fare' && f[1] === 'lisbon-airport' && f[2] === 'h-alfama');
    expect(fares(source!)).toEqual([['taxi-fare', 'lisbon-airport', 'h-alfama', 35]]);
    // Two fares for the ride, and the fragment booked one of them: the method binds the fare the planner finds first.
    const verdicts = [30, 40].map((other) => {
      const state = { ...source!.state, facts: [...source!.state.facts, ['taxi-fare', 'lisbon-airport', 'h-alfama', other] as [string, ...Array<string | number>]] };
      return mine({ library: travelLibrary, gaps: [{ ...source!, state }], corpus: [], planning }).report.candidates[0]!;
    });
    const refused = verdicts.filter((v) => v.verdict === 'fails-rederivation');
    expect(refused.length, JSON.stringify(verdicts)).toBe(1);
    expect(refused[0]!.reason).toMatch(/book_taxi\("me", "lisbon-airport", "h-alfama", 12, (30|40)\), not the authored .*book_taxi\("me", "lisbon-airport", "h-alfama", 12, 35\)/);
  });

  test('a candidate that would change a decomposition another journal recorded is refused', () => {
    // `get` prefers fetching; fetching had no method, so recorded runs of `get` borrowed. A method
    // mined for `fetch` would make `get` fetch instead: the recorded decomposition changes.
    const errands = new LibraryBuilder('errands')
      .type('item')
      .predicate('in-shop', { '?i': 'item' })
      .predicate('have', { '?i': 'item' })
      .task('get', { '?i': 'item' })
      .task('fetch', { '?i': 'item' })
      .operator('buy', { params: { '?i': 'item' }, precondition: atom('in-shop', '?i'), effect: add('have', '?i'), actuator: { actuator: 'shop.buy', args: { item: '?i' } } })
      .operator('borrow', { params: { '?i': 'item' }, effect: add('have', '?i'), actuator: { actuator: 'friend.lend', args: { item: '?i' } } })
      .method('get-by-fetching', { task: ['get', '?i'], params: { '?i': 'item' }, subtasks: [['fetch', '?i']] })
      .method('get-by-borrowing', { task: ['get', '?i'], params: { '?i': 'item' }, subtasks: [['borrow', '?i']] })
      .build();
    const state = { objects: [{ name: 'pen', type: 'item' }, { name: 'cup', type: 'item' }], facts: [['in-shop', 'pen'], ['in-shop', 'cup']] as Array<[string, ...string[]]> };
    const gap: GapSource = { invocation: 'inv-fetch', epoch: 1, goal: { task: 'fetch', args: ['pen'] }, state, fragment: [{ task: 'buy', args: ['pen'] }], library: libraryDigest(errands), outcome: 'completed' };
    const alone = mine({ library: errands, gaps: [gap], corpus: [] });
    expect(alone.report.candidates[0]).toMatchObject({ verdict: 'accepted' });
    // What a run of `get(cup)` on errands recorded: the base library borrows the cup (its plan digest).
    const goal = { task: 'get', args: ['cup'] };
    const borrowed = planOn(errands, state, goal, {});
    expect(stepsOf(borrowed)).toEqual([{ task: 'borrow', args: ['cup'] }]);
    const recorded: DerivedEpoch = { invocation: 'inv-get', epoch: 1, source: 'htn', goal, state, library: libraryDigest(errands), plan: digestOfPlanned(borrowed)! };
    const refused = mine({ library: errands, gaps: [gap], corpus: [recorded] });
    expect(refused.report.candidates[0]).toMatchObject({ verdict: 'conflicts', reason: expect.stringContaining('get("cup") recorded in inv-get#1') });
    // With the candidate, the same goal would buy the cup: a different plan than the one recorded.
    expect(digestOfPlanned(planOn(alone.library, state, goal, {}))).not.toBe(recorded.plan);
    expect(refused.digest).toBe(libraryDigest(errands));
  });
});

describe('determinism', () => {
  // Its own journals, in its own store (it runs alone too: `-t determinism`): two runs that mine
  // to one shape (accepted), one that does not generalise — and copies of Lisbon's journal
  // cut before and just after its gap epoch closed (what a copy taken while it ran would hold).
  const own = new FileStore(join(root, 'determinism'));
  const journals: JournalRecord[][] = [];
  const prefixes: JournalRecord[][] = [];
  let lisbonJournal: JournalRecord[] = [];
  const all: DerivedEpoch[] = [];

  beforeAll(async () => {
    const runs = [
      await travelRun(TRAVEL_TRANSFER_INTENTS.lisbon, { store: own }),
      await travelRun(TRAVEL_TRANSFER_INTENTS.madrid, { store: own }),
      await travelRun(TRAVEL_TRANSFER_INTENTS.lisbon, { store: own, model: new OddDayModel() }),
    ];
    for (const id of (await own.list()).sort()) journals.push(await own.read(id));
    expect(journals).toHaveLength(runs.length);
    const full = (lisbonJournal = runs[0]!.records);
    const closed = full.findIndex((r) => r.epoch === 3 && r.kind === 'epoch.closed');
    expect(closed).toBeGreaterThan(0);
    prefixes.push(full.slice(0, closed), full.slice(0, closed + 1), runs[1]!.records.slice(0, 5));
    for (const records of journals) all.push(...derivedEpochsOf(records));
  }, 240_000);

  /** Merge by id in the order given (a journal and its prefix are one journal), then mine. */
  const once = (list: Array<{ records: JournalRecord[]; source: string }>) => {
    const merged = new Map<string, SourcedJournal>();
    for (const { records, source } of list) mergeJournal(merged, records, source);
    const kept = [...merged.keys()].sort().map((id) => merged.get(id)!.records);
    return mine({ library: travelLibrary, gaps: kept.flatMap((j) => gapSourcesOf(j)), corpus: all, planning });
  };

  test('the same journals in any order, duplicated, or with prefixes of them, give the same library digest and report', () => {
    const whole = journals.map((records, i) => ({ records, source: `full-${i}` }));
    const cut = prefixes.map((records, i) => ({ records, source: `prefix-${i}` }));
    const reference = once(whole);
    expect(reference.report.candidates.length).toBeGreaterThan(1);
    expect(reference.report.accepted).toBe(1);
    // A prefix mined alone is not the same input: the gap epoch it cut is unfinished, not mined.
    expect(once([cut[0]!]).report.accepted).toBe(0);
    const items = [...whole, ...cut];
    fc.assert(
      fc.property(fc.shuffledSubarray(items, { minLength: items.length, maxLength: items.length }), fc.array(fc.nat(items.length - 1), { maxLength: 4 }), (order, dupes) => {
        const result = once([...order, ...dupes.map((i) => items[i]!)]);
        expect(result.digest).toBe(reference.digest);
        expect(canonicalize(result.report as never)).toBe(canonicalize(reference.report as never));
      }),
      { numRuns: 25 },
    );
  });

  test('one id with two different histories is refused, naming the id and both sources; mine() refuses one epoch given twice differently', () => {
    const other = lisbonJournal.map((r, i) => (i === 6 ? { ...r, hash: '0'.repeat(64) } : r));
    const merged = new Map<string, SourcedJournal>();
    mergeJournal(merged, lisbonJournal, 'a.jsonl');
    let error: unknown;
    try {
      mergeJournal(merged, other, 'b.jsonl');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(DivergentJournalsError);
    const id = (lisbonJournal[0]!.body as { invocation: string }).invocation;
    expect((error as Error).message).toMatch(new RegExp(`invocation ${id} .*a\\.jsonl and b\\.jsonl differ at seq 6`));
    expect(merged.get(id)!.records).toBe(lisbonJournal);
    // Unmerged, a journal and its prefix give two versions of the gap epoch: the pure core refuses rather than pick one.
    const gaps = [...gapSourcesOf(prefixes[0]!), ...gapSourcesOf(lisbonJournal)];
    expect(() => mine({ library: travelLibrary, gaps, corpus: [], planning })).toThrow(/two different gap-path epochs for .*#3/);
  });
});
