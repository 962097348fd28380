/**
 * Every hint the CLI prints is a command that pastes and runs as printed. A hint names the store the
 * command used: `--dir D` for a workspace on disk; `--redis URL` for Redis — the URL this command
 * was given, quoted for the shell (`--redis "$WEFT_REDIS_URL"` only when that variable holds it: a
 * password then stays off the screen; once per command stderr says so) — with `--redis-prefix P` and
 * `--redis-durability relaxed` when they are not the defaults, and `--dir D` when keys and metadata
 * live in another folder than ./.weft — never the folder of a store that has nothing, never `null`.
 * The commands that dispatch (resume, approve, cancel) also get the `--dispatch` and `--queue` the
 * run used when they are not the defaults. A word the user fills in is a real one (the approver is
 * this user's name: `approverWord`), never a `<placeholder>` a shell reads as a redirection, and
 * prose after a command sits behind a `#`.
 *
 * Where the hint comes from does not know the flags: the runtime and the listing (runtime/list.ts,
 * the suspension's `fix`, a status note written by another process) name a command without a
 * location — `weft resume <id>` — and `locate` adds this command's location to each command about
 * that invocation. A command that already names a location is left as it is.
 */
import { userInfo } from 'node:os';
import path from 'node:path';
import { holdsCredentials } from '../redis/index.js';
import { REDIS_URL_VARIABLE, shellWord } from '../queue/shell-words.js';
import { workerCommand } from '../queue/bullmq.js';
import { domainFlag, type LoadedDomain } from './domain-loader.js';
import type { StoreChoice } from './store-choice.js';

let toldOfPassword = false;

/**
 * A Redis URL as this command's hints name it: the URL itself, quoted for the shell — or, when it
 * holds a password and WEFT_REDIS_URL holds that very URL, `"$WEFT_REDIS_URL"` (which works as
 * printed there), with once per command a line on stderr saying so. Never the variable when it is
 * unset or holds another URL: the hint would connect elsewhere, or nowhere.
 */
export function redisUrlInHints(url: string, variable: string | undefined = process.env.WEFT_REDIS_URL): string {
  const word = holdsCredentials(url) && variable === url ? REDIS_URL_VARIABLE : shellWord(url);
  if (word === REDIS_URL_VARIABLE && !toldOfPassword) {
    toldOfPassword = true;
    process.stderr.write(`weft: the Redis URL holds a password: the commands printed name it as ${REDIS_URL_VARIABLE}\n`);
  }
  return word;
}

/** The workspace a command uses without --dir (workspace.ts DEFAULT_DIR; not imported: verify and log stay light). */
const defaultWorkspace = () => path.resolve('.weft');

/** The commands whose first argument is an invocation id and which find it by the location flags. */
const ID_COMMANDS = ['resume', 'approve', 'replay', 'verify', 'log', 'export'] as const;

/** The commands that dispatch world effects: they take --dispatch and --queue. */
const DISPATCHING = new Set(['resume', 'approve', 'cancel']);

/** Where a command found its invocations, as flags: the store's, and the dispatch's for the commands that dispatch. */
export interface Location {
  /** `--dir D`, or `--redis URL [--redis-prefix P] [--redis-durability relaxed] [--dir D]`. */
  store: string;
  /**
   * `[--dispatch D] [--queue Q]`: the dispatch the command was given when not `auto`, and the queue
   * when it was given one (Redis mode only: a domain's default queue depends on the domain); '' otherwise.
   */
  queue: string;
}

/** The location of a store choice; `queue` and `dispatch`: where a resume or approve sends world effects. */
export function locationOf(choice: StoreChoice, options: { queue?: string | undefined; dispatch?: string | undefined } = {}): Location {
  const words: string[] = [];
  let queue = '';
  if (choice.redis) {
    words.push('--redis', redisUrlInHints(choice.redis.url));
    if (choice.redis.prefix !== 'weft') words.push('--redis-prefix', shellWord(choice.redis.prefix));
    if (choice.redis.durability !== 'strict') words.push('--redis-durability', choice.redis.durability);
    // Keys and the metadata of what was started here live in the workspace folder; ./.weft is the default.
    if (choice.dir !== defaultWorkspace()) words.push('--dir', shellWord(choice.dir));
    const dispatching = [
      ...(options.dispatch !== undefined && options.dispatch !== 'auto' ? ['--dispatch', shellWord(options.dispatch)] : []),
      ...(options.queue !== undefined ? ['--queue', shellWord(options.queue)] : []),
    ];
    queue = dispatching.join(' ');
  } else {
    words.push('--dir', shellWord(choice.dir));
  }
  return { store: words.join(' '), queue };
}

/** The flags `weft <verb>` takes to find what `location` names. */
export function flagsFor(verb: string, location: Location): string {
  return DISPATCHING.has(verb) && location.queue ? `${location.store} ${location.queue}` : location.store;
}

/** `weft <verb> <id>` with its location: a command that works as printed. */
export function command(verb: string, id: string, location: Location): string {
  return `weft ${verb} ${id} ${flagsFor(verb, location)}`;
}

/**
 * The approver a printed `weft approve` names: this user's login name, as a shell word — a real
 * value, so the command runs as printed (`$USER` may be unset, and `<you>` is a redirection).
 */
export function approverWord(): string {
  let name = '';
  try {
    name = userInfo().username;
  } catch {
    name = process.env.USER ?? process.env.LOGNAME ?? '';
  }
  return shellWord(name || 'me');
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Flags that take no value: a location goes after them (`weft resume X --quarantine-torn --dir D`). */
const BOOLEAN_FLAGS = ['quarantine-torn', 'reject', 'leave-to-serve', 'no-signature', 'hibernate', 'json'];

/**
 * `text` with the location added to every `weft <command> <id>` in it (and every `weft ls`) that
 * names none yet: after the id and the flags without a value that follow it, so `weft resume X
 * --quarantine-torn` stays readable and `weft approve X --by NAME` keeps its value by its flag.
 */
export function locate(text: string, id: string | undefined, location: Location): string {
  const ids = id === undefined ? '' : `(?:${ID_COMMANDS.join('|')}) ${escapeRegExp(id)}|`;
  const commands = new RegExp(`\\bweft (${ids}ls)((?: --(?:${BOOLEAN_FLAGS.join('|')}))*)(?![\\w.-])`, 'g');
  return text.replace(commands, (whole: string, head: string, _flags: string, at: number) =>
    namesLocation(text.slice(at + whole.length)) ? whole : `${whole} ${flagsFor(head.split(' ')[0]!, location)}`,
  );
}

/** Whether the flags that follow a command (up to its first word of prose) name a store already. */
function namesLocation(rest: string): boolean {
  let valueNext = false;
  for (const word of rest.split(' ').slice(1)) {
    if (/^--(?:dir|redis)\b/.test(word)) return true;
    if (word.startsWith('--')) valueNext = !BOOLEAN_FLAGS.includes(word.slice(2));
    else if (valueNext || word.startsWith('<') || word.startsWith('[')) valueNext = false;
    else return false;
  }
  return false;
}

/** A domain as the hint names it: its name (its queue) and what `--domain` takes to load it — a loaded domain, or a name that loads as it is. */
export type DomainNames = string | LoadedDomain;

export function namesOf(domain: DomainNames): { name: string; flag: string } {
  return typeof domain === 'string' ? { name: domain, flag: domain } : { name: domain.domain.name, flag: domainFlag(domain.ref) };
}

/**
 * The command that starts a worker for `domain`'s jobs in this store, as a user can run it. The
 * runtime keeps it (a refusal or suspension may quote it), so a URL with a password is named
 * `"$WEFT_REDIS_URL"` there; `printed`: for a line only this terminal sees, the URL as this
 * command's hints name it (redisUrlInHints: the URL itself unless that variable holds it).
 */
export function workerHint(choice: StoreChoice, queue: string | undefined, domain: DomainNames, { printed = false } = {}): string {
  const { name, flag } = namesOf(domain);
  const redisWord = choice.redis && printed ? redisUrlInHints(choice.redis.url) : undefined; // says once when the URL is named as "$WEFT_REDIS_URL"
  return workerCommand({ domain: flag, domainName: name, redisUrl: choice.redis?.url, redisPrefix: choice.redis?.prefix, queue, ...(redisWord === undefined ? {} : { redisWord }) });
}
