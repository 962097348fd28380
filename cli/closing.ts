/**
 * What a command opened that would keep the process alive — Redis stores, a runtime's BullMQ
 * connections, the Stately relay — registered as it is opened and closed when the command ends
 * (main.ts), newest first. Apart from store-choice.ts, which re-exports it, so that main.ts can
 * close what was opened without loading the stores: `weft --version` opens nothing and loads nothing.
 */

const opened: Array<{ close(): Promise<void> }> = [];

/** Close this too when the command ends (a store, a runtime's BullMQ connections). */
export function closeAtExit(closeable: { close(): Promise<void> }): void {
  opened.push(closeable);
}

/** Close every store and runtime this command opened (Redis connections would keep the process alive); runtimes first. */
export async function closeStores(): Promise<void> {
  for (const closeable of opened.splice(0).reverse()) await closeable.close().catch(() => undefined);
}
