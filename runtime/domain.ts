/**
 * The domain contract: everything a runtime needs to run one kind of intent, apart from the store,
 * the dispatcher, the signing key and the model endpoint — the method libraries, the actuators
 * (the read-only `observe` actuator among them), the admission policy, the evaluable predicates,
 * and optionally a model (say a scripted one), a default intent and a default pinned `asOf`.
 *
 * A domain module's default export is `defineDomain({...})`; `weft run|resume|approve|replay
 * --domain <name | path | package>` loads it, and `createRuntime({ domain, stateDir, store })`
 * takes it in a Node app. The built-in `travel` example is one such domain; nothing in the
 * runtime knows its name.
 *
 * Invariants:
 * - A Domain is recognised by a brand (`Symbol.for('weft.domain')`), not `instanceof`, so a domain
 *   built against another copy of `weft` (the user's own node_modules) is still one.
 * - Actuators and the model may be given as factories of a DomainContext (a folder the domain may
 *   keep local state in); they are called only when the runtime needs them, so replaying a journal
 *   somewhere else writes nothing there.
 * - Which actuators spend is declared once, on the actuator (`spends: 'amount'`); in a domain that
 *   uses `spends`, a declaration the policy's envelope could read two ways is refused here
 *   (machines/spenders.ts). A domain that declares `spends` nowhere is checked for nothing: it
 *   keeps the rule before flag 2 (every world effect passing the cap's arg counts).
 * - Everything that decides a journal's content — library digests, the policy's id, the evaluables'
 *   versions (referenced by name@version inside each library, so inside its digest), the model's id
 *   and parameters — is compared with an invocation's pin before it is resumed (runtime/pin-check.ts).
 */
import type { Actuator } from '../actors/actuator.js';
import type { ActuatorDomain, DomainContext } from '../actors/domain-context.js';
import type { Model } from '../actors/model/model.js';
import { EvaluableRegistry, type EvaluablePredicate } from '../htn/library/evaluables.js';
import type { Library } from '../htn/library/schema.js';
import { validateLibrary } from '../htn/library/validate.js';
import type { AdmissionPolicy } from '../machines/policy.js';
import type { PolicyPredicate } from '../policy/predicates.js';
import { DOMAIN_NAME } from '../journal/store.js';
import { marksAnything, normalizeMarks, redactionMarksSchema, type RedactionMarks } from '../journal/redaction.js';
import { pinnedSpenders, spendDeclarationProblem, type PinnedSpender } from '../machines/spenders.js';
import { RuntimeUsageError } from './errors.js';

export type { DomainContext } from '../actors/domain-context.js';

export const DOMAIN_BRAND: unique symbol = Symbol.for('weft.domain') as never;

export type OrFactory<T> = T | ((ctx: DomainContext) => T);

export interface DomainDefinition {
  /** The domain's name: `weft run <name>` for a built-in, and the folder name of its local state. */
  name: string;
  /** One line for `weft run --help` and the demo banner. */
  description?: string;
  /**
   * Method libraries, newest first: a new invocation pins the first (or the one `start` names);
   * the others stay so that invocations pinned to older versions resume and replay.
   */
  libraries: readonly Library[];
  /** The world: tools, messages, timers — and the observe actuator. Names are unique. */
  actuators: OrFactory<readonly Actuator[]>;
  /** Name of the read-only `state` actuator observed at the start of every epoch. */
  observe: string;
  /** The admission policy new invocations pin (default: allow-all@1). */
  policy?: AdmissionPolicy;
  /** Older policy versions, kept so invocations pinned to them resume and replay. */
  policies?: readonly AdmissionPolicy[];
  /** Policy predicates a policy pack run with this domain may reference by name@version (policy/predicates.ts). */
  policyPredicates?: readonly PolicyPredicate[];
  /** The evaluable predicates the libraries reference (by name and version). */
  evaluables?: EvaluableRegistry | readonly EvaluablePredicate[];
  /** A model that ships with the domain (a ScriptedModel for demos and tests); a model endpoint given to the runtime replaces it. */
  model?: OrFactory<Model>;
  /** The intent `weft run <domain>` uses when none is given. */
  intent?: string;
  /** The pinned "now" (ISO 8601) `weft run <domain>` uses when `--as-of` is not given. */
  asOf?: string;
  /**
   * Fields never sent to a viewer, an inspector or a trace (journal/redaction.ts): step args by
   * actuator or operator and arg name, step results by actuator and path, observation paths. Kept
   * in the store's metadata of each invocation started (not in the library: its digest is pinned),
   * so a viewer without this domain's code applies them.
   */
  redact?: RedactionMarks;
}

export interface Domain extends ActuatorDomain {
  readonly [DOMAIN_BRAND]: 1;
  readonly name: string;
  readonly description: string | undefined;
  readonly libraries: readonly Library[];
  readonly observe: string;
  readonly policy: AdmissionPolicy | undefined;
  readonly policies: readonly AdmissionPolicy[];
  readonly policyPredicates: readonly PolicyPredicate[] | undefined;
  readonly evaluables: EvaluableRegistry | undefined;
  readonly intent: string | undefined;
  readonly asOf: string | undefined;
  /** Its redaction marks (normalized), undefined when it marks nothing. */
  readonly redact: RedactionMarks | undefined;
  /**
   * What its actuators declare they spend (sorted, as a pin records it) when they are given as a
   * list; undefined for a factory (known when it is called). A runtime that dispatches through its
   * own dispatcher pins this.
   */
  readonly declaredSpenders: readonly PinnedSpender[] | undefined;
  /** The domain's actuators for this context (the factory is called on every call). */
  actuators(ctx: DomainContext): Actuator[];
  /** The domain's own model for this context, if it ships one. */
  model(ctx: DomainContext): Model | undefined;
}


/** Build a domain: validates what can be checked without running anything, and brands it. */
export function defineDomain(definition: DomainDefinition): Domain {
  const where = `defineDomain(${JSON.stringify(definition?.name ?? '?')})`;
  if (typeof definition !== 'object' || definition === null) throw new RuntimeUsageError('domain.invalid', 'defineDomain needs an object');
  if (typeof definition.name !== 'string' || !DOMAIN_NAME.test(definition.name)) {
    throw new RuntimeUsageError('domain.invalid', `${where}: name must be 1–100 letters, digits, '.', '_' or '-' (it names the domain's state folder and is kept in the store's metadata)`);
  }
  if (!Array.isArray(definition.libraries) || definition.libraries.length === 0) {
    throw new RuntimeUsageError('domain.invalid', `${where}: libraries must hold at least one method library`);
  }
  // Validated, but kept as given: the runtime digests the objects the domain holds.
  for (const library of definition.libraries) validateLibrary(library);
  const libraries = [...definition.libraries];
  if (typeof definition.observe !== 'string' || definition.observe.length === 0) {
    throw new RuntimeUsageError('domain.invalid', `${where}: observe must name the read-only state actuator observed at each epoch`);
  }
  if (definition.asOf !== undefined && Number.isNaN(Date.parse(definition.asOf))) {
    throw new RuntimeUsageError('domain.invalid', `${where}: asOf ${JSON.stringify(definition.asOf)} is not an ISO 8601 time`);
  }
  let redact: RedactionMarks | undefined;
  if (definition.redact !== undefined) {
    const parsed = redactionMarksSchema.safeParse(definition.redact);
    if (!parsed.success) throw new RuntimeUsageError('domain.invalid', `${where}: redact must be { args?: { <actuator or operator>: [arg, …] }, results?: { <actuator>: [path, …] }, observations?: [path, …] } (${parsed.error.issues[0]?.message ?? 'malformed'})`);
    redact = marksAnything(parsed.data) ? Object.freeze(normalizeMarks(parsed.data)) : undefined;
  }
  const evaluables = definition.evaluables === undefined ? undefined : toRegistry(definition.evaluables);
  const actuatorsOf = definition.actuators;
  // Which actuators spend, checked now when they are given as a list (a factory's, when it is called).
  if (Array.isArray(actuatorsOf)) checkSpending(where, actuatorsOf, definition.policy);
  const modelOf = definition.model;
  const domain: Domain = {
    [DOMAIN_BRAND]: 1,
    name: definition.name,
    description: definition.description,
    libraries,
    observe: definition.observe,
    policy: definition.policy,
    policies: definition.policies ?? [],
    policyPredicates: definition.policyPredicates,
    evaluables,
    intent: definition.intent,
    asOf: definition.asOf,
    redact,
    declaredSpenders: Array.isArray(actuatorsOf) ? Object.freeze(pinnedSpenders(actuatorsOf.filter((a) => a && typeof a.name === 'string'))) : undefined,
    actuators(ctx) {
      const list = typeof actuatorsOf === 'function' ? actuatorsOf(ctx) : actuatorsOf;
      return checkSpending(where, checkActuators(where, [...list], definition.observe), definition.policy);
    },
    model(ctx) {
      return typeof modelOf === 'function' ? modelOf(ctx) : modelOf;
    },
  };
  return Object.freeze(domain);
}

/** True for a value made by `defineDomain` — by any copy of weft. */
export function isDomain(value: unknown): value is Domain {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[DOMAIN_BRAND] === 1;
}

function toRegistry(evaluables: EvaluableRegistry | readonly EvaluablePredicate[]): EvaluableRegistry {
  if (!Array.isArray(evaluables)) return evaluables as EvaluableRegistry;
  const registry = new EvaluableRegistry();
  for (const predicate of evaluables as readonly EvaluablePredicate[]) registry.register(predicate);
  return registry;
}

/** An ambiguous declaration of which actuators spend is refused (machines/spenders.ts). */
function checkSpending<T extends readonly Actuator[]>(where: string, actuators: T, policy: AdmissionPolicy | undefined): T {
  const problem = spendDeclarationProblem(policy?.envelope, actuators.filter((a) => a && typeof a.name === 'string'));
  if (problem) throw new RuntimeUsageError('domain.ambiguous_spend', `${where}: ${problem}`);
  return actuators;
}

function checkActuators(where: string, actuators: Actuator[], observe: string): Actuator[] {
  const names = new Set<string>();
  for (const a of actuators) {
    if (!a || typeof a.name !== 'string' || typeof a.run !== 'function' || !a.argsSchema || !a.resultSchema) {
      throw new RuntimeUsageError('domain.invalid', `${where}: every actuator needs name, kind, argsSchema, resultSchema, readOnly and run (got ${JSON.stringify(a?.name ?? a)})`);
    }
    if (names.has(a.name)) throw new RuntimeUsageError('domain.invalid', `${where}: two actuators are named ${a.name}; names must be unique`);
    names.add(a.name);
  }
  const observer = actuators.find((a) => a.name === observe);
  if (!observer) throw new RuntimeUsageError('domain.invalid', `${where}: observe names ${observe}, but no actuator has that name`);
  if (!observer.readOnly) throw new RuntimeUsageError('domain.invalid', `${where}: the observe actuator ${observe} must be readOnly`);
  return actuators;
}
