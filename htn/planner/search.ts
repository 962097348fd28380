/**
 * Total-order SHOP-style forward decomposition on an explicit stack.
 *
 * The agenda is a persistent linked list of ground task instances (pushing a method's subtasks
 * conses onto the rest, so restoring an older agenda is a pointer copy). A compound task opens a
 * choice point that enumerates, lazily and in order, its methods (declared order) × each method's
 * precondition bindings (query.ts). A ground primitive task is applied or fails and opens no
 * choice point. On failure the newest choice point undoes the fact trail and the variable trail,
 * truncates the plan and tree to its marks and tries its next alternative. A compound task
 * re-entered with the same args in the same state as an open ancestor is cut (trace.ts).
 *
 * Logic variables: a method variable that only its subtasks use is not enumerated; it is passed
 * down as a logic variable (a negative id in a cell's args, `-(k + 1)`) and bound by whichever
 * descendant first binds it — a method head, a method precondition, or an operator's
 * precondition (an operator with unbound args opens a choice point over its bindings). Bindings
 * are recorded on a variable trail and undone with the rest on backtracking. A variable no step
 * ever constrains is given the first object of its type when the plan is written out.
 *
 * Invariants:
 * - No recursion over plan length or decomposition depth; plans of 10^5+ steps are fine.
 * - Deterministic: every enumeration is over canonically ordered data; no clocks or randomness.
 *   `shouldStop` (CLI only) can cut a search short but never changes what a finished search
 *   returns.
 * - Budgets are exact: the same inputs hit the same limit at the same node.
 */
import type { Model } from './model.js';
import { QueryRun, termValue, type QueryContext } from './query.js';
import { applyEffects, applyOperator } from './apply.js';
import { explainTask, explainOperator } from './explain.js';
import { buildPlan } from './build-plan.js';
import { LogicVariables, type VarMark } from './logic-vars.js';
import { Trace } from './trace.js';
import { DEFAULT_MAX_DEPTH, DEFAULT_MAX_NODES, type PlanOptions, type PlanResult, type TaskFailure } from './result.js';

interface Cell {
  readonly task: number;
  readonly args: Int32Array;
  /** Tree node id of the compound task this one came from (-1 for the goal). */
  readonly parent: number;
  readonly next: Cell | null;
}

interface ChoicePoint {
  readonly cell: Cell;
  /** The cell's args with bound variables resolved (unbound ones stay negative). */
  readonly args: Int32Array;
  /** Bit i set: args[i] is an unbound logic variable. */
  readonly mask: number;
  readonly treeMark: number;
  readonly planMark: number;
  readonly trailMark: number;
  readonly vars: VarMark;
  method: number;
  run: QueryRun | null;
}

const EXHAUSTED = 0;
const OK = 1;
const LIMIT = 2;

export function search(model: Model, options: PlanOptions = {}): PlanResult {
  const maxNodes = options.maxNodes ?? DEFAULT_MAX_NODES;
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const cycleCheck = options.cycleCheck ?? true;
  const shouldStop = options.shouldStop;
  const { tasks, store } = model;
  const ctx: QueryContext = { store, types: model.types, symbols: model.symbols };
  const t = new Trace(store, cycleCheck);
  const members = model.types.members;

  let agenda: Cell | null = { task: model.goalTask, args: model.goalArgs, parent: -1, next: null };
  const goalCell = agenda;
  const choicePoints: ChoicePoint[] = [];
  let nodes = 0;
  let limit: { limit: 'nodes' | 'depth' | 'interrupted'; budget?: number; cell: Cell } | undefined;
  let deepest: TaskFailure | undefined;
  let deepestSteps = -1;
  let goalConditionFailed = false;

  const lv = new LogicVariables(model.types);
  const values = (args: Int32Array): (string | number)[] =>
    Array.from(args, (a) => {
      const v = lv.deref(a);
      return v >= 0 ? model.symbols.value(v) : `?_${-v - 1}`;
    });

  const countNode = (cell: Cell): boolean => {
    nodes++;
    if (nodes > maxNodes) {
      limit = { limit: 'nodes', budget: maxNodes, cell };
      return false;
    }
    if (shouldStop && (nodes & 4095) === 0 && shouldStop()) {
      limit = { limit: 'interrupted', cell };
      return false;
    }
    return true;
  };

  const restore = (cp: ChoicePoint): void => {
    store.undoTo(cp.trailMark);
    lv.undoTo(cp.vars);
    t.truncate(cp.treeMark, cp.planMark);
  };

  const noteFailure = (cell: Cell): void => {
    const steps = t.stepCount;
    if (steps <= deepestSteps) return;
    deepestSteps = steps;
    const task = tasks[cell.task]!;
    const args = lv.resolve(cell.args);
    deepest = task.operator ? explainOperator(model, ctx, cell.task, args, steps) : explainTask(model, ctx, cell.task, args, steps);
  };

  /** An operator whose args include unbound variables: enumerate its precondition's bindings. */
  const tryOperatorBindings = (cp: ChoicePoint): number => {
    const cell = cp.cell;
    const op = tasks[cell.task]!.operator!;
    const args = cp.args;
    if (cp.run === null) {
      if (cp.method > 0) return EXHAUSTED;
      cp.method = 1;
      const b = new Int32Array(op.slots).fill(-1);
      for (let i = 0; i < args.length; i++) {
        if ((cp.mask & (1 << i)) !== 0) continue;
        if (members[op.paramTypes[i]!]![args[i]!] !== 1) return EXHAUSTED;
        b[i] = args[i]!;
      }
      cp.run = new QueryRun(op.preFor(cp.mask), b, ctx);
    }
    const b = cp.run.bindings;
    for (;;) {
      if (!countNode(cell)) return LIMIT;
      if (!cp.run.next()) return EXHAUSTED;
      lv.begin();
      let ok = true;
      for (let i = 0; i < args.length && ok; i++) if ((cp.mask & (1 << i)) !== 0) ok = lv.stage(-args[i]! - 1, b[i]!);
      if (!ok) continue;
      lv.commit();
      const ground = b.slice(0, args.length);
      applyEffects(op, b, store, ctx);
      t.open(cell.task, ground, cell.parent, -1);
      agenda = cell.next;
      return OK;
    }
  };

  const tryAlternatives = (cp: ChoicePoint): number => {
    restore(cp);
    const cell = cp.cell;
    if (tasks[cell.task]!.operator) return tryOperatorBindings(cp);
    const methods = tasks[cell.task]!.methods;
    const args = cp.args;
    const mask = cp.mask;
    for (;;) {
      if (cp.run === null) {
        if (cp.method >= methods.length) return EXHAUSTED;
        const m = methods[cp.method]!;
        const b = new Int32Array(m.slots).fill(-1);
        let unified = true;
        const slotTypes = m.query.slotTypes;
        for (let i = 0; i < m.taskArgs.length; i++) {
          if ((mask & (1 << i)) !== 0) continue;
          const term = m.taskArgs[i]!;
          const v = args[i]!;
          if (term < 0) unified = -term - 1 === v;
          else if (b[term] === -1) {
            unified = members[slotTypes[term]!]![v] === 1;
            b[term] = v;
          } else unified = b[term] === v;
          if (!unified) break;
        }
        if (!unified) {
          cp.method++;
          continue;
        }
        cp.run = new QueryRun(mask === 0 ? m.query : m.queryFor(mask), b, ctx);
      }
      if (!countNode(cell)) return LIMIT;
      if (cp.run.next()) {
        const m = methods[cp.method]!;
        const b = cp.run.bindings;
        let slotVar: Int32Array | undefined;
        if (mask !== 0) {
          // Unbound task args: bind them to what the method bound, or link them to its slots.
          lv.begin();
          let ok = true;
          for (let i = 0; i < args.length && ok; i++) {
            if ((mask & (1 << i)) === 0) continue;
            const k = -args[i]! - 1;
            const term = m.taskArgs[i]!;
            const v = term < 0 ? -term - 1 : b[term]!;
            if (v >= 0) ok = lv.stage(k, v);
            else {
              slotVar ??= new Int32Array(m.slots).fill(-1);
              if (slotVar[term] === -1) slotVar[term] = k;
              else ok = slotVar[term] === k;
              // The method may declare a narrower type for this variable than the caller did.
              if (ok) ok = lv.meet(lv.type[k]!, m.query.slotTypes[term]!) >= 0;
            }
          }
          if (!ok) continue;
          lv.commit();
          if (slotVar) {
            for (let i = 0; i < args.length; i++) {
              const k = -args[i]! - 1;
              if ((mask & (1 << i)) !== 0 && lv.value[k]! < 0) lv.narrow(k, m.query.slotTypes[m.taskArgs[i]!]!);
            }
          }
        }
        const node = t.open(cell.task, args, cell.parent, m.index);
        let next = cell.next;
        for (let i = m.subtasks.length - 1; i >= 0; i--) {
          const sub = m.subtasks[i]!;
          const subArgs = new Int32Array(sub.args.length);
          for (let j = 0; j < subArgs.length; j++) {
            const term = sub.args[j]!;
            let v = termValue(term, b);
            if (v < 0) {
              slotVar ??= new Int32Array(m.slots).fill(-1);
              if (slotVar[term] === -1) slotVar[term] = lv.fresh(m.query.slotTypes[term]!);
              v = -slotVar[term]! - 1;
            }
            subArgs[j] = v;
          }
          next = { task: sub.task, args: subArgs, parent: node, next };
        }
        agenda = next;
        return OK;
      }
      cp.run = null;
      cp.method++;
    }
  };

  /** Resumes the newest choice point with an alternative left; EXHAUSTED when none remain. */
  const backtrack = (): number => {
    while (choicePoints.length > 0) {
      const cp = choicePoints[choicePoints.length - 1]!;
      const r = tryAlternatives(cp);
      if (r !== EXHAUSTED) return r;
      choicePoints.pop();
      noteFailure(cp.cell);
    }
    return EXHAUSTED;
  };

  for (;;) {
    let status = OK;
    if (agenda === null) {
      if (!model.goalCondition || new QueryRun(model.goalCondition, new Int32Array(model.goalCondition.slotTypes.length).fill(-1), ctx).next()) {
        const result = buildPlan(model, t, nodes, lv.value, lv.type);
        store.undoTo(0); // leave the model as it was: a search never changes its input
        return result;
      }
      goalConditionFailed = true;
      status = backtrack();
    } else {
      const cell: Cell = agenda;
      const task = tasks[cell.task]!;
      const args = lv.resolve(cell.args);
      const mask = lv.mask;
      if (t.depthOf(cell.parent) > maxDepth) {
        limit = { limit: 'depth', budget: maxDepth, cell };
        status = LIMIT;
      } else if (task.operator && mask === 0) {
        if (!countNode(cell)) status = LIMIT;
        else if (applyOperator(task.operator, args, store, ctx, members)) {
          t.open(cell.task, args, cell.parent, -1);
          agenda = cell.next;
          continue;
        } else {
          noteFailure(cell);
          status = backtrack();
        }
      } else if (!task.operator && cycleCheck && t.isCycle(cell.task, args, cell.parent)) {
        status = backtrack();
      } else {
        const cp: ChoicePoint = {
          cell,
          args,
          mask,
          treeMark: t.nodeCount,
          planMark: t.stepCount,
          trailMark: store.mark(),
          vars: lv.mark(),
          method: 0,
          run: null,
        };
        choicePoints.push(cp);
        status = tryAlternatives(cp);
        if (status === EXHAUSTED) {
          choicePoints.pop();
          noteFailure(cell);
          status = backtrack();
        }
      }
    }
    if (status === OK) continue;
    const stats = { nodes: Math.min(nodes, maxNodes) };
    if (status === LIMIT && limit) {
      const { cell } = limit;
      return {
        kind: 'limit',
        limit: limit.limit,
        ...(limit.budget !== undefined ? { budget: limit.budget } : {}),
        task: tasks[cell.task]!.name,
        args: values(cell.args),
        ...(deepest ? { deepest } : {}),
        stats,
      };
    }
    // Exhausted: every choice point is gone and the state is the initial one again.
    store.undoTo(0);
    const goal = tasks[goalCell.task]!.operator
      ? explainOperator(model, ctx, goalCell.task, goalCell.args, 0)
      : explainTask(model, ctx, goalCell.task, goalCell.args, 0);
    return {
      kind: 'no-method',
      task: tasks[goalCell.task]!.name,
      args: values(goalCell.args),
      explanation: { goal, deepest, goalConditionFailed },
      stats,
    };
  }
}
