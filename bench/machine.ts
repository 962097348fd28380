/**
 * One line describing the machine a benchmark ran on (CPU model, cores, memory, Node version,
 * load average), printed before every suite so figures are never read without their context.
 */
import os from 'node:os';

export function machineLine(): string {
  const cpus = os.cpus();
  const load = os.loadavg().map((x) => x.toFixed(2)).join(' ');
  const mem = (os.totalmem() / 2 ** 30).toFixed(1);
  return `machine: ${cpus[0]?.model ?? 'unknown cpu'} × ${cpus.length}, ${mem} GiB, node ${process.version}, ${os.platform()} ${os.release()}, load ${load}`;
}
