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
 * - by value: the strings the structural pass removed (`secrets`, at least MIN_SECRET characters)
 *   are then cut out of every other string of the same payload (`scrubValue`), so a marked value
 *   that also travels elsewhere — an observation's facts, a model's request, a message's text — is
 *   not sent there either.
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

type Json = unknown;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every string leaf of `value` (for the secrets a removed subtree held). */
function collectStrings(value: Json, into: Set<string>): void {
  if (typeof value === 'string') into.add(value);
  else if (Array.isArray(value)) for (const v of value) collectStrings(v, into);
  else if (isObject(value)) for (const v of Object.values(value)) collectStrings(v, into);
}

/** `value` with what `path` names replaced by REDACTED; what was removed goes to `secrets`. */
function redactPath(value: Json, segments: readonly string[], secrets: Set<string>): Json {
  if (segments.length === 0) {
    if (value === REDACTED) return value;
    collectStrings(value, secrets);
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

function redactPaths(value: Json, paths: readonly string[] | undefined, secrets: Set<string>): Json {
  let out = value;
  for (const p of paths ?? []) out = redactPath(out, segmentsOf(p), secrets);
  return out;
}

/** A step's args with the marked ones (by its actuator's and its operator's marks) redacted. */
function redactArgs(args: Json, marks: RedactionMarks, names: ReadonlyArray<unknown>, secrets: Set<string>): Json {
  let out = args;
  for (const n of names) if (typeof n === 'string') out = redactPaths(out, marks.args?.[n], secrets);
  return out;
}

/**
 * One record with its marked fields redacted (structural pass). A completion names only its key:
 * `actuatorOf` gives the actuator its dispatch went to (redactRecords keeps it as it walks).
 * `secrets` collects the strings removed.
 */
export function redactRecord(record: JournalRecord, marks: RedactionMarks, actuatorOf: (key: string) => string | undefined = () => undefined, secrets: Set<string> = new Set()): JournalRecord {
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
    case 'state.observed':
      next = { ...body, state: redactPaths(body.state, marks.observations, secrets) };
      break;
  }
  return next === undefined ? record : ({ ...record, body: next } as JournalRecord);
}

/** A journal's records redacted (both passes); `secrets`: what was removed (the caller scrubs other payloads of it). */
export function redactRecords(records: readonly JournalRecord[], marks: RedactionMarks, known: ReadonlySet<string> = new Set()): { records: JournalRecord[]; secrets: Set<string> } {
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
  readonly secrets: Set<string>;
  private readonly dispatched = new Map<string, string>();

  constructor(
    private readonly marks: RedactionMarks,
    known: ReadonlySet<string> = new Set(),
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
  know(secrets: Iterable<string>): void {
    for (const secret of secrets) this.secrets.add(secret);
  }
}

/**
 * Any derived JSON (a description, a listing row, approval steps) redacted: every object that has
 * an `actuator` and `args` (its `operator`'s marks too) or `result` (by its actuator) is redacted
 * structurally, then every string is scrubbed of the secrets — those found here and `known` ones.
 */
export function redactValue<T>(value: T, marks: RedactionMarks, known: ReadonlySet<string> = new Set()): T {
  const secrets = new Set(known);
  return scrubValue(redactStructure(value, marks, secrets), secrets) as T;
}

/** The strings the marks would remove from derived JSON `value` (say a snapshot's plan: its steps' args). */
export function secretsIn(value: unknown, marks: RedactionMarks): Set<string> {
  const secrets = new Set<string>();
  redactStructure(value, marks, secrets);
  return secrets;
}

/** redactValue's structural pass. */
function redactStructure(value: Json, marks: RedactionMarks, secrets: Set<string>): Json {
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

/** Every string of `value` with the secrets (of at least MIN_SECRET characters) cut out; keys too. */
export function scrubValue(value: Json, secrets: ReadonlySet<string>): Json {
  const long = [...secrets].filter((s) => s.length >= MIN_SECRET && s !== REDACTED).sort((a, b) => b.length - a.length);
  if (long.length === 0) return value;
  const text = (s: string) => {
    let out = s;
    for (const secret of long) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  };
  const walk = (v: Json): Json => {
    if (typeof v === 'string') return text(v);
    if (Array.isArray(v)) return v.map(walk);
    if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [text(k), walk(x)]));
    return v;
  };
  return walk(value);
}

/** A line of text (a journal line that is not JSON) scrubbed of the secrets. */
export function scrubText(text: string, secrets: ReadonlySet<string>): string {
  return scrubValue(text, secrets) as string;
}
