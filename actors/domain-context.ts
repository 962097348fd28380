/**
 * What a domain's factories receive (DomainContext), and the part of a domain that runs its
 * actuators (ActuatorDomain): its name, its libraries and its actuator factory. A worker
 * (queue/worker.ts) needs only this part; runtime/domain.ts's Domain is a full ActuatorDomain. Both
 * live here, below queue/ and runtime/, so that the queue need not reach up into the runtime.
 */
import type { Library } from '../htn/library/schema.js';
import type { Actuator } from './actuator.js';

/** What a domain's factories receive: where this workspace lets the domain keep its own state. */
export interface DomainContext {
  /** A folder for the domain's local state (the CLI gives `<workspace>/state/<domain name>`); it may not exist yet. */
  stateDir: string;
  /**
   * In the distributed mode: the Redis the runtime keeps its journals in, which a domain may use for
   * its own shared state (keys under `prefix`), so that any process — a resumed runtime, a worker —
   * sees the same world. Absent in the embedded mode. `giveUpAfterMs`, when set, is how long a
   * client the domain makes should wait for an unreachable server before failing what it was asked
   * (a short-lived command's budget, redis/reconnect.ts); absent, reconnect for ever.
   */
  redis?: { url: string; prefix: string; giveUpAfterMs?: number };
}

/** The part of a domain a worker runs: which domain it is, the libraries it knows, and its actuators. */
export interface ActuatorDomain {
  readonly name: string;
  readonly libraries: readonly Library[];
  /** The domain's actuators for this context (the factory is called on every call). */
  actuators(ctx: DomainContext): Actuator[];
}
