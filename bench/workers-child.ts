/**
 * A worker process for the `workers` bench suite (bench/workers.ts spawns it; never run by hand):
 *
 *   node dist/bench/workers-child.js weft <redis url> <bull prefix> <queue> <concurrency>
 *     — a Weft worker (queue/worker.ts startWorker) for the bench domain (bench/workers-domain.ts)
 *   node dist/bench/workers-child.js raw  <redis url> <bull prefix> <queue> <concurrency>
 *     — a raw BullMQ Worker whose processor returns at once, with the options startWorker gives its
 *       Worker (maxStalledCount 0, lockDuration 30 s) so that only the processor differs
 *
 * It prints `ready` once its Worker is connected, answers `cpu` on stdin with `cpu <µs>` (its own
 * user + system CPU so far), and on `stop` — or when stdin ends, i.e. the suite went away — closes
 * its Worker and exits (after 5 s it exits regardless).
 */
import '../journal/sha256-node.js';
import '../journal/ed25519-node.js';
import { createInterface } from 'node:readline';
import { Worker } from 'bullmq';
import { startWorker } from '../queue/worker.js';
import { benchDomain, RAW_RESULT } from './workers-domain.js';

async function main(): Promise<void> {
  const [mode, url, prefix, queue, concurrencyText] = process.argv.slice(2);
  const concurrency = Number(concurrencyText);
  if ((mode !== 'weft' && mode !== 'raw') || !url || !prefix || !queue || !Number.isSafeInteger(concurrency) || concurrency < 1) {
    throw new Error('usage: workers-child.js weft|raw <redis url> <bull prefix> <queue> <concurrency>');
  }
  let close: () => Promise<void>;
  if (mode === 'weft') {
    const running = await startWorker({ domain: benchDomain, connection: url, prefix, queue, concurrency });
    close = () => running.close();
  } else {
    const worker = new Worker(queue, async () => RAW_RESULT, { connection: { url }, prefix, concurrency, maxStalledCount: 0, lockDuration: 30_000 });
    worker.on('error', () => undefined);
    await worker.waitUntilReady();
    close = () => worker.close();
  }
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(0), 5_000).unref();
    void close()
      .catch(() => undefined)
      .finally(() => process.exit(0));
  };
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (line === 'cpu') {
      const cpu = process.cpuUsage();
      process.stdout.write(`cpu ${cpu.user + cpu.system}\n`);
    } else if (line === 'stop') stop();
  });
  lines.on('close', stop);
  process.once('SIGTERM', stop);
  process.stdout.write('ready\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`workers-child: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
