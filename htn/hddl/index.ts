/**
 * The HDDL front end's public face: the AST types, the parser, and its error.
 * Pure: takes text and a file name (for messages); never reads files.
 */
export * from './ast.js';
export { HddlParseError } from './errors.js';
export { parseHddl, parseDomain, parseProblem } from './parser.js';
export { readSexprs, type SExpr, type SList, type SSymbol } from './lexer.js';
