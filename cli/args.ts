/**
 * A tiny argv parser for the `weft` subcommands: a thin wrapper over node:util `parseArgs`
 * (strict: unknown options and missing option values are errors) that turns its exceptions into
 * a `UsageError`, which every command maps to exit code 2 with its usage line (cli/exit-codes.ts).
 *
 * No dependency; no I/O besides what the caller does with the result.
 */
import { parseArgs } from 'node:util';
import { EXIT, REFUSED } from './exit-codes.js';
import { printFailureLine } from './json-line.js';

/** The command line itself is wrong: the command prints the message and its usage, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

export interface ParsedArgs {
  positionals: string[];
  strings: Record<string, string | undefined>;
  flags: Record<string, boolean>;
  /** The values of a repeatable string option (`multiple: true`), in the order given ([] when absent). */
  lists: Record<string, string[]>;
}

/**
 * Parse `argv` against `options`, requiring between `min` and `max` positionals.
 * Throws UsageError (never exits) so commands stay testable in-process.
 */
export function parseCommandArgs(argv: string[], options: OptionSpec, positionals: { min: number; max: number }): ParsedArgs {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0] ?? 'bad arguments');
  }
  const count = parsed.positionals.length;
  if (count < positionals.min) throw new UsageError(`missing argument (expected ${positionals.min}, got ${count})`);
  if (count > positionals.max) throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[positionals.max])}`);
  const strings: Record<string, string | undefined> = {};
  const flags: Record<string, boolean> = {};
  const lists: Record<string, string[]> = {};
  for (const [name, spec] of Object.entries(options)) {
    const value = parsed.values[name];
    if (spec.type === 'string' && spec.multiple) lists[name] = Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
    else if (spec.type === 'string') strings[name] = typeof value === 'string' ? value : undefined;
    else flags[name] = value === true;
  }
  return { positionals: parsed.positionals, strings, flags, lists };
}

/** A flag's value as a positive integer of at most `maxDigits` digits, or a UsageError naming the flag. */
export function positiveInt(flag: string, value: string, maxDigits = 9): number {
  if (!new RegExp(`^[1-9][0-9]{0,${maxDigits - 1}}$`).test(value)) throw new UsageError(`${flag} must be a positive integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

/** Print a usage error the way every command does (with --json, its line too: json-line.ts), and return exit code 2. */
export function usageFailure(command: string, usage: string, err: UsageError): number {
  printFailureLine(err.message, REFUSED.usage, EXIT.usage);
  process.stderr.write(`weft ${command}: ${err.message}\nusage: weft ${usage}\n`);
  return EXIT.usage;
}
