/**
 * HDDL parser: s-expressions (lexer.ts) → the typed AST (ast.ts), for domains and problems.
 *
 * Covers what the IPC 2020 total-order track uses: typing (with supertypes), constants,
 * predicates, `:task`, `:method` (precondition, `:ordered-subtasks` / `:ordered-tasks` /
 * `:subtasks` / `:tasks` + `:ordering`, `:constraints`), `:action` (precondition, effect with
 * `and` / `not` / `forall` / `when`), and problems (`:objects`, `:init`, `:htn`, `:goal`).
 *
 * Invariants:
 * - Keywords (`:method`, `and`, `forall`, `-`, ...) match case-insensitively; every NAME is kept
 *   exactly as written.
 * - Every error is an `HddlParseError` at the position of the offending expression.
 * - Formula recursion is bounded (MAX_DEPTH) so hostile input cannot overflow the stack.
 *
 * Over 400 lines on purpose: one recursive-descent grammar, read top to bottom like the HDDL
 * grammar it follows.
 */
import {
  ROOT_TYPE,
  type ActionDecl,
  type Atom,
  type Effect,
  type Formula,
  type HddlDomain,
  type HddlFile,
  type HddlProblem,
  type HtnBlock,
  type MethodDecl,
  type ObjectDecl,
  type PredicateDecl,
  type SourcePos,
  type TaskCall,
  type TaskDecl,
  type Term,
  type TypeDecl,
  type TypedVariable,
} from './ast.js';
import { HddlParseError } from './errors.js';
import { readSexprs, type SExpr, type SList, type SSymbol } from './lexer.js';
import { orderSubtasks } from './ordering.js';

const MAX_DEPTH = 500;

/** Parses an HDDL domain or problem file. `file` is used in error messages only. */
export function parseHddl(text: string, file: string): HddlFile {
  return new Parser(file).file(text);
}

/** Parses an HDDL domain; throws if the text is a problem. */
export function parseDomain(text: string, file: string): HddlDomain {
  const f = parseHddl(text, file);
  if (f.kind !== 'domain') throw new HddlParseError(file, f.pos, 'expected a domain, found a problem');
  return f;
}

/** Parses an HDDL problem; throws if the text is a domain. */
export function parseProblem(text: string, file: string): HddlProblem {
  const f = parseHddl(text, file);
  if (f.kind !== 'problem') throw new HddlParseError(file, f.pos, 'expected a problem, found a domain');
  return f;
}

function kw(e: SExpr | undefined): string | undefined {
  return e?.kind === 'sym' ? e.text.toLowerCase() : undefined;
}

class Parser {
  constructor(private readonly fileName: string) {}

  private fail(pos: SourcePos, reason: string): never {
    throw new HddlParseError(this.fileName, pos, reason);
  }

  private sym(e: SExpr | undefined, what: string, at: SourcePos): SSymbol {
    if (e === undefined) this.fail(at, `expected ${what}, found end of list`);
    if (e.kind !== 'sym') this.fail(e.pos, `expected ${what}, found a list`);
    return e;
  }

  private list(e: SExpr | undefined, what: string, at: SourcePos): SList {
    if (e === undefined) this.fail(at, `expected ${what}, found end of list`);
    if (e.kind !== 'list') this.fail(e.pos, `expected ${what}, found "${e.text}"`);
    return e;
  }

  file(text: string): HddlFile {
    const forms = readSexprs(text, this.fileName);
    const first = forms[0];
    if (!first) this.fail({ line: 1, column: 1 }, 'empty file: expected (define ...)');
    const extra = forms[1];
    if (extra) this.fail(extra.pos, 'unexpected form after the (define ...) form');
    if (kw(first.items[0]) !== 'define') this.fail(first.pos, 'expected (define ...)');
    const head = this.list(first.items[1], '(domain NAME) or (problem NAME)', first.pos);
    const kind = kw(head.items[0]);
    const name = this.sym(head.items[1], 'a name', head.pos).text;
    if (head.items.length > 2) this.fail(head.items[2]!.pos, 'unexpected item after the name');
    const sections = first.items.slice(2);
    if (kind === 'domain') return this.domain(name, first.pos, sections);
    if (kind === 'problem') return this.problem(name, first.pos, sections);
    return this.fail(head.pos, 'expected (domain NAME) or (problem NAME)');
  }

  // ---------------------------------------------------------------- domain

  private domain(name: string, pos: SourcePos, sections: SExpr[]): HddlDomain {
    const requirements: string[] = [];
    const types: TypeDecl[] = [];
    const constants: ObjectDecl[] = [];
    const predicates: PredicateDecl[] = [];
    const tasks: TaskDecl[] = [];
    const methods: MethodDecl[] = [];
    const actions: ActionDecl[] = [];
    for (const s of sections) {
      const sec = this.list(s, 'a domain section', pos);
      const items = sec.items;
      switch (kw(items[0])) {
        case ':requirements':
          for (const r of items.slice(1)) requirements.push(this.sym(r, 'a requirement', sec.pos).text);
          break;
        case ':types':
          for (const t of this.typedList(items.slice(1), sec.pos)) {
            types.push({ name: t.name, supertype: t.explicit ? t.type : undefined, pos: t.pos });
          }
          break;
        case ':constants':
          for (const t of this.typedList(items.slice(1), sec.pos)) constants.push({ name: t.name, type: t.type, pos: t.pos });
          break;
        case ':predicates':
          for (const p of items.slice(1)) {
            const pl = this.list(p, 'a predicate declaration (name ?x - type ...)', sec.pos);
            const pname = this.sym(pl.items[0], 'a predicate name', pl.pos).text;
            predicates.push({ name: pname, params: this.variables(pl.items.slice(1), pl.pos), pos: pl.pos });
          }
          break;
        case ':task':
          tasks.push(this.taskDecl(sec));
          break;
        case ':method':
          methods.push(this.method(sec));
          break;
        case ':action':
          actions.push(this.action(sec));
          break;
        default:
          this.fail(sec.pos, `unknown domain section "${items[0]?.kind === 'sym' ? items[0].text : '(...)'}"`);
      }
    }
    return { kind: 'domain', name, file: this.fileName, requirements, types, constants, predicates, tasks, methods, actions, pos };
  }

  /** `:key value` pairs after a name; keys are lower-cased, duplicates rejected. */
  private keyed(items: SExpr[], at: SourcePos, allowed: readonly string[]): Map<string, { key: SSymbol; value: SExpr }> {
    const out = new Map<string, { key: SSymbol; value: SExpr }>();
    for (let i = 0; i < items.length; i += 2) {
      const key = this.sym(items[i], 'a :keyword', at);
      const k = key.text.toLowerCase();
      if (!allowed.includes(k)) this.fail(key.pos, `unexpected "${key.text}" (expected one of ${allowed.join(' ')})`);
      if (out.has(k)) this.fail(key.pos, `duplicate "${key.text}"`);
      const value = items[i + 1];
      if (value === undefined) this.fail(key.pos, `"${key.text}" has no value`);
      out.set(k, { key, value });
    }
    return out;
  }

  private taskDecl(sec: SList): TaskDecl {
    const name = this.sym(sec.items[1], 'a task name', sec.pos).text;
    const kv = this.keyed(sec.items.slice(2), sec.pos, [':parameters']);
    const params = this.parameters(kv);
    return { name, params, pos: sec.pos };
  }

  private method(sec: SList): MethodDecl {
    const name = this.sym(sec.items[1], 'a method name', sec.pos).text;
    const kv = this.keyed(sec.items.slice(2), sec.pos, [
      ':parameters',
      ':task',
      ':precondition',
      ':ordered-subtasks',
      ':ordered-tasks',
      ':subtasks',
      ':tasks',
      ':ordering',
      ':constraints',
    ]);
    const params = this.parameters(kv);
    const t = kv.get(':task');
    if (!t) this.fail(sec.pos, `method "${name}" has no :task`);
    const task = this.taskCall(this.list(t.value, '(task-name args...)', t.key.pos));
    const pre = kv.get(':precondition');
    const precondition = pre ? this.formula(pre.value, 0) : undefined;
    const con = kv.get(':constraints');
    const constraints = con ? this.formula(con.value, 0) : undefined;
    const subtasks = this.network(kv, `method "${name}"`, sec.pos);
    return { name, params, task, precondition, subtasks, constraints, pos: sec.pos };
  }

  /** The typed variables of a `:parameters` entry, or none. */
  private parameters(kv: Map<string, { key: SSymbol; value: SExpr }>): ReturnType<Parser['variables']> {
    const p = kv.get(':parameters');
    return p ? this.variables(this.list(p.value, 'a parameter list', p.key.pos).items, p.value.pos) : [];
  }

  /** The subtasks of a method or of `:htn`, normalised into one total order. */
  private network(kv: Map<string, { key: SSymbol; value: SExpr }>, owner: string, at: SourcePos): TaskCall[] {
    const forms = [':ordered-subtasks', ':ordered-tasks', ':subtasks', ':tasks'].filter((k) => kv.has(k));
    if (forms.length > 1) this.fail(kv.get(forms[1]!)!.key.pos, `${owner} has more than one subtask list`);
    const which = forms[0];
    const ordering = kv.get(':ordering');
    if (which === undefined) {
      if (ordering) this.fail(ordering.key.pos, `${owner} has :ordering but no subtasks`);
      return [];
    }
    const entry = kv.get(which)!;
    const calls = this.taskList(entry.value);
    if (which === ':ordered-subtasks' || which === ':ordered-tasks') return calls;
    return orderSubtasks(calls, ordering ? this.orderingPairs(ordering.value) : [], owner, at, (pos, reason) => this.fail(pos, reason));
  }

  private taskList(e: SExpr): TaskCall[] {
    const l = this.list(e, 'a subtask list', e.pos);
    if (l.items.length === 0) return [];
    if (kw(l.items[0]) === 'and') return l.items.slice(1).map((x) => this.subtask(x));
    return [this.subtask(l)];
  }

  /** `(name args...)` or the labelled `(id (name args...))`. */
  private subtask(e: SExpr): TaskCall {
    const l = this.list(e, 'a subtask (name args...)', e.pos);
    const second = l.items[1];
    if (l.items.length === 2 && second?.kind === 'list') {
      const id = this.sym(l.items[0], 'a subtask id', l.pos).text;
      return { ...this.taskCall(second), id };
    }
    return this.taskCall(l);
  }

  private taskCall(l: SList): TaskCall {
    const name = this.sym(l.items[0], 'a task name', l.pos).text;
    return { id: undefined, name, args: l.items.slice(1).map((a) => this.term(a)), pos: l.pos };
  }

  private orderingPairs(e: SExpr): { before: SSymbol; after: SSymbol; pos: SourcePos }[] {
    const l = this.list(e, 'an ordering', e.pos);
    if (l.items.length === 0) return [];
    const items = kw(l.items[0]) === 'and' ? l.items.slice(1) : [l];
    return items.map((x) => {
      const c = this.list(x, 'an ordering constraint (< id1 id2)', l.pos);
      const op = kw(c.items[0]);
      if ((op !== '<' && op !== '>') || c.items.length !== 3) this.fail(c.pos, 'expected an ordering constraint (< id1 id2)');
      const a = this.sym(c.items[1], 'a subtask id', c.pos);
      const b = this.sym(c.items[2], 'a subtask id', c.pos);
      return op === '<' ? { before: a, after: b, pos: c.pos } : { before: b, after: a, pos: c.pos };
    });
  }

  private action(sec: SList): ActionDecl {
    const name = this.sym(sec.items[1], 'an action name', sec.pos).text;
    const kv = this.keyed(sec.items.slice(2), sec.pos, [':parameters', ':precondition', ':effect']);
    const params = this.parameters(kv);
    const pre = kv.get(':precondition');
    const eff = kv.get(':effect');
    return {
      name,
      params,
      precondition: pre ? this.formula(pre.value, 0) : undefined,
      effect: eff ? this.effect(eff.value, 0) : undefined,
      pos: sec.pos,
    };
  }

  // ---------------------------------------------------------------- problem

  private problem(name: string, pos: SourcePos, sections: SExpr[]): HddlProblem {
    let domain: string | undefined;
    const requirements: string[] = [];
    const objects: ObjectDecl[] = [];
    const init: Atom[] = [];
    let htn: HtnBlock | undefined;
    let goal: Formula | undefined;
    for (const s of sections) {
      const sec = this.list(s, 'a problem section', pos);
      const items = sec.items;
      switch (kw(items[0])) {
        case ':domain':
          domain = this.sym(items[1], 'a domain name', sec.pos).text;
          break;
        case ':requirements':
          for (const r of items.slice(1)) requirements.push(this.sym(r, 'a requirement', sec.pos).text);
          break;
        case ':objects':
          for (const t of this.typedList(items.slice(1), sec.pos)) objects.push({ name: t.name, type: t.type, pos: t.pos });
          break;
        case ':init':
          for (const f of items.slice(1)) {
            const a = this.atom(this.list(f, 'an initial fact (pred args...)', sec.pos));
            for (const t of a.args) if (t.kind === 'variable') this.fail(t.pos, `variable "${t.name}" in an initial fact`);
            init.push(a);
          }
          break;
        case ':htn': {
          if (htn) this.fail(sec.pos, 'duplicate :htn');
          const kv = this.keyed(items.slice(1), sec.pos, [
            ':parameters',
            ':ordered-subtasks',
            ':ordered-tasks',
            ':subtasks',
            ':tasks',
            ':ordering',
            ':constraints',
          ]);
          const params = this.parameters(kv);
          const con = kv.get(':constraints');
          htn = {
            params,
            subtasks: this.network(kv, 'the :htn block', sec.pos),
            constraints: con ? this.formula(con.value, 0) : undefined,
            pos: sec.pos,
          };
          break;
        }
        case ':goal':
          goal = this.formula(this.list(items[1], 'a goal formula', sec.pos), 0);
          break;
        default:
          this.fail(sec.pos, `unknown problem section "${items[0]?.kind === 'sym' ? items[0].text : '(...)'}"`);
      }
    }
    if (domain === undefined) this.fail(pos, `problem "${name}" has no (:domain NAME)`);
    return { kind: 'problem', name, file: this.fileName, domain, requirements, objects, init, htn, goal, pos };
  }

  // ---------------------------------------------------------------- typed lists

  /**
   * `a b - T c - U d` → names with types; names without a type get `object`. `explicit` tells
   * whether a `- T` followed (used for :types, where a missing supertype is meaningful).
   */
  private typedList(items: SExpr[], at: SourcePos): { name: string; type: string; explicit: boolean; pos: SourcePos }[] {
    const out: { name: string; type: string; explicit: boolean; pos: SourcePos }[] = [];
    let pending: SSymbol[] = [];
    for (let i = 0; i < items.length; i++) {
      const s = this.sym(items[i], 'a name', at);
      if (s.text === '-') {
        const t = items[i + 1];
        if (t === undefined) this.fail(s.pos, 'expected a type after "-"');
        if (t.kind === 'list') {
          if (kw(t.items[0]) === 'either') this.fail(t.pos, '"either" types are not supported');
          this.fail(t.pos, 'expected a type name after "-"');
        }
        if (pending.length === 0) this.fail(s.pos, `type "${t.text}" given to no names`);
        for (const p of pending) out.push({ name: p.text, type: t.text, explicit: true, pos: p.pos });
        pending = [];
        i++;
        continue;
      }
      pending.push(s);
    }
    for (const p of pending) out.push({ name: p.text, type: ROOT_TYPE, explicit: false, pos: p.pos });
    return out;
  }

  private variables(items: SExpr[], at: SourcePos): TypedVariable[] {
    return this.typedList(items, at).map((t) => {
      if (!t.name.startsWith('?')) this.fail(t.pos, `expected a variable (?name), found "${t.name}"`);
      return { name: t.name, type: t.type, pos: t.pos };
    });
  }

  // ---------------------------------------------------------------- formulas

  private term(e: SExpr): Term {
    const s = this.sym(e, 'a term (?variable or constant)', e.pos);
    if (s.text.startsWith('?')) {
      if (s.text.length === 1) this.fail(s.pos, 'empty variable name "?"');
      return { kind: 'variable', name: s.text, pos: s.pos };
    }
    return { kind: 'constant', name: s.text, pos: s.pos };
  }

  private atom(l: SList): Atom {
    const predicate = this.sym(l.items[0], 'a predicate name', l.pos).text;
    return { kind: 'atom', predicate, args: l.items.slice(1).map((a) => this.term(a)), pos: l.pos };
  }

  private formula(e: SExpr, depth: number): Formula {
    const l = this.list(e, 'a formula', e.pos);
    if (depth > MAX_DEPTH) this.fail(l.pos, `formula nested deeper than ${MAX_DEPTH}`);
    const items = l.items;
    if (items.length === 0) return { kind: 'and', args: [], pos: l.pos };
    const head = kw(items[0]);
    if (items[0]!.kind === 'list') this.fail(items[0]!.pos, 'expected a predicate or connective, found a list');
    const arity = (n: number): void => {
      if (items.length !== n + 1) this.fail(l.pos, `"${(items[0] as SSymbol).text}" takes ${n} argument(s), found ${items.length - 1}`);
    };
    switch (head) {
      case 'and':
      case 'or':
        return { kind: head, args: items.slice(1).map((x) => this.formula(x, depth + 1)), pos: l.pos };
      case 'not':
        arity(1);
        return { kind: 'not', arg: this.formula(items[1]!, depth + 1), pos: l.pos };
      case 'imply':
        arity(2);
        return { kind: 'imply', left: this.formula(items[1]!, depth + 1), right: this.formula(items[2]!, depth + 1), pos: l.pos };
      case '=':
        arity(2);
        return { kind: 'equals', left: this.term(items[1]!), right: this.term(items[2]!), pos: l.pos };
      case 'forall':
      case 'exists': {
        arity(2);
        const params = this.variables(this.list(items[1], 'a variable list', l.pos).items, l.pos);
        return { kind: head, params, body: this.formula(items[2]!, depth + 1), pos: l.pos };
      }
      case 'sortof': {
        // (sortof ?x - T)
        if (items.length !== 4 || kw(items[2]) !== '-') this.fail(l.pos, 'expected (sortof ?x - type)');
        return { kind: 'sortof', term: this.term(items[1]!), type: this.sym(items[3], 'a type', l.pos).text, pos: l.pos };
      }
      default:
        return this.atom(l);
    }
  }

  private effect(e: SExpr, depth: number): Effect {
    const l = this.list(e, 'an effect', e.pos);
    if (depth > MAX_DEPTH) this.fail(l.pos, `effect nested deeper than ${MAX_DEPTH}`);
    const items = l.items;
    if (items.length === 0) return { kind: 'and', effects: [], pos: l.pos };
    if (items[0]!.kind === 'list') this.fail(items[0]!.pos, 'expected a predicate or connective, found a list');
    switch (kw(items[0])) {
      case 'and':
        return { kind: 'and', effects: items.slice(1).map((x) => this.effect(x, depth + 1)), pos: l.pos };
      case 'not': {
        if (items.length !== 2) this.fail(l.pos, '"not" takes 1 argument');
        const inner = this.list(items[1], 'an atom', l.pos);
        const k = kw(inner.items[0]);
        if (k === 'and' || k === 'not' || k === 'forall' || k === 'when' || k === 'or') {
          this.fail(inner.pos, `"(not (${k} ...))" is not an effect: only atoms can be deleted`);
        }
        return { kind: 'delete', atom: this.atom(inner), pos: l.pos };
      }
      case 'forall': {
        if (items.length !== 3) this.fail(l.pos, 'expected (forall (?x - type ...) effect)');
        const params = this.variables(this.list(items[1], 'a variable list', l.pos).items, l.pos);
        return { kind: 'forall', params, effect: this.effect(items[2]!, depth + 1), pos: l.pos };
      }
      case 'when':
        if (items.length !== 3) this.fail(l.pos, 'expected (when condition effect)');
        return { kind: 'when', condition: this.formula(items[1]!, depth + 1), effect: this.effect(items[2]!, depth + 1), pos: l.pos };
      case 'or':
      case 'exists':
      case 'imply':
      case '=':
        return this.fail(l.pos, `"${(items[0] as SSymbol).text}" is not allowed in an effect`);
      default:
        return { kind: 'add', atom: this.atom(l), pos: l.pos };
    }
  }
}
