/**
 * The HDDL reader: text → s-expressions, in one linear pass with an explicit stack (no recursion,
 * so nesting depth is bounded only by memory, and multi-megabyte problem files read in
 * milliseconds).
 *
 * Tokens: `(`, `)`, and symbols (maximal runs of characters other than whitespace, parentheses and
 * `;`). `;` starts a comment that runs to the end of the line. Symbols keep their case. Positions
 * are 1-based line and column (columns count UTF-16 code units; a tab is one column).
 */
import type { SourcePos } from './ast.js';
import { HddlParseError } from './errors.js';

export interface SSymbol {
  readonly kind: 'sym';
  readonly text: string;
  readonly pos: SourcePos;
}

export interface SList {
  readonly kind: 'list';
  readonly items: SExpr[];
  readonly pos: SourcePos;
}

export type SExpr = SSymbol | SList;

const LPAREN = 40;
const RPAREN = 41;
const SEMI = 59;
const NL = 10;

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13 || c === 12 || c === 11 || c === 0xfeff || c === 0xa0;
}

/**
 * Reads every top-level form of `text`. Throws `HddlParseError` on an unbalanced parenthesis
 * (naming the unmatched one) or on a symbol outside any list.
 */
export function readSexprs(text: string, file: string): SList[] {
  const top: SList[] = [];
  const stack: SList[] = [];
  let line = 1;
  let lineStart = 0;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === NL) {
      line++;
      i++;
      lineStart = i;
      continue;
    }
    if (isSpace(c)) {
      i++;
      continue;
    }
    if (c === SEMI) {
      while (i < n && text.charCodeAt(i) !== NL) i++;
      continue;
    }
    const pos: SourcePos = { line, column: i - lineStart + 1 };
    if (c === LPAREN) {
      const list: SList = { kind: 'list', items: [], pos };
      const parent = stack[stack.length - 1];
      if (parent) parent.items.push(list);
      else top.push(list);
      stack.push(list);
      i++;
      continue;
    }
    if (c === RPAREN) {
      if (stack.pop() === undefined) throw new HddlParseError(file, pos, 'unexpected ")" with no matching "("');
      i++;
      continue;
    }
    const start = i;
    while (i < n) {
      const d = text.charCodeAt(i);
      if (d === LPAREN || d === RPAREN || d === SEMI || isSpace(d)) break;
      i++;
    }
    const sym: SSymbol = { kind: 'sym', text: text.slice(start, i), pos };
    const parent = stack[stack.length - 1];
    if (!parent) throw new HddlParseError(file, pos, `unexpected symbol "${sym.text}" outside any list`);
    parent.items.push(sym);
  }
  const open = stack[stack.length - 1];
  if (open) {
    throw new HddlParseError(file, open.pos, `unclosed "(" (end of file reached with ${stack.length} list(s) open)`);
  }
  return top;
}
