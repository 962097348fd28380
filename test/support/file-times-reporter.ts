/**
 * The per-file time report printed after every `npm test`: where the suite's time goes, so that a
 * file that has grown slow is seen the day it grows, not when the suite has doubled.
 *
 * For each test file it sums what the file cost its worker — importing the module (collect), the
 * setup file, and its tests and hooks (duration) — and prints the slowest files, then each project's
 * total beside the wall time it took. Files run concurrently, so the totals exceed the wall time; the
 * ratio of the two is the parallelism the run achieved. `WEFT_TEST_TIMES=<n>` prints the n slowest
 * (default 15; 0 prints none). Observability only: it asserts nothing and never fails a run.
 */
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

const DEFAULT_SHOWN = 15;

interface FileTime {
  file: string;
  project: string;
  ms: number;
  /** CPU the file cost, its worker's and its children's (test/support/child-scope.ts), where measured. */
  cpuMs?: number;
  /** Processes the file started (test/support/children.ts). */
  children?: number;
  tests: number;
}

function shownCount(): number {
  const text = process.env.WEFT_TEST_TIMES;
  if (text === undefined || text === '') return DEFAULT_SHOWN;
  const n = Number(text);
  return Number.isInteger(n) && n >= 0 ? n : DEFAULT_SHOWN;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export default class FileTimesReporter implements Reporter {
  private startedAt = 0;
  private readonly firstStart = new Map<string, number>();
  private readonly lastEnd = new Map<string, number>();

  onTestRunStart(): void {
    this.startedAt = performance.now();
  }

  onTestModuleStart(module: TestModule): void {
    const project = module.project.name || 'default';
    if (!this.firstStart.has(project)) this.firstStart.set(project, performance.now());
  }

  onTestModuleEnd(module: TestModule): void {
    this.lastEnd.set(module.project.name || 'default', performance.now());
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const shown = shownCount();
    if (shown === 0 || modules.length === 0) return;
    const times: FileTime[] = modules.map((m) => {
      const d = m.diagnostic();
      return {
        file: path.relative(process.cwd(), m.moduleId),
        project: m.project.name || 'default',
        ms: d.collectDuration + d.setupDuration + d.duration,
        cpuMs: (m.meta() as { cpuMs?: number }).cpuMs,
        children: (m.meta() as { children?: number }).children,
        tests: [...m.children.allTests()].length,
      };
    });
    times.sort((a, b) => b.ms - a.ms || a.file.localeCompare(b.file));
    const lines = [``, ` Time per file — the ${Math.min(shown, times.length)} slowest of ${times.length} (import + setup + tests and hooks; CPU: the file's worker and the processes it started):`];
    for (const t of times.slice(0, shown)) {
      const cpu = t.cpuMs === undefined ? '' : `, CPU ${seconds(t.cpuMs)}`;
      const children = t.children ? `, ${t.children} processes` : '';
      lines.push(`   ${seconds(t.ms).padStart(8)}  ${t.file} (${t.project}, ${t.tests} tests${cpu}${children})`);
    }
    const projects = [...new Set(times.map((t) => t.project))].sort();
    for (const project of projects) {
      const total = times.filter((t) => t.project === project).reduce((sum, t) => sum + t.ms, 0);
      const wall = (this.lastEnd.get(project) ?? 0) - (this.firstStart.get(project) ?? 0);
      const parallelism = wall > 0 ? ` — parallelism ${(total / wall).toFixed(1)}` : '';
      const measured = times.filter((t) => t.project === project && t.cpuMs !== undefined);
      const cpu = measured.length === 0 ? '' : `, ${seconds(measured.reduce((sum, t) => sum + t.cpuMs!, 0))} of CPU`;
      lines.push(` ${project}: ${seconds(total)} of test time in ${seconds(Math.max(0, wall))} wall${parallelism}${cpu}`);
    }
    lines.push(` whole run: ${seconds(performance.now() - this.startedAt)} wall`, '');
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}
