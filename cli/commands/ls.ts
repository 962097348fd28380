/**
 * `weft ls [--dir D] [--json]` — the invocations in a workspace: id, status, records, tenant,
 * intent. Needs no domain: status comes from the journal (sealed endings), the latest snapshot
 * (resting states) and the status index (why a runtime stopped). A damaged journal (torn, empty,
 * foreign, unreadable) is listed as `damaged` with what is wrong and the command that repairs or
 * sets it aside; a suspended invocation with why it stopped and the command that continues it; a
 * fork with its parent ("fork of <id> at epoch N"), a superseded run with the fork that goes on from it.
 * Neither hides the others nor changes the exit code: 0 whenever the workspace could be listed;
 * 2 for a `--status` that is not a status (the message lists them), as for any usage error.
 * `--json` prints the summaries array (with problem, reason and fix where there are any); when the
 * store cannot be listed, one object saying why instead (json-line.ts). Each `fix` names this
 * command's store (--dir or --redis), so it works as printed. `--warnings` lists only the invocations
 * whose rules warned (behaviour flag 12), each warning under its row — epoch, what it warned on,
 * rule and reason — from the advisories in its inbox (runtime/list-warnings.ts).
 */
import { listInvocations, type InvocationSummary, type ListedStatus } from '../../runtime/list.js';
import { listWarnings, type WarnedInvocation } from '../../runtime/list-warnings.js';
import { inert } from '../terminal-text.js';
import { parseCommandArgs, UsageError, usageFailure } from '../args.js';
import { openStore, storeChoice, storeOptions, storeUsage } from '../store-choice.js';
import { workspaceDir } from '../workspace.js';
import { locate, locationOf, type Location } from '../hints.js';
import { redisServerName } from '../../redis/index.js';
import { printFailureLine, printJsonLine } from '../json-line.js';
import { isWeftError } from '../../journal/errors.js';
import { lineageText } from '../../journal/lineage.js';
import { EXIT, REFUSED } from '../exit-codes.js';

export const usage =
  `ls [--dir D] ${storeUsage} [--tenant T] [--status S] [--warnings] [--rebuild-index] [--json]\n` +
  '                                       list the invocations in a workspace or a Redis store (no domain needed); with Redis it reads\n' +
  '                                       the status index, which --rebuild-index recomputes from the journals first; --warnings: only\n' +
  '                                       the invocations whose rules warned, each warning (epoch, rule, reason) from its inbox';

/** Every status `--status` can ask for (a listed status: runtime/list.ts); the compiler checks none is missing. */
export const LISTED_STATUSES = ['pending', 'running', 'awaiting_approval', 'waiting_timer', 'hibernated', 'suspended', 'interrupted', 'completed', 'failed', 'handed_off', 'cancelled', 'superseded', 'damaged'] as const satisfies readonly ListedStatus[];
const everyStatusListed: [Exclude<ListedStatus, (typeof LISTED_STATUSES)[number]>] extends [never] ? true : never = true;
void everyStatusListed;

/** `--status S`: one of LISTED_STATUSES, or a UsageError listing them (a typo must not list nothing and exit 0). */
export function statusFlag(value: string | undefined): ListedStatus | undefined {
  if (value === undefined) return undefined;
  if (!(LISTED_STATUSES as readonly string[]).includes(value)) throw new UsageError(`--status ${JSON.stringify(value)} is not a status: use one of ${LISTED_STATUSES.join(', ')}`);
  return value as ListedStatus;
}

export async function run(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseCommandArgs(
      argv,
      { dir: { type: 'string' }, json: { type: 'boolean' }, tenant: { type: 'string' }, status: { type: 'string' }, warnings: { type: 'boolean' }, 'rebuild-index': { type: 'boolean' }, ...storeOptions },
      { min: 0, max: 0 },
    );
    statusFlag(args.strings.status);
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('ls', usage, err);
    throw err;
  }
  const dir = workspaceDir(args.strings.dir);
  let rows: Array<InvocationSummary | WarnedInvocation>;
  let where = dir;
  let location: Location;
  try {
    const choice = storeChoice(dir, args.strings);
    location = locationOf(choice);
    where = choice.redis ? redisServerName(choice.redis.url) : dir; // an unreachable Redis is named by its server, never its password
    const store = await openStore(choice);
    where = store.name;
    if (args.flags['rebuild-index']) {
      const rebuild = (store as { rebuildIndex?: () => Promise<{ added: string[]; reindexed: string[] }> }).rebuildIndex;
      if (!rebuild) throw new UsageError('--rebuild-index is for a Redis store (--redis URL): a workspace on disk has no index to rebuild');
      const { added, reindexed } = await rebuild.call(store);
      process.stderr.write(`rebuilt the index of ${where}: ${reindexed.length} invocation(s), ${added.length} missing from the registry\n`);
    }
    const filter = { ...(args.strings.tenant === undefined ? {} : { tenant: args.strings.tenant }), ...(args.strings.status === undefined ? {} : { status: args.strings.status }) };
    // Each row's command, written without a location by the listing, names this store (cli/hints.ts).
    const listed = args.flags.warnings ? await listWarnings(store, filter) : await listInvocations(store, filter);
    rows = listed.map((row) => (row.fix === undefined ? row : { ...row, fix: locate(row.fix, row.id, location) }));
  } catch (err) {
    if (err instanceof UsageError) return usageFailure('ls', usage, err);
    // Only the workspace itself being unreadable gets here: each invocation's own trouble is a row.
    const message = `cannot list ${where}: ${err instanceof Error ? err.message : String(err)}`;
    printFailureLine(message, isWeftError(err) ? err.code : REFUSED.error, EXIT.failed);
    process.stderr.write(`weft ls: ${message}\n`);
    return EXIT.failed;
  }
  if (args.flags.json) {
    printJsonLine(rows);
    return EXIT.done;
  }
  if (rows.length === 0) {
    process.stdout.write(args.flags.warnings ? `no invocation in ${where} has warnings\n` : `no invocations in ${where}\n`);
    return EXIT.done;
  }
  for (const r of rows) {
    // A shadow run is marked beside its status, so no one takes it for a real run.
    process.stdout.write(`${r.id}  ${(r.shadow ? `${r.status} (shadow)` : r.status).padEnd(17)} ${String(r.records).padStart(4)} records  ${r.tenant}  ${JSON.stringify(r.intent.length > 80 ? `${r.intent.slice(0, 79)}…` : r.intent)}\n`);
    const why = [r.problem, r.reason].filter((text) => text !== undefined && text !== '').join('; ');
    if (why) process.stdout.write(`    ${why}\n`);
    const lineage = lineageText(r);
    if (lineage) process.stdout.write(`    ${lineage}\n`);
    // Each warning a rule raised (flag 12): advisory only, it stopped nothing.
    for (const w of 'warnings' in r ? r.warnings : []) process.stdout.write(`    warning  epoch ${w.epoch} ${w.subject === 'step' ? `step #${w.step ?? '?'}` : w.subject}  ${inert(w.rule)}: ${inert(w.reason)}\n`);
    if (r.fix) process.stdout.write(`    → ${r.fix}\n`);
  }
  return EXIT.done;
}
