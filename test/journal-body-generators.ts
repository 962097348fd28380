// Random record bodies for the fast validators' property tests: one valid arbitrary per kind
// (record-arbitraries.ts: every optional member, sometimes absent), mutations that put near misses
// and odd objects anywhere in a body, and the predicates that say which bodies are ordinary data.
// Shared by journal-fast-path.test.ts (parsed values) and journal-canonical-scan.test.ts (canonical bytes).
import fc from 'fast-check';
import { bodySchemas, pinSchema, recordKinds, type RecordKind } from '../journal/records.js';
import { shapeOf } from '../journal/shapes.js';
import { arbitraryOf, bodyArbitraries, count, digest } from './record-arbitraries.js';

export const str = fc.string({ maxLength: 6 });
export const name = fc.string({ minLength: 1, maxLength: 6 });
export const json = fc.jsonValue({ maxDepth: 2 });
export { count, digest };

/** Valid bodies, one arbitrary per kind (optional members sometimes absent), from the one declaration. */
export const valid = bodyArbitraries({ str, name, json });
export const pin = arbitraryOf(shapeOf(pinSchema), { str, name, json });

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
