/**
 * Following a run from the CLI: print progress lines while it runs — each once its record is durable
 * (followRun) — then its outcome — as text
 * for a person, or as one JSON object `{ id, status, reason, journal, fingerprint, publicKey }`
 * for a script — and refusals (a pin mismatch, a foreign journal, a domain that cannot be found)
 * the same way, with the invocation's unchanged status. Shared by run, resume and approve.
 *
 * Every command printed names the store the command used (cli/hints.ts), so it works as printed;
 * a store without files (Redis) has no journal path, and its hints take the id with --redis.
 */
import { isWeftError } from '../journal/errors.js';
import { FileStore } from '../stores/file.js';
import { bounded } from '../machines/untrusted-text.js';
import { journalFileOf, type JournalStore } from '../journal/store.js';
import type { JournalRecord } from '../journal/records.js';

import type { InvocationHandle, InvocationResult } from '../runtime/handle.js';
import { invocationStatus } from '../runtime/list.js';
import { UsageError } from './args.js';
import { DomainLoadError } from './domain-loader.js';
import { progressLine } from './progress.js';
import { outcomeLine } from './outcome-line.js';
import { shellWord } from '../queue/shell-words.js';
import { approverWord, command, flagsFor, locate, type Location } from './hints.js';
import { printJsonLine } from './json-line.js';
import { EXIT, exitCodeForRefusal, REFUSED, refusalCode } from './exit-codes.js';
import type { Workspace } from './workspace.js';

/**
 * Print the run's progress while it runs: a line for each record once it is in the journal (read
 * back, or its write acknowledged — the handle's 'durable' event), never for one only chained (a
 * staged completion, observation or plan: runtime/recorder.ts), as the viewer shows only durable
 * records. A record the run went on from but that never became durable (the store went away before
 * the write that carried it) is still told once the run has stopped — the person saw it happen —
 * marked `— not yet recorded` (`— may not be recorded` when the write's outcome is unknown): a
 * resume asks for it again.
 */
export async function followRun(handle: InvocationHandle, print: boolean): Promise<InvocationResult> {
  if (!print) return handle.done;
  const passed: JournalRecord[] = [];
  let durableUpTo = -1;
  handle.on('record', (record: JournalRecord, replayed: boolean) => {
    if (!replayed) passed.push(record);
  });
  handle.on('durable', (record: JournalRecord, replayed: boolean) => {
    durableUpTo = Math.max(durableUpTo, record.seq);
    while (passed.length > 0 && passed[0]!.seq <= durableUpTo) passed.shift(); // told now: only what is still waiting stays
    const line = progressLine(record, replayed);
    if (line) process.stdout.write(`${line}\n`);
  });
  const result = await handle.done;
  const mark = result.suspension?.code === 'journal.outcome_unknown' ? ' — may not be recorded (the write that carried it was cut off)' : ' — not yet recorded';
  for (const record of passed) {
    if (record.seq <= durableUpTo) continue;
    const line = progressLine(record, false);
    if (line) process.stdout.write(`${line}${mark}\n`);
  }
  return result;
}

/**
 * The outcome of a run: as text, with the commands to go on — each one naming the store this
 * command used (`location`), so it works as printed — or, with --json, as its one line.
 */
export function printOutcome(ws: Workspace, result: InvocationResult, json: boolean, location: Location, why?: string): number {
  const journal = journalFileOf(ws.store, result.id) ?? null;
  if (json) {
    printJsonLine(outcomeLine(ws, result));
  } else {
    const id = result.id;
    const lines = [``, `invocation  ${id}`, `status      ${result.status}${result.reason ? ` — ${result.reason}` : ''}`];
    if (why) lines.push(`why         ${why}`);
    if (result.fingerprint) lines.push(`fingerprint ${result.fingerprint}`);
    // A store without files (Redis) has no journal to point at: say how to get one.
    lines.push(journal ? `journal     ${journal}` : `journal     in ${ws.store.name} (a file of it: ${command('export', id, location)} > bundle.json)`, `public key  ${ws.publicKeyFile}`);
    // Runs as printed (cli/hints.ts): a real approver name, the location and dispatch flags; the choices sit behind a `#`.
    if (result.status === 'awaiting_approval') lines.push(``, `approve with: weft approve ${id} --by ${approverWord()} ${flagsFor('approve', location)}   # or add --reject; --note TEXT says why`);
    else if (result.status === 'suspended') lines.push(``, `suspended (${result.suspension?.class ?? 'runtime'}); next: ${locate(result.suspension?.fix ?? `weft resume ${id}`, id, location)}`);
    else if (result.status === 'hibernated') lines.push(``, `resume with: ${command('resume', id, location)}`);
    else if (result.status === 'waiting_timer') lines.push(``, `sleeping${result.wakeAt ? ` until ${result.wakeAt}` : ''}: weft serve wakes it when it is due, or then: ${command('resume', id, location)}`);
    else {
      const target = journal ? shellWord(journal) : `${id} ${location.store}`;
      // weft inspect reads the store as the run's other commands name it (it takes no durability flag: it only reads).
      const inspectFlags = location.store.replace(/ ?--redis-durability \S+/, '');
      lines.push(
        ``,
        `audit with:  weft verify ${target} --public-key ${shellWord(ws.publicKeyFile)}`,
        `replay with: weft replay ${target}`,
        `see it:      weft inspect ${inspectFlags} --public-key ${shellWord(ws.publicKeyFile)}   # a page on 127.0.0.1: its statechart, plans, timeline and journal`,
      );
    }
    process.stdout.write(lines.join('\n') + '\n');
  }
  if (result.status === 'suspended' && result.error !== undefined && process.env.WEFT_DEBUG) process.stderr.write(`${(result.error as Error)?.stack ?? String(result.error)}\n`);
  return exitCodeOfResult(result);
}

/**
 * Why a run that failed or suspended in a gap-path epoch got there, from its journal: the planner's
 * "no method covers …" (runtime/describe-epoch.ts `noMethod`), which the model's failure to author
 * a plan would otherwise hide. Undefined for any other outcome, or when the journal cannot be read.
 */
export async function gapPathWhy(store: JournalStore, result: InvocationResult): Promise<string | undefined> {
  if (result.status !== 'failed' && result.status !== 'suspended') return undefined;
  const { describeInvocation } = await import('../runtime/describe-load.js');
  const last = (await describeInvocation(store, result.id).catch(() => undefined))?.epochs.at(-1);
  return last?.source === 'gap' && last.noMethod !== null && last.plan === null ? `the gap path: ${bounded(last.noMethod, 400)}, and the model authored no plan for it` : undefined;
}

/**
 * A command that stopped before its run could report: a refusal (a pin mismatch, a foreign
 * journal, a domain that cannot be found) or an error outside the run (the store unreachable).
 * Say why and what to do — the commands in the message naming `location` — and (with --json) print
 * the invocation's line anyway, with its status as the store now shows it: a script always gets
 * its line. Exit and refusal codes from the one table (cli/exit-codes.ts): 2 for a command line to
 * fix (a usage error, a domain or an invocation that is not there), 1 otherwise; `WEFT_DEBUG=1` adds the stack of an error that is not a refusal.
 */
export async function printRefusal(commandName: string, id: string | null, where: string | JournalStore | null, err: unknown, json: boolean, note?: string, location?: Location): Promise<number> {
  const refusal = err instanceof UsageError || err instanceof DomainLoadError || isWeftError(err);
  const text = err instanceof Error ? err.message : String(err);
  const told = location ? locate(text, id ?? undefined, location) : text;
  const message = bounded(told, 2000) + (note && isWeftError(err) && err.code === 'pin.mismatch' ? ` (${note})` : '');
  const refused = refusalCode(err);
  const exitCode = exitCodeForRefusal(refused);
  if (!refusal && process.env.WEFT_DEBUG) process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
  if (json) {
    // `where` is null when the store itself could not be opened: nothing can be said of the invocation.
    const store = typeof where === 'string' ? new FileStore(where) : where;
    // Refused as unknown (missing, or another tenant's: --tenant), nothing of it is told — its status and journal included.
    const known = refused !== REFUSED.notFound && id !== null && store !== null && (await store.length(id).catch(() => 0)) > 0;
    const status = known ? await invocationStatus(store!, id!).catch(() => null) : null;
    const journal = known ? (journalFileOf(store!, id!) ?? null) : null;
    printJsonLine({ id, status, reason: message, journal, fingerprint: null, publicKey: null, refused });
  }
  process.stderr.write(`weft ${commandName}: ${message}\n`);
  return exitCode;
}

/** A followed run's exit code: 1 when it ended failed or suspended (the run failed as a result), else 0 — resting is done. */
export function exitCodeOfResult(result: Pick<InvocationResult, 'status'>): number {
  return result.status === 'failed' || result.status === 'suspended' ? EXIT.failed : EXIT.done;
}
