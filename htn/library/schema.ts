/**
 * The method library as declarative data — the zod schemas and the TypeScript types they infer.
 *
 * A library is plain JSON: types, constants, predicates, evaluable predicates (referenced by name
 * and version, implemented in TS elsewhere), compound tasks, operators (primitive tasks) and
 * methods. Its digest (digest.ts) is the SHA-256 of its canonical JSON, so everything that can
 * change a plan lives in this data — including the version of every evaluable predicate it uses.
 *
 * Conventions:
 * - A term is a string or a number. A string starting with `?` is a variable; any other string is
 *   a symbol (an object or constant); a number is a numeric value (for evaluable predicates).
 * - Type `object` is the implicit root; type `number` is built in and holds every number that
 *   occurs in the state, the goal or the library.
 * - Operators of a Weft domain name the actuator they dispatch and its explicit args (terms built
 *   from the operator's parameters); HDDL operators have no actuator.
 * - Methods are tried in declared order (their position in `methods`), which is part of the data.
 *
 * `validateLibrary` checks shape (zod) and references (every name used is declared, arities
 * match, variables are declared); it returns the parsed data or throws `LibraryValidationError`.
 */
import { z } from 'zod';

export const ROOT_TYPE = 'object';
export const NUMBER_TYPE = 'number';

export const TermSchema = z.union([z.string().min(1), z.number().finite()]);
export type Term = z.infer<typeof TermSchema>;

export const ParamSchema = z.object({ name: z.string().regex(/^\?/, 'a variable starts with "?"'), type: z.string().min(1) });
export type Param = z.infer<typeof ParamSchema>;

/** A precondition formula. */
export type Formula =
  | { op: 'true' }
  | { op: 'atom'; pred: string; args: Term[] }
  | { op: 'and'; args: Formula[] }
  | { op: 'or'; args: Formula[] }
  | { op: 'not'; arg: Formula }
  | { op: 'imply'; if: Formula; then: Formula }
  | { op: 'eq'; left: Term; right: Term }
  | { op: 'forall'; vars: Param[]; body: Formula }
  | { op: 'exists'; vars: Param[]; body: Formula }
  /** The value of `term` belongs to `type` (HDDL's `sortof` constraint). */
  | { op: 'is-a'; term: Term; type: string };

export const FormulaSchema: z.ZodType<Formula> = z.lazy(() =>
  z.discriminatedUnion('op', [
    z.object({ op: z.literal('true') }),
    z.object({ op: z.literal('atom'), pred: z.string().min(1), args: z.array(TermSchema) }),
    z.object({ op: z.literal('and'), args: z.array(FormulaSchema) }),
    z.object({ op: z.literal('or'), args: z.array(FormulaSchema) }),
    z.object({ op: z.literal('not'), arg: FormulaSchema }),
    z.object({ op: z.literal('imply'), if: FormulaSchema, then: FormulaSchema }),
    z.object({ op: z.literal('eq'), left: TermSchema, right: TermSchema }),
    z.object({ op: z.literal('forall'), vars: z.array(ParamSchema), body: FormulaSchema }),
    z.object({ op: z.literal('exists'), vars: z.array(ParamSchema), body: FormulaSchema }),
    z.object({ op: z.literal('is-a'), term: TermSchema, type: z.string().min(1) }),
  ]),
) as z.ZodType<Formula>;

/** An operator effect. PDDL semantics: conditions are read in the pre-state; deletes, then adds. */
export type Effect =
  | { op: 'and'; effects: Effect[] }
  | { op: 'add'; pred: string; args: Term[] }
  | { op: 'del'; pred: string; args: Term[] }
  | { op: 'forall'; vars: Param[]; effect: Effect }
  | { op: 'when'; condition: Formula; effect: Effect };

export const EffectSchema: z.ZodType<Effect> = z.lazy(() =>
  z.discriminatedUnion('op', [
    z.object({ op: z.literal('and'), effects: z.array(EffectSchema) }),
    z.object({ op: z.literal('add'), pred: z.string().min(1), args: z.array(TermSchema) }),
    z.object({ op: z.literal('del'), pred: z.string().min(1), args: z.array(TermSchema) }),
    z.object({ op: z.literal('forall'), vars: z.array(ParamSchema), effect: EffectSchema }),
    z.object({ op: z.literal('when'), condition: FormulaSchema, effect: EffectSchema }),
  ]),
) as z.ZodType<Effect>;

export const ActuatorCallSchema = z.object({
  actuator: z.string().min(1),
  /** Explicit args: each value is a term over the operator's parameters (no implicit passing). */
  args: z.record(z.string(), TermSchema),
});
export type ActuatorCall = z.infer<typeof ActuatorCallSchema>;

export const TypeDeclSchema = z.object({ name: z.string().min(1), parent: z.string().min(1).optional() });
export const ObjectDeclSchema = z.object({ name: z.string().min(1), type: z.string().min(1) });
export const PredicateDeclSchema = z.object({ name: z.string().min(1), params: z.array(ParamSchema) });
export const EvaluableRefSchema = z.object({
  name: z.string().min(1),
  version: z.string().min(1),
  params: z.array(ParamSchema),
});
/**
 * A constraint a compound task declares on any fragment of steps that achieves it (model-authored
 * ones above all, whose shape no method fixed). One of:
 * - `{ sum, arg, atMost }`: the numeric actuator arg `arg`, summed over the steps that dispatch the
 *   actuator `sum`, is at most `atMost` — a number, or a number-typed task param (`?budget`) bound
 *   from the goal's args; a step whose `arg` is not a number violates it;
 * - `{ count, atMost, per? }`: at most `atMost` steps dispatch the actuator `count` (`'*'`: any
 *   world-effect step, i.e. not readOnly). `per: 'run'` counts, besides the fragment, the world
 *   effects of the same task that earlier epochs of the run (and, for a fork, of its parent) left
 *   done — completed and not compensated; absent, the fragment alone;
 * - `{ only }`: every step dispatches one of these actuators;
 * - `{ bind, args }`: every step that dispatches the actuator `bind` passes each named arg exactly
 *   the value the term gives — a task param (`?from`) bound from the goal's args, or a constant —
 *   so an effect does only what its goal asked (`{ bind: 'taxi.book', args: { from: '?from' } }`).
 * Checked by `checkTaskConstraints` (machines/constraints.ts); part of the data, so of the digest.
 * Strict: an unknown field is an error (a misspelt `per` would silently count per fragment).
 */
export const TaskConstraintSchema = z.union(
  [
    z.strictObject({ sum: z.string().min(1), arg: z.string().min(1), atMost: z.union([z.string().min(1), z.number().finite()]) }),
    z.strictObject({ count: z.string().min(1), atMost: z.number().finite(), per: z.literal('run').optional() }),
    z.strictObject({ only: z.array(z.string().min(1)) }),
    z.strictObject({ bind: z.string().min(1), args: z.record(z.string().min(1), TermSchema) }),
  ],
  { error: "a task constraint is { sum, arg, atMost }, { count, atMost, per?: 'run' }, { only: [actuators] } or { bind: actuator, args: { arg: term } }" },
);
export type TaskConstraint = z.infer<typeof TaskConstraintSchema>;

export const TaskDeclSchema = z.object({
  name: z.string().min(1),
  params: z.array(ParamSchema),
  /** Absent in libraries without constraints (so their data, and digest, are unchanged). */
  constraints: z.array(TaskConstraintSchema).optional(),
});
export const TaskCallSchema = z.object({ task: z.string().min(1), args: z.array(TermSchema) });

export const OperatorSchema = z.object({
  name: z.string().min(1),
  params: z.array(ParamSchema),
  precondition: FormulaSchema,
  effect: EffectSchema,
  actuator: ActuatorCallSchema.optional(),
  compensate: ActuatorCallSchema.optional(),
  readOnly: z.boolean(),
});

export const MethodSchema = z.object({
  name: z.string().min(1),
  task: TaskCallSchema,
  params: z.array(ParamSchema),
  precondition: FormulaSchema,
  subtasks: z.array(TaskCallSchema),
  /**
   * `mined`: generalised by `weft mine` from the model's fragments (mining/). Its world effects keep
   * the policy's allowance for what the model authors (machines/envelope.ts `authoredEffects`)
   * until a person, having reviewed it, removes the mark. Absent: written by a person.
   */
  origin: z.literal('mined').optional(),
});

export const LibrarySchema = z.object({
  format: z.literal('weft.htn-library/1'),
  name: z.string().min(1),
  types: z.array(TypeDeclSchema),
  constants: z.array(ObjectDeclSchema),
  predicates: z.array(PredicateDeclSchema),
  evaluables: z.array(EvaluableRefSchema),
  tasks: z.array(TaskDeclSchema),
  operators: z.array(OperatorSchema),
  methods: z.array(MethodSchema),
});

export type TypeDecl = z.infer<typeof TypeDeclSchema>;
export type ObjectDecl = z.infer<typeof ObjectDeclSchema>;
export type PredicateDecl = z.infer<typeof PredicateDeclSchema>;
export type EvaluableRef = z.infer<typeof EvaluableRefSchema>;
export type TaskDecl = z.infer<typeof TaskDeclSchema>;
export type TaskCall = z.infer<typeof TaskCallSchema>;
export type Operator = z.infer<typeof OperatorSchema>;
export type Method = z.infer<typeof MethodSchema>;
export type Library = z.infer<typeof LibrarySchema>;

/** A ground fact: predicate name then args, e.g. `['at', 'truck1', 'depot']`, `['price', 'f1', 420]`. */
export const FactSchema = z.tuple([z.string().min(1)]).rest(z.union([z.string().min(1), z.number().finite()]));
export type Fact = z.infer<typeof FactSchema>;

/** The observed world the planner starts from. Order of either list does not matter. */
export const WorldStateSchema = z.object({
  objects: z.array(ObjectDeclSchema),
  facts: z.array(FactSchema),
});
export type WorldState = z.infer<typeof WorldStateSchema>;

/** The task to decompose, with ground args; `condition` must hold in the final state (HDDL `:goal`). */
export const GoalSchema = z.object({
  task: z.string().min(1),
  args: z.array(z.union([z.string().min(1), z.number().finite()])),
  condition: FormulaSchema.optional(),
});
export type Goal = z.infer<typeof GoalSchema>;

export function isVariable(term: Term): term is string {
  return typeof term === 'string' && term.startsWith('?');
}

/** Human form of a constraint, for messages (validation and machines/constraints.ts). */
export function describeConstraint(c: TaskConstraint): string {
  if ('sum' in c) return `sum of ${c.sum} ${c.arg} ≤ ${c.atMost}`;
  if ('count' in c) return `count of ${c.count === '*' ? 'world-effect steps' : c.count} ≤ ${c.atMost}${c.per === 'run' ? ' per run' : ''}`;
  if ('bind' in c) return `${c.bind} binds ${boundArgs(c).map((a) => `${a} = ${c.args[a]}`).join(', ')}`;
  return `only ${c.only.join(', ')}`;
}

/**
 * The arg names a `bind` constraint fixes, sorted: a library read back from its canonical blob has
 * its keys sorted, one built in code has them in written order — checks and messages must not
 * depend on which (replay compares the reasons byte for byte).
 */
export function boundArgs(c: { args: Readonly<Record<string, Term>> }): string[] {
  return Object.keys(c.args).sort();
}
