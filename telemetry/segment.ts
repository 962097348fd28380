/**
 * What this process is doing, as its segment spans are named (`weft run`, `weft approve`, `weft
 * serve`, …): set once by the CLI for its command; in code, a segment is `run` when it starts an
 * invocation and `resume` otherwise.
 */
let named: string | undefined;

export function setProcessSegment(name: string | undefined): void {
  named = name;
}

export function processSegment(inferred: string): string {
  return named ?? inferred;
}
