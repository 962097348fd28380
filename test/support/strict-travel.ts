/**
 * A user's own domain module, written outside the repo for CLI tests: the built travel domain
 * under the name `strict-travel` with a strict spending policy (any booking over `limit` needs a
 * person's approval; the booking epoch spends 780 EUR). Its policy version is part of the pin, so
 * tests that must not share pins pass their own `version`.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './cli.js';

/** Write `<dir>/strict-travel.mjs` and return its path. */
export function writeStrictTravelDomain(dir: string, { version = 'strict', limit = 100 }: { version?: string; limit?: number } = {}): string {
  const dist = (p: string) => JSON.stringify(path.join(repoRoot, 'dist', p));
  const file = path.join(dir, 'strict-travel.mjs');
  writeFileSync(
    file,
    [
      `import travel from ${dist('examples/travel/index.js')};`,
      `import { defineDomain, spendApprovalPolicy } from ${dist('index.js')};`,
      `export default defineDomain({`,
      `  name: 'strict-travel', libraries: travel.libraries, observe: travel.observe, evaluables: travel.evaluables,`,
      `  actuators: (ctx) => travel.actuators(ctx), model: (ctx) => travel.model(ctx), intent: travel.intent, asOf: travel.asOf,`,
      `  policy: spendApprovalPolicy({ version: ${JSON.stringify(version)}, limit: ${limit}, amountArg: 'amount' }),`,
      `});`,
    ].join('\n'),
  );
  return file;
}
