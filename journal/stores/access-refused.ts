/**
 * A store that refused access, as opposed to a journal that is damaged. Redis answers `NOPERM` to a
 * user whose ACL does not cover a key or command — a tenant's user pointed at another tenant's
 * prefix (README, "Tenants, each with its own key"). Whoever reads an invocation must tell the two
 * apart: a refusal is not damage, says nothing about the invocation, and is reported as what it is.
 */
export function isAccessRefused(err: unknown): err is Error {
  return err instanceof Error && /^NOPERM\b/.test(err.message);
}

export class StoreAccessRefusedError extends Error {
  override readonly name = 'StoreAccessRefusedError';
  readonly code = 'store.access_refused';
  constructor(store: string, cause: Error) {
    super(`${store} refused access (${cause.message.split('\n')[0]}): this store user may not read or write there — use the Redis user and --redis-prefix of the tenant that owns it`);
  }
}
