/**
 * Dispatchers — the public face of queue/: the job contract every dispatcher implements and the
 * in-process dispatcher (the embedded default).
 */
export * from './dispatcher.js';
export { InProcessDispatcher, runJob } from './in-process.js';
