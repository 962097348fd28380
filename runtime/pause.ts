/**
 * A wait of `ms` that ends at once when `signal` aborts (or has aborted): the poll between rounds of
 * `serve` and of a client handle's `result()`. Real time, on the effect side only.
 */
export function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
