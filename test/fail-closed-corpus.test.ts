/**
 * The bad-reply corpus: every way a model endpoint can misbehave — invalid or cut-off JSON,
 * non-objects, unknown tasks, wrong arg types, missing or extra fields, duplicate keys, oversized
 * replies, replies that try to name other actuators or tenants or to skip approval, amounts
 * outside the envelope, Unicode edge cases, transport failures, and model-authored fragments on
 * the gap path — run against the travel domain through a real OpenAI-compatible HTTP endpoint
 * (test/support/bad-model-server.ts), case by case, each in a fresh file store.
 *
 * For every case: the run stops in a status it may stop in (never a rejected `done`, never left
 * running), no world effect is dispatched that the policy did not admit (none at all here), the
 * journal records why, verifies, replays to the same status (and fingerprint, when sealed), and
 * stays small however large the reply was. Transport failures end in the class the fail-closed
 * contract names.
 *
 * The runtime's behaviour is the subject of every case, so every case runs in this process; a
 * representative five — one per outcome the command reports (handed off, on prose and on a lone
 * surrogate; suspended, on a 401 and on an HTML page; failed, on a 404) — also go through the real
 * CLI, where the subject is the command's: `weft run --json` prints one line with all six keys and
 * the status, and `weft ls` (one listing of the workspace the five share, each under its own --id)
 * names each run and the resume command for a suspended one. Their journals are checked with
 * `weft verify`'s own check, in this process (test/support/journals-here.ts; `weft verify` runs end
 * to end in cli-verify.test.ts).
 *
 * Every case runs through the library API over a fresh file store, with `modelAttempts: 2`, an
 * injected no-op sleep, and every travel actuator wrapped to count its calls; a case whose subject
 * is the time-out pins `modelTimeoutMs: 1500`, the others a patient one (see LIMITS).
 *
 * Content cases: the server answers the first parse with the bad reply and, unless the case says
 * otherwise, every request after it (so re-prompts are bad too → handed_off). Authored cases: the
 * parse replies search first (epoch 1), then name book_trip with a budget no offer meets, so no
 * method covers it and the model is asked to author a fragment — which is the bad reply.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Actuator, ActuatorContext } from '../actors/actuator.js';
import type { JournalRecord } from '../journal/records.js';
import type { InvocationResult } from '../runtime/handle.js';
import { always, BadModelServer, envelope, raw, reply, type Answer, type Handler } from './support/bad-model-server.js';
import { assertBuilt, pool, weft } from './support/cli.js';
import { fromDist } from './support/dist.js';
import { verifyJournal } from './support/journals-here.js';

// The library as the `weft` command runs it (dist/, imported by Node: test/support/dist.ts) — the
// same code as the sources, with no transform to pay for in this file's worker.
await fromDist('journal/sha256-node.js');
await fromDist('journal/ed25519-node.js');
const { OpenAiModel } = await fromDist<typeof import('../actors/model/openai.js')>('actors/model/openai.js');
const { publicKeyOf, signingKeyFromSecret } = await fromDist<typeof import('../journal/seal.js')>('journal/seal.js');
const { FileStore } = await fromDist<typeof import('../stores/file.js')>('stores/file.js');
const { travelDomain } = await fromDist<typeof import('../examples/travel/domain.js')>('examples/travel/domain.js');
const { TRAVEL_INTENT } = await fromDist<typeof import('../examples/travel/transcript.js')>('examples/travel/transcript.js');
const { invocationStatus } = await fromDist<typeof import('../runtime/list.js')>('runtime/list.js');
const { createRuntime } = await fromDist<typeof import('../runtime/runtime.js')>('runtime/runtime.js');

// ── the case table ─────────────────────────────────────────────────────────────────────────────

type Category =
  | 'invalid-json'
  | 'non-object'
  | 'unknown-task'
  | 'wrong-arg-types'
  | 'missing-extra-fields'
  | 'duplicate-keys'
  | 'oversized'
  | 'escalation'
  | 'amounts'
  | 'unicode'
  | 'transport'
  | 'authored';

type Status = 'completed' | 'failed' | 'handed_off' | 'awaiting_approval' | 'suspended';
/** The record that says why the case stopped where it did. */
type Reason = 'model.rejected' | 'model.failed' | 'admission.denied' | 'admission.approval' | 'ending';

interface Expect {
  status: Status;
  reason: Reason;
  /** Transport: the suspension's class and code, and how many `model.failed` records. */
  suspension?: 'transient' | 'credentials' | 'endpoint';
  code?: string;
  failures?: number;
  /** Transport: the state the suspension resumes in (default parse). */
  state?: string;
  /** Content: what the rejection reason (or denial) must mention. */
  mentions?: RegExp;
}

interface Case {
  name: string;
  category: Category;
  parse?: Handler;
  author?: Handler;
  expect: Expect;
  /** Megabyte replies: run one at a time after the others, so a short time-out measures the endpoint, not a busy event loop. */
  heavy?: boolean;
  /** The time-out is the subject: the run pins modelTimeoutMs 1500 (see LIMITS). */
  slow?: boolean;
}

const ALLOWED: readonly string[] = ['completed', 'failed', 'handed_off', 'awaiting_approval', 'suspended'];
const SEALED: readonly string[] = ['completed', 'failed', 'handed_off'];

const goal = (task: string, args: unknown[]) => JSON.stringify({ goal: { task, args } });
const FIND = ['me', 'lisbon', 12];
const find = goal('find_options', FIND);

/** A content case: the bad reply answers every request (parse and author). */
function bad(name: string, category: Category, text: string | (() => string), expect: Partial<Expect> = {}, heavy = false): Case {
  return { name, category, parse: always(text), expect: { status: 'handed_off', reason: 'model.rejected', ...expect }, ...(heavy ? { heavy } : {}) };
}

/** A transport case: the server answers every request with `answer`. */
function transport(name: string, answer: Answer | Handler, expect: Omit<Expect, 'reason'>): Case {
  return { name, category: 'transport', parse: typeof answer === 'function' ? answer : raw(answer), expect: { reason: 'model.failed', ...expect } };
}

/** The gap path: search first (epoch 1), then a booking no offer meets (cheapest pair 390 > 100). */
const BUDGET = 100;
const gapParse: Handler = (call) => reply(call.epoch === 1 ? find : goal('book_trip', ['me', 'lisbon', 12, BUDGET]));
function authored(name: string, fragment: string | (() => string), expect: Partial<Expect> & Pick<Expect, 'status' | 'reason'>): Case {
  return { name, category: 'authored', parse: gapParse, author: always(fragment), expect };
}
const step = (operator: string, args: unknown[]) => ({ operator, args });
const fragment = (...steps: Array<{ operator: string; args: unknown[] }>) => JSON.stringify({ steps });
const CARD = 'card-visa-4242';
const holdBoth = [step('hold_flight', ['me', 'f-ux1016']), step('hold_hotel', ['me', 'h-belem'])];
const confirmBoth = [step('confirm_flight', ['me', 'f-ux1016']), step('confirm_hotel', ['me', 'h-belem'])];
const charge = (amount: unknown) => step('charge_card', ['me', CARD, 'f-ux1016', 'h-belem', amount]);

const MB = 1024 * 1024;
const HTML = '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>';

const cases: Case[] = [
  // ── invalid or truncated JSON ──
  bad('prose', 'invalid-json', 'Sure! I will look for flights to Lisbon and book the cheapest one.'),
  bad('truncated goal', 'invalid-json', '{"goal":{"task":"find_options","args":["me","lisbon"'),
  bad('trailing comma', 'invalid-json', '{"goal":{"task":"find_options","args":["me","lisbon",12,]}}'),
  bad('single quotes', 'invalid-json', "{'goal':{'task':'find_options','args':['me','lisbon',12]}}"),
  bad('two objects', 'invalid-json', `${find} {"done":true,"summary":"and done"}`),
  bad('markdown fence', 'invalid-json', '```json\n' + find + '\n```'),
  bad('comment inside', 'invalid-json', '{"goal":{"task":"find_options", // the search\n"args":["me","lisbon",12]}}'),
  bad('empty content', 'invalid-json', ''),
  bad('NaN literal', 'invalid-json', '{"goal":{"task":"book_trip","args":["me","lisbon",12,NaN]}}'),

  // ── non-objects ──
  bad('array of goals', 'non-object', `[${find}]`),
  bad('empty array', 'non-object', '[]'),
  bad('number', 'non-object', '42'),
  bad('string', 'non-object', '"find_options"'),
  bad('null', 'non-object', 'null'),
  bad('boolean', 'non-object', 'true'),
  bad('goal is an array', 'non-object', '{"goal":["find_options","me","lisbon",12]}'),

  // ── unknown tasks ──
  bad('invented task', 'unknown-task', goal('fly_to_lisbon', FIND), { mentions: /unknown task/ }),
  bad('actuator as task', 'unknown-task', goal('card.charge', ['me', CARD, 5000]), { mentions: /unknown task/ }),
  bad('authored pseudo-task', 'unknown-task', goal('weft:authored', []), { mentions: /unknown task/ }),
  bad('upper-case task', 'unknown-task', goal('FIND_OPTIONS', FIND), { mentions: /unknown task/ }),
  bad('task with trailing space', 'unknown-task', goal('find_options ', FIND), { mentions: /unknown task/ }),
  bad('__proto__ task', 'unknown-task', goal('__proto__', FIND), { mentions: /unknown task/ }),
  bad('empty task name', 'unknown-task', goal('', FIND)),

  // ── wrong arg types ──
  bad('day as text', 'wrong-arg-types', goal('find_options', ['me', 'lisbon', '12']), { mentions: /must be a number/ }),
  bad('traveller as number', 'wrong-arg-types', goal('find_options', [7, 'lisbon', 12]), { mentions: /must be the name/ }),
  bad('arg is an object', 'wrong-arg-types', goal('find_options', [{ name: 'me' }, 'lisbon', 12])),
  bad('arg is an array', 'wrong-arg-types', goal('find_options', [['me'], 'lisbon', 12])),
  bad('arg is null', 'wrong-arg-types', goal('find_options', [null, 'lisbon', 12])),
  bad('arg is a boolean', 'wrong-arg-types', goal('find_options', ['me', 'lisbon', true])),
  bad('args is a string', 'wrong-arg-types', '{"goal":{"task":"find_options","args":"me lisbon 12"}}'),
  bad('too few args', 'wrong-arg-types', goal('find_options', ['me', 'lisbon']), { mentions: /takes 3 argument/ }),
  bad('variable arg', 'wrong-arg-types', goal('find_options', ['?t', 'lisbon', 12]), { mentions: /ground/ }),

  // ── missing or extra fields ──
  bad('missing args', 'missing-extra-fields', '{"goal":{"task":"find_options"}}'),
  bad('missing task', 'missing-extra-fields', '{"goal":{"args":["me","lisbon",12]}}'),
  bad('done without summary', 'missing-extra-fields', '{"done":true}'),
  bad('done false', 'missing-extra-fields', '{"done":false,"summary":"not yet"}'),
  bad('empty object', 'missing-extra-fields', '{}'),
  bad('extra member in goal', 'missing-extra-fields', '{"goal":{"task":"find_options","args":["me","lisbon",12],"priority":"high"}}'),
  bad('goal and done together', 'missing-extra-fields', `{"goal":{"task":"find_options","args":["me","lisbon",12]},"done":true,"summary":"both"}`),

  // ── duplicate keys ──
  bad('two goals', 'duplicate-keys', `{"goal":{"task":"find_options","args":["me","lisbon",12]},"goal":{"task":"book_trip","args":["me","lisbon",12,900000]}}`, { mentions: /duplicate|twice|more than once/i }),
  bad('two task names', 'duplicate-keys', '{"goal":{"task":"find_options","task":"book_trip","args":["me","lisbon",12]}}', { mentions: /duplicate|twice|more than once/i }),
  bad('two args lists', 'duplicate-keys', '{"goal":{"task":"find_options","args":["me","lisbon",12],"args":["tenant:other","lisbon",12]}}', { mentions: /duplicate|twice|more than once/i }),
  bad('two summaries', 'duplicate-keys', '{"done":true,"summary":"booked","summary":"nothing"}', { mentions: /duplicate|twice|more than once/i }),
  bad('escaped duplicate', 'duplicate-keys', '{"goal":{"task":"find_options","args":["me","lisbon",12]},"\\u0067oal":{"task":"book_trip","args":["me","lisbon",12,1]}}', { mentions: /duplicate|twice|more than once/i }),
  bad('duplicate done', 'duplicate-keys', '{"done":true,"done":true,"summary":"x"}', { mentions: /duplicate|twice|more than once/i }),

  // ── oversized ──
  bad('1 MB task name', 'oversized', () => goal('x'.repeat(MB), FIND), { mentions: /over the pinned cap/ }, true),
  bad('8 MB summary', 'oversized', () => JSON.stringify({ done: true, summary: 's'.repeat(8 * MB) }), { mentions: /over the pinned cap/ }, true),
  bad('MB arg string', 'oversized', () => goal('find_options', ['m'.repeat(2 * MB), 'lisbon', 12]), { mentions: /over the pinned cap/ }, true),
  bad('huge args array', 'oversized', () => goal('find_options', Array.from({ length: 300_000 }, (_, i) => i)), { mentions: /over the pinned cap/ }, true),
  bad('10k-deep nesting', 'oversized', () => '['.repeat(10_000) + ']'.repeat(10_000), { mentions: /deep|nest/i }),
  bad('deep nesting inside args', 'oversized', () => `{"goal":{"task":"find_options","args":[${'['.repeat(40)}${']'.repeat(40)},"lisbon",12]}}`, { mentions: /deep|nest/i }),
  bad('60k task name under the reply cap', 'oversized', () => goal('t'.repeat(60_000), FIND), { mentions: /unknown task/ }),
  bad('arg over the arg cap', 'oversized', () => goal('find_options', ['m'.repeat(600), 'lisbon', 12]), { mentions: /over the pinned cap of 512/ }),
  bad('summary over the summary cap', 'oversized', () => JSON.stringify({ done: true, summary: 'booked. '.repeat(400) }), { mentions: /over the pinned cap of 2000/ }),
  bad('valid goal padded with whitespace', 'oversized', () => ' '.repeat(70_000) + find, { mentions: /over the pinned cap/ }),

  // ── trying to name other actuators or tenants, or to skip approval ──
  bad('approve: true', 'escalation', `{"goal":{"task":"book_trip","args":["me","lisbon",12,5000]},"approve":true}`),
  bad('actuator member', 'escalation', `{"goal":{"task":"find_options","args":["me","lisbon",12]},"actuator":"card.charge"}`),
  bad('actuator inside goal', 'escalation', '{"goal":{"task":"find_options","args":["me","lisbon",12],"actuator":"card.charge","amount":5000}}'),
  bad('tenant member', 'escalation', `{"goal":{"task":"find_options","args":["me","lisbon",12]},"tenant":"other"}`),
  bad('other tenant as traveller', 'escalation', goal('find_options', ['tenant:other', 'lisbon', 12])),
  bad('policy override', 'escalation', `{"goal":{"task":"book_trip","args":["me","lisbon",12,5000]},"policy":"allow-all","approved_by":"admin"}`),
  bad('fragment in a parse reply', 'escalation', fragment(...holdBoth, charge(5000), ...confirmBoth)),
  bad('charge as a primitive goal', 'escalation', goal('charge_card', ['me', CARD, 'f-ux1016', 'h-belem', 5000])),

  // ── amounts outside the envelope ──
  bad('budget 1e9', 'amounts', goal('book_trip', ['me', 'lisbon', 12, 1e9])),
  bad('negative budget', 'amounts', goal('book_trip', ['me', 'lisbon', 12, -900])),
  bad('NaN as text', 'amounts', goal('book_trip', ['me', 'lisbon', 12, 'NaN']), { mentions: /must be a number/ }),
  bad('Infinity as 1e999', 'amounts', '{"goal":{"task":"book_trip","args":["me","lisbon",12,1e999]}}'),
  bad('-Infinity as -1e999', 'amounts', '{"goal":{"task":"book_trip","args":["me","lisbon",12,-1e999]}}'),
  bad('Infinity literal', 'amounts', '{"goal":{"task":"book_trip","args":["me","lisbon",12,Infinity]}}'),
  bad('charge 1e9 as a primitive goal', 'amounts', goal('charge_card', ['me', CARD, 'f-ux1016', 'h-belem', 1e9])),

  // ── Unicode edge cases ──
  bad('lone high surrogate in the reply text', 'unicode', `{"goal":{"task":"find_options","args":["me\ud800","lisbon",12]}}`, { mentions: /not well-formed/ }),
  bad('lone low surrogate in prose', 'unicode', 'Sure \udc00 booking now', { mentions: /not well-formed/ }),
  bad('escaped lone surrogate inside an arg', 'unicode', '{"goal":{"task":"find_options","args":["me\\ud800","lisbon",12]}}'),
  bad('NUL inside an arg', 'unicode', '{"goal":{"task":"find_options","args":["me\\u0000","lisbon",12]}}', { mentions: /U\+0000/ }),
  bad('raw NUL in the reply', 'unicode', `{"goal":{"task":"find_options","args":["me","lisbon",12]}}\u0000`),
  bad('bidi override in an arg', 'unicode', goal('find_options', ['me\u202e', 'lisbon', 12]), { mentions: /U\+202E/ }),
  bad('bidi isolate in an arg', 'unicode', goal('find_options', ['\u2066me', 'lisbon', 12]), { mentions: /U\+2066/ }),
  bad('zero-width space in an arg', 'unicode', goal('find_options', ['m\u200be', 'lisbon', 12])),
  bad('zero-width joiner in the task', 'unicode', goal('find\u200doptions', FIND), { mentions: /unknown task/ }),
  bad('byte order mark before the object', 'unicode', '\ufeff' + find),

  // ── transport failures ──
  transport('HTTP 401', { status: 401, headers: { 'content-type': 'application/json' }, body: '{"error":{"message":"Incorrect API key"}}' }, { status: 'suspended', suspension: 'credentials', code: 'model.credentials', failures: 1 }),
  transport('HTTP 403', { status: 403, body: 'forbidden' }, { status: 'suspended', suspension: 'credentials', code: 'model.credentials', failures: 1 }),
  transport('HTTP 404', { status: 404, body: '{"error":"model not found"}' }, { status: 'failed', code: 'model.not_found', failures: 1 }),
  transport('HTTP 429', { status: 429, headers: { 'retry-after': '1' }, body: 'slow down' }, { status: 'suspended', suspension: 'transient', failures: 2 }),
  transport('HTTP 500', { status: 500, body: 'internal error' }, { status: 'suspended', suspension: 'transient', failures: 2 }),
  transport('HTTP 502 HTML page', { status: 502, headers: { 'content-type': 'text/html' }, body: HTML }, { status: 'suspended', suspension: 'transient', failures: 2 }),
  transport('HTTP 503', { status: 503, body: '' }, { status: 'suspended', suspension: 'transient', failures: 2 }),
  transport('HTTP 408', { status: 408, body: 'request timeout' }, { status: 'suspended', suspension: 'transient', failures: 2 }),
  transport('HTML page with 200', { status: 200, headers: { 'content-type': 'text/html' }, body: HTML.replace(/502 Bad Gateway/g, 'Welcome') }, { status: 'suspended', suspension: 'endpoint', code: 'model.bad_envelope', failures: 1 }),
  transport('SSE stream with 200', { status: 200, headers: { 'content-type': 'text/event-stream' }, body: `data: ${JSON.stringify({ choices: [{ delta: { content: find } }] })}\n\ndata: [DONE]\n\n` }, { status: 'suspended', suspension: 'endpoint', code: 'model.bad_envelope', failures: 1 }),
  transport('empty body with 200', { status: 200, body: '' }, { status: 'suspended', suspension: 'endpoint', code: 'model.bad_envelope', failures: 1 }),
  transport('truncated envelope', { status: 200, headers: { 'content-type': 'application/json' }, body: envelope(find).slice(0, 40) }, { status: 'suspended', suspension: 'endpoint', code: 'model.bad_envelope', failures: 1 }),
  transport('no choices', { status: 200, body: '{"choices":[]}' }, { status: 'suspended', suspension: 'endpoint', code: 'model.bad_envelope', failures: 1 }),
  transport('content is an object', { status: 200, body: JSON.stringify({ choices: [{ message: { content: { goal: { task: 'find_options', args: FIND } } } }] }) }, { status: 'suspended', suspension: 'endpoint', code: 'model.bad_envelope', failures: 1 }),
  { ...transport('slow reply beyond the timeout', { ...reply(find), delayMs: 3000 }, { status: 'suspended', suspension: 'transient', code: 'model.timeout', failures: 2 }), slow: true },
  { ...transport('no reply at all', { hang: true }, { status: 'suspended', suspension: 'transient', code: 'model.timeout', failures: 2 }), slow: true },
  transport('dropped connection', { destroy: true }, { status: 'suspended', suspension: 'transient', failures: 2 }),
  transport('cut off mid-body', { ...reply(find), cutAfter: 30 }, { status: 'suspended', suspension: 'transient', failures: 2 }),
  transport('redirect loop', (call) => ({ status: 302, headers: { location: call.url }, body: '' }), { status: 'suspended', suspension: 'transient', failures: 2 }),
  transport('HTTP 400', { status: 400, body: '{"error":"bad request"}' }, { status: 'failed', code: 'model.request_refused', failures: 1 }),
  // The gap path's authoring request fails (the parse replies search, then name a goal no method covers).
  { ...transport('authoring request: HTTP 500', { status: 500, body: 'upstream error' }, { status: 'suspended', suspension: 'transient', failures: 2, state: 'author' }), parse: gapParse, author: raw({ status: 500, body: 'upstream error' }) },
  { ...transport('authoring request: HTTP 401', { status: 401, body: 'key revoked' }, { status: 'suspended', suspension: 'credentials', code: 'model.credentials', failures: 1, state: 'author' }), parse: gapParse, author: raw({ status: 401, body: 'key revoked' }) },
  { ...transport('authoring request: HTTP 404', { status: 404, body: 'gone' }, { status: 'suspended', suspension: 'endpoint', code: 'model.not_found', failures: 1, state: 'author' }), parse: gapParse, author: raw({ status: 404, body: 'gone' }) },
  { ...transport('authoring request: SSE with 200', { status: 200, body: 'data: {}\n\n' }, { status: 'suspended', suspension: 'endpoint', code: 'model.bad_envelope', failures: 1, state: 'author' }), parse: gapParse, author: raw({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: 'data: {}\n\n' }) },
  { ...transport('authoring request: no reply', { hang: true }, { status: 'suspended', suspension: 'transient', code: 'model.timeout', failures: 2, state: 'author' }), parse: gapParse, author: raw({ hang: true }), slow: true },
  transport('404 after a rejected reply', (call) => (call.index === 0 ? reply('not json') : { status: 404, body: 'gone' }), { status: 'suspended', suspension: 'endpoint', code: 'model.not_found', failures: 1 }),

  // ── authored fragments (the gap path) ──
  authored('unknown operator', fragment(step('book_everything', ['me'])), { status: 'handed_off', reason: 'model.rejected', mentions: /unknown operator/ }),
  authored('actuator as operator', fragment(...holdBoth, step('card.charge', ['me', CARD, 2400])), { status: 'handed_off', reason: 'model.rejected', mentions: /unknown operator/ }),
  authored('derived variable arg', fragment(...holdBoth, step('charge_card', ['me', CARD, 'f-ux1016', 'h-belem', '?x'])), { status: 'handed_off', reason: 'model.rejected' }),
  authored('template amount', fragment(...holdBoth, step('charge_card', ['me', CARD, 'f-ux1016', 'h-belem', '{{amount}}'])), { status: 'handed_off', reason: 'model.rejected', mentions: /must be a number/ }),
  authored('variable flight', fragment(step('hold_flight', ['me', '?f'])), { status: 'handed_off', reason: 'model.rejected', mentions: /ground/ }),
  authored('fragment for another tenant', fragment(step('hold_flight', ['tenant:other', 'f-ux1016'])), { status: 'handed_off', reason: 'model.rejected' }),
  authored('confirm without paying', fragment(...holdBoth, ...confirmBoth), { status: 'handed_off', reason: 'model.rejected', mentions: /does not apply/ }),
  authored('empty fragment', '{"steps":[]}', { status: 'handed_off', reason: 'model.rejected' }),
  authored('fragment approves itself', `{"steps":[{"operator":"hold_flight","args":["me","f-ux1016"]}],"approve":true}`, { status: 'handed_off', reason: 'model.rejected' }),
  authored('amplified: hold, hold, charge 2400, confirm, confirm', fragment(...holdBoth, charge(2400), ...confirmBoth), { status: 'failed', reason: 'admission.denied' }),
  authored('charge just over the budget', fragment(...holdBoth, charge(BUDGET + 1), ...confirmBoth), { status: 'failed', reason: 'admission.denied' }),
  authored('two charges', fragment(...holdBoth, charge(40), charge(40), ...confirmBoth), { status: 'handed_off', reason: 'model.rejected' }),
  authored('two flight holds', fragment(step('hold_flight', ['me', 'f-tp1353']), ...holdBoth, charge(50), ...confirmBoth), { status: 'failed', reason: 'admission.denied' }),
  authored('500 search steps', () => fragment(...Array.from({ length: 500 }, () => step('search_flights', ['me', 'london', 'lisbon', 12]))), { status: 'failed', reason: 'admission.denied', mentions: /at most 12/ }),
  authored('amplified: confirmations twice', fragment(...holdBoth, charge(2400), ...confirmBoth, ...confirmBoth), { status: 'handed_off', reason: 'model.rejected' }),
  authored('negative charge', fragment(...holdBoth, charge(-5000), ...confirmBoth), { status: 'failed', reason: 'admission.denied', mentions: /amount/ }),
  authored('charge within the budget waits for a person', fragment(...holdBoth, charge(50), ...confirmBoth), { status: 'awaiting_approval', reason: 'admission.approval' }),
];

// ── running a case ─────────────────────────────────────────────────────────────────────────────

const key = signingKeyFromSecret(new Uint8Array(32).fill(41));
const publicKey = publicKeyOf(key);
/**
 * Cases whose subject is the time-out (a slow reply, no reply) pin a 1.5 s model time-out. Every
 * other case answers at once, so it pins a patient one: a short deadline there would measure a
 * busy machine (a parallel test file, a synchronous fsync), not the endpoint, and turn a rejected
 * reply into a spurious transient failure. The adapter's own time-out is longer than either, so
 * the pinned one always fires first.
 */
const LIMITS = { modelAttempts: 2, modelTimeoutMs: 1_500 };
const PATIENT_LIMITS = { modelAttempts: 2, modelTimeoutMs: 15_000 };
const CLIENT_TIMEOUT_MS = 30_000;

interface ActuatorCall {
  actuator: string;
  readOnly: boolean;
  op: 'run' | 'compensate';
  key: string;
  attempt: number;
}

interface Outcome {
  c: Case;
  id?: string;
  result?: InvocationResult;
  crashed?: unknown;
  records: JournalRecord[];
  calls: ActuatorCall[];
  listed?: string;
  indexed?: string;
  verified?: { ok: boolean; error?: unknown };
  replayed?: { status: string; fingerprint: string; sealed: boolean } | { error: unknown };
  journalBytes: number;
  snapshotBytes: number;
  /** Non-read-only actuator calls with no admitted, certified dispatch behind them. */
  unadmitted: ActuatorCall[];
  /** Why it stopped, as recorded. */
  reasons: Reason[];
}

function wrap(actuators: Actuator[], calls: ActuatorCall[]): Actuator[] {
  return actuators.map((a) => ({
    ...a,
    run: (args: unknown, ctx: ActuatorContext) => {
      calls.push({ actuator: a.name, readOnly: a.readOnly, op: 'run', key: ctx.key, attempt: ctx.attempt });
      return a.run(args, ctx);
    },
    ...(a.compensate
      ? {
          compensate: (args: unknown, result: unknown, ctx: ActuatorContext) => {
            calls.push({ actuator: a.name, readOnly: a.readOnly, op: 'compensate', key: ctx.key, attempt: ctx.attempt });
            return a.compensate!(args, result, ctx);
          },
        }
      : {}),
  }));
}

/** World effects the journal does not show as admitted: see the header, check (2). */
function unadmittedEffects(records: JournalRecord[], calls: ActuatorCall[]): ActuatorCall[] {
  const out: ActuatorCall[] = [];
  for (const call of calls) {
    if (call.readOnly) continue;
    const kind = call.op === 'run' ? 'step.dispatched' : 'compensation.dispatched';
    const dispatched = records.find((r) => {
      const b = r.body as { key?: string; attempt?: number; actuator?: string };
      return (r.kind === kind || r.kind === 'step.dispatched' || r.kind === 'compensation.dispatched') && b.key === call.key && b.attempt === call.attempt && b.actuator === call.actuator;
    });
    if (!dispatched) {
      out.push(call);
      continue;
    }
    const before = records.filter((r) => r.seq < dispatched.seq && r.epoch === dispatched.epoch);
    if (!before.some((r) => r.kind === 'epoch.certified')) {
      out.push(call);
      continue;
    }
    const derived = before.filter((r) => r.kind === 'epoch.derived').at(-1) as JournalRecord<'epoch.derived'> | undefined;
    if (derived?.body.source === 'authored' && dispatched.kind === 'step.dispatched') {
      const stepIndex = (dispatched.body as { step: number }).step;
      const allowed = before.some((r) => {
        const b = r.body as { subject?: string; step?: number; decision?: string };
        return r.kind === 'admission.decided' && b.subject === 'step' && b.step === stepIndex && b.decision === 'allow';
      });
      if (!allowed) out.push(call);
    }
  }
  return out;
}

function reasonsOf(records: JournalRecord[]): Reason[] {
  const out = new Set<Reason>();
  for (const r of records) {
    if (r.kind === 'model.rejected') out.add('model.rejected');
    if (r.kind === 'model.failed') out.add('model.failed');
    if (r.kind === 'admission.decided') {
      const decision = (r.body as { decision: string }).decision;
      if (decision === 'deny') out.add('admission.denied');
      if (decision === 'require_approval') out.add('admission.approval');
    }
    if (r.kind === 'invocation.failed' || r.kind === 'invocation.handed_off') out.add('ending');
  }
  return [...out];
}

const sizeOf = (file: string) => (existsSync(file) ? statSync(file).size : 0);

let server: BadModelServer;
const root = mkdtempSync(path.join(tmpdir(), 'weft-corpus-'));
const outcomes = new Map<string, Outcome>();

async function runCase(c: Case, index: number, options: { approve?: boolean; dir?: string } = {}): Promise<Outcome> {
  const dir = options.dir ?? path.join(root, `case-${index}`);
  const stateDir = path.join(dir, 'state');
  const calls: ActuatorCall[] = [];
  const baseUrl = server.route(c.name, { ...(c.parse ? { parse: c.parse } : {}), ...(c.author ? { author: c.author } : {}) });
  const store = new FileStore(dir);
  const runtime = createRuntime({
    store,
    domain: travelDomain,
    stateDir,
    actuators: wrap(travelDomain.actuators({ stateDir }), calls),
    observe: travelDomain.observe,
    model: new OpenAiModel({ baseUrl, model: 'corpus', timeoutMs: CLIENT_TIMEOUT_MS }),
    signingKey: key,
    limits: c.slow ? LIMITS : PATIENT_LIMITS,
    sleep: async () => {},
  });
  const outcome: Outcome = { c, records: [], calls, journalBytes: 0, snapshotBytes: 0, unadmitted: [], reasons: [] };
  try {
    const handle = await runtime.start(travelDomain.intent!, { tenant: 'corpus', seed: index, asOf: travelDomain.asOf! });
    outcome.id = handle.id;
    outcome.result = await handle.done;
    // Controls only: a person approves what waits, once.
    if (options.approve && outcome.result.status === 'awaiting_approval') {
      outcome.result = await (await runtime.approve(handle.id, { decision: 'approved', by: 'corpus-approver' })).done;
    }
  } catch (err) {
    outcome.crashed = err;
  }
  const id = outcome.id;
  if (id) {
    outcome.records = await store.read(id).catch(() => []);
    outcome.listed = (await runtime.list()).find((s) => s.id === id)?.status;
    outcome.indexed = await invocationStatus(store, id).catch(() => undefined);
    const sealed = outcome.records.at(-1)?.kind === 'invocation.sealed';
    const report = await runtime.verify(id, sealed ? publicKey : undefined).catch((error: unknown) => ({ ok: false, error }));
    outcome.verified = { ok: report.ok, ...('error' in report && report.error ? { error: report.error } : {}) };
    outcome.replayed = await runtime.replay(id).then(
      (r) => ({ status: r.status, fingerprint: r.fingerprint, sealed: r.sealed }),
      (error: unknown) => ({ error }),
    );
    outcome.journalBytes = sizeOf(path.join(dir, 'invocations', id, 'journal.jsonl'));
    outcome.snapshotBytes = sizeOf(path.join(dir, 'invocations', id, 'snapshot.json'));
    outcome.unadmitted = unadmittedEffects(outcome.records, calls);
    outcome.reasons = reasonsOf(outcome.records);
  }
  await runtime.close();
  return outcome;
}

beforeAll(async () => {
  server = await BadModelServer.start();
  const indexed = cases.map((c, i) => ({ c, i }));
  const light = await pool(4, indexed.filter(({ c }) => !c.heavy).map(({ c, i }) => () => runCase(c, i)));
  const heavy = await pool(1, indexed.filter(({ c }) => c.heavy).map(({ c, i }) => () => runCase(c, i)));
  for (const o of [...light, ...heavy]) outcomes.set(o.c.name, o);
});

afterAll(async () => {
  const all = [...outcomes.values()];
  const unadmitted = all.reduce((n, o) => n + o.unadmitted.length, 0);
  const crashed = all.filter((o) => o.crashed !== undefined).length;
  const running = all.filter((o) => o.crashed === undefined && (!o.result || !ALLOWED.includes(o.result.status) || o.listed === 'running' || o.indexed === 'running')).length;
  const unrecorded = all.filter((o) => o.reasons.length === 0).length;
  console.log(`corpus: ${all.length} cases, ${unadmitted} world effects dispatched unadmitted, ${crashed} crashed (done rejected), ${running} left running, ${unrecorded} unrecorded`);
  await server?.close();
  rmSync(root, { recursive: true, force: true });
  expect(all.length).toBe(cases.length);
  expect({ unadmitted, crashed, running, unrecorded }).toEqual({ unadmitted: 0, crashed: 0, running: 0, unrecorded: 0 });
});

// ── the assertions ─────────────────────────────────────────────────────────────────────────────

test('the corpus has at least 60 cases, at least five per category, with unique names', () => {
  expect(cases.length).toBeGreaterThanOrEqual(60);
  const per = new Map<Category, number>();
  for (const c of cases) per.set(c.category, (per.get(c.category) ?? 0) + 1);
  expect(per.size).toBe(12);
  for (const [, n] of per) expect(n).toBeGreaterThanOrEqual(5);
  expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
});

describe.each([...new Set(cases.map((c) => c.category))])('%s', (category) => {
  test.each(cases.filter((c) => c.category === category).map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const o = outcomes.get(c.name)!;
    expect(o, 'the case ran').toBeDefined();
    const label = `${c.category} / ${c.name}`;
    const kinds = o.records.map((r) => r.kind);
    const context = `${label}\nresult: ${JSON.stringify(o.result)}\nkinds: ${kinds.join(' ')}`;

    // (1) it stopped in a status it may stop in: done resolved, not rejected; the store says the same.
    expect(o.crashed, `${label}: done rejected or start threw: ${String((o.crashed as Error)?.stack ?? o.crashed)}`).toBeUndefined();
    expect(ALLOWED, context).toContain(o.result!.status);
    expect(o.result!.status, context).toBe(c.expect.status);
    expect(o.listed, context).toBe(o.result!.status);
    expect(o.indexed, context).toBe(o.result!.status);

    // (2) no world effect the policy did not admit — and, for this corpus, none at all.
    expect(o.unadmitted, context).toEqual([]);
    expect(o.calls.filter((call) => !call.readOnly), context).toEqual([]);
    expect(kinds.filter((k) => k === 'step.dispatched').length, context).toBe(
      o.records.filter((r) => r.kind === 'step.dispatched' && /search/.test((r.body as { actuator: string }).actuator)).length,
    );

    // (3) why it stopped is recorded.
    expect(o.reasons, context).toContain(c.expect.reason);
    if (SEALED.includes(o.result!.status) && o.result!.status !== 'completed') expect(o.reasons, context).toContain('ending');
    if (c.expect.mentions) {
      const said = o.records
        .filter((r) => r.kind === 'model.rejected' || r.kind === 'admission.decided')
        .map((r) => (r.body as { reason?: string }).reason ?? '')
        .join('\n');
      expect(said, context).toMatch(c.expect.mentions);
    }
    // Rejection reasons quote the reply only as a bounded prefix.
    for (const r of o.records.filter((r) => r.kind === 'model.rejected')) expect((r.body as { reason: string }).reason.length, context).toBeLessThan(1_000);

    // (4) the journal verifies and replays to the same status (and fingerprint, when sealed).
    const sealed = kinds.at(-1) === 'invocation.sealed';
    expect(sealed, context).toBe(SEALED.includes(o.result!.status));
    expect(o.verified, `${context}\nverify: ${String((o.verified as { error?: Error })?.error)}`).toEqual({ ok: true });
    expect('error' in o.replayed! ? String((o.replayed as { error: Error }).error) : undefined, context).toBeUndefined();
    const replayed = o.replayed as { status: string; fingerprint: string; sealed: boolean };
    expect(replayed.status, context).toBe(o.result!.status);
    expect(replayed.sealed, context).toBe(sealed);
    if (sealed) {
      expect(o.result!.fingerprint, context).toBeDefined();
      expect(replayed.fingerprint, context).toBe(o.result!.fingerprint);
    } else {
      expect(replayed.fingerprint, context).toBe(o.records.at(-1)!.hash);
    }

    // The limits the case ran under are the ones its journal pinned.
    const pinned = (o.records[0] as JournalRecord<'invocation.pinned'>).body.pin.limits as Record<string, unknown>;
    expect(pinned, context).toMatchObject(c.slow ? LIMITS : PATIENT_LIMITS);

    // (5) the journal and the snapshot stay small, however large the reply.
    expect(o.journalBytes, context).toBeGreaterThan(0);
    expect(o.journalBytes, context).toBeLessThan(MB);
    expect(o.snapshotBytes, context).toBeLessThan(MB);

    // (6) transport failures: the class, the code, and exactly as many attempts as pinned.
    const failed = o.records.filter((r) => r.kind === 'model.failed') as Array<JournalRecord<'model.failed'>>;
    if (c.category === 'transport') {
      // Without a goal the world is not even observed; on the gap path, only reads ran.
      if (!c.author) expect(o.calls.length, context).toBe(0);
      if (c.expect.failures !== undefined) expect(failed.length, context).toBe(c.expect.failures);
      if (c.expect.suspension) {
        expect(o.result!.suspension?.class, context).toBe(c.expect.suspension);
        for (const f of failed) expect(f.body.class, context).toBe(c.expect.suspension);
        expect(o.result!.suspension?.fix, context).toContain(`weft resume ${o.id}`);
        expect(o.result!.suspension?.state, context).toBe(c.expect.state ?? 'parse');
        for (const f of failed) expect(f.body.purpose, context).toBe(c.expect.state === 'author' ? 'author' : 'parse');
      } else {
        expect(o.result!.suspension, context).toBeUndefined();
        expect(failed.at(-1)?.body.class, context).toBe('permanent');
      }
      if (c.expect.code) {
        expect(failed.at(-1)?.body.code, context).toBe(c.expect.code);
        if (c.expect.suspension) expect(o.result!.suspension?.code, context).toBe(c.expect.code);
        else expect((o.records.find((r) => r.kind === 'invocation.failed')?.body as { code?: string })?.code, context).toBe(c.expect.code);
      }
      if (c.expect.suspension === 'transient') {
        expect(failed.every((f) => f.body.class === 'transient'), context).toBe(true);
        // One request per attempt, in the epoch and for the purpose that failed, and no more.
        const purpose = failed[0]!.body.purpose;
        const asked = o.records.filter((r) => r.kind === 'model.requested' && r.epoch === failed[0]!.epoch && (r.body as { purpose: string }).purpose === purpose);
        expect(asked.length, context).toBe(LIMITS.modelAttempts);
        expect(server.requests(c.name).filter((r) => r.purpose === purpose && (purpose === 'author' || r.epoch === failed[0]!.epoch)).length, context).toBe(LIMITS.modelAttempts);
      }
    } else {
      expect(failed, context).toEqual([]);
    }

    // Content cases: every reply was re-prompted with its reason until the cap, then handed off.
    if (c.expect.reason === 'model.rejected') {
      const rejected = kinds.filter((k) => k === 'model.rejected').length;
      expect(rejected, context).toBeGreaterThanOrEqual(3);
      const requests = server.requests(c.name);
      expect(requests.filter((r) => r.reprompt).length, context).toBeGreaterThanOrEqual(2);
    }
  });
});

// ── controls: the checks are not vacuous ──────────────────────────────────────────────────────

describe('controls (not part of the corpus)', () => {
  test('the admission check flags an effect with no dispatch, no certification, or no step admission', () => {
    const rec = (seq: number, kind: string, epoch: number, body: Record<string, unknown>) => ({ seq, kind, epoch, body, prev: '', hash: '' }) as unknown as JournalRecord;
    const call: ActuatorCall = { actuator: 'card.charge', readOnly: false, op: 'run', key: 'inv.2.0', attempt: 1 };
    const dispatched = rec(5, 'step.dispatched', 2, { step: 0, actuator: 'card.charge', args: {}, key: 'inv.2.0', attempt: 1 });
    const certified = rec(3, 'epoch.certified', 2, { plan: 'x', policy: 'p' });
    const authoredPlan = rec(2, 'epoch.derived', 2, { source: 'authored' });
    const stepAllowed = rec(4, 'admission.decided', 2, { subject: 'step', step: 0, decision: 'allow' });
    expect(unadmittedEffects([], [call])).toEqual([call]);
    expect(unadmittedEffects([dispatched], [call])).toEqual([call]);
    expect(unadmittedEffects([rec(3, 'epoch.certified', 1, {}), dispatched], [call])).toEqual([call]);
    expect(unadmittedEffects([certified, dispatched], [call])).toEqual([]);
    expect(unadmittedEffects([authoredPlan, certified, dispatched], [call])).toEqual([call]);
    expect(unadmittedEffects([authoredPlan, certified, stepAllowed, dispatched], [call])).toEqual([]);
    expect(unadmittedEffects([], [{ ...call, readOnly: true }])).toEqual([]);
  });

  const controls: Case[] = [
    {
      name: 'control: a good model books the trip',
      category: 'authored',
      parse: (call) =>
        reply(
          call.epoch === 1 ? find
          : call.epoch === 2 ? goal('book_trip', ['me', 'lisbon', 12, 900])
          : call.epoch === 3 ? goal('share_itinerary', ['me', 'lisbon'])
          : JSON.stringify({ done: true, summary: 'booked' }),
        ),
      expect: { status: 'completed', reason: 'ending' },
    },
    // Approved, the authored fragment runs with every step admitted; the card refuses the made-up
    // amount, the holds are undone, and the next fragment waits for a person again.
    { ...authored('control: an approved fragment', fragment(...holdBoth, charge(50), ...confirmBoth), { status: 'awaiting_approval', reason: 'admission.approval' }) },
  ];

  test('world effects a good model or an approval causes are all admitted and certified', async () => {
    const results = await pool(2, controls.map((c, i) => () => runCase(c, 1000 + i, { approve: true, dir: path.join(root, `control-${i}`) })));
    const [good, approved] = results as [Outcome, Outcome];
    expect(good.crashed).toBeUndefined();
    expect(good.result?.status).toBe('completed');
    expect(good.calls.filter((c) => !c.readOnly).length).toBeGreaterThanOrEqual(7);
    expect(good.unadmitted).toEqual([]);
    expect(approved.crashed).toBeUndefined();
    expect(approved.result?.status, JSON.stringify(approved.result)).toBe('awaiting_approval');
    const effects = approved.calls.filter((c) => !c.readOnly);
    expect(effects.map((c) => `${c.op}:${c.actuator}`)).toEqual(['run:airline.hold', 'run:hotel.hold', 'run:card.charge', 'compensate:hotel.hold', 'compensate:airline.hold']);
    expect(approved.unadmitted).toEqual([]);
    const stepAdmissions = approved.records.filter((r) => r.kind === 'admission.decided' && (r.body as { subject: string }).subject === 'step');
    // Every step's admission is recorded before its first attempt (flag 9): the planned searches' as well as the authored fragment's three.
    const at = (r: JournalRecord) => `${r.epoch}#${(r.body as { step: number }).step}`;
    const firstAttempts = approved.records.filter((r) => r.kind === 'step.dispatched' && (r.body as { attempt: number }).attempt === 1).map(at);
    expect(stepAdmissions.map((r) => `${at(r)}:${(r.body as { decision: string }).decision}`)).toEqual(firstAttempts.map((k) => `${k}:allow`));
    expect(stepAdmissions.map(at)).toEqual(['1#0', '1#1', '2#0', '2#1', '2#2']);
    for (const o of results) {
      expect(o.verified).toEqual({ ok: true });
      expect((o.replayed as { status: string }).status).toBe(o.result!.status);
    }
  });
});

// ── through the real CLI ───────────────────────────────────────────────────────────────────────

describe('through the CLI', () => {
  const cli: Array<{ name: string; handler: Handler; status: Status; suspended?: boolean }> = [
    { name: 'cli: prose', handler: always('I will book it right away.'), status: 'handed_off' },
    { name: 'cli: lone surrogate', handler: always('{"goal":{"task":"find_options","args":["me\ud800","lisbon",12]}}'), status: 'handed_off' },
    { name: 'cli: HTTP 401', handler: raw({ status: 401, body: 'bad key' }), status: 'suspended', suspended: true },
    { name: 'cli: HTML with 200', handler: raw({ status: 200, headers: { 'content-type': 'text/html' }, body: HTML }), status: 'suspended', suspended: true },
    { name: 'cli: HTTP 404', handler: raw({ status: 404, body: 'no such model' }), status: 'failed' },
  ];

  test('every run prints one JSON line with all six keys; ls names the command for a suspended one', async () => {
    assertBuilt();
    // One workspace for the five, each run under its own id: the first alone (it makes the workspace's key), then the others.
    const dir = path.join(root, 'cli');
    const runCli = async (c: (typeof cli)[number], i: number) => {
      const url = server.route(c.name, { parse: c.handler });
      return { c, run: await weft(['run', 'travel', TRAVEL_INTENT, '--model-url', url, '--model', 'corpus', '--json', '--dir', dir, '--id', `cli-${i}`]) };
    };
    const first = await runCli(cli[0]!, 0);
    const results = [first, ...(await pool(4, cli.slice(1).map((c, i) => () => runCli(c, i + 1))))];
    const ls = await weft(['ls', '--dir', dir]);
    expect(ls.code, ls.stderr).toBe(0);
    for (const { c, run } of results) {
      const lines = run.stdout.trim().split('\n');
      expect(lines, `${c.name}: ${run.stdout}\n${run.stderr}`).toHaveLength(1);
      const out = JSON.parse(lines[0]!) as Record<string, unknown>;
      expect(Object.keys(out).sort(), c.name).toEqual(['fingerprint', 'id', 'journal', 'publicKey', 'reason', 'status']);
      expect(out.status, `${c.name}: ${run.stdout}\n${run.stderr}`).toBe(c.status);
      expect(typeof out.id, c.name).toBe('string');
      expect(typeof out.journal, c.name).toBe('string');
      expect(typeof out.reason, c.name).toBe('string');
      expect(out.fingerprint === null, c.name).toBe(!SEALED.includes(c.status));
      expect(ls.stdout, c.name).toContain(String(out.id));
      if (c.suspended) expect(ls.stdout, c.name).toContain(`weft resume ${String(out.id)}`);
      // The journal verifies: with the workspace's key when sealed, the chain alone otherwise (`weft verify`'s check).
      const verified = SEALED.includes(c.status) ? (await verifyJournal(String(out.journal), { publicKey: String(out.publicKey) })).code : (await verifyJournal(String(out.journal), { noSignature: true })).code;
      expect(verified, c.name).toBe(0);
      expect(sizeOf(String(out.journal)), c.name).toBeLessThan(MB);
    }
    expect(existsSync(dir)).toBe(true);
  });
});
