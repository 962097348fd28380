/**
 * An observer yields the CPU to the work it observes: `weft inspect` lowers its own scheduling
 * priority (a nice value, 10 by default, `--nice N` to choose, `--nice 0` to keep it), so that on a
 * busy machine it is the viewer that waits — its pages lag a little — and not the runs it watches.
 * On an idle machine a nice value changes nothing.
 *
 * Linux keeps a nice value per thread, and `setpriority` on the process id moves only the main
 * thread: every thread already running (V8's helpers, libuv's pool) is moved by its id from
 * /proc/self/task; threads made later inherit the value of the thread that makes them. Elsewhere
 * the process id moves the whole process. A value is only ever raised (lower priority, which needs
 * no privilege), never lowered below what the process was given; failures are reported, not fatal.
 */
import { existsSync, readdirSync } from 'node:fs';
import os from 'node:os';

/** The nice values a user may ask for: 0 (unchanged) to 19 (the lowest priority). */
export const NICE_RANGE = { min: 0, max: 19 } as const;

/**
 * Lower this process's priority to nice `value` (when it is not lower already). Returns the nice
 * value the process now has, or an error message when it could not be changed.
 */
export function yieldCpu(value: number): { nice: number } | { error: string } {
  const current = os.getPriority();
  if (value <= current) return { nice: current };
  try {
    const threads = taskIds();
    if (threads.length === 0) os.setPriority(value);
    for (const tid of threads) {
      try {
        if (os.getPriority(tid) < value) os.setPriority(tid, value);
      } catch (err) {
        if (existsSync(`/proc/self/task/${tid}`)) throw err; // not a thread that ended meanwhile
      }
    }
    const now = os.getPriority();
    return now >= value ? { nice: now } : { error: `the priority stayed at nice ${now}` };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** The ids of this process's threads (Linux), or none where /proc does not list them. */
function taskIds(): number[] {
  try {
    return readdirSync('/proc/self/task')
      .filter((name) => /^[0-9]+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}
