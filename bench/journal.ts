/**
 * `npm run bench -- journal [--records N] [--fsync-records N] [--reps R] [--dir DIR]` — the
 * journal's throughput, each figure beside a baseline measured in the same run, interleaved
 * (baseline, figure, baseline, figure, …) so machine noise hits both; medians of R repetitions.
 *
 *   1. append+hash into the memory store (JournalWriter: schema check, canonicalize, SHA-256,
 *      store.append), vs raw SHA-256 of the exact `hashedBytes(prev, content)` of the same records.
 *   2. append+hash+fdatasync into the file store at 1 and 16 records per append (JournalWriter.appendAll:
 *      schema check, canonicalize, SHA-256, lease fence check, write + fdatasync), vs a raw append of
 *      the same JSONL bytes to a plain file (open, write + fdatasync per batch). The writer is
 *      created before and closed after the timed region (lease + pinned record: once per invocation).
 *      Goal: file-store time / raw time ≤ 1.5×.
 *   3. full verify (parse, shape, canonicality, hash, body schema, seal) of an N-record sealed
 *      journal, vs raw SHA-256 of its hashedBytes, interleaved: readJournalText (keeps the
 *      records), verifyJournalText (streaming, one thread: what `weft verify` runs for small
 *      files) and verifyJournalTextParallel (min(availableParallelism, 4) worker threads, warm
 *      pool; its cold start is printed once). Goal: ≥ 50 % of raw SHA-256.
 *   4. the streaming verify's per-record cost by stage (split, parse, validate, canonical check,
 *      hash, other), each stage timed alone in the same run, beside the raw SHA-256 cost per record.
 *
 * Bodies are realistic: step.dispatched / step.completed pairs with small JSON args and results,
 * ~300 bytes a line. SHA-256 is node:crypto (journal/sha256-node.ts) for both sides.
 */
import { fdatasyncSync, mkdirSync, openSync, closeSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { canonicalize } from '../journal/canonical.js';
import { chainRecord, genesisHash, hashedBytes, hashedPrefixMatches } from '../journal/chain.js';
import { nodeSha256 } from '../journal/sha256-node.js';
import { sha256Implementation, digestOf } from '../journal/digest.js';
import { readJournalText, splitJournalText, verifyJournalText } from '../journal/reader.js';
import { closeVerifyPool, defaultWorkerCount, PARALLEL_COLD_MIN_LINES, PARALLEL_MIN_LINES, verifyJournalTextParallel } from '../journal/verify-parallel.js';
import { isRecordKind, type JournalRecord, type Pin } from '../journal/records.js';
import { fastBodyOk, fastShapeOk } from '../journal/validate-fast.js';
import { publicKeyOf, signFingerprint, signingKeyFromSecret } from '../journal/seal.js';
import { MemoryStore } from '../journal/stores/memory.js';
import { FileStore } from '../journal/stores/file.js';
import { JournalWriter, type Genesis, type RecordDraft } from '../journal/writer.js';

const WRITER = 'bench-writer';
const pin: Pin = {
  library: digestOf({ library: 'bench' }),
  runtime: 'weft/bench',
  flags: [1],
  model: { id: 'scripted', params: { temperature: 0 } },
  seed: 'bench-seed',
  asOf: '2026-01-01T00:00:00.000Z',
  policy: 'bench-policy@1',
};
const genesis = (invocation: string): Genesis => ({ invocation, tenant: 'acme', intent: 'book a trip to Lisbon for two, under 900 EUR', pin });

/** Deterministic realistic drafts: dispatch/complete pairs of a few actuators. */
function drafts(n: number): RecordDraft[] {
  const out: RecordDraft[] = [];
  const actuators = ['book_flight', 'book_hotel', 'send_email', 'charge_card'];
  let x = 12345;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
  for (let i = 0; out.length < n; i++) {
    const step = i % 8;
    const epoch = 1 + Math.floor(i / 8);
    const key = `inv-bench-000042.${epoch}.${step}`;
    const actuator = actuators[i % actuators.length]!;
    out.push({
      kind: 'step.dispatched',
      epoch,
      body: { step, actuator, key, attempt: 1, args: { city: 'lisbon', from: '2026-05-01', to: '2026-05-04', guests: 2, maxPrice: 400 + (next() % 500) } },
    });
    if (out.length < n) {
      out.push({
        kind: 'step.completed',
        epoch,
        body: { step, key, attempt: 1, result: { ok: true, booking: `BK-${next() % 100000}`, price: (next() % 90000) / 100, currency: 'EUR' } },
      });
    }
  }
  return out;
}

/** The records a JournalWriter writes for `invocation` (pinned + drafts), envelope included. */
function chained(invocation: string, ds: readonly RecordDraft[]): JournalRecord[] {
  const g = genesis(invocation);
  const all: RecordDraft[] = [{ kind: 'invocation.pinned', epoch: 0, body: { schema: 1, invocation, tenant: g.tenant, intent: g.intent, pin } }, ...ds];
  let prev = genesisHash(invocation, pin);
  return all.map((d, seq) => {
    const r = chainRecord(prev, { seq, kind: d.kind, epoch: d.epoch, body: d.body as never }) as JournalRecord;
    r.meta = { writer: WRITER };
    prev = r.hash;
    return r;
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function time(fn: () => unknown): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

function rawSha(inputs: readonly Uint8Array[]): void {
  for (const bytes of inputs) nodeSha256(bytes);
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const rate = (records: number, ms: number) => (records * 1000) / ms;

interface Pair {
  measured: number[];
  baseline: number[];
}

/** Run baseline and measured alternately `reps` times (after one untimed warm-up of each). */
async function interleaved(reps: number, baseline: (rep: number) => unknown, measured: (rep: number) => unknown): Promise<Pair> {
  await baseline(-1);
  await measured(-1);
  const pair: Pair = { measured: [], baseline: [] };
  for (let rep = 0; rep < reps; rep++) {
    pair.baseline.push(await time(() => baseline(rep)));
    pair.measured.push(await time(() => measured(rep)));
  }
  return pair;
}

export async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { records: { type: 'string' }, 'fsync-records': { type: 'string' }, reps: { type: 'string' }, dir: { type: 'string' } },
  });
  const N = Number(values.records ?? 20_000);
  const F = Number(values['fsync-records'] ?? 400);
  const reps = Number(values.reps ?? 5);
  const dir = path.resolve(values.dir ?? '.weft/bench');
  const ds = drafts(N);
  const sample = chained('inv-bench-000042', ds);
  const lineBytes = sample.slice(1).reduce((s, r) => s + Buffer.byteLength(canonicalize(r)) + 1, 0) / N;
  process.stdout.write(`journal bench: sha256 ${sha256Implementation()}, ${fmt(N)} records (avg line ${Math.round(lineBytes)} B), median of ${reps} interleaved reps\n\n`);

  // 1. append+hash into the memory store ---------------------------------------------------------
  const hashInputs = sample.slice(1).map((r) => hashedBytes(r.prev, r));
  const mem = await interleaved(
    reps,
    () => rawSha(hashInputs),
    async (rep) => {
      const writer = await JournalWriter.create(new MemoryStore(), genesis(`inv-mem-${rep + 1}`), { writer: WRITER });
      for (const d of ds) await writer.append(d);
    },
  );
  const memRate = rate(N, median(mem.measured));
  const memRaw = rate(N, median(mem.baseline));
  process.stdout.write(
    `append+hash, memory store (JournalWriter.append, 1/append)   ${fmt(memRate).padStart(9)} rec/s   ` +
      `raw SHA-256 of the same bytes ${fmt(memRaw).padStart(9)} rec/s   ${((100 * memRate) / memRaw).toFixed(1)} % of raw\n`,
  );

  // 2. append+hash+fdatasync into the file store --------------------------------------------------
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const batch of [1, 16]) {
    const count = batch === 1 ? F : F * 4;
    const fds = ds.slice(0, count);
    const id = (rep: number) => `inv-file-${batch}-${String(rep + 2).padStart(3, '0')}`;
    const store = new FileStore(path.join(dir, 'store'));
    // The baseline's bytes: the same JSONL the store writes for each rep's invocation, prepared
    // outside the timed region, one Buffer per append.
    const prepared = new Map<number, Buffer[]>();
    for (let rep = -1; rep < reps; rep++) {
      const lines = chained(id(rep), fds).slice(1).map((r) => canonicalize(r) + '\n');
      const batches: Buffer[] = [];
      for (let i = 0; i < lines.length; i += batch) batches.push(Buffer.from(lines.slice(i, i + batch).join(''), 'utf8'));
      prepared.set(rep, batches);
    }
    // Writers are created (lease taken, invocation.pinned written) before and closed after the
    // timed region: both are once per invocation, not per append, and cost several fsyncs.
    const writers = new Map<number, JournalWriter>();
    for (let rep = -1; rep < reps; rep++) writers.set(rep, await JournalWriter.create(store, genesis(id(rep)), { writer: WRITER }));
    const pair = await interleaved(
      reps,
      (rep) => {
        const fd = openSync(path.join(dir, `raw-${batch}-${rep + 1}.jsonl`), 'a');
        try {
          for (const bytes of prepared.get(rep)!) {
            let done = 0;
            while (done < bytes.length) done += writeSync(fd, bytes, done);
            fdatasyncSync(fd);
          }
        } finally {
          closeSync(fd);
        }
      },
      async (rep) => {
        const writer = writers.get(rep)!;
        for (let i = 0; i < fds.length; i += batch) await writer.appendAll(fds.slice(i, i + batch));
      },
    );
    for (const writer of writers.values()) await writer.close();
    const raw = median(pair.baseline);
    const measured = median(pair.measured);
    process.stdout.write(
      `append+hash+fdatasync, file store, ${String(batch).padStart(2)}/append            ${fmt(rate(count, measured)).padStart(9)} rec/s   ` +
        `raw write+fdatasync ${fmt(rate(count, raw)).padStart(9)} rec/s            time ${(measured / raw).toFixed(2)}× raw (goal ≤ 1.5×)\n`,
    );
  }
  rmSync(dir, { recursive: true, force: true });

  // 3. full verify --------------------------------------------------------------------------------
  const key = signingKeyFromSecret(new Uint8Array(32).fill(7));
  const last = sample.at(-1)!;
  const seal = chainRecord(last.hash, {
    seq: sample.length,
    kind: 'invocation.sealed',
    epoch: last.epoch,
    body: { algorithm: 'ed25519', fingerprint: last.hash, keyId: key.keyId, signature: signFingerprint(key, last.hash) },
  });
  const text = [...sample, seal].map((r) => canonicalize(r) + '\n').join('');
  const allInputs = [...sample, seal].map((r) => hashedBytes(r.prev, r));
  const publicKey = publicKeyOf(key);
  const workers = defaultWorkerCount();
  // Cold parallel start (worker threads spawned and their modules loaded), once, for the record.
  await closeVerifyPool();
  // (minLines: the parallel path, whatever the default thresholds would choose.)
  const coldMs = await time(() => verifyJournalTextParallel(text, { publicKey, minLines: PARALLEL_MIN_LINES }));
  // Interleaved: raw SHA-256, readJournalText (records kept), verifyJournalText (streaming, single
  // thread), verifyJournalTextParallel (warm pool) — one of each per rep, after one warm-up each.
  const verifiers: Record<string, () => unknown> = {
    read: () => {
      const r = readJournalText(text, { publicKey });
      if (!r.ok) throw new Error(`bench journal did not verify: ${r.error?.message}`);
    },
    stream: () => {
      const v = verifyJournalText(text, { publicKey });
      if (!v.ok || v.count !== allInputs.length) throw new Error(`bench journal did not verify: ${v.error?.message}`);
    },
    parallel: async () => {
      const v = await verifyJournalTextParallel(text, { publicKey, workers, minLines: PARALLEL_MIN_LINES });
      if (!v.ok || v.count !== allInputs.length) throw new Error(`bench journal did not verify: ${v.error?.message}`);
    },
  };
  const verSamples: Record<string, number[]> = { raw: [], read: [], stream: [], parallel: [] };
  for (let rep = -1; rep < reps; rep++) {
    const raw = await time(() => rawSha(allInputs));
    if (rep >= 0) verSamples.raw!.push(raw);
    for (const [name, fn] of Object.entries(verifiers)) {
      const ms = await time(fn);
      if (rep >= 0) verSamples[name]!.push(ms);
    }
  }
  const verRaw = rate(allInputs.length, median(verSamples.raw!));
  const line = (label: string, name: string) => {
    const r = rate(allInputs.length, median(verSamples[name]!));
    process.stdout.write(
      `${label.padEnd(59)}${fmt(r).padStart(9)} rec/s   raw SHA-256 of the same bytes ${fmt(verRaw).padStart(9)} rec/s   ${((100 * r) / verRaw).toFixed(1)} % of raw (goal ≥ 50 %)\n`,
    );
  };
  line(`verify (readJournalText, records kept, ${fmt(allInputs.length)} records, sealed)`, 'read');
  line(`verify (verifyJournalText, streaming, 1 thread)`, 'stream');
  line(`verify (verifyJournalTextParallel, ${workers} worker${workers === 1 ? '' : 's'}, warm pool)`, 'parallel');
  process.stdout.write(
    `  parallel cold (pool started by the call): ${coldMs.toFixed(1)} ms for ${fmt(allInputs.length)} records — so a cold pool is only used from ${fmt(PARALLEL_COLD_MIN_LINES)} lines\n`,
  );

  // 4. where verify's time goes -------------------------------------------------------------------
  // Each stage of the verifier's fast path run alone over the same journal, interleaved with the
  // full verify and the raw SHA-256 baseline, medians: split lines; JSON.parse; shape + body
  // validation (validate-fast.ts, sorted mode); the canonical check (JSON.stringify(body) found at
  // the line's start, reader.ts canonicalPrefixEnd); the hash (cut from the line, node:crypto's two-part one-shot). "other" = the streaming
  // verify (verifyJournalText) − the stages' sum (chain checks, the seal's Ed25519 verify, the verdict).
  const n = allInputs.length;
  const { lines } = splitJournalText(text);
  const parsed = lines.map((line) => JSON.parse(line) as JournalRecord);
  const prefixEnds = lines.map((line) => line.lastIndexOf(',"hash":"'));
  const stages: Record<string, () => unknown> = {
    split: () => splitJournalText(text),
    parse: () => {
      for (let i = 0; i < n; i++) JSON.parse(lines[i]!);
    },
    validate: () => {
      for (let i = 0; i < n; i++) {
        const r = parsed[i]!;
        if (!(fastShapeOk(r, true, false) && isRecordKind(r.kind) && fastBodyOk(r.kind, r.body, true, true))) throw new Error('bench: fast validation refused a record');
      }
    },
    canonical: () => {
      // reader.ts canonicalPrefixEnd: the body's JSON.stringify text, found at the line's start
      for (let i = 0; i < n; i++) {
        const r = parsed[i]!;
        const body = JSON.stringify(r.body);
        const epoch = String(r.epoch);
        const ok = body.indexOf('\\ud') < 0 && lines[i]!.startsWith('{"body":') && lines[i]!.startsWith(body, 8) && lines[i]!.startsWith(',"epoch":', 8 + body.length) && lines[i]!.startsWith(epoch, 17 + body.length);
        if (!ok) throw new Error('bench: not canonical');
        prefixEnds[i] = 17 + body.length + epoch.length;
      }
    },
    hash: () => {
      for (let i = 0; i < n; i++) if (!hashedPrefixMatches(parsed[i]!, lines[i]!, prefixEnds[i]!)) throw new Error('bench: hash mismatch');
    },
  };
  const samples: Record<string, number[]> = { sha: [], verify: [] };
  for (const name of Object.keys(stages)) samples[name] = [];
  for (let rep = -1; rep < reps; rep++) {
    const shaMs = await time(() => rawSha(allInputs));
    const verifyMs = await time(() => verifyJournalText(text, { publicKey }));
    const stageMs: Record<string, number> = {};
    for (const [name, fn] of Object.entries(stages)) stageMs[name] = await time(fn);
    if (rep < 0) continue; // warm-up
    samples.sha!.push(shaMs);
    samples.verify!.push(verifyMs);
    for (const [name, ms] of Object.entries(stageMs)) samples[name]!.push(ms);
  }
  const us = (ms: number) => (ms * 1000) / n;
  const verifyUs = us(median(samples.verify!));
  let sum = 0;
  const parts = Object.keys(stages).map((name) => {
    const v = us(median(samples[name]!));
    sum += v;
    return `${name} ${v.toFixed(2)}`;
  });
  await closeVerifyPool();
  process.stdout.write(
    `verify (streaming) per record (µs): ${parts.join(' + ')} + other ${(verifyUs - sum).toFixed(2)} = ${verifyUs.toFixed(2)}   ` +
      `(raw SHA-256 ${us(median(samples.sha!)).toFixed(2)}; 50 % of raw = ${(2 * us(median(samples.sha!))).toFixed(2)})\n`,
  );
}
