/**
 * Parallel `verifyJournalText` for large journals: the text is cut into line ranges, one per
 * worker thread (min(os.availableParallelism(), 4) of them, kept in a pool for the process, never
 * keeping it alive when idle); each worker runs the reader's keyless chain walk over its range
 * (journal/verify-worker.ts) and the main thread links the chunks — each head's prev against the
 * previous chunk's last hash, at the head's own link check; a seal ending a chunk refuses the next
 * chunk's head — takes the EARLIEST problem by seq, and settles the verdict exactly as the
 * single-thread path does (reader.ts `settleVerdict`: the seal's key check, torn and unparseable
 * lines, "not sealed"). Same verdict, field for field (test/journal-verify-parallel.test.ts).
 *
 * Small inputs (< 4,000 lines with the pool running, < 100,000 when it must be started), a single
 * available core, or a module running from its
 * .ts source (vitest: a worker cannot load .ts on Node 20 without a loader) take the single-thread
 * streaming path; so does any worker failure (the verdict never depends on the workers).
 *
 * Effect side (worker_threads, os): listed in test/purity.test.ts's edgeFiles.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import {
  journalBodyEnd,
  linesParse,
  settleVerdict,
  verifyJournalText,
  type ChainState,
  type JournalVerdict,
  type LineWalk,
  type ReadOptions,
  type SealInfo,
  type WalkProblem,
} from './reader.js';
import type { ChunkJob } from './verify-worker.js';

/** Fewer lines: single-thread, when the worker pool is already running. */
export const PARALLEL_MIN_LINES = 4000;
/**
 * Fewer lines: single-thread, when the pool would have to be started first. Starting it (threads,
 * and each loading the reader and zod and warming its JIT) costs ~0.2 s on a 2-core machine — the
 * single-thread time of ~40k records — so a one-shot `weft verify` only gains on large files.
 */
export const PARALLEL_COLD_MIN_LINES = 100_000;

export interface ParallelOptions extends ReadOptions {
  /**
   * Fewer lines than this: single-thread. Default: 4,000 with the pool running, 100,000 when it
   * must be started first (PARALLEL_MIN_LINES, PARALLEL_COLD_MIN_LINES).
   */
  minLines?: number;
  /** Worker threads (default min(os.availableParallelism(), 4)); 1 or less: single-thread. */
  workers?: number;
  /** Chunks to cut the text into (default: one per worker). */
  chunks?: number;
}

/** The default worker count: min(os.availableParallelism(), 4). */
export function defaultWorkerCount(): number {
  return Math.min(availableParallelism(), 4);
}

const workerUrl = new URL(import.meta.url.endsWith('.ts') ? './verify-worker.ts' : './verify-worker.js', import.meta.url);

/** True when worker threads can be started from here (the compiled .js module next to its worker). */
export function parallelAvailable(): boolean {
  return !import.meta.url.endsWith('.ts') && existsSync(fileURLToPath(workerUrl));
}

interface ChunkReply {
  id: number;
  walk: LineWalk;
  state: ChainState;
}

interface Slot {
  worker: Worker;
  inFlight: number;
}

class VerifyPool {
  private readonly slots: Slot[] = [];
  private readonly pending = new Map<number, { slot: Slot; resolve: (r: ChunkReply) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  broken = false;

  constructor(readonly size: number) {
    for (let i = 0; i < size; i++) {
      const worker = new Worker(workerUrl);
      const slot: Slot = { worker, inFlight: 0 };
      worker.unref(); // an idle pool never keeps the process alive
      worker.on('message', (reply: ChunkReply) => {
        const job = this.pending.get(reply.id);
        if (!job) return;
        this.pending.delete(reply.id);
        if (--slot.inFlight === 0) worker.unref();
        job.resolve(reply);
      });
      worker.on('error', (err) => this.fail(err));
      worker.on('exit', (code) => this.fail(new Error(`verify worker exited (${code})`)));
      this.slots.push(slot);
    }
  }

  run(index: number, job: Omit<ChunkJob, 'id'>): Promise<ChunkReply> {
    if (this.broken) return Promise.reject(new Error('verify pool is closed'));
    const slot = this.slots[index % this.slots.length]!;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { slot, resolve, reject });
      if (slot.inFlight++ === 0) slot.worker.ref(); // a job in flight keeps the process alive
      slot.worker.postMessage({ ...job, id } satisfies ChunkJob);
    });
  }

  private fail(err: Error): void {
    if (pool === this) pool = undefined;
    this.broken = true;
    for (const job of this.pending.values()) job.reject(err);
    this.pending.clear();
  }

  async close(): Promise<void> {
    this.broken = true;
    if (pool === this) pool = undefined;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}

let pool: VerifyPool | undefined;

function poolOf(size: number): VerifyPool {
  if (!pool || pool.size !== size) {
    void pool?.close();
    pool = new VerifyPool(size);
  }
  return pool;
}

/** Terminate the worker pool (tests, benchmarks); the next parallel verify starts a new one. */
export async function closeVerifyPool(): Promise<void> {
  await pool?.close();
}

interface Chunk {
  start: number;
  end: number;
  firstSeq: number;
}

/** Cut [0, bodyEnd) into about `count` ranges of whole lines; also counts the lines. */
function plan(text: string, bodyEnd: number, count: number): { chunks: Chunk[]; lines: number } {
  const chunks: Chunk[] = [];
  let next = Math.ceil(bodyEnd / count);
  let pos = 0;
  let line = 0;
  let start = 0;
  let firstSeq = 0;
  while (pos < bodyEnd) {
    pos = text.indexOf('\n', pos) + 1;
    line++;
    if (pos >= next && pos < bodyEnd) {
      chunks.push({ start, end: pos, firstSeq });
      start = pos;
      firstSeq = line;
      next = Math.ceil((bodyEnd * (chunks.length + 1)) / count);
    }
  }
  if (start < bodyEnd) chunks.push({ start, end: bodyEnd, firstSeq });
  return { chunks, lines: line };
}

/** Whether `text` has at least `n` newline-terminated lines (stops counting there). */
function hasLines(text: string, n: number): boolean {
  let pos = 0;
  for (let k = 0; k < n; k++) {
    const nl = text.indexOf('\n', pos);
    if (nl < 0) return false;
    pos = nl + 1;
  }
  return true;
}

/**
 * `verifyJournalText` on worker threads for large inputs: the same verdict. Falls back to the
 * single-thread path for small inputs, one worker, a .ts module, or a failed worker.
 */
export async function verifyJournalTextParallel(text: string, options: ParallelOptions = {}): Promise<JournalVerdict> {
  const { minLines: minOption, workers = defaultWorkerCount(), chunks: chunkCount = workers, ...read } = options;
  const minLines = minOption ?? (pool !== undefined && pool.size === workers ? PARALLEL_MIN_LINES : PARALLEL_COLD_MIN_LINES);
  if (workers <= 1 || chunkCount <= 1 || !parallelAvailable() || !hasLines(text, Math.max(minLines, 2))) return verifyJournalText(text, read);
  const bodyEnd = journalBodyEnd(text);
  const { chunks } = plan(text, bodyEnd, chunkCount);
  let replies: ChunkReply[];
  try {
    const p = poolOf(workers);
    replies = await Promise.all(chunks.map((c, i) => p.run(i, { text: text.slice(c.start, c.end), firstSeq: c.firstSeq })));
  } catch {
    return verifyJournalText(text, read);
  }
  return link(text, bodyEnd, chunks, replies, read);
}

/** Link the chunks' walks into the journal's, then settle as the single-thread path does. */
function link(text: string, bodyEnd: number, chunks: readonly Chunk[], replies: readonly ChunkReply[], options: ReadOptions): JournalVerdict {
  const state: ChainState = { sealed: false };
  let passed = 0;
  let lastHash: string | undefined;
  let seal: SealInfo | undefined;
  let problem: WalkProblem | undefined;
  let end = bodyEnd;
  for (let c = 0; c < chunks.length; c++) {
    const chunk = chunks[c]!;
    const { walk, state: local } = replies[c]!;
    if (c === 0) {
      state.invocation = local.invocation;
      state.tenant = local.tenant;
      state.pin = local.pin;
    } else {
      // The head's checks that need the chunk before it, in checkRecordAt's order: the line parses
      // (the worker's), then "after the seal", …, then the link — which it met with this prev.
      const head = chunk.firstSeq;
      const headParseFailed = walk.problem?.seq === head && walk.problem.parse;
      let headProblem: string | undefined;
      if (!headParseFailed && state.sealed) headProblem = 'record after the seal (invocation.sealed must be the last record)';
      else if (walk.headPrev !== undefined && walk.headPrev !== lastHash) headProblem = `prev does not match the hash of seq ${head - 1} (the chain is broken)`;
      if (headProblem !== undefined) {
        problem = { seq: head, problem: headProblem, parse: false };
        end = text.indexOf('\n', chunk.start) + 1;
        break;
      }
    }
    if (walk.seal) {
      seal = walk.seal;
      state.sealed = true;
      state.fingerprint = local.fingerprint;
      state.keyId = local.keyId;
    }
    passed += walk.passed;
    if (walk.lastHash !== undefined) lastHash = walk.lastHash;
    if (walk.problem) {
      problem = walk.problem;
      end = chunk.start + walk.end;
      break;
    }
  }
  return settleVerdict(
    {
      passed,
      problem,
      lastHash,
      seal,
      torn: bodyEnd < text.length ? text.slice(bodyEnd) : undefined,
      restParses: () => linesParse(text, end, bodyEnd),
    },
    state,
    options,
  );
}
