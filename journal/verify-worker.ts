/**
 * A verify-parallel.ts worker: runs the reader's keyless chain walk (journal/reader.ts
 * `walkLines` — parse, shape, body, canonicality, hash against the stored `hash`, links inside the
 * chunk, genesis at seq 0, the seal's keyless checks) over one chunk of lines and posts back what
 * the main thread needs to link the chunks and settle the verdict. Effect side (worker_threads);
 * the checks themselves are the pure reader's.
 */
import { parentPort } from 'node:worker_threads';
import './sha256-node.js';
import { walkLines, type ChainState } from './reader.js';

export interface ChunkJob {
  id: number;
  /** The chunk's lines, each ending with a newline. */
  text: string;
  /** The seq (line index) of its first line. */
  firstSeq: number;
}

parentPort!.on('message', (job: ChunkJob) => {
  const state: ChainState = { sealed: false };
  const walk = walkLines(job.text, 0, job.text.length, job.firstSeq, state);
  parentPort!.postMessage({ id: job.id, walk, state });
});
