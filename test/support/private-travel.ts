/**
 * A user's own domain module with redaction marks, written outside the repo for the viewer's
 * security tests: the built travel domain under the name `private-travel`, whose card (the charge's
 * `card` arg and result, and where the observed world names it) and the address a message went to
 * (`message.send`'s result `to`) are never shown to a viewer, nor the amount charged — marked by
 * OPERATOR (`charge_card`), a number, which the runtime writes under the operator's actuator too and
 * the viewer redacts in a plan tree's positional args. The marks are its own declaration (`defineDomain({ redact })`): the travel
 * library — its digest, its golden journals — is untouched. With `limit`, a strict spending policy
 * as strict-travel.ts has (bookings over it need a person's approval). In a process whose
 * WEFT_TEST_STEP_DELAY_MS is set, every actuator waits that long first (a run a page can watch).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './cli.js';

/** The values the marks hide in a travel run (examples/travel/state.ts's traveller). */
export const PRIVATE_CARD = 'card-visa-4242';
export const PRIVATE_EMAIL = 'ana.costa@example.com';

/** Write `<dir>/private-travel.mjs` and return its path. */
export function writePrivateTravelDomain(dir: string, { limit, version = 'private' }: { limit?: number; version?: string } = {}): string {
  const dist = (p: string) => JSON.stringify(path.join(repoRoot, 'dist', p));
  const file = path.join(dir, `private-travel${limit === undefined ? '' : '-strict'}.mjs`);
  writeFileSync(
    file,
    [
      `import travel from ${dist('examples/travel/index.js')};`,
      `import { defineDomain, spendApprovalPolicy } from ${dist('index.js')};`,
      `const delay = Number(process.env.WEFT_TEST_STEP_DELAY_MS ?? 0);`,
      `const slowed = (a) => delay <= 0 ? a : { ...a, run: async (args, ctx) => { await new Promise((r) => setTimeout(r, delay)); return a.run.call(a, args, ctx); } };`,
      `export default defineDomain({`,
      `  name: 'private-travel', libraries: travel.libraries, observe: travel.observe, evaluables: travel.evaluables,`,
      `  actuators: (ctx) => travel.actuators(ctx).map(slowed), model: (ctx) => travel.model(ctx), intent: travel.intent, asOf: travel.asOf,`,
      limit === undefined ? `  policy: travel.policy, policies: travel.policies,` : `  policy: spendApprovalPolicy({ version: ${JSON.stringify(version)}, limit: ${limit}, amountArg: 'amount' }),`,
      `  redact: {`,
      `    args: { 'card.charge': ['card'], charge_card: ['amount'] }, results: { 'card.charge': ['card'], 'message.send': ['to'] },`,
      `    observations: ['objects.[type=card].name', 'facts.[0=card-of].2'],`,
      `  },`,
      `});`,
    ].join('\n'),
  );
  return file;
}
