/**
 * The one skeleton of every command that continues an invocation — `approve`, `cancel`, `resume`
 * and `fork`: parse → open → call → follow → print. It parses the flags they share (the workspace,
 * `--domain`, `--tenant`, the model endpoint, the store, the dispatch, the signing key, `--json`)
 * with the command's own, opens the invocation once (open-invocation.ts: its pin, domain, model and
 * key), calls the command's verb, follows the run (follow.ts) and prints its outcome — or the
 * refusal, with the invocation's status as the store shows it. Every printed command names the
 * store this one used (hints.ts).
 *
 * A command file keeps only what is its own: its flags and their checks (`check`, before the
 * shared ones, so a command line is judged in the order it always was), its verb (`call`), and
 * its printing when it prints more than the outcome (`print`).
 */
import type { InvocationHandle, InvocationResult } from '../runtime/handle.js';
import { parseCommandArgs, UsageError, usageFailure, type OptionSpec, type ParsedArgs } from './args.js';
import { continueFlags, dispatchOptions } from './dispatch-choice.js';
import { followRun, printOutcome, printRefusal } from './follow.js';
import { locationOf, type Location } from './hints.js';
import { resumeOnInterrupt } from './interrupt.js';
import { openWorkspaceFor, type InvocationOpenOptions } from './open-invocation.js';
import { signingKeyOptions } from './signing-key-choice.js';
import { storeOptions } from './store-choice.js';
import { workspaceDir, type Workspace } from './workspace.js';

/** The flags every continuing command takes. */
export const continueOptions: OptionSpec = {
  dir: { type: 'string' },
  domain: { type: 'string' },
  tenant: { type: 'string' },
  'model-url': { type: 'string' },
  model: { type: 'string' },
  json: { type: 'boolean' },
  ...storeOptions,
  ...dispatchOptions,
  ...signingKeyOptions,
};

export type ContinueFlags = ReturnType<typeof continueFlags>;

/** What a command's own parts are handed once the command line is read. */
export interface ContinueContext {
  args: ParsedArgs;
  /** The invocation the command continues (its one positional). */
  id: string;
  dir: string;
  json: boolean;
  /** The store and dispatch flags as the printed commands repeat them (hints.ts). */
  location: Location;
  /** `{ tenant }` when `--tenant T` was given, else `{}`: what a verb's options spread. */
  tenant: { tenant?: string };
}

export interface ContinueCommand {
  name: string;
  usage: string;
  /** The command's own flags (beside continueOptions). */
  options: OptionSpec;
  /**
   * The command's own checks of its flags; throws UsageError. `shared()` gives the shared flags
   * checked (once), for a check that depends on them; otherwise they are checked after this.
   */
  check?(args: ParsedArgs, shared: () => ContinueFlags): void;
  /** Before anything is opened (outside the refusal's reach: `resume --quarantine-torn`). */
  prepare?(context: ContinueContext): Promise<void>;
  /** Whether a signal while it follows the run prints the resume line (interrupt.ts): approve, resume. */
  interruptible?: boolean;
  /** What the command adds to how the invocation is opened (crash hooks, `--rekey`, a Stately tap). */
  open?(context: ContinueContext): Promise<Partial<InvocationOpenOptions>>;
  /** The verb: a handle to follow, or an exit code when the command has already answered. */
  call(ws: Workspace, context: ContinueContext): Promise<InvocationHandle | number>;
  /** The outcome, printed; default printOutcome's. */
  print?(ws: Workspace, result: InvocationResult, context: ContinueContext): Promise<number> | number;
}

/** Run a continuing command over `argv` (see the header); returns its exit code. */
export async function continueCommand(argv: string[], command: ContinueCommand): Promise<number> {
  let args: ParsedArgs;
  let flags: ContinueFlags;
  try {
    args = parseCommandArgs(argv, { ...continueOptions, ...command.options }, { min: 1, max: 1 });
    const parsed = args;
    let shared: ContinueFlags | undefined;
    const sharedFlags = () => (shared ??= continueFlags(workspaceDir(parsed.strings.dir), parsed.strings));
    command.check?.(parsed, sharedFlags);
    flags = sharedFlags();
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(command.name, command.usage, err);
    throw err;
  }
  const { choice, dispatch } = flags;
  const context: ContinueContext = {
    args,
    id: args.positionals[0]!,
    dir: workspaceDir(args.strings.dir),
    json: args.flags.json === true,
    location: locationOf(choice, { queue: args.strings.queue, dispatch: args.strings.dispatch }),
    tenant: args.strings.tenant === undefined ? {} : { tenant: args.strings.tenant },
  };
  const { id, dir, json, location } = context;
  await command.prepare?.(context);
  const rested = command.interruptible ? resumeOnInterrupt(id, location) : () => undefined;
  let ws: Workspace | undefined;
  try {
    const own = (await command.open?.(context)) ?? {};
    ws = await openWorkspaceFor({
      dir,
      id,
      domain: args.strings.domain,
      model: { url: args.strings['model-url'], name: args.strings.model },
      store: choice,
      dispatch,
      queue: args.strings.queue,
      refusalWaitMs: flags.refusalWaitMs,
      signingKeyFile: args.strings['signing-key'],
      tenant: args.strings.tenant,
      ...own,
    });
    const handle = await command.call(ws, context);
    if (typeof handle === 'number') return handle;
    const result = await followRun(handle, !json);
    rested();
    return command.print ? await command.print(ws, result, context) : printOutcome(ws, result, json, location);
  } catch (err) {
    return printRefusal(command.name, id, ws?.store ?? (choice.redis ? null : dir), err, json, ws?.domainNote, location);
  } finally {
    rested(); // rested, ended or refused: a signal from now on is Node's again, never a "resume with"
  }
}
