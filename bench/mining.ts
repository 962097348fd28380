/**
 * `npm run bench -- mining [--runs N] [--every K]` — the gap path recedes, measured.
 *
 * A corpus of gap intents (default 30) is played in a fixed order on travel, in process, with the
 * domain's scripted model: taxi transfers after trips to Lisbon, Porto and Madrid, with varied
 * budgets and taxi fares (each run's world is seeded with its own fares), and — as a control — the
 * demo's intent, which never reaches the gap path. After every K runs (default 5) `mine` runs over
 * every journal so far, and the next runs pin the version it returned.
 *
 * Reported per round (K runs on one library version): the fraction of epochs that needed authoring,
 * the model calls (parse / author) and the wall time per invocation, then the mining itself (time,
 * candidates accepted, the new digest). Per kind, the first run with no authoring. Goal: after the
 * first round that has seen a kind, no later intent of that kind calls the model to author — its
 * epoch is `source: htn`, certified against the mined method.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { JournalRecord } from '../journal/records.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import type { Library } from '../htn/library/schema.js';
import { derivedEpochsOf, gapSourcesOf, mine, renderReport } from '../mining/index.js';
import { createRuntime, Runtime } from '../runtime/index.js';
import { TRAVEL_STATE_FILE, travelDomain } from '../examples/travel/domain.js';
import { initialTravelState, seedTravelState } from '../examples/travel/index.js';
import { travelEvaluables, travelLibrary } from '../examples/travel/library.js';
import { TRAVEL_INTENT } from '../examples/travel/transcript.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(9));
const AS_OF = '2026-06-01T09:00:00Z';
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

interface Intent {
  kind: string;
  text: string;
  /** Fare of every taxi ride in this run's world (EUR). */
  fare: number;
}

const CITIES = [
  { city: 'Lisbon', event: 'conference', day: '12th', budgets: [900, 950, 1000, 1100] },
  { city: 'Porto', event: 'summit', day: '20th', budgets: [1200, 1000, 1300, 1100] },
  { city: 'Madrid', event: 'forum', day: '25th', budgets: [1000, 1100, 900, 1200] },
];

/** The corpus, in its fixed order: mostly taxi intents (city by city), a demo intent every seventh run. */
function corpus(n: number): Intent[] {
  const out: Intent[] = [];
  for (let i = 0; out.length < n; i++) {
    if (i % 7 === 6) {
      out.push({ kind: 'demo (no gap)', text: TRAVEL_INTENT, fare: 30 });
      continue;
    }
    const c = CITIES[i % 3]!;
    const budget = c.budgets[Math.floor(i / 3) % 4]!;
    out.push({ kind: `taxi ${c.city}`, text: `Take me to ${c.city} for the ${c.event} on the ${c.day}, under ${budget} EUR, and book me a taxi from the airport`, fare: 20 + ((i * 13) % 45) });
  }
  return out;
}

export async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { runs: { type: 'string' }, every: { type: 'string' } } });
  const runs = Number(values.runs ?? 30);
  const every = Number(values.every ?? 5);
  const dir = mkdtempSync(path.join(tmpdir(), 'weft-bench-mining-'));
  const store = new FileStore(path.join(dir, 'store'));
  const stateDir = path.join(dir, 'state');
  let library: Library = travelLibrary;
  const firstWithout = new Map<string, number>();
  const lastAuthored = new Map<string, number>();
  try {
    const intents = corpus(runs);
    process.stdout.write(`mining: ${intents.length} intents, mining after every ${every}; kinds: ${[...new Set(intents.map((i) => i.kind))].join(', ')}\n`);
    process.stdout.write('round  runs   library       epochs  authored  fraction  model calls (parse/author)/run  ms/invocation  | mined: ms  accepted  → library\n');
    for (let round = 0; round * every < intents.length; round++) {
      const batch = intents.slice(round * every, (round + 1) * every);
      let epochs = 0;
      let authored = 0;
      let parse = 0;
      let author = 0;
      let ms = 0;
      for (const [j, intent] of batch.entries()) {
        const index = round * every + j;
        const runtime = createRuntime({ store, domain: travelDomain, stateDir, libraries: [library, travelLibrary], signingKey: key, sleep: async () => undefined });
        const start = { tenant: 'bench', seed: String(index + 1), asOf: AS_OF };
        const id = Runtime.defaultId(intent.text, start);
        const world = initialTravelState();
        world.catalogue.taxis = world.catalogue.taxis!.map((t) => ({ ...t, price: intent.fare }));
        seedTravelState(path.join(stateDir, id, TRAVEL_STATE_FILE), world);
        const t0 = performance.now();
        const result = await (await runtime.start(intent.text, { ...start, id })).done;
        ms += performance.now() - t0;
        if (result.status !== 'completed') throw new Error(`run ${index + 1} (${intent.text}) ended ${result.status}: ${result.reason}`);
        const records = await store.read(id);
        const derived = records.filter((r) => r.kind === 'epoch.derived') as Array<JournalRecord<'epoch.derived'>>;
        const wasAuthored = derived.some((r) => r.body.source === 'authored');
        epochs += derived.length;
        authored += derived.filter((r) => r.body.source === 'authored').length;
        for (const r of records) {
          if (r.kind !== 'model.requested') continue;
          if ((r.body as { purpose: string }).purpose === 'author') author++;
          else parse++;
        }
        if (wasAuthored) lastAuthored.set(intent.kind, index + 1);
        else if (!firstWithout.has(intent.kind)) firstWithout.set(intent.kind, index + 1);
      }
      const line = `${String(round + 1).padStart(5)}  ${`${round * every + 1}-${round * every + batch.length}`.padEnd(6)} ${library === travelLibrary ? 'travel (base)' : `mined ${libraryShort(library)}`}  ${String(epochs).padStart(6)}  ${String(authored).padStart(8)}  ${fmt((100 * authored) / Math.max(1, epochs), 1).padStart(7)} %  ${`${fmt(parse / batch.length, 1)} / ${fmt(author / batch.length, 1)}`.padStart(30)}  ${fmt(ms / batch.length, 1).padStart(13)}`;
      // Mine over every journal so far, as `weft mine --dir` would.
      const journals: JournalRecord[][] = [];
      for (const id of (await store.list()).sort()) journals.push(await store.read(id));
      const t0 = performance.now();
      const mined = mine({ library, gaps: journals.flatMap((j) => gapSourcesOf(j)), corpus: journals.flatMap((j) => derivedEpochsOf(j)), planning: { evaluables: travelEvaluables() } });
      const mineMs = performance.now() - t0;
      library = mined.library;
      if (process.env.BENCH_MINING_REPORT) process.stderr.write(`${renderReport(mined.report).join("\n")}\n`);
      process.stdout.write(`${line}  | ${fmt(mineMs, 1).padStart(9)}  ${String(mined.report.accepted).padStart(8)}  → ${mined.digest.slice(0, 12)}\n`);
    }
    for (const kind of [...new Set(intents.map((i) => i.kind))]) {
      const last = lastAuthored.get(kind);
      process.stdout.write(`  ${kind}: ${last === undefined ? 'never authored' : `last authored at run ${last}`}; first run without authoring: ${firstWithout.get(kind) ?? 'none'}\n`);
    }
    const goalMet = [...lastAuthored.values()].every((last) => last <= every);
    process.stdout.write(`goal (no authoring after the first round that saw a kind): ${goalMet ? 'met' : 'NOT met'}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function libraryShort(library: Library): string {
  return `${library.methods.length}m`.padEnd(7);
}
