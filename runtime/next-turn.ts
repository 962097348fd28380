/**
 * A turn given to the event loop: resolves after the I/O callbacks and timers already due have run
 * (setImmediate). A long loop of synchronous reads (a workspace listing, a batch of list rows)
 * awaits it every so often, so that a process that also serves — weft inspect following live
 * journals, weft serve — is not held up for the whole loop.
 */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}
