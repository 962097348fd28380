/**
 * Reading a policy pack: JSON text or a value, validated by the schema (schema.ts). A pack that is not
 * JSON, or not a valid pack, is a RulePackError naming where it came from and the first issues with
 * their paths (`rules[2].cap: Too small…`). Pure: the caller reads the file or the blob.
 */
import { RulePackError } from './errors.js';
import { rulePackSchema, type RulePack } from './schema.js';

const MAX_ISSUES = 3;

function pathOf(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : out === '' ? String(part) : `.${String(part)}`;
  return out || '(the pack)';
}

/** The pack `value` is, or RulePackError naming `where`. */
export function parseRulePack(value: unknown, where: string): RulePack {
  const parsed = rulePackSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.slice(0, MAX_ISSUES).map((i) => `${pathOf(i.path)}: ${i.message}`);
  if (parsed.error.issues.length > MAX_ISSUES) issues.push(`and ${parsed.error.issues.length - MAX_ISSUES} more`);
  throw new RulePackError(where, issues);
}

/** The pack in JSON `text`, or RulePackError naming `where` (text that is not JSON included). */
export function parseRulePackText(text: string, where: string): RulePack {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new RulePackError(where, [`not JSON (${(err as Error).message})`]);
  }
  return parseRulePack(value, where);
}
