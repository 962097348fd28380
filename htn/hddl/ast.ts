/**
 * The typed syntax tree of HDDL (the IPC hierarchical planning language) as the parser produces it.
 *
 * Invariants:
 * - Names are kept EXACTLY as written in the source (case preserved, `?` kept on variables).
 *   HDDL is case-insensitive in theory, but the IPC verifier wants plan names round-tripped as
 *   written, so nothing here is folded. Consumers that want case-insensitive lookup fold themselves.
 * - Every node carries `pos`, the 1-based line and column of its first character (the opening
 *   parenthesis for lists, the first character for symbols).
 * - Subtask lists are normalised into ONE total order: `:ordered-subtasks`, `:ordered-tasks`, and
 *   `:subtasks`/`:tasks` with a total `:ordering` all produce `subtasks` in execution order. The
 *   parser rejects an ordering that is not total (this is a total-order front end).
 * - An omitted precondition is `undefined`; an empty one `()` or `(and)` is `{kind:'and', args: []}`.
 * - Untyped parameters, objects and constants get the type `object` (HDDL's implicit root type).
 * - The tree is plain data (JSON-serialisable): no classes, no cycles, no Maps.
 */

/** A 1-based source position. */
export interface SourcePos {
  readonly line: number;
  readonly column: number;
}

/** The implicit root type for untyped declarations. */
export const ROOT_TYPE = 'object';

/** A term in an atom or task call: a variable (`?x`, name includes the `?`) or a constant/object. */
export interface Term {
  readonly kind: 'variable' | 'constant';
  readonly name: string;
  readonly pos: SourcePos;
}

/** A typed variable in a parameter list, quantifier, or `:htn :parameters`. `name` includes `?`. */
export interface TypedVariable {
  readonly name: string;
  readonly type: string;
  readonly pos: SourcePos;
}

/** A typed object or constant declaration (`a b - A`). */
export interface ObjectDecl {
  readonly name: string;
  readonly type: string;
  readonly pos: SourcePos;
}

/**
 * One `name - supertype` entry of `:types`. `supertype` is undefined when the type is listed
 * without one (i.e. directly under `object`). A type may appear in more than one entry.
 */
export interface TypeDecl {
  readonly name: string;
  readonly supertype: string | undefined;
  readonly pos: SourcePos;
}

export interface PredicateDecl {
  readonly name: string;
  readonly params: readonly TypedVariable[];
  readonly pos: SourcePos;
}

/** A predicate applied to terms: `(at ?t ?l)`. Also used for ground init facts. */
export interface Atom {
  readonly kind: 'atom';
  readonly predicate: string;
  readonly args: readonly Term[];
  readonly pos: SourcePos;
}

/** A logical formula (preconditions, constraints, goals). */
export type Formula =
  | Atom
  | { readonly kind: 'and'; readonly args: readonly Formula[]; readonly pos: SourcePos }
  | { readonly kind: 'or'; readonly args: readonly Formula[]; readonly pos: SourcePos }
  | { readonly kind: 'not'; readonly arg: Formula; readonly pos: SourcePos }
  | { readonly kind: 'imply'; readonly left: Formula; readonly right: Formula; readonly pos: SourcePos }
  | { readonly kind: 'equals'; readonly left: Term; readonly right: Term; readonly pos: SourcePos }
  | {
      readonly kind: 'forall' | 'exists';
      readonly params: readonly TypedVariable[];
      readonly body: Formula;
      readonly pos: SourcePos;
    }
  /** pandaPI's `(sortof ?x - T)` method constraint: the value of `term` is of type `type`. */
  | { readonly kind: 'sortof'; readonly term: Term; readonly type: string; readonly pos: SourcePos };

/** An action effect. Delete-before-add semantics are the consumer's business (PDDL). */
export type Effect =
  | { readonly kind: 'and'; readonly effects: readonly Effect[]; readonly pos: SourcePos }
  | { readonly kind: 'add'; readonly atom: Atom; readonly pos: SourcePos }
  | { readonly kind: 'delete'; readonly atom: Atom; readonly pos: SourcePos }
  | {
      readonly kind: 'forall';
      readonly params: readonly TypedVariable[];
      readonly effect: Effect;
      readonly pos: SourcePos;
    }
  | { readonly kind: 'when'; readonly condition: Formula; readonly effect: Effect; readonly pos: SourcePos };

/** A compound task declaration `(:task name :parameters (...))`. */
export interface TaskDecl {
  readonly name: string;
  readonly params: readonly TypedVariable[];
  readonly pos: SourcePos;
}

/**
 * A task instance: the `:task` of a method, one subtask of a method, or one task of `:htn`.
 * `id` is the subtask label (`(t1 (drive ?v ?a ?b))`) when one was written.
 */
export interface TaskCall {
  readonly id: string | undefined;
  readonly name: string;
  readonly args: readonly Term[];
  readonly pos: SourcePos;
}

export interface MethodDecl {
  readonly name: string;
  readonly params: readonly TypedVariable[];
  /** The compound task this method decomposes (`id` is always undefined here). */
  readonly task: TaskCall;
  readonly precondition: Formula | undefined;
  /** Subtasks in their (normalised, total) execution order. */
  readonly subtasks: readonly TaskCall[];
  /** `:constraints`, kept as a formula (e.g. `(not (= ?x ?y))`, `(sortof ?b - A)`). */
  readonly constraints: Formula | undefined;
  readonly pos: SourcePos;
}

export interface ActionDecl {
  readonly name: string;
  readonly params: readonly TypedVariable[];
  readonly precondition: Formula | undefined;
  readonly effect: Effect | undefined;
  readonly pos: SourcePos;
}

export interface HddlDomain {
  readonly kind: 'domain';
  readonly name: string;
  /** The file name given to the parser (for messages only). */
  readonly file: string;
  /** Requirement flags as written, with their leading colon (`:typing`). */
  readonly requirements: readonly string[];
  readonly types: readonly TypeDecl[];
  readonly constants: readonly ObjectDecl[];
  readonly predicates: readonly PredicateDecl[];
  readonly tasks: readonly TaskDecl[];
  /** Methods in declaration order (the order a SHOP-style planner tries them). */
  readonly methods: readonly MethodDecl[];
  readonly actions: readonly ActionDecl[];
  readonly pos: SourcePos;
}

/** The problem's initial task network. */
export interface HtnBlock {
  /** `:parameters` of the initial network (variables bound by the planner); usually empty. */
  readonly params: readonly TypedVariable[];
  /** Initial tasks in their (normalised, total) order. */
  readonly subtasks: readonly TaskCall[];
  readonly constraints: Formula | undefined;
  readonly pos: SourcePos;
}

export interface HddlProblem {
  readonly kind: 'problem';
  readonly name: string;
  readonly file: string;
  /** The `(:domain name)` this problem refers to, as written. */
  readonly domain: string;
  readonly requirements: readonly string[];
  readonly objects: readonly ObjectDecl[];
  /** Initial facts (ground atoms), in file order, duplicates kept. */
  readonly init: readonly Atom[];
  readonly htn: HtnBlock | undefined;
  readonly goal: Formula | undefined;
  readonly pos: SourcePos;
}

export type HddlFile = HddlDomain | HddlProblem;
