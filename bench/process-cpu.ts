/**
 * CPU time of this process's descendants, by role, read from /proc (Linux): what the viewer's
 * processes (the viewer, its WebSocket client, the browser) spend beside what the run's processes
 * (this one, the workers, redis-server) spend for the same steps. On a shared machine wall-clock
 * throughput swings with the neighbours; CPU seconds per step do not, and on a machine whose cores
 * are all busy they say what watching costs the run. Elsewhere (no /proc) every figure is NaN.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on Linux

interface Proc {
  pid: number;
  ppid: number;
  /** utime + stime, in ms. */
  cpuMs: number;
  command: string;
}

function readProc(pid: number): Proc | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: the fields after the last ')' are fixed.
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    return { pid, ppid: Number(fields[1]), cpuMs: (Number(fields[11]) + Number(fields[12])) * TICK_MS, command };
  } catch {
    return undefined; // gone, or no /proc
  }
}

/** Every live descendant of `root` (root included), with its CPU so far. */
export function descendants(root = process.pid): Proc[] {
  let pids: number[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n)).map(Number);
  } catch {
    return [];
  }
  const procs = pids.map(readProc).filter((p): p is Proc => p !== undefined);
  const children = new Map<number, Proc[]>();
  for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const out: Proc[] = [];
  const self = procs.find((p) => p.pid === root);
  const stack = self ? [self] : [];
  while (stack.length > 0) {
    const p = stack.pop()!;
    out.push(p);
    stack.push(...(children.get(p.pid) ?? []));
  }
  return out;
}

export type Role = string;

/** CPU ms per role over an interval: take `start()` before, `end()` after (processes that exited in between are not counted). */
export function cpuByRole(classify: (p: { pid: number; command: string }) => Role | undefined): { start(): void; end(): Map<Role, number> } {
  let before = new Map<number, number>();
  return {
    start() {
      before = new Map(descendants().map((p) => [p.pid, p.cpuMs]));
    },
    end() {
      const used = new Map<Role, number>();
      for (const p of descendants()) {
        const role = classify(p);
        if (role === undefined) continue;
        used.set(role, (used.get(role) ?? 0) + p.cpuMs - (before.get(p.pid) ?? 0));
      }
      return used;
    },
  };
}
