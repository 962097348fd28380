/**
 * Crash injection for the crash-resume tests — inert unless its environment variables are set:
 *
 * - `WEFT_CRASH_AFTER_APPEND=N`: SIGKILL this process right after the N-th durable journal append
 *   (after its fsync returned) — one kill point per record, since every record is its own append.
 * - `WEFT_CRASH_IN_EFFECT=N`: SIGKILL when the N-th successful call of an actuator other than the
 *   observe actuator (a run or a compensation) returns — after its effect is done and before the
 *   runtime records its completion. It wraps the domain's actuators, so it works for any domain.
 * - `WEFT_CRASH_BEFORE=<kind>:N`: SIGKILL right BEFORE the N-th append of a record of that kind —
 *   e.g. `step.completed:3`: the third step's effect is done (on a worker, in the BullMQ mode) and
 *   its outcome is in hand, but its completion was never recorded.
 * - `WEFT_CRASH_AFTER=<kind>:N`: SIGKILL right AFTER the durable append that holds the N-th record
 *   of that kind (e.g. `step.dispatched:5`: written ahead, the job not yet dispatched).
 * - `WEFT_COUNT_APPENDS=1`: print `appends: N` to stderr at exit (how many kill points a run has).
 * - `WEFT_INTERRUPT_AFTER=<kind>:N`: send this process SIGINT (not SIGKILL) right after the durable
 *   append that holds the N-th record of that kind — a Ctrl-C that lands mid-run at a chosen point,
 *   the same on every machine, for a run that never waits on anything (cli/interrupt.ts).
 *
 * SIGKILL is what a power cut or an OOM kill looks like to the process: no handlers, no flushing.
 */
import type { Actuator } from '../actors/actuator.js';
import type { JournalStore } from '../journal/store.js';

export interface CrashHooks {
  /** Wraps actuators so the N-th effect kills the process (identity when not asked for). */
  wrapActuators(actuators: Actuator[], observe: string): Actuator[];
  wrapStore(store: JournalStore): void;
}

export function crashHooks(): CrashHooks {
  const afterAppend = Number(process.env.WEFT_CRASH_AFTER_APPEND ?? 0);
  const inEffect = Number(process.env.WEFT_CRASH_IN_EFFECT ?? 0);
  const count = process.env.WEFT_COUNT_APPENDS === '1';
  const [beforeKind, beforeNth] = (process.env.WEFT_CRASH_BEFORE ?? '').split(':');
  const beforeCount = Number(beforeNth ?? 0);
  let seenKind = 0;
  const [afterKind, afterNth] = (process.env.WEFT_CRASH_AFTER ?? '').split(':');
  const afterCount = Number(afterNth ?? 0);
  let seenAfter = 0;
  const [interruptKind, interruptNth] = (process.env.WEFT_INTERRUPT_AFTER ?? '').split(':');
  const interruptCount = Number(interruptNth ?? 0);
  let seenInterrupt = 0;
  let appends = 0;
  let effects = 0;
  const kill = () => process.kill(process.pid, 'SIGKILL');
  const afterEffect = () => (++effects === inEffect ? kill() : undefined);
  if (count) process.on('exit', () => process.stderr.write(`appends: ${appends}\n`));
  return {
    wrapActuators(actuators, observe) {
      if (inEffect <= 0) return actuators;
      return actuators.map((a) => {
        if (a.name === observe) return a;
        const compensate = a.compensate;
        return {
          ...a,
          run: async (args, ctx) => {
            const result = await a.run.call(a, args, ctx);
            afterEffect();
            return result;
          },
          ...(compensate
            ? {
                compensate: async (args: unknown, result: unknown, ctx: Parameters<NonNullable<Actuator['compensate']>>[2]) => {
                  const out = await compensate.call(a, args, result, ctx);
                  afterEffect();
                  return out;
                },
              }
            : {}),
        };
      });
    },
    wrapStore(store) {
      if (afterAppend <= 0 && !count && !(beforeKind && beforeCount > 0) && !(afterKind && afterCount > 0) && !(interruptKind && interruptCount > 0)) return;
      const append = store.append.bind(store);
      store.append = async (lease, expectedSeq, records) => {
        for (const record of records) if (record.kind === beforeKind && ++seenKind === beforeCount) kill();
        await append(lease, expectedSeq, records);
        appends++;
        for (const record of records) if (record.kind === afterKind && ++seenAfter === afterCount) kill();
        if (appends === afterAppend) kill();
        for (const record of records) if (record.kind === interruptKind && ++seenInterrupt === interruptCount) process.kill(process.pid, 'SIGINT');
      };
    },
  };
}
