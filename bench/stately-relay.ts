/**
 * `npm run bench -- inspect`, figure (d): what relaying runs to Stately's inspector costs the runtime
 * (issue 21). Two runtimes over the same store and dispatcher: one bare, one as `weft run|serve
 * --stately` builds it — its XState inspection observer and its store's durable appends feeding a
 * StatelyRelay in the runtime's own process (cli/stately-choice.ts) — with one inspector client, in
 * its own process (relay-client-child.ts), connected as the relay's bridge page is and parsing every
 * message. R rounds of the two arms back to back, order alternating; the figure is the median of the
 * rounds' ratios. Goal ≥ 0.9×. Beside it, this process's CPU time per step in each arm
 * (process.cpuUsage): on a shared machine wall-clock throughput swings with the neighbours, while
 * the CPU the relay adds to the runtime's process is what `--stately` itself costs.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { StatelyRelay } from '../inspector/stately/relay.js';

export interface RelayClientCounts {
  messages: number;
  actors: number;
  snapshots: number;
  events: number;
  dropped: number;
}

/** The inspector client in its own process. */
class RelayClient {
  private reported: ((c: RelayClientCounts) => void) | undefined;
  private ready: (() => void) | undefined;
  private constructor(private readonly child: ChildProcess) {
    child.on('message', (m: { ready?: boolean; report?: RelayClientCounts }) => {
      if (m.ready) this.ready?.();
      if (m.report) this.reported?.(m.report);
    });
  }

  static async connect(relay: StatelyRelay, children: Set<ChildProcess>): Promise<RelayClient> {
    const child = fork(fileURLToPath(new URL('./relay-client-child.js', import.meta.url)), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    children.add(child);
    child.once('exit', () => children.delete(child));
    const client = new RelayClient(child);
    await new Promise<void>((resolve) => {
      client.ready = resolve;
      child.send({ connect: { origin: `http://127.0.0.1:${relay.port}`, token: relay.token } });
    });
    return client;
  }

  report(): Promise<RelayClientCounts> {
    return new Promise((resolve) => {
      this.reported = resolve;
      this.child.send({ report: true });
    });
  }

  close(): void {
    this.child.send({ close: true });
  }
}

/** One arm's loads: steps/s, and how many steps they ran. */
export interface ArmRun {
  stepsPerS: number;
  steps: number;
}

export interface RelayFigures {
  label: string;
  without: number[];
  withRelay: number[];
  ratios: number[];
  /** This process's CPU µs per step, per arm. */
  cpuWithout: number[];
  cpuWithRelay: number[];
  /** Over the relayed arms: what the runtime published, what reached the client, what was dropped for it. */
  published: number;
  received: number;
  dropped: number;
}

/**
 * `count` rounds of `bare()` and `relayed()` (each one arm's loads, returning steps/s), order
 * alternating, with an inspector client connected to `relay` for the relayed arm.
 */
export async function relayRounds(
  label: string,
  relay: StatelyRelay,
  children: Set<ChildProcess>,
  arms: { bare: (tag: string) => Promise<ArmRun>; relayed: (tag: string) => Promise<ArmRun> },
  count: number,
  note: (line: string) => void,
): Promise<RelayFigures> {
  const f: RelayFigures = { label, without: [], withRelay: [], ratios: [], cpuWithout: [], cpuWithRelay: [], published: 0, received: 0, dropped: 0 };
  /** One arm: its steps/s and this process's CPU µs per step. */
  const measured = async (arm: (tag: string) => Promise<ArmRun>, tag: string) => {
    const cpu = process.cpuUsage();
    const run = await arm(tag);
    const used = process.cpuUsage(cpu);
    return { stepsPerS: run.stepsPerS, cpuPerStep: (used.user + used.system) / run.steps };
  };
  for (let p = 0; p < count; p++) {
    const bare = async () => {
      const m = await measured(arms.bare, `${label}-relay-bare-${p}`);
      f.without.push(m.stepsPerS);
      f.cpuWithout.push(m.cpuPerStep);
    };
    const relayed = async () => {
      const client = await RelayClient.connect(relay, children);
      const before = relay.stats();
      const m = await measured(arms.relayed, `${label}-relay-${p}`);
      f.withRelay.push(m.stepsPerS);
      f.cpuWithRelay.push(m.cpuPerStep);
      await relay.drain(5_000);
      // The last frames in flight reach the client (its counts are what it parsed).
      const published = relay.stats().published - before.published;
      let counts = await client.report();
      for (let waited = 0; counts.messages + counts.dropped < published && waited < 5_000; waited += 50) {
        await new Promise((r) => setTimeout(r, 50));
        counts = await client.report();
      }
      f.published += published;
      f.received += counts.messages;
      f.dropped += counts.dropped;
      client.close();
    };
    const order = p % 2 === 0 ? [bare, relayed] : [relayed, bare];
    for (const arm of order) await arm();
    f.ratios.push(f.withRelay.at(-1)! / f.without.at(-1)!);
    note(`${label}: relay round ${p + 1}/${count}: ${Math.round(f.without.at(-1)!)} steps/s bare, ${Math.round(f.withRelay.at(-1)!)} relayed; CPU ${Math.round(f.cpuWithout.at(-1)!)} → ${Math.round(f.cpuWithRelay.at(-1)!)} µs/step`);
  }
  return f;
}
