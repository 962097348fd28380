/**
 * Judging a model's reply — a pure function of the recorded reply text and the pinned library, so
 * replay re-derives exactly the same acceptance or rejection. Model output is data: it is parsed
 * as JSON and checked against a schema and the library; it is never evaluated.
 *
 * Parse replies: `{ "goal": { "task", "args" } }` naming a task (compound or primitive) the
 * library declares, with one arg per parameter of the right type (numbers for `number`, object
 * names otherwise), or `{ "done": true, "summary" }`.
 * Author replies (the gap path): `{ "steps": [{ "operator", "args" }] }` over the library's
 * operators — the fragment is then certified by the planner like any other epoch.
 *
 * Under behaviour flag 1 (`ReplyRules`), the JSON is parsed strictly (a duplicate member name, a
 * nesting deeper than 32, a lone surrogate are refused, never "last one wins"), an arg is at most
 * `maxArgChars` long and holds no control or bidi-override character, a summary is at most
 * `maxSummaryChars`, and every reason quotes the reply's text only as a bounded prefix.
 */
import { z } from 'zod';
import type { Library } from '../htn/library/schema.js';
import type { Goal } from './context.js';
import { parseStrictJson } from './strict-json.js';
import { quote, unsafeCharacter } from './untrusted-text.js';

/** The pinned caps a judge applies (flag 1); absent for journals pinned before it. */
export interface ReplyRules {
  maxArgChars: number;
  maxSummaryChars: number;
}

export type ParseVerdict =
  | { kind: 'goal'; goal: Goal }
  | { kind: 'done'; summary: string }
  | { kind: 'rejected'; reason: string };

export type AuthorVerdict = { kind: 'fragment'; steps: Goal[] } | { kind: 'rejected'; reason: string };

const arg = z.union([z.string().min(1), z.number().finite()]);
const parseReplySchema = z.union([
  z.strictObject({ goal: z.strictObject({ task: z.string().min(1), args: z.array(arg) }) }),
  z.strictObject({ done: z.literal(true), summary: z.string() }),
]);
const authorReplySchema = z.strictObject({
  steps: z.array(z.strictObject({ operator: z.string().min(1), args: z.array(arg) })).min(1),
});

function parseJson(text: string, rules: ReplyRules | undefined): { ok: true; value: unknown } | { ok: false; reason: string } {
  if (rules) {
    const parsed = parseStrictJson(text);
    return parsed.ok ? parsed : { ok: false, reason: parsed.reason };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, reason: `the reply is not valid JSON (${(err as Error).message}); reply with one JSON object only` };
  }
}

function schemaReason(error: z.ZodError, shape: string): string {
  const issue = error.issues[0]!;
  const where = issue.path.length ? ` at ${issue.path.join('.')}` : '';
  return `the reply does not match ${shape}${where}: ${issue.message}`;
}

/** Check a call's args against declared parameters; returns a reason or undefined. */
function checkArgs(what: string, name: string, params: Array<{ name: string; type: string }>, args: Array<string | number>, rules: ReplyRules | undefined): string | undefined {
  if (args.length !== params.length) {
    return `${what} ${name} takes ${params.length} argument(s) (${params.map((p) => `${p.name}: ${p.type}`).join(', ')}), the reply gave ${args.length}`;
  }
  const show = (a: string | number) => (rules ? (typeof a === 'string' ? quote(a) : String(a)) : JSON.stringify(a));
  for (let i = 0; i < params.length; i++) {
    const p = params[i]!;
    const a = args[i]!;
    if (p.type === 'number' && typeof a !== 'number') return `${what} ${name} argument ${i + 1} (${p.name}) must be a number, got ${show(a)}`;
    if (p.type !== 'number' && typeof a !== 'string') return `${what} ${name} argument ${i + 1} (${p.name}) must be the name of a ${p.type}, got ${show(a)}`;
    if (typeof a === 'string' && a.startsWith('?')) return `${what} ${name} argument ${i + 1} must be ground, got the variable ${rules ? quote(a) : a}`;
    if (rules && typeof a === 'string') {
      if (a.length > rules.maxArgChars) return `${what} ${name} argument ${i + 1} (${p.name}) is ${a.length} characters, over the pinned cap of ${rules.maxArgChars}`;
      const unsafe = unsafeCharacter(a);
      if (unsafe) return `${what} ${name} argument ${i + 1} (${p.name}) holds the control or bidi character ${unsafe}; send plain names`;
    }
  }
  return undefined;
}

export function judgeParseReply(text: string, library: Library, rules?: ReplyRules): ParseVerdict {
  const json = parseJson(text, rules);
  if (!json.ok) return { kind: 'rejected', reason: json.reason };
  const parsed = parseReplySchema.safeParse(json.value);
  if (!parsed.success) return { kind: 'rejected', reason: schemaReason(parsed.error, '{"goal":{"task","args"}} or {"done":true,"summary"}') };
  const reply = parsed.data;
  if ('done' in reply) {
    if (rules && reply.summary.length > rules.maxSummaryChars) {
      return { kind: 'rejected', reason: `the summary is ${reply.summary.length} characters, over the pinned cap of ${rules.maxSummaryChars}; summarize in one sentence` };
    }
    return { kind: 'done', summary: reply.summary };
  }
  const { task, args } = reply.goal;
  const decl = library.tasks.find((t) => t.name === task) ?? library.operators.find((o) => o.name === task);
  if (!decl) {
    const known = [...library.tasks.map((t) => t.name), ...library.operators.map((o) => o.name)].sort();
    return { kind: 'rejected', reason: `unknown task ${rules ? quote(task) : JSON.stringify(task)}; the library knows: ${known.join(', ')}` };
  }
  const problem = checkArgs('task', task, decl.params, args, rules);
  return problem ? { kind: 'rejected', reason: problem } : { kind: 'goal', goal: { task, args } };
}

export function judgeAuthorReply(text: string, library: Library, rules?: ReplyRules): AuthorVerdict {
  const json = parseJson(text, rules);
  if (!json.ok) return { kind: 'rejected', reason: json.reason };
  const parsed = authorReplySchema.safeParse(json.value);
  if (!parsed.success) return { kind: 'rejected', reason: schemaReason(parsed.error, '{"steps":[{"operator","args"}]}') };
  const steps: Goal[] = [];
  for (const step of parsed.data.steps) {
    const op = library.operators.find((o) => o.name === step.operator);
    if (!op) {
      return { kind: 'rejected', reason: `unknown operator ${rules ? quote(step.operator) : JSON.stringify(step.operator)}; the library's operators: ${library.operators.map((o) => o.name).sort().join(', ')}` };
    }
    const problem = checkArgs('operator', step.operator, op.params, step.args, rules);
    if (problem) return { kind: 'rejected', reason: problem };
    steps.push({ task: step.operator, args: step.args });
  }
  return { kind: 'fragment', steps };
}
