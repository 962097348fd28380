/**
 * Redaction marks: the fields of an invocation that a domain declares are never sent to a viewer,
 * an inspector or a trace — they are shown as `[redacted]` instead. The marks are DATA: a domain
 * declares them (`defineDomain({ redact })`), the runtime writes them into the store's metadata of
 * each invocation it starts (journal/store.ts `InvocationMetadata.redact`), and whoever shows the
 * invocation reads them from there — so a viewer started without `--domain` applies them too. They
 * are not in the method library (that would change its digest, and the pins of every journal).
 *
 *   args          { <actuator or operator>: [arg name, …] }   a step's args (dispatch, compensation,
 *                 plan steps, approval steps)
 *   results       { <actuator>: [path, …] }                   a step's result (and a compensation's, by
 *                 its own actuator)
 *   observations  [path, …]                                   the state an epoch observed
 *
 * A path is dot-separated keys; `*` stands for every key of an object or index of an array
 * (`offers.*.card`); `[k=v]` for the elements of an array whose member (or index) `k` is `v` as
 * text (`objects.[type=card].name`, `facts.[0=card-of].2`); the empty path `''` is the whole value.
 *
 * Two passes, both here and pure:
 * - structural: the marked places are replaced by `[redacted]` — in records (`redactRecord`, given
 *   the actuator a completion's key was dispatched to) and in any derived JSON (`redactValue`: every
 *   object with an `actuator` and `args` or `result`, as a description's steps, approval steps and
 *   dispatch bodies are shaped);
 * - by value: the values the structural pass removed (`secrets`) are then taken out of the rest of
 *   the same payload (`scrubValue`), so a marked value that also travels elsewhere — an
 *   observation's facts, a goal's or a plan tree's positional args, a model's request, a message's
 *   text — is not sent there either: a removed string of at least MIN_SECRET characters is cut out
 *   of every string (keys too); any removed leaf — a number, a boolean, a short string — replaces
 *   every JSON leaf EQUAL to it (compared as text: 5000 and "5000" alike), never a part of a string,
 *   except under the structural members a page relies on (STRUCTURAL: seq, epoch, attempt, …) when
 *   they are not inside a domain's data (DATA: args, result, facts, …).
 *
 * Operator-keyed marks: a journal's `step.dispatched` names the actuator, not the operator, so the
 * runtime writes an operator's marks under its actuator too when it starts an invocation
 * (`marksForLibrary`, with the library it pins). A plan tree's args are the operator's params BY
 * POSITION: `positionalMarks` maps each marked actuator arg to the param its template names.
 *
 * The redacted records no longer hash to their journal's chain: whoever redacts a journal verifies
 * the original bytes itself and says so (inspector/redact.ts).
 */
import { z } from 'zod';
import type { JournalRecord } from './records.js';

export const REDACTED = '[redacted]';
/** Shorter secrets are removed only where they are marked, never cut out of other text. */
export const MIN_SECRET = 4;

const name = z.string().min(1).max(200);
const path = z.string().max(500);

/** The marks' shape, as a domain declares them and the store's metadata keeps them. */
export const redactionMarksSchema = z.strictObject({
  args: z.record(name, z.array(name).max(100)).optional(),
  results: z.record(name, z.array(path).max(100)).optional(),
  observations: z.array(path).max(100).optional(),
});
export type RedactionMarks = z.infer<typeof redactionMarksSchema>;

/** Whether the marks mark anything. */
export function marksAnything(marks: RedactionMarks | undefined): marks is RedactionMarks {
  if (!marks) return false;
  const some = (r: Record<string, readonly string[]> | undefined) => r !== undefined && Object.values(r).some((list) => list.length > 0);
  return some(marks.args) || some(marks.results) || (marks.observations?.length ?? 0) > 0;
}

/** The marks with their keys in a fixed order (so the metadata's canonical JSON is stable). */
export function normalizeMarks(marks: RedactionMarks): RedactionMarks {
  const sorted = (r: Record<string, string[]> | undefined) =>
    r === undefined ? undefined : Object.fromEntries(Object.keys(r).sort().map((k) => [k, [...new Set(r[k]!)].sort()]));
  const args = sorted(marks.args);
  const results = sorted(marks.results);
  return {
    ...(args ? { args } : {}),
    ...(results ? { results } : {}),
    ...(marks.observations ? { observations: [...new Set(marks.observations)].sort() } : {}),
  };
}

/** A value a mark removed: a string, or a number or boolean (those are taken out only where a whole JSON leaf equals them). */
export type Secret = string | number | boolean;

/**
 * The members whose values a page relies on to lay a payload out (record seqs, epochs, attempts,
 * step indices, kinds, digests): a removed number or short string equal to one of them is not
 * taken out there — outside a domain's data (DATA): inside it every leaf is checked, whatever its name.
 */
export const STRUCTURAL: ReadonlySet<string> = new Set(['seq', 'epoch', 'attempt', 'attempts', 'step', 'records', 'from', 'after', 'passed', 'removed', 'count', 'version', 'chars', 'kind', 'status', 'outcome', 'purpose', 'source', 'decision', 'readOnly', 'prev', 'hash', 'meta', 'at', 'key', 'digest', 'plan', 'fingerprint', 'keyId']);
/** The members that hold a domain's data (a step's args and result, an observation's facts and objects, a model's request and reply). */
export const DATA: ReadonlySet<string> = new Set(['args', 'result', 'facts', 'objects', 'request', 'reply']);

/** What the marks need of a library's operators (htn/library/schema.ts Operator, structurally: this side imports no planner). */
export interface OperatorShape {
  name: string;
  params: ReadonlyArray<{ name: string }>;
  actuator?: { actuator: string; args: Record<string, string | number> } | undefined;
  compensate?: { actuator: string; args: Record<string, string | number> } | undefined;
}

/** The arg names marked for operator `op`'s dispatch: by its name and by its actuator's. */
function markedNames(marks: RedactionMarks, op: OperatorShape): Set<string> {
  return new Set([...(marks.args?.[op.name] ?? []), ...(op.actuator ? (marks.args?.[op.actuator.actuator] ?? []) : [])]);
}

/** The template terms (`?var`) of the args named in `names`. */
const termsOf = (args: Record<string, string | number>, names: Iterable<string>) => new Set([...names].map((n) => args[n]).filter((t): t is string => typeof t === 'string' && t.startsWith('?')));

/**
 * The marks as an invocation of `library` keeps them: each operator-keyed mark is also written under
 * the operator's actuator (a journal's dispatch names only the actuator), and an arg marked for an
 * operator's dispatch (by operator or actuator) marks the args of its compensation that take the same
 * param. The keys given are kept. Pure; normalized.
 */
export function marksForLibrary(marks: RedactionMarks, library: { operators: readonly OperatorShape[] }): RedactionMarks {
  const args: Record<string, string[]> = Object.fromEntries(Object.entries(marks.args ?? {}).map(([k, v]) => [k, [...v]]));
  const add = (key: string, names: Iterable<string>) => {
    const list = (args[key] ??= []);
    for (const n of names) list.push(n);
  };
  for (const op of library.operators) {
    if (!op.actuator) continue;
    const names = markedNames(marks, op);
    if (names.size === 0) continue;
    if (marks.args?.[op.name]) add(op.actuator.actuator, marks.args[op.name]!);
    if (op.compensate) {
      const terms = termsOf(op.actuator.args, names);
      const compensated = Object.entries(op.compensate.args).filter(([, t]) => typeof t === 'string' && terms.has(t)).map(([n]) => n);
      if (compensated.length) add(op.compensate.actuator, compensated);
    }
  }
  if (Object.keys(args).length === 0) return marks;
  return normalizeMarks({ ...marks, args });
}

/**
 * Which params of each operator carry a marked value, by index: a plan tree gives an operator's
 * args BY POSITION (its params), so an actuator arg marked by name (by the operator or its
 * actuator, or its compensation's actuator) is found through the template that builds it
 * (`{ card: '?k' }` → the index of `?k` in the operator's params). Pure.
 */
export function positionalMarks(marks: RedactionMarks, library: { operators: readonly OperatorShape[] }): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const op of library.operators) {
    const terms = new Set<string>();
    if (op.actuator) for (const t of termsOf(op.actuator.args, markedNames(marks, op))) terms.add(t);
    if (op.compensate) for (const t of termsOf(op.compensate.args, marks.args?.[op.compensate.actuator] ?? [])) terms.add(t);
    const indices = op.params.flatMap((p, i) => (terms.has(p.name) ? [i] : []));
    if (indices.length) out.set(op.name, indices);
  }
  return out;
}

/** Positional args with the given indices replaced by REDACTED; what was removed goes to `secrets`. */
export function redactPositions<T>(args: readonly T[], indices: readonly number[], secrets: Set<Secret>): Array<T | typeof REDACTED> {
  return args.map((v, i) => (indices.includes(i) ? (redactPath(v, [], secrets) as typeof REDACTED) : v));
}

type Json = unknown;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every leaf of `value` — strings, numbers, booleans (for the secrets a removed subtree held). */
function collectLeaves(value: Json, into: Set<Secret>): void {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    if (value !== REDACTED) into.add(value);
  } else if (Array.isArray(value)) for (const v of value) collectLeaves(v, into);
  else if (isObject(value)) for (const v of Object.values(value)) collectLeaves(v, into);
}

/** `value` with what `path` names replaced by REDACTED; what was removed goes to `secrets`. */
function redactPath(value: Json, segments: readonly string[], secrets: Set<Secret>): Json {
  if (segments.length === 0) {
    if (value === REDACTED) return value;
    collectLeaves(value, secrets);
    return REDACTED;
  }
  const [head, ...rest] = segments as [string, ...string[]];
  const where = /^\[([^=\]]+)=([^\]]*)\]$/.exec(head);
  if (Array.isArray(value)) {
    if (head === '*') return value.map((v) => redactPath(v, rest, secrets));
    if (where) return value.map((v) => (matches(v, where[1]!, where[2]!) ? redactPath(v, rest, secrets) : v));
    const i = /^\d+$/.test(head) ? Number(head) : -1;
    if (i < 0 || i >= value.length) return value;
    return value.map((v, j) => (j === i ? redactPath(v, rest, secrets) : v));
  }
  if (isObject(value)) {
    if (head === '*') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactPath(v, rest, secrets)]));
    if (!Object.prototype.hasOwnProperty.call(value, head)) return value;
    return { ...value, [head]: redactPath(value[head], rest, secrets) };
  }
  return value;
}

/** Whether an array element's member (or index) `key` is `value` as text. */
function matches(element: unknown, key: string, value: string): boolean {
  if (Array.isArray(element)) return /^\d+$/.test(key) && String(element[Number(key)]) === value;
  return isObject(element) && Object.prototype.hasOwnProperty.call(element, key) && String(element[key]) === value;
}

/** A path's segments: dot-separated, a `[k=v]` segment kept whole (its value may hold dots). */
const segmentsOf = (p: string) => (p === '' ? [] : (p.match(/\[[^\]]*\]|[^.]+/g) ?? []));

function redactPaths(value: Json, paths: readonly string[] | undefined, secrets: Set<Secret>): Json {
  let out = value;
  for (const p of paths ?? []) out = redactPath(out, segmentsOf(p), secrets);
  return out;
}

/** A step's args with the marked ones (by its actuator's and its operator's marks) redacted. */
function redactArgs(args: Json, marks: RedactionMarks, names: ReadonlyArray<unknown>, secrets: Set<Secret>): Json {
  let out = args;
  for (const n of names) if (typeof n === 'string') out = redactPaths(out, marks.args?.[n], secrets);
  return out;
}

/**
 * One record with its marked fields redacted (structural pass). A completion names only its key:
 * `actuatorOf` gives the actuator its dispatch went to (redactRecords keeps it as it walks).
 * `secrets` collects the strings removed.
 */
export function redactRecord(record: JournalRecord, marks: RedactionMarks, actuatorOf: (key: string) => string | undefined = () => undefined, secrets: Set<Secret> = new Set()): JournalRecord {
  const body = record.body as Record<string, unknown>;
  let next: Record<string, unknown> | undefined;
  switch (record.kind) {
    case 'step.dispatched':
    case 'compensation.dispatched':
      next = { ...body, args: redactArgs(body.args, marks, [body.actuator], secrets) };
      break;
    case 'step.completed':
    case 'compensation.completed': {
      const actuator = typeof body.key === 'string' ? actuatorOf(body.key) : undefined;
      if (actuator !== undefined) next = { ...body, result: redactPaths(body.result, marks.results?.[actuator], secrets) };
      break;
    }
    case 'step.shadowed':
      // A shadow run's world effect names its actuator itself: its args and its shadow result, by that actuator's marks.
      next = { ...body, args: redactArgs(body.args as Json, marks, [body.actuator], secrets), result: redactPaths(body.result as Json, typeof body.actuator === 'string' ? marks.results?.[body.actuator] : undefined, secrets) };
      break;
    case 'state.observed':
      next = { ...body, state: redactPaths(body.state, marks.observations, secrets) };
      break;
  }
  return next === undefined ? record : ({ ...record, body: next } as JournalRecord);
}

/** A journal's records redacted (both passes); `secrets`: what was removed (the caller scrubs other payloads of it). */
export function redactRecords(records: readonly JournalRecord[], marks: RedactionMarks, known: ReadonlySet<Secret> = new Set()): { records: JournalRecord[]; secrets: Set<Secret> } {
  const redactor = new JournalRedactor(marks, known);
  const structural = redactor.structural(records);
  return { records: structural.map((r) => scrubValue(r, redactor.secrets) as JournalRecord), secrets: redactor.secrets };
}

/**
 * A journal redacted as it grows (a live follower): each batch structurally, remembering which
 * actuator each key was dispatched to and every secret seen so far, then scrubbed of all of them.
 * A value first marked in a later record cannot be taken back from a batch already given out: a
 * domain marks where a value first appears (an observation path) to keep it from earlier records.
 */
export class JournalRedactor {
  readonly secrets: Set<Secret>;
  private readonly dispatched = new Map<string, string>();

  constructor(
    private readonly marks: RedactionMarks,
    known: ReadonlySet<Secret> = new Set(),
  ) {
    this.secrets = new Set(known);
  }

  /** The next records, redacted (both passes). */
  next(records: readonly JournalRecord[]): JournalRecord[] {
    return this.structural(records).map((r) => scrubValue(r, this.secrets) as JournalRecord);
  }

  /** The structural pass over the next records (secrets and dispatches remembered). */
  structural(records: readonly JournalRecord[]): JournalRecord[] {
    return records.map((record) => {
      const body = record.body as Record<string, unknown> | undefined;
      if ((record.kind === 'step.dispatched' || record.kind === 'compensation.dispatched') && typeof body?.key === 'string' && typeof body.actuator === 'string') this.dispatched.set(body.key, body.actuator);
      return body === undefined ? record : redactRecord(record, this.marks, (key) => this.dispatched.get(key), this.secrets);
    });
  }

  /** Add secrets found elsewhere (a snapshot's plan). */
  know(secrets: Iterable<Secret>): void {
    for (const secret of secrets) this.secrets.add(secret);
  }
}

/**
 * Any derived JSON (a description, a listing row, approval steps) redacted: every object that has
 * an `actuator` and `args` (its `operator`'s marks too) or `result` (by its actuator) is redacted
 * structurally, then every string is scrubbed of the secrets — those found here and `known` ones.
 */
export function redactValue<T>(value: T, marks: RedactionMarks, known: ReadonlySet<Secret> = new Set()): T {
  const secrets = new Set(known);
  return scrubValue(redactStructure(value, marks, secrets), secrets) as T;
}

/** The strings the marks would remove from derived JSON `value` (say a snapshot's plan: its steps' args). */
export function secretsIn(value: unknown, marks: RedactionMarks): Set<Secret> {
  const secrets = new Set<Secret>();
  redactStructure(value, marks, secrets);
  return secrets;
}

/** redactValue's structural pass. */
function redactStructure(value: Json, marks: RedactionMarks, secrets: Set<Secret>): Json {
  const walk = (v: Json): Json => {
    if (Array.isArray(v)) return v.map(walk);
    if (!isObject(v)) return v;
    let out: Record<string, unknown> = Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    const actuator = out.actuator;
    if (typeof actuator === 'string') {
      if ('args' in out) out = { ...out, args: redactArgs(out.args, marks, [actuator, out.operator], secrets) };
      if ('result' in out) out = { ...out, result: redactPaths(out.result, marks.results?.[actuator], secrets) };
    } else if (typeof out.operator === 'string' && 'args' in out) {
      out = { ...out, args: redactArgs(out.args, marks, [out.operator], secrets) };
    }
    return out;
  };
  return walk(value);
}

/**
 * `value` with the secrets taken out: those of at least MIN_SECRET characters cut out of every
 * string (keys too); every leaf equal to a secret, as text, replaced by REDACTED (a number, a
 * boolean or a short string is taken out only so, never from inside a string) — except under a
 * STRUCTURAL member outside a DATA one.
 */
export function scrubValue(value: Json, secrets: ReadonlySet<Secret>): Json {
  const long = [...secrets].filter((s): s is string => typeof s === 'string' && s.length >= MIN_SECRET && s !== REDACTED).sort((a, b) => b.length - a.length);
  const equal = new Set([...secrets].map(String).filter((s) => s !== '' && s !== REDACTED));
  if (equal.size === 0) return value;
  const text = (s: string) => {
    let out = s;
    for (const secret of long) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  };
  // `within`: 'envelope' (STRUCTURAL members exempt), 'data' (nothing exempt), 'structural' (an exempt member's value).
  type Within = 'envelope' | 'data' | 'structural';
  const inside = (within: Within, key: string): Within => (within !== 'envelope' ? within : DATA.has(key) ? 'data' : STRUCTURAL.has(key) ? 'structural' : 'envelope');
  const walk = (v: Json, within: Within): Json => {
    if (typeof v === 'string') return within !== 'structural' && equal.has(v) ? REDACTED : text(v);
    if (typeof v === 'number' || typeof v === 'boolean') return within !== 'structural' && equal.has(String(v)) ? REDACTED : v;
    if (Array.isArray(v)) return v.map((x) => walk(x, within));
    if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [text(k), walk(x, inside(within, k))]));
    return v;
  };
  return walk(value, 'envelope');
}

/** A line of text (a journal line that is not JSON) scrubbed of the secrets. */
export function scrubText(text: string, secrets: ReadonlySet<Secret>): string {
  const long = [...secrets].filter((s): s is string => typeof s === 'string' && s.length >= MIN_SECRET && s !== REDACTED);
  return scrubValue(text, new Set(long)) as string;
}
