/**
 * Crash injection for the crash-resume tests — inert unless its environment variables are set:
 *
 * - `WEFT_CRASH_AFTER_APPEND=N`: SIGKILL this process right after the N-th durable journal append
 *   (after its fsync returned) — one kill point per record, since every record is its own append.
 * - `WEFT_CRASH_IN_EFFECT=N`: SIGKILL inside the N-th world-effect actuator call, after its effect
 *   is durable and before the runtime records its completion.
 * - `WEFT_COUNT_APPENDS=1`: print `appends: N` to stderr at exit (how many kill points a run has).
 *
 * SIGKILL is what a power cut or an OOM kill looks like to the process: no handlers, no flushing.
 */
import type { JournalStore } from '../journal/store.js';
import type { ExampleHooks } from '../examples/registry.js';

export function crashHooks(): { hooks: ExampleHooks; wrapStore(store: JournalStore): void } {
  const afterAppend = Number(process.env.WEFT_CRASH_AFTER_APPEND ?? 0);
  const inEffect = Number(process.env.WEFT_CRASH_IN_EFFECT ?? 0);
  const count = process.env.WEFT_COUNT_APPENDS === '1';
  let appends = 0;
  let effects = 0;
  const kill = () => process.kill(process.pid, 'SIGKILL');
  if (count) process.on('exit', () => process.stderr.write(`appends: ${appends}\n`));
  return {
    hooks: inEffect > 0 ? { afterEffect: () => (++effects === inEffect ? kill() : undefined) } : {},
    wrapStore(store) {
      if (afterAppend <= 0 && !count) return;
      const append = store.append.bind(store);
      store.append = async (lease, expectedSeq, records) => {
        await append(lease, expectedSeq, records);
        appends++;
        if (appends === afterAppend) kill();
      };
    },
  };
}
