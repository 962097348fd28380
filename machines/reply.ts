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
 */
import { z } from 'zod';
import type { Library } from '../htn/library/schema.js';
import type { Goal } from './context.js';

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

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; reason: string } {
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
function checkArgs(what: string, name: string, params: Array<{ name: string; type: string }>, args: Array<string | number>): string | undefined {
  if (args.length !== params.length) {
    return `${what} ${name} takes ${params.length} argument(s) (${params.map((p) => `${p.name}: ${p.type}`).join(', ')}), the reply gave ${args.length}`;
  }
  for (let i = 0; i < params.length; i++) {
    const p = params[i]!;
    const a = args[i]!;
    if (p.type === 'number' && typeof a !== 'number') return `${what} ${name} argument ${i + 1} (${p.name}) must be a number, got ${JSON.stringify(a)}`;
    if (p.type !== 'number' && typeof a !== 'string') return `${what} ${name} argument ${i + 1} (${p.name}) must be the name of a ${p.type}, got ${JSON.stringify(a)}`;
    if (typeof a === 'string' && a.startsWith('?')) return `${what} ${name} argument ${i + 1} must be ground, got the variable ${a}`;
  }
  return undefined;
}

export function judgeParseReply(text: string, library: Library): ParseVerdict {
  const json = parseJson(text);
  if (!json.ok) return { kind: 'rejected', reason: json.reason };
  const parsed = parseReplySchema.safeParse(json.value);
  if (!parsed.success) return { kind: 'rejected', reason: schemaReason(parsed.error, '{"goal":{"task","args"}} or {"done":true,"summary"}') };
  const reply = parsed.data;
  if ('done' in reply) return { kind: 'done', summary: reply.summary };
  const { task, args } = reply.goal;
  const decl = library.tasks.find((t) => t.name === task) ?? library.operators.find((o) => o.name === task);
  if (!decl) {
    const known = [...library.tasks.map((t) => t.name), ...library.operators.map((o) => o.name)].sort();
    return { kind: 'rejected', reason: `unknown task ${JSON.stringify(task)}; the library knows: ${known.join(', ')}` };
  }
  const problem = checkArgs('task', task, decl.params, args);
  return problem ? { kind: 'rejected', reason: problem } : { kind: 'goal', goal: { task, args } };
}

export function judgeAuthorReply(text: string, library: Library): AuthorVerdict {
  const json = parseJson(text);
  if (!json.ok) return { kind: 'rejected', reason: json.reason };
  const parsed = authorReplySchema.safeParse(json.value);
  if (!parsed.success) return { kind: 'rejected', reason: schemaReason(parsed.error, '{"steps":[{"operator","args"}]}') };
  const steps: Goal[] = [];
  for (const step of parsed.data.steps) {
    const op = library.operators.find((o) => o.name === step.operator);
    if (!op) {
      return { kind: 'rejected', reason: `unknown operator ${JSON.stringify(step.operator)}; the library's operators: ${library.operators.map((o) => o.name).sort().join(', ')}` };
    }
    const problem = checkArgs('operator', step.operator, op.params, step.args);
    if (problem) return { kind: 'rejected', reason: problem };
    steps.push({ task: step.operator, args: step.args });
  }
  return { kind: 'fragment', steps };
}
