/**
 * A rule pack — admission as data: zod-validated JSON `{ pack: 1, name, version, rules: [...] }`
 * that compiles into an AdmissionPolicy (compile.ts). Each rule has an id (unique in the pack) and
 * a kind (`rule`); what each kind says:
 *
 * - the contract envelope (machines/envelope.ts), each part at most once:
 *   `spend-cap` {arg, cap, actuators?} · `actuators` {allow} · `recipients` {arg, allowed, actuators?} ·
 *   `steps-per-fragment` {max} · `dispatches-per-epoch` {max} · `authored-effects` {admit:
 *   'approval' | 'allow' | {actuators, spendAtMost, per?: 'fragment' | 'run'}} — `per: 'run'` holds
 *   the allowance to the sum over the run's authored effects (flag 11), absent or 'fragment' to each
 *   fragment alone;
 * - `tenant-actuators` {tenants: {<tenant> | '*': [actuator…]}}: the actuators a tenant's steps may
 *   dispatch (a tenant not listed gets '*', else none) — refused at the epoch and at dispatch;
 * - `read-only-free`: read-only steps are admitted freely — approval and predicate rules do not
 *   apply to them, and an epoch of read-only steps only is allowed by this rule;
 * - `approve-mutations`: a person approves any epoch with a world effect (a step not read-only);
 * - `approve-above` {arg, amount}: a person approves an epoch whose spending steps move more than
 *   `amount` (summed over `arg`, as spendApprovalPolicy does);
 * - `authoring` {decision, tasks?, reason?}: the model-authoring call of the gap path (for the goal
 *   tasks listed, or any) is allowed, denied or needs a person;
 * - `pivot-last` {undoable?}: an epoch that puts a pivot (a world effect with no declared
 *   compensation, not read-only) before another step — which may fail after it, when nothing can
 *   undo it — is denied. `undoable` lists the actuators that undo their own effect (an actuator's
 *   `compensate`, which a plan does not show): admission is pure over the plan and the pinned pack,
 *   and a replay has no actuators to ask, so the pack says it (pivot.ts);
 * - `predicate` {predicate: 'name@version', on: epoch|step|authoring, decision, reason}: a TypeScript
 *   predicate registered under that name and version (predicates.ts) decides whether the rule applies.
 *
 * The schema is strict (an unknown field is an error, not a passenger) and has no defaults, so a
 * pack's digest (digest.ts) is the digest of exactly what its author wrote, in canonical form.
 * Pure.
 */
import { z } from 'zod';

/** A rule id: letters, digits, '.', '_', '-' (no ':' — the runtime's own checks are named `weft:…`). */
export const RULE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** A predicate reference, `name@version`. */
export const PREDICATE_REF = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}@[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/;

const id = z.string().regex(RULE_ID, 'a rule id: 1–64 letters, digits, ".", "_" or "-"');
const name = z.string().min(1).max(200);
const names = z.array(name).max(1000);
const amount = z.number().finite().nonnegative();
const size = z.number().int().positive();
const decision = z.enum(['deny', 'require_approval']);

const rule = <K extends string, S extends z.ZodRawShape>(kind: K, shape: S) => z.strictObject({ id, rule: z.literal(kind), ...shape });

export const ruleSchema = z.discriminatedUnion('rule', [
  rule('spend-cap', { arg: name, cap: amount, actuators: names.optional() }),
  rule('actuators', { allow: names }),
  rule('recipients', { arg: name, allowed: names, actuators: names.optional() }),
  rule('steps-per-fragment', { max: size }),
  rule('dispatches-per-epoch', { max: size }),
  rule('authored-effects', { admit: z.union([z.enum(['approval', 'allow']), z.strictObject({ actuators: names, spendAtMost: amount, per: z.enum(['fragment', 'run']).optional() })]) }),
  rule('tenant-actuators', { tenants: z.record(name, names) }),
  rule('read-only-free', {}),
  rule('approve-mutations', {}),
  rule('approve-above', { arg: name, amount }),
  rule('authoring', { decision: z.enum(['allow', 'deny', 'require_approval']), tasks: names.optional(), reason: z.string().min(1).max(500).optional() }),
  rule('pivot-last', { undoable: names.optional() }),
  rule('predicate', {
    predicate: z.string().regex(PREDICATE_REF, 'a registered predicate as name@version'),
    on: z.enum(['epoch', 'step', 'authoring']),
    decision,
    reason: z.string().min(1).max(500),
  }),
]);

export type Rule = z.infer<typeof ruleSchema>;
export type RuleKind = Rule['rule'];

/** The rule kinds that set a part of the contract envelope: at most one of each in a pack. */
export const ENVELOPE_KINDS = ['spend-cap', 'actuators', 'recipients', 'steps-per-fragment', 'dispatches-per-epoch', 'authored-effects'] as const;

export const rulePackSchema = z
  .strictObject({
    pack: z.literal(1),
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'a pack name: 1–100 letters, digits, ".", "_" or "-"'),
    version: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/, 'a version: 1–32 letters, digits, ".", "_" or "-"'),
    description: z.string().max(2000).optional(),
    rules: z.array(ruleSchema).max(500),
  })
  .superRefine((pack, ctx) => {
    const seen = new Set<string>();
    pack.rules.forEach((r, i) => {
      if (seen.has(r.id)) ctx.addIssue({ code: 'custom', path: ['rules', i, 'id'], message: `rule id ${JSON.stringify(r.id)} is used twice; every rule's id is unique in its pack` });
      seen.add(r.id);
    });
    for (const kind of ENVELOPE_KINDS) {
      const at = pack.rules.flatMap((r, i) => (r.rule === kind ? [i] : []));
      if (at.length > 1) ctx.addIssue({ code: 'custom', path: ['rules', at[1]!, 'rule'], message: `a pack has at most one ${kind} rule (it sets one part of the contract envelope)` });
    }
    pack.rules.forEach((r, i) => {
      if (r.rule === 'predicate' && r.on === 'step' && r.decision !== 'deny') {
        ctx.addIssue({ code: 'custom', path: ['rules', i, 'decision'], message: 'a step is admitted or refused at dispatch: a predicate rule on steps decides deny' });
      }
    });
  });

export type RulePack = z.infer<typeof rulePackSchema>;
