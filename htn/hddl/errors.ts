/**
 * The one error the HDDL front end throws. Its message is `file:line:col: message` so an editor
 * can jump to it; the parts are also kept as fields for programs.
 */
import type { SourcePos } from './ast.js';

export class HddlParseError extends Error {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** The message without the `file:line:col: ` prefix. */
  readonly reason: string;

  constructor(file: string, pos: SourcePos, reason: string) {
    super(`${file}:${pos.line}:${pos.column}: ${reason}`);
    this.name = 'HddlParseError';
    this.file = file;
    this.line = pos.line;
    this.column = pos.column;
    this.reason = reason;
  }
}
