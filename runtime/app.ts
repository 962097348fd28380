/**
 * A Weft app: everything a runtime needs to run one kind of intent — the method library, the
 * actuators (including the read-only `state` actuator observed at the start of every epoch), the
 * admission policy, and evaluable predicates. Examples export one; `weft run <example>` loads it.
 */
import type { Actuator } from '../actors/actuator.js';
import type { EvaluableRegistry } from '../htn/library/evaluables.js';
import type { Library } from '../htn/library/schema.js';
import type { AdmissionPolicy } from '../machines/policy.js';

export interface WeftApp {
  name: string;
  library: Library;
  actuators: Actuator[];
  /** Name of the read-only `state` actuator; called with `{ goal: { task, args } }`, returns `{ objects, facts }`. */
  observe: string;
  policy?: AdmissionPolicy;
  evaluables?: EvaluableRegistry;
}
