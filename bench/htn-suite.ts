/**
 * The IPC 2020 total-order suite on disk (../shared/ipc2020-to): which domains and problems exist,
 * which domain file goes with each problem, and the anchor figures from ANCHOR.md. Shared by the
 * benchmark (bench/htn.ts) and the HDDL tests. Effect side: reads the file system.
 *
 * Problems are the top-level `*.hddl` files that are not domain files, in natural order
 * (p2 before p10); Entertainment and the Monroe domains pair `<problem>-domain.hddl` with each
 * problem, the others use `domain.hddl`. Sub-folders (extra instances) are not part of the suite.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SuiteProblem {
  readonly domain: string;
  readonly name: string;
  readonly domainFile: string;
  readonly problemFile: string;
}

export interface SuiteDomain {
  readonly name: string;
  readonly dir: string;
  readonly problems: SuiteProblem[];
}

/** ../shared/ipc2020-to relative to the repository root (works from src and from dist). */
export function defaultSuiteRoot(): string {
  let dir = fileURLToPath(new URL('.', import.meta.url));
  for (let i = 0; i < 4; i++) {
    const candidate = resolve(dir, '../shared/ipc2020-to');
    if (existsSync(candidate)) return candidate;
    dir = resolve(dir, '..');
  }
  return resolve(fileURLToPath(new URL('.', import.meta.url)), '../../shared/ipc2020-to');
}

const naturalCompare = (a: string, b: string): number => a.localeCompare(b, 'en', { numeric: true });

export function listDomains(root: string): SuiteDomain[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('_'))
    .map((e) => e.name)
    .sort(naturalCompare)
    .map((name) => {
      const dir = join(root, name);
      const shared = join(dir, 'domain.hddl');
      const problems = readdirSync(dir)
        .filter((f) => f.endsWith('.hddl') && !f.endsWith('domain.hddl'))
        .sort(naturalCompare)
        .map((f) => {
          const own = join(dir, f.replace(/\.hddl$/, '-domain.hddl'));
          return { domain: name, name: f.replace(/\.hddl$/, ''), domainFile: existsSync(own) ? own : shared, problemFile: join(dir, f) };
        });
      return { name, dir, problems };
    });
}

/** Anchor figures (HyperTensioN, 30 s) by domain, from ANCHOR.md's table. */
export function readAnchor(root: string): Map<string, { problems: number; solved: number }> {
  const out = new Map<string, { problems: number; solved: number }>();
  const file = join(root, 'ANCHOR.md');
  if (!existsSync(file)) return out;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^\|\s*([A-Za-z][\w-]*)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|/.exec(line);
    if (m) out.set(m[1]!, { problems: Number(m[2]), solved: Number(m[3]) });
  }
  return out;
}
