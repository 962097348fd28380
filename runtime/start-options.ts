/**
 * `runtime.start(intent, opts?)`'s options: the defaults the CLI's `weft run` takes, and the checks
 * that refuse a malformed option before anything is written (no lease, no blob, no journal).
 *
 * Defaults (as `weft run <domain>` without flags): tenant `default`, seed `1`, asOf the domain's
 * `asOf` — or a RuntimeUsageError saying to pass `asOf` when the runtime has no domain that
 * names one. Each refusal is one line that names the option and says what it takes.
 *
 * Pure: no clock (asOf is parsed, never compared with now), no I/O.
 */
import { isValidInvocationId } from '../journal/store.js';
import { RuntimeUsageError } from './errors.js';

export interface StartOptions {
  /** Whose invocation this is (default `default`); keys and admission are namespaced by it. */
  tenant: string;
  /** The seed of the invocation's PRNG streams (default `1`); a number is pinned as its decimal string. */
  seed: string | number;
  /** The invocation's pinned "now" (ISO 8601; default the domain's `asOf`). */
  asOf: string;
  id?: string;
  /** Name of the library to pin (default: the first of `libraries`). */
  library?: string;
  /** A shadow run: admitted and recorded, nothing reaches the world (pin.shadow; docs/operate-shadow.md). */
  shadow?: boolean;
  /**
   * When the invocation must have ended (ISO 8601, or a Date): pinned (`pin.deadline`). Passing it —
   * seen between steps, at epoch boundaries, or by `serve` while the invocation rests — is recorded
   * (`deadline.passed`) and ends the invocation failed (policy, `invocation.deadline_passed`) after
   * compensating the current epoch. Resolved options hold it as ISO 8601.
   */
  deadline?: string | Date;
  /** Time one attempt of a step may take (ms; pinned as `limits.stepTimeoutMs`); longer is a transient `step.timed_out`. Default: the runtime's limit (none). */
  stepTimeoutMs?: number;
}

export const DEFAULT_TENANT = 'default';
export const DEFAULT_SEED = '1';

const usage = (code: string, message: string) => new RuntimeUsageError(code, `runtime.start: ${message}`);

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'undefined') return String(value);
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/**
 * The options `start` runs with: `given` checked, the defaults filled in. `domainAsOf` is the
 * domain's pinned "now", if the runtime has a domain that declares one.
 */
export function resolveStartOptions(intent: unknown, given: unknown, domainAsOf: string | undefined): StartOptions {
  if (typeof intent !== 'string') throw usage('runtime.bad_intent', `the intent must be a string, got ${describe(intent)}`);
  if (given !== undefined && (typeof given !== 'object' || given === null || Array.isArray(given))) {
    throw usage('runtime.bad_start_options', `the options must be an object { tenant?, seed?, asOf?, id?, library?, shadow? }, got ${describe(given)}`);
  }
  const opts = (given ?? {}) as Record<string, unknown>;
  const known = new Set(['tenant', 'seed', 'asOf', 'id', 'library', 'shadow', 'deadline', 'stepTimeoutMs']);
  const unknown = Object.keys(opts).filter((k) => !known.has(k) && opts[k] !== undefined);
  if (unknown.length > 0) throw usage('runtime.bad_start_options', `unknown option ${unknown.map((k) => JSON.stringify(k)).join(', ')}; start takes tenant, seed, asOf, id, library, shadow, deadline and stepTimeoutMs`);

  const tenant = opts.tenant ?? DEFAULT_TENANT;
  if (typeof tenant !== 'string' || tenant.length === 0) throw usage('runtime.bad_tenant', `tenant must be a non-empty string (default ${JSON.stringify(DEFAULT_TENANT)}), got ${describe(tenant)}`);

  const seed = opts.seed ?? DEFAULT_SEED;
  if (!(typeof seed === 'string' || (typeof seed === 'number' && Number.isSafeInteger(seed)))) {
    throw usage('runtime.bad_seed', `seed must be a string or an integer (default ${JSON.stringify(DEFAULT_SEED)}), got ${describe(seed)}`);
  }

  const asOf = opts.asOf ?? domainAsOf;
  if (asOf === undefined) throw usage('runtime.no_as_of', `pass asOf (an ISO 8601 time, the invocation's pinned "now"): this runtime's domain declares none`);
  if (typeof asOf !== 'string' || Number.isNaN(Date.parse(asOf))) {
    throw usage('runtime.bad_as_of', `asOf must be an ISO 8601 time such as "2026-06-01T09:00:00Z", got ${describe(asOf)}`);
  }

  if (opts.id !== undefined && (typeof opts.id !== 'string' || !isValidInvocationId(opts.id))) {
    throw usage('runtime.bad_id', `id must be 1–200 letters, digits, ".", "_" or "-", starting with a letter or digit, without "..", got ${describe(opts.id)}`);
  }
  if (opts.library !== undefined && (typeof opts.library !== 'string' || opts.library.length === 0)) {
    throw usage('runtime.bad_library', `library must name one of the runtime's libraries, got ${describe(opts.library)}`);
  }
  if (opts.shadow !== undefined && typeof opts.shadow !== 'boolean') throw usage('runtime.bad_shadow', `shadow must be true or false (a shadow run reaches nothing in the world), got ${describe(opts.shadow)}`);
  let deadline: string | undefined;
  if (opts.deadline !== undefined) {
    const ms = opts.deadline instanceof Date ? opts.deadline.getTime() : typeof opts.deadline === 'string' ? Date.parse(opts.deadline) : Number.NaN;
    if (!Number.isFinite(ms)) throw usage('runtime.bad_deadline', `deadline must be an ISO 8601 time such as "2026-06-01T18:00:00Z" (or a Date), got ${describe(opts.deadline)}`);
    deadline = new Date(ms).toISOString();
  }
  const timeout = opts.stepTimeoutMs;
  if (timeout !== undefined && !(typeof timeout === 'number' && Number.isSafeInteger(timeout) && timeout >= 0)) {
    throw usage('runtime.bad_step_timeout', `stepTimeoutMs must be a whole number of milliseconds (0: no limit), got ${describe(timeout)}`);
  }
  return {
    tenant,
    seed,
    asOf,
    ...(opts.id === undefined ? {} : { id: opts.id as string }),
    ...(opts.library === undefined ? {} : { library: opts.library as string }),
    ...(opts.shadow === true ? { shadow: true } : {}),
    ...(deadline === undefined ? {} : { deadline }),
    ...(timeout === undefined ? {} : { stepTimeoutMs: timeout }),
  };
}
