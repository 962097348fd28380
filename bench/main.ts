/**
 * `npm run bench -- <suite> [options]` — Weft's benchmarks. Each suite measures its figures beside
 * a baseline taken in the same run (raw SHA-256, raw fsync, …) and prints both with their ratio,
 * plus the machine it ran on: these machines are shared and noisy, so only ratios travel.
 */
import '../journal/sha256-node.js';
import '../journal/ed25519-node.js';
import { machineLine } from './machine.js';

const suites: Record<string, () => Promise<{ run(argv: string[]): Promise<void> }>> = {
  journal: () => import('./journal.js'),
  htn: () => import('./htn.js'),
  runtime: () => import('./runtime.js'),
  redis: () => import('./redis.js'),
  workers: () => import('./workers.js'),
  'inspect-list': () => import('./inspect-list.js'),
  inspect: () => import('./inspect.js'),
  mining: () => import('./mining.js'),
  startup: () => import('./startup.js'),
  otel: () => import('./otel.js'),
};

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  const load = name ? suites[name] : undefined;
  if (!load) {
    process.stderr.write(`usage: npm run bench -- <${Object.keys(suites).join('|')}> [options]\n`);
    process.exitCode = 2;
    return;
  }
  process.stdout.write(`${machineLine()}\n`);
  await (await load()).run(rest);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
