/**
 * Preloaded (`node --import`) into a process bench/startup.ts starts: when the process exits, it
 * writes its own CPU time (`process.cpuUsage()`, user + system, µs) as one JSON line to fd 3, the
 * pipe the bench opened for it. The child's own clock is exact to the microsecond; the kernel's
 * count of a waited-for child (/proc's cutime) is in 10 ms ticks, too coarse for a 70 ms start.
 * Nothing is written when fd 3 is not open, so the module is harmless anywhere else.
 */
import { writeSync } from 'node:fs';

process.on('exit', () => {
  const { user, system } = process.cpuUsage();
  try {
    writeSync(3, `${JSON.stringify({ user, system })}\n`);
  } catch {
    // fd 3 not open: started by something other than the bench.
  }
});
