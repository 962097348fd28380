/**
 * The IPC 2020 HTN plan format (as read by the pandaPIparser verifier): types, a formatter and a
 * parser.
 *
 * ```
 * ==>
 * 0 action-name arg1 arg2            primitive actions, in execution order
 * root 2 3                           the ids of the initial-network tasks, in order
 * 2 task-name arg1 -> method-name 0 1   one line per abstract task: its children, in order
 * <==
 * ```
 *
 * Grammar notes (from the IPC verifier's format description): everything before `==>` is planner
 * chatter and ignored; the action section ends at the first line starting with `root`; `<==` is
 * optional (end of input also ends the plan) and everything after it is ignored. Tokens are
 * whitespace separated; blank lines are skipped. Ids are non-negative integers, distinct across
 * actions and abstract tasks. An artificial root `__top -> __top_method <ids>` is allowed; it is
 * kept here as an ordinary decomposition (the verifier interprets it).
 *
 * Invariants: `parseIpcPlan(formatIpcPlan(p))` equals `p` up to the optional `line` fields; the
 * parser never throws anything but `IpcPlanParseError`, whose message names the 1-based line.
 */

export interface IpcAction {
  readonly id: number;
  readonly name: string;
  readonly args: readonly string[];
  /** 1-based line in the parsed text (absent on plans built in memory). */
  readonly line?: number;
}

export interface IpcDecomposition {
  readonly id: number;
  readonly task: string;
  readonly args: readonly string[];
  readonly method: string;
  /** Child task ids (primitive or abstract), in the method's subtask order. */
  readonly children: readonly number[];
  readonly line?: number;
}

export interface IpcPlan {
  readonly actions: readonly IpcAction[];
  readonly root: readonly number[];
  readonly decompositions: readonly IpcDecomposition[];
  /** 1-based line of the `root` line, when parsed. */
  readonly rootLine?: number;
}

export class IpcPlanParseError extends Error {
  readonly line: number;
  constructor(line: number, message: string) {
    super(`plan line ${line}: ${message}`);
    this.name = 'IpcPlanParseError';
    this.line = line;
  }
}

/** Renders a plan in the IPC format, ending with `<==` and a newline. */
export function formatIpcPlan(plan: IpcPlan): string {
  const out: string[] = ['==>'];
  for (const a of plan.actions) out.push([String(a.id), a.name, ...a.args].join(' '));
  out.push(['root', ...plan.root.map(String)].join(' '));
  for (const d of plan.decompositions) {
    out.push([String(d.id), d.task, ...d.args, '->', d.method, ...d.children.map(String)].join(' '));
  }
  out.push('<==');
  return out.join('\n') + '\n';
}

const ID_RE = /^(0|[1-9][0-9]*)$/;

function parseId(token: string, line: number, what: string): number {
  if (!ID_RE.test(token)) throw new IpcPlanParseError(line, `${what} "${token}" is not a non-negative integer`);
  const n = Number(token);
  if (!Number.isSafeInteger(n)) throw new IpcPlanParseError(line, `${what} "${token}" is too large`);
  return n;
}

/** Parses the IPC plan format. Throws `IpcPlanParseError` naming the line on malformed input. */
export function parseIpcPlan(text: string): IpcPlan {
  const lines = text.split(/\r?\n/);
  let i = 0;
  while (i < lines.length && !lines[i]!.trimStart().startsWith('==>')) i++;
  if (i === lines.length) throw new IpcPlanParseError(1, 'no "==>" line found: the plan must start with "==>"');
  const rest = lines[i]!.trimStart().slice(3).trim();
  if (rest !== '') throw new IpcPlanParseError(i + 1, `unexpected text after "==>": "${rest}"`);
  i++;

  const actions: IpcAction[] = [];
  const decompositions: IpcDecomposition[] = [];
  const seen = new Map<number, number>(); // id -> line
  const claim = (id: number, line: number): void => {
    const prev = seen.get(id);
    if (prev !== undefined) throw new IpcPlanParseError(line, `id ${id} already used on line ${prev}`);
    seen.set(id, line);
  };

  let root: number[] | undefined;
  let rootLine: number | undefined;
  for (; i < lines.length; i++) {
    const lineNo = i + 1;
    const raw = lines[i]!.trim();
    if (raw === '') continue;
    if (raw.startsWith('<==')) break;
    const tokens = raw.split(/\s+/);
    const head = tokens[0]!;
    if (root === undefined) {
      if (head === 'root') {
        root = tokens.slice(1).map((t) => parseId(t, lineNo, 'root id'));
        rootLine = lineNo;
        continue;
      }
      const id = parseId(head, lineNo, 'action id');
      const name = tokens[1];
      if (name === undefined) throw new IpcPlanParseError(lineNo, `action ${id} has no name`);
      if (tokens.includes('->')) {
        throw new IpcPlanParseError(lineNo, `decomposition line before the "root" line (actions come first, then "root")`);
      }
      claim(id, lineNo);
      actions.push({ id, name, args: tokens.slice(2), line: lineNo });
      continue;
    }
    if (head === 'root') throw new IpcPlanParseError(lineNo, `second "root" line (first on line ${rootLine})`);
    const id = parseId(head, lineNo, 'task id');
    const arrow = tokens.indexOf('->');
    if (arrow < 0) throw new IpcPlanParseError(lineNo, `decomposition of task ${id} has no "->"`);
    const task = tokens[1];
    if (task === undefined || arrow < 2) throw new IpcPlanParseError(lineNo, `task ${id} has no name before "->"`);
    const method = tokens[arrow + 1];
    if (method === undefined) throw new IpcPlanParseError(lineNo, `task ${id} has no method name after "->"`);
    const children = tokens.slice(arrow + 2).map((t) => parseId(t, lineNo, 'child id'));
    claim(id, lineNo);
    decompositions.push({ id, task, args: tokens.slice(2, arrow), method, children, line: lineNo });
  }
  if (root === undefined) throw new IpcPlanParseError(Math.min(i + 1, lines.length), 'no "root" line');
  return { actions, root, decompositions, rootLine: rootLine! };
}
