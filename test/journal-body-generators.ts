// Random record bodies for the fast validators' property tests: one valid arbitrary per kind
// (optional members sometimes absent), mutations that put near misses and odd objects anywhere in a
// body, and the predicates that say which bodies are ordinary data. Shared by
// journal-fast-path.test.ts (parsed values) and journal-canonical-scan.test.ts (canonical bytes).
import fc from 'fast-check';
import { bytesToHex } from '../journal/digest.js';
import { bodySchemas, recordKinds, type RecordKind } from '../journal/records.js';

export const str = fc.string({ maxLength: 6 });
export const name = fc.string({ minLength: 1, maxLength: 6 });
export const json = fc.jsonValue({ maxDepth: 2 });
export const count = fc.oneof(fc.nat({ max: 20 }), fc.maxSafeNat());
export const digest = fc.uint8Array({ minLength: 32, maxLength: 32 }).map(bytesToHex);
const cls = fc.constantFrom('transient', 'permanent', 'policy');
const purpose = fc.constantFrom('parse', 'author');

export const pin = fc.record(
  {
    library: digest,
    runtime: name,
    flags: fc.array(count, { maxLength: 3 }),
    model: fc.record({ id: name, params: fc.dictionary(str, json, { maxKeys: 3 }) }),
    seed: str,
    asOf: name,
    policy: name,
    limits: fc.dictionary(str, count, { maxKeys: 3 }),
    shadow: fc.record({ results: fc.constantFrom('none', 'actuators') }),
  },
  { requiredKeys: ['library', 'runtime', 'flags', 'model', 'seed', 'asOf', 'policy'] },
);
const step = fc.record({ step: count, actuator: name, args: json, key: name, attempt: count });
const done = fc.record({ step: count, key: name, attempt: count, result: json });

/** Valid bodies, one arbitrary per kind (optional members sometimes absent). */
export const valid: { [K in RecordKind]: fc.Arbitrary<unknown> } = {
  'invocation.pinned': fc.record(
    { schema: fc.constant(1), invocation: name, tenant: name, intent: str, pin, intentCut: fc.record({ chars: count, digest }) },
    { requiredKeys: ['schema', 'invocation', 'tenant', 'intent', 'pin'] },
  ),
  'admission.decided': fc.record(
    { subject: fc.constantFrom('authoring', 'epoch', 'step'), step: count, decision: fc.constantFrom('allow', 'deny', 'require_approval'), policy: name, reason: str, rule: name },
    { requiredKeys: ['subject', 'decision', 'policy'] },
  ),
  'model.requested': fc.record({ purpose, attempt: count, request: json }),
  'model.completed': fc.record(
    { purpose, attempt: count, reply: json, refused: fc.record({ code: name, chars: count, digest }) },
    { requiredKeys: ['purpose', 'attempt', 'reply'] },
  ),
  'model.failed': fc.record({ purpose, attempt: count, class: fc.constantFrom('transient', 'credentials', 'endpoint', 'permanent'), code: name, message: str }),
  'model.rejected': fc.record({ attempt: count, reason: name, reply: json }, { requiredKeys: ['attempt', 'reason'] }),
  'state.observed': fc.record(
    { actuator: name, key: name, state: json, failure: fc.record({ class: cls, code: name, message: str }) },
    { requiredKeys: ['actuator', 'key', 'state'] },
  ),
  'epoch.derived': fc.record({ source: fc.constantFrom('htn', 'authored'), goal: fc.record({ task: name, args: fc.array(json, { maxLength: 3 }) }), library: digest, plan: digest, steps: count }),
  'epoch.certified': fc.record({ plan: digest, policy: name }),
  'approval.requested': fc.record({ plan: digest, reason: name }),
  'approval.decided': fc.record({ decision: fc.constantFrom('approved', 'rejected'), by: name, note: str }, { requiredKeys: ['decision', 'by'] }),
  'step.dispatched': step,
  'step.completed': done,
  'step.failed': fc.record({ step: count, key: name, attempt: count, class: cls, code: name, message: str }),
  'step.refused': fc.record({ step: count, key: name, attempt: count, code: name, reason: str, worker: name }),
  'step.shadowed': fc.record(
    { step: count, actuator: name, args: json, key: name, source: fc.constantFrom('actuator', 'none'), result: json, failure: fc.record({ class: cls, code: name, message: str }) },
    { requiredKeys: ['step', 'actuator', 'args', 'key', 'source', 'result'] },
  ),
  'compensation.dispatched': step,
  'compensation.completed': fc.record(
    { step: count, key: name, attempt: count, result: json, failure: fc.record({ class: cls, code: name, message: str }) },
    { requiredKeys: ['step', 'key', 'attempt', 'result'] },
  ),
  'compensation.halted': fc.record({
    at: count,
    why: fc.constantFrom('pivot' as const, 'compensation_failed' as const),
    ran: fc.array(fc.record({ step: count, actuator: name, key: name }), { maxLength: 3 }),
    undone: fc.array(fc.record({ step: count, actuator: name, key: name }), { maxLength: 3 }),
    notUndone: fc.array(fc.record({ step: count, actuator: name, key: name }), { maxLength: 3 }),
    reason: name,
  }),
  'timer.set': fc.record({ step: count, until: name }),
  'timer.fired': fc.record({ step: count, at: name }),
  'frontier.truncated': fc.record({ epoch: count, removed: fc.array(count, { maxLength: 4 }), reason: name }),
  'epoch.closed': fc.record({ outcome: fc.constantFrom('completed', 'compensated', 'denied'), steps: count }),
  'invocation.completed': fc.record({ summary: str }),
  'invocation.failed': fc.record({ code: name, class: cls, reason: name }),
  'invocation.handed_off': fc.record({ reason: name }),
  'cancel.requested': fc.record({ by: name, reason: str, at: name }),
  'deadline.passed': fc.record({ deadline: name, at: name }),
  'invocation.cancelled': fc.record({ by: name, reason: str, kept: fc.array(fc.record({ epoch: count, step: count, actuator: name, key: name }), { maxLength: 3 }) }),
  'invocation.rekeyed': fc.record({ from: digest, to: digest }),
  'invocation.forked': fc.record({
    world: name,
    parent: name,
    parentSeq: count,
    parentHash: digest,
    atEpoch: count,
    repinned: fc.array(name, { maxLength: 3 }),
    state: fc.record({
      epoch: count,
      outcomes: fc.array(json, { maxLength: 2 }),
      spent: json,
      replans: count,
      effects: fc.array(fc.record({ epoch: count, step: count, operator: name, actuator: name, key: name }), { maxLength: 2 }),
      obligations: fc.array(fc.record({ epoch: count, step: count, actuator: name, args: json }), { maxLength: 2 }),
    }),
  }, { requiredKeys: ['parent', 'parentSeq', 'parentHash', 'atEpoch', 'repinned', 'state'] }),
  'invocation.superseded': fc.record({ by: name, atEpoch: count, reason: name }),
  'invocation.sealed': fc.record({ algorithm: fc.constant('ed25519'), fingerprint: digest, keyId: digest, signature: fc.uint8Array({ minLength: 64, maxLength: 64 }).map(bytesToHex) }),
};

/** Values a mutation may put anywhere: near misses of every validator, and odd objects. */
export const odd = fc.oneof(
  fc.constantFrom<unknown>(undefined, null, '', 'x', 0, -0, -1, 1.5, 2 ** 53, NaN, Infinity, -Infinity, true, [], {}, [undefined], { a: undefined }, 'ed25519', 1, 'A'.repeat(64), 'a'.repeat(63)),
  fc.constantFrom<unknown>(new Date(0), new Map(), Object.create(null), Object.assign(Object.create(null), { b: 1, a: 2 }), { [Symbol('s')]: 1 }, () => 1, 10n),
  fc.anything({ maxDepth: 2, withNullPrototype: true, withBoxedValues: true, withSparseArray: true }),
  json,
);

type Path = (string | number)[];

function isContainer(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return Array.isArray(value) || proto === Object.prototype || proto === null;
}

/** Every location inside `value` (descending into plain objects and arrays), the root as []. */
function locations(value: unknown, path: Path = [], out: Path[] = []): Path[] {
  out.push(path);
  if (isContainer(value)) {
    for (const key of Object.keys(value)) locations(value[key], [...path, key], out);
  }
  return out;
}

/** Deep copy of plain objects and arrays (prototype, descriptors and symbol keys kept); anything else shared. */
export function clone<T>(value: T): T {
  if (!isContainer(value)) return value;
  const out = Array.isArray(value) ? new Array<unknown>(value.length) : Object.create(Object.getPrototypeOf(value) as object | null);
  for (const key of Reflect.ownKeys(value)) {
    const d = Object.getOwnPropertyDescriptor(value, key)!;
    if ('value' in d) d.value = clone(d.value);
    Object.defineProperty(out, key, d);
  }
  return out as T;
}

type Mutation = { at: number; op: 'set' | 'delete' | 'add'; value: unknown; key: string };
export const mutation: fc.Arbitrary<Mutation> = fc.record({ at: fc.nat(), op: fc.constantFrom('set' as const, 'delete' as const, 'add' as const), value: odd, key: fc.oneof(name, fc.constantFrom('step', 'key', 'body', '__proto__', 'constructor')) });

export function mutate(body: unknown, m: Mutation): unknown {
  const root = { root: clone(body) };
  const paths = locations(root.root).map((p) => ['root', ...p] as Path);
  const path = paths[m.at % paths.length]!;
  const parent = path.slice(0, -1).reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], root) as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (m.op === 'set') parent[last] = m.value;
  else if (m.op === 'delete') delete parent[last];
  else {
    const target = parent[last];
    // An array's `length` cannot be redefined (it is not configurable): adding it would only throw here.
    if (isContainer(target) && !(Array.isArray(target) && m.key === 'length')) Object.defineProperty(target, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
    else parent[last] = m.value;
  }
  return root.root;
}

/** Plain data: objects with Object.prototype or null, arrays, primitives; no `__proto__` key. */
export function ordinary(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return typeof value !== 'function';
  if (Array.isArray(value)) return Object.getPrototypeOf(value) === Array.prototype && Object.keys(value).length === value.length && value.every(ordinary);
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  if (Object.getOwnPropertySymbols(value).length > 0 || Object.hasOwn(value, '__proto__')) return false;
  return Object.values(value).every(ordinary);
}

/** Every object's Object.keys strictly increasing. */
export function keysInOrder(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  const keys = Object.keys(value);
  for (let i = 1; i < keys.length; i++) if (!(keys[i - 1]! < keys[i]!)) return false;
  return Object.values(value).every(keysInOrder);
}

/** True when some object inside `v` has an own `__proto__` member. */
export function hasProtoKey(v: unknown): boolean {
  if (v === null || typeof v !== 'object') return false;
  if (!Array.isArray(v) && Object.hasOwn(v, '__proto__')) return true;
  return Object.values(v as Record<string, unknown>).some(hasProtoKey);
}

export function zodOk(kind: RecordKind, body: unknown): boolean {
  return bodySchemas[kind].safeParse(body).success;
}

export const kind = fc.constantFrom(...recordKinds);
export const validBody = kind.chain((k) => fc.tuple(fc.constant(k), valid[k]));
