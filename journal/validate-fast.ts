/**
 * Hand-written fast validators that mirror the zod schemas of records.ts — the hot path of the
 * writer (every body is checked before it is written) and of the reader (every record's shape and
 * body). The zod schemas stay the specification and the source of every error message: these
 * validators only ever ACCEPT on their own. When one says no (or meets anything unusual: a class
 * instance, a symbol key, a `__proto__` key, an inherited property), the caller asks zod, which
 * gives the verdict and its message. So the one property that matters for correctness is
 *
 *     fast accepts  ⇒  zod accepts                                      (never a false accept)
 *
 * and, for speed only, that on plain data they agree (test/journal-fast-path.test.ts checks both
 * directions on random valid and mutated bodies of every kind, against zod).
 *
 * `sorted` (the reader's mode) additionally requires every object's own keys in strictly
 * increasing UTF-16 order — together with `JSON.stringify(value) === line` this proves a parsed
 * line is canonical JSON (see reader.ts). It only ever turns an accept into "ask the slow path".
 * `parsed` says the value came from JSON.parse (no symbol keys possible), which skips a check.
 *
 * Zod semantics mirrored (zod 4): strictObject reads `input[key]` for declared keys and refuses
 * any enumerable key not declared; `z.number()` refuses NaN and ±Infinity; `.int()` means a safe
 * integer; `z.record(z.string(), v)` needs a plain object and checks own enumerable keys (a symbol
 * key fails); `z.json()` is string | finite number | boolean | null | array of json | record of json
 * (so `undefined`, functions, bigints and non-plain objects fail).
 *
 * Pure: no I/O.
 */
import type { RecordKind } from './records.js';

/** A validator: true only when the value certainly passes the zod schema it mirrors. */
type V = (value: unknown, sorted: boolean, parsed: boolean) => boolean;

const DIGEST = /^[0-9a-f]{64}$/;
const HEX = /^(?:[0-9a-f]{2})*$/;

const str: V = (v) => typeof v === 'string';
const nonEmpty: V = (v) => typeof v === 'string' && v.length > 0;
const digest: V = (v) => typeof v === 'string' && v.length === 64 && DIGEST.test(v);
const count: V = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const oneOf = (...values: readonly string[]): V => {
  const set = new Set<unknown>(values);
  return (v) => set.has(v);
};
const literal =
  (value: unknown): V =>
  (v) =>
    v === value;

function isPlain(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** No own symbol keys (zod's records refuse them; JSON.parse never makes them). */
function noSymbols(v: object, parsed: boolean): boolean {
  return parsed || Object.getOwnPropertySymbols(v).length === 0;
}

/** `z.json()`. */
export const json: V = (v, sorted, parsed) => {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v);
    case 'object': {
      if (v === null) return true;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) if (!json(v[i], sorted, parsed)) return false;
        return true;
      }
      return recordBody(v, json, sorted, parsed);
    }
    default:
      return false;
  }
};

/** The members of `z.record(z.string(), of)` once `v` is known to be a non-array object. */
function recordBody(v: object, of: V, sorted: boolean, parsed: boolean): boolean {
  if (!isPlain(v) || !noSymbols(v, parsed)) return false;
  const keys = Object.keys(v);
  const rec = v as Record<string, unknown>;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    // zod skips a `__proto__` member; leave that oddity to zod.
    if (key === '__proto__') return false;
    if (sorted && i > 0 && !(keys[i - 1]! < key)) return false;
    if (!of(rec[key], sorted, parsed)) return false;
  }
  return true;
}

/** `z.record(z.string(), of)`. */
const recordOf =
  (of: V): V =>
  (v, sorted, parsed) =>
    typeof v === 'object' && v !== null && !Array.isArray(v) && recordBody(v, of, sorted, parsed);

/** `z.array(of)`. */
const arrayOf =
  (of: V): V =>
  (v, sorted, parsed) => {
    if (!Array.isArray(v)) return false;
    for (let i = 0; i < v.length; i++) if (!of(v[i], sorted, parsed)) return false;
    return true;
  };

/** An optional member: absent or undefined, or passing `of`. */
interface Opt {
  optional: V;
}
const optional = (of: V): Opt => ({ optional: of });

/** `z.strictObject(shape)`: only plain objects are accepted here (zod also takes class instances). */
function strict(shape: Record<string, V | Opt>): V {
  const names = Object.keys(shape);
  const checks = names.map((name) => {
    const field = shape[name]!;
    return typeof field === 'function' ? { name, check: field, optional: false } : { name, check: field.optional, optional: true };
  });
  const declared = new Set(names);
  return (v, sorted, parsed) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v) || !isPlain(v)) return false;
    const keys = Object.keys(v);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (!declared.has(key)) return false;
      if (sorted && i > 0 && !(keys[i - 1]! < key)) return false;
    }
    const rec = v as Record<string, unknown>;
    for (let i = 0; i < checks.length; i++) {
      const field = checks[i]!;
      const value = rec[field.name];
      if (value === undefined) {
        if (!field.optional) return false;
        // Canonical text omits undefined members; a parsed line never has one.
        if (sorted && Object.hasOwn(rec, field.name)) return false;
      } else if (!field.check(value, sorted, parsed)) {
        return false;
      }
    }
    return true;
  };
}

const failureClass = oneOf('transient', 'permanent', 'policy');
const goal = strict({ task: nonEmpty, args: arrayOf(json) });
const purpose = oneOf('parse', 'author');

const pin = strict({
  library: digest,
  runtime: nonEmpty,
  flags: arrayOf(count),
  model: strict({ id: nonEmpty, params: recordOf(json) }),
  seed: str,
  asOf: nonEmpty,
  policy: nonEmpty,
  limits: optional(recordOf(count)),
});

const bodies: Record<RecordKind, V> = {
  'invocation.pinned': strict({ schema: literal(1), invocation: nonEmpty, tenant: nonEmpty, intent: str, pin }),
  'admission.decided': strict({
    subject: oneOf('authoring', 'epoch', 'step'),
    step: optional(count),
    decision: oneOf('allow', 'deny', 'require_approval'),
    policy: nonEmpty,
    reason: optional(str),
  }),
  'model.requested': strict({ purpose, attempt: count, request: json }),
  'model.completed': strict({ purpose, attempt: count, reply: json }),
  'model.rejected': strict({ attempt: count, reason: nonEmpty, reply: optional(json) }),
  'state.observed': strict({ actuator: nonEmpty, key: nonEmpty, state: json }),
  'epoch.derived': strict({ source: oneOf('htn', 'authored'), goal, library: digest, plan: digest, steps: count }),
  'epoch.certified': strict({ plan: digest, policy: nonEmpty }),
  'approval.requested': strict({ plan: digest, reason: nonEmpty }),
  'approval.decided': strict({ decision: oneOf('approved', 'rejected'), by: nonEmpty, note: optional(str) }),
  'step.dispatched': strict({ step: count, actuator: nonEmpty, args: json, key: nonEmpty, attempt: count }),
  'step.completed': strict({ step: count, key: nonEmpty, attempt: count, result: json }),
  'step.failed': strict({ step: count, key: nonEmpty, attempt: count, class: failureClass, code: nonEmpty, message: str }),
  'compensation.dispatched': strict({ step: count, actuator: nonEmpty, args: json, key: nonEmpty, attempt: count }),
  'compensation.completed': strict({
    step: count,
    key: nonEmpty,
    attempt: count,
    result: json,
    failure: optional(strict({ class: failureClass, code: nonEmpty, message: str })),
  }),
  'frontier.truncated': strict({ epoch: count, removed: arrayOf(count), reason: nonEmpty }),
  'epoch.closed': strict({ outcome: oneOf('completed', 'compensated', 'denied'), steps: count }),
  'invocation.completed': strict({ summary: str }),
  'invocation.failed': strict({ code: nonEmpty, class: failureClass, reason: nonEmpty }),
  'invocation.handed_off': strict({ reason: nonEmpty }),
  'invocation.sealed': strict({
    algorithm: literal('ed25519'),
    fingerprint: digest,
    keyId: digest,
    signature: (v) => typeof v === 'string' && v.length === 128 && HEX.test(v),
  }),
};

/**
 * True when `body` certainly passes `bodySchemas[kind]` (false: ask zod). `sorted`: also require
 * canonical key order and no undefined members; `parsed`: the value came from JSON.parse.
 */
export function fastBodyOk(kind: RecordKind, body: unknown, sorted = false, parsed = false): boolean {
  return bodies[kind](body, sorted, parsed);
}

const meta = strict({ at: optional(str), writer: optional(str) });

/**
 * True when `value` certainly passes `recordShapeSchema` — and, since the reader uses it on parsed
 * lines, also has its own keys in canonical order. (The body is checked separately, by kind.)
 *
 * `digests` false (the reader's fast path only) takes `prev` and `hash` on their being strings of
 * 64 characters — NOT a promise that zod accepts them: the caller must prove them digests itself
 * (the reader's hash check does: it decodes prev as lowercase hex and compares hash with a hex
 * digest) and take the slow path's verdict when it cannot.
 */
export function fastShapeOk(value: unknown, parsed = true, digests = true): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !isPlain(value)) return false;
  const r = value as Record<string, unknown>;
  const keys = Object.keys(r);
  if (keys.length === 6) {
    if (keys[0] !== 'body' || keys[1] !== 'epoch' || keys[2] !== 'hash' || keys[3] !== 'kind' || keys[4] !== 'prev' || keys[5] !== 'seq') return false;
  } else if (keys.length === 7) {
    if (keys[0] !== 'body' || keys[1] !== 'epoch' || keys[2] !== 'hash' || keys[3] !== 'kind' || keys[4] !== 'meta' || keys[5] !== 'prev' || keys[6] !== 'seq') return false;
    if (!meta(r.meta, true, parsed)) return false;
  } else {
    return false;
  }
  // body: z.unknown() — but a present `undefined` body is not canonical text.
  if (!(r.body !== undefined && count(r.seq, true, parsed) && typeof r.kind === 'string' && count(r.epoch, true, parsed))) return false;
  if (!digests) return typeof r.prev === 'string' && r.prev.length === 64 && typeof r.hash === 'string' && r.hash.length === 64;
  return digest(r.prev, true, parsed) && digest(r.hash, true, parsed);
}
