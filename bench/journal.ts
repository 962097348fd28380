/**
 * `npm run bench -- journal [--records N] [--fsync-records N] [--reps R] [--dir DIR]` — the
 * journal's throughput, each figure beside a baseline measured in the same run, interleaved
 * (baseline, figure, baseline, figure, …) so machine noise hits both; medians of R repetitions,
 * and each ratio also by minima (on a shared VM the fastest rep is the one least disturbed).
 *
 *   1. append+hash into the memory store (JournalWriter: schema check, canonicalize, SHA-256,
 *      store.append), vs raw SHA-256 of the exact `hashedBytes(prev, content)` of the same records.
 *   2. append+hash+fdatasync into the file store at 1 and 16 records per append (JournalWriter.appendAll:
 *      schema check, canonicalize, SHA-256, lease fence check, write + fdatasync), vs a raw append of
 *      the same JSONL bytes to a plain file (open, write + fdatasync per batch), flushed the same
 *      way: the default store ('auto', one invocation open) flushes blocking (fdatasyncSync), as
 *      does its raw baseline; `flush: 'thread-pool'` and its baseline flush by fdatasync on libuv's
 *      thread pool. The writer is created before and closed after the timed region (lease + pinned
 *      record: once per invocation), each with a FileStore of its own.
 *      Goal: file-store time / raw time ≤ 1.5×.
 *      Then 8 invocations appending at once through one default store (which then flushes on the
 *      pool), one record per append, vs 8 plain files appended and flushed at once on the pool,
 *      and vs the same appends flushed blocking one at a time (the best a store that always blocks
 *      could do).
 *   3. full verify (encoding, shape, canonicality, chain, hash, body schema, seal) of an N-record
 *      sealed journal, vs raw SHA-256 of each record's hashed bytes, interleaved: the byte verifier
 *      (JournalByteVerifier over the file's bytes: what `weft verify` runs), and for reference the
 *      text reader (verifyJournalText, streaming; readJournalText, records kept). Goal: ≥ 50 % of
 *      raw SHA-256, one thread each.
 *
 * The raw SHA-256 baseline is the fastest call node:crypto has for one record's bytes: the one-shot
 * `crypto.hash(…, 'hex')`. `createHash().update().digest()` is printed beside it: the same OpenSSL
 * SHA-256, but 2–5× the time per record on object and Buffer churn — a baseline that slow would
 * flatter every ratio (the figures before the byte verifier were measured against it).
 *
 * Bodies are realistic: step.dispatched / step.completed pairs with small JSON args and results,
 * ~300 bytes a line. SHA-256 is node:crypto (journal/sha256-node.ts) for both sides.
 */
import * as crypto from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { canonicalize } from '../journal/canonical.js';
import { chainRecord, genesisHash, hashedBytes } from '../journal/chain.js';
import { nodeSha256 } from '../journal/sha256-node.js';
import { sha256Implementation, digestOf } from '../journal/digest.js';
import { readJournalText, verifyJournalText } from '../journal/reader.js';
import { type JournalRecord, type Pin } from '../journal/records.js';
import { JournalByteVerifier } from '../journal/verify-bytes.js';
import { publicKeyOf, signFingerprint, signingKeyFromSecret } from '../journal/seal.js';
import { MemoryStore } from '../stores/memory.js';
import { FileStore, type FileStoreOptions } from '../stores/file.js';
import { JournalWriter, type Genesis, type RecordDraft } from '../journal/writer.js';
import { rawAppends } from './raw-appends.js';

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

function minimum(xs: number[]): number {
  return Math.min(...xs);
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

/** The raw baseline: node:crypto's one-shot SHA-256 of each input (its fastest call per record). */
function rawSha(inputs: readonly Uint8Array[]): void {
  for (const bytes of inputs) crypto.hash('sha256', bytes, 'hex');
}

/** The same hash through a Hash object per input, Buffer out (for comparison only). */
function rawShaCreateHash(inputs: readonly Uint8Array[]): void {
  for (const bytes of inputs) nodeSha256(bytes);
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const rate = (records: number, ms: number) => (records * 1000) / ms;

/** Run each function `reps` times, interleaved (a, b, c, a, b, c, …) after one untimed warm-up of each; ms per run by name. */
async function interleaved<K extends string>(reps: number, runs: Record<K, (rep: number) => unknown>): Promise<Record<K, number[]>> {
  const names = Object.keys(runs) as K[];
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  for (let rep = -1; rep < reps; rep++) {
    for (const name of names) {
      const ms = await time(() => runs[name](rep));
      if (rep >= 0) samples[name].push(ms);
    }
  }
  return samples;
}

/** The JSONL bytes a JournalWriter writes for `invocation`'s records after the pinned one, `batch` records per buffer. */
function appendBuffers(invocation: string, ds: readonly RecordDraft[], batch: number): Buffer[] {
  const lines = chained(invocation, ds).slice(1).map((r) => canonicalize(r) + '\n');
  const buffers: Buffer[] = [];
  for (let i = 0; i < lines.length; i += batch) buffers.push(Buffer.from(lines.slice(i, i + batch).join(''), 'utf8'));
  return buffers;
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
  const mem = await interleaved(reps, {
    baseline: () => rawSha(hashInputs),
    measured: async (rep) => {
      const writer = await JournalWriter.create(new MemoryStore(), genesis(`inv-mem-${rep + 1}`), { writer: WRITER });
      for (const d of ds) await writer.append(d);
    },
  });
  const memRate = rate(N, median(mem.measured));
  const memRaw = rate(N, median(mem.baseline));
  process.stdout.write(
    `append+hash, memory store (JournalWriter.append, 1/append)   ${fmt(memRate).padStart(9)} rec/s   ` +
      `raw SHA-256 of the same bytes ${fmt(memRaw).padStart(9)} rec/s   ${((100 * memRate) / memRaw).toFixed(1)} % of raw\n`,
  );

  // 2. append+hash+fdatasync into the file store --------------------------------------------------
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // Each writer gets a FileStore of its own, as a process running that one invocation would have:
  // 'auto' (the default) decides by how many journals its store has open for appending.
  const modes = { auto: {}, pool: { flush: 'thread-pool' } } as const satisfies Record<string, FileStoreOptions>;
  const storeFor = (mode: keyof typeof modes) => new FileStore(path.join(dir, `store-${mode}`), modes[mode]);
  for (const batch of [1, 16]) {
    const fds = ds.slice(0, batch === 1 ? F : F * 4);
    const count = fds.length;
    const id = (rep: number) => `inv-file-${batch}-${String(rep + 2).padStart(3, '0')}`;
    // The baseline's bytes: the same JSONL the store writes for each rep's invocation, prepared
    // outside the timed region, one Buffer per append.
    const prepared = new Map<number, Buffer[]>();
    for (let rep = -1; rep < reps; rep++) prepared.set(rep, appendBuffers(id(rep), fds, batch));
    // Writers are created (lease taken, invocation.pinned written) before and closed after the
    // timed region: both are once per invocation, not per append, and cost several fsyncs.
    const writers = { auto: new Map<number, JournalWriter>(), pool: new Map<number, JournalWriter>() };
    for (const mode of ['auto', 'pool'] as const) {
      for (let rep = -1; rep < reps; rep++) writers[mode].set(rep, await JournalWriter.create(storeFor(mode), genesis(id(rep)), { writer: WRITER }));
    }
    const appendAll = async (writer: JournalWriter) => {
      for (let i = 0; i < fds.length; i += batch) await writer.appendAll(fds.slice(i, i + batch));
    };
    const runs = await interleaved(reps, {
      rawBlocking: (rep) => rawAppends(path.join(dir, `raw-blocking-${batch}-${rep + 1}.jsonl`), prepared.get(rep)!, false),
      auto: (rep) => appendAll(writers.auto.get(rep)!),
      rawPool: (rep) => rawAppends(path.join(dir, `raw-pool-${batch}-${rep + 1}.jsonl`), prepared.get(rep)!, true),
      pool: (rep) => appendAll(writers.pool.get(rep)!),
    });
    for (const group of Object.values(writers)) for (const writer of group.values()) await writer.close();
    const figure = (label: string, measured: number[], raw: number[], rawLabel: string) =>
      `${label.padEnd(59)}${fmt(rate(count, median(measured))).padStart(9)} rec/s   ${rawLabel} ${fmt(rate(count, median(raw))).padStart(9)} rec/s   ` +
      `time ${(median(measured) / median(raw)).toFixed(2)}× raw (goal ≤ 1.5×; by minima ${(minimum(measured) / minimum(raw)).toFixed(2)}×)\n`;
    process.stdout.write(
      figure(`append+hash+fdatasync, file store, ${String(batch).padStart(2)}/append`, runs.auto, runs.rawBlocking, 'raw write+fdatasync     ') +
        figure(`  the same, flush: 'thread-pool'`, runs.pool, runs.rawPool, 'raw, fdatasync on the pool'),
    );
  }

  // 2b. invocations appending at the same time, one record per append -------------------------------
  {
    const K = 8;
    const per = Math.max(1, Math.floor(F / K));
    const fds = ds.slice(0, per);
    const id = (rep: number, k: number) => `inv-many-${String(rep + 2).padStart(3, '0')}-${k}`;
    const prepared = new Map<number, Buffer[][]>();
    for (let rep = -1; rep < reps; rep++) prepared.set(rep, Array.from({ length: K }, (_, k) => appendBuffers(id(rep, k), fds, 1)));
    // One store for each rep's K invocations, as one process running them at once.
    const writers = new Map<number, JournalWriter[]>();
    for (let rep = -1; rep < reps; rep++) {
      const store = storeFor('auto');
      const group: JournalWriter[] = [];
      for (let k = 0; k < K; k++) group.push(await JournalWriter.create(store, genesis(id(rep, k)), { writer: WRITER }));
      writers.set(rep, group);
    }
    const file = (kind: string, rep: number, k: number) => path.join(dir, `raw-many-${kind}-${rep + 1}-${k}.jsonl`);
    const runs = await interleaved(reps, {
      pool: (rep) => Promise.all(prepared.get(rep)!.map((buffers, k) => rawAppends(file('pool', rep, k), buffers, true))),
      blocking: async (rep) => {
        for (const [k, buffers] of prepared.get(rep)!.entries()) await rawAppends(file('blocking', rep, k), buffers, false);
      },
      weft: (rep) =>
        Promise.all(
          writers.get(rep)!.map(async (writer) => {
            for (const d of fds) await writer.append(d);
          }),
        ),
    });
    for (const group of writers.values()) for (const writer of group) await writer.close();
    const count = K * per;
    process.stdout.write(
      `${`append+hash+fdatasync, file store, ${K} at once, 1/append`.padEnd(59)}${fmt(rate(count, median(runs.weft))).padStart(9)} rec/s   ` +
        `raw, ${K} files at once ${fmt(rate(count, median(runs.pool))).padStart(9)} rec/s   time ${(median(runs.weft) / median(runs.pool)).toFixed(2)}× raw ` +
        `(by minima ${(minimum(runs.weft) / minimum(runs.pool)).toFixed(2)}×; libuv's pool: ${process.env.UV_THREADPOOL_SIZE ?? 4} threads)\n` +
        `${' '.repeat(61)}raw, flush blocking ${fmt(rate(count, median(runs.blocking))).padStart(9)} rec/s   (one flush at a time: what a store that always blocks could do at best; ` +
        `weft does ${(median(runs.blocking) / median(runs.weft)).toFixed(2)}× that)\n`,
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
  const bytes = new TextEncoder().encode(text);
  const allInputs = [...sample, seal].map((r) => hashedBytes(r.prev, r));
  const n = allInputs.length;
  const publicKey = publicKeyOf(key);
  let fastShare = 0;
  // Interleaved, one of each per rep after one warm-up each: the raw baselines, then the verifiers.
  const runs: Record<string, () => unknown> = {
    raw: () => rawSha(allInputs),
    rawCreateHash: () => rawShaCreateHash(allInputs),
    bytes: () => {
      const verifier = new JournalByteVerifier({ publicKey });
      verifier.push(bytes);
      const v = verifier.end();
      if (!v.ok || v.count !== n) throw new Error(`bench journal did not verify: ${v.error?.message}`);
      fastShare = verifier.fastRecords / n;
    },
    stream: () => {
      const v = verifyJournalText(text, { publicKey });
      if (!v.ok || v.count !== n) throw new Error(`bench journal did not verify: ${v.error?.message}`);
    },
    read: () => {
      const r = readJournalText(text, { publicKey });
      if (!r.ok) throw new Error(`bench journal did not verify: ${r.error?.message}`);
    },
  };
  const verSamples: Record<string, number[]> = await interleaved(3 * reps, runs);
  const us = (name: string) => (median(verSamples[name]!) * 1000) / n;
  const verRaw = rate(n, median(verSamples.raw!));
  process.stdout.write(
    `raw SHA-256 of each record's hashed bytes (prev ‖ canonical content), ${fmt(n)} records: ` +
      `crypto.hash one-shot ${fmt(verRaw)} rec/s (${us('raw').toFixed(2)} µs) — the baseline; ` +
      `createHash().update().digest() ${fmt(rate(n, median(verSamples.rawCreateHash!)))} rec/s (${us('rawCreateHash').toFixed(2)} µs)\n`,
  );
  const line = (label: string, name: string, extra = '') => {
    const r = rate(n, median(verSamples[name]!));
    const byMinima = (100 * minimum(verSamples.raw!)) / minimum(verSamples[name]!);
    process.stdout.write(
      `${label.padEnd(59)}${fmt(r).padStart(9)} rec/s   ${us(name).toFixed(2)} µs/rec   ${((100 * r) / verRaw).toFixed(1)} % of raw (goal ≥ 50 %; by minima ${byMinima.toFixed(1)} %)${extra}\n`,
    );
  };
  line('verify bytes (JournalByteVerifier: weft verify, log, replay)', 'bytes', `   fast path ${(100 * fastShare).toFixed(1)} % of records`);
  line('verify text (verifyJournalText, streaming)', 'stream');
  line('verify text, records kept (readJournalText)', 'read');
  process.stdout.write(
    `  byte verify per record: ${us('bytes').toFixed(2)} µs = SHA-256 ${us('raw').toFixed(2)} µs + everything else ${(us('bytes') - us('raw')).toFixed(2)} µs ` +
      `(scan, shape, chain, gathering the hashed bytes); 50 % of raw allows ${us('raw').toFixed(2)} µs for everything else\n`,
  );
}
