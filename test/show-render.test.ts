/**
 * The text view of `weft show` (cli/commands/show.ts `renderDescription`), in process: a travel run
 * with a compensated epoch reads as what happened — the retried step, the failed one, what undid
 * each done step, the truncation, the gap-path epoch the run failed in, its ending; and every field
 * that came from a person, a model or an actuator is printed inert, whatever it holds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import '../journal/sha256-node.js';
import { signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import { createRuntime, describeInvocation, type InvocationDescription } from '../runtime/index.js';
import { renderDescription } from '../cli/commands/show.js';
import { initialTravelState, seedTravelState } from '../examples/travel/index.js';
import { TRAVEL_STATE_FILE, travelDomain } from '../examples/travel/domain.js';

const root = mkdtempSync(join(tmpdir(), 'weft-show-render-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A travel run whose hotel sells out while held (airline down once first): epoch 2 is compensated, epoch 3 fails. */
async function soldOut(): Promise<InvocationDescription> {
  const store = new FileStore(join(root, 'store'));
  const stateDir = join(root, 'state');
  const runtime = createRuntime({ store, domain: travelDomain, stateDir, signingKey: signingKeyFromSecret(new Uint8Array(32).fill(5)), sleep: async () => undefined });
  const world = initialTravelState();
  world.faults.soldOut.push('h-alfama');
  world.faults.flaky['airline.hold'] = 1;
  seedTravelState(join(stateDir, 'sold', TRAVEL_STATE_FILE), world);
  await (await runtime.start(travelDomain.intent!, { tenant: 't', seed: 1, asOf: travelDomain.asOf!, id: 'sold' })).done;
  return describeInvocation(store, 'sold');
}

const ACTIVE = /[\u001b\u0007\u0080-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

describe('the text view of an invocation', () => {
  test('a compensated epoch and a failed run read as what happened', async () => {
    const lines = renderDescription(await soldOut(), { store: '--dir D', queue: '' });
    expect(lines).toContain('status      failed');
    expect(lines.find((l) => l.startsWith('ended'))).toMatch(/^ended {7}failed \(model\.no_scripted_reply, permanent\): the model could not be asked/);
    expect(lines).toContain('epoch 2  book_trip("me", "lisbon", 12, 900)  htn plan, compensated');
    expect(lines).toContain('  #0  airline.hold {"flight":"f-tp1353","traveller":"me"}  compensated, 2 attempts');
    expect(lines).toContain('      undone by airline.cancel: ok, 1 attempt');
    expect(lines).toContain('  #4  hotel.confirm {"hotel":"h-alfama","traveller":"me"}  failed, 1 attempt');
    expect(lines).toContain('      permanent hotel.sold_out: h-alfama sold its last room while it was held; choose another hotel');
    expect(lines).toContain('  truncated: removed #0, #1, #2, #3, #4: h-alfama sold its last room while it was held; choose another hotel');
    expect(lines).toContain('epoch 3  share_itinerary("me", "lisbon")  gap path, no plan authored, failed');
    expect(lines).toContain('  weft replay sold --dir D');
  });

  test('the listing\'s advice names this command\'s location, like every other command shown', async () => {
    const d = structuredClone(await soldOut());
    d.status = 'suspended';
    d.fix = 'fix the model key (WEFT_MODEL_KEY), then: weft resume sold';
    const lines = renderDescription(d, { store: '--redis redis://h:1/0 --redis-prefix p', queue: '--queue q' });
    expect(lines).toContain('next        → fix the model key (WEFT_MODEL_KEY), then: weft resume sold --redis redis://h:1/0 --redis-prefix p --queue q');
  });

  test('every untrusted field is printed inert', async () => {
    const evil = 'x\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eevil\u2028line';
    const d = structuredClone(await soldOut());
    d.intent = evil;
    d.tenant = evil;
    d.reason = evil;
    d.problem = evil;
    d.journal = { verified: false, problem: evil };
    d.pin = { ...d.pin!, policy: evil, seed: evil, asOf: evil, runtime: evil, model: { id: evil, params: {} }, deadline: evil };
    d.ending = { status: 'failed', summary: evil, code: evil, class: evil, reason: evil };
    const [epoch1, epoch2] = d.epochs;
    epoch1!.goal = { task: evil, args: [evil, 1] };
    epoch2!.admission = { decision: 'require_approval', policy: evil, reason: evil };
    epoch2!.approval = { reason: evil, decision: 'rejected', by: evil, note: evil };
    epoch2!.truncated = { removed: [0], reason: evil };
    for (const step of epoch2!.steps) {
      step.operator = evil;
      step.actuator = evil;
      step.args = { [evil]: evil };
      step.result = { evil };
      step.failure = { class: evil, code: evil, message: evil };
      step.compensation = { actuator: evil, attempts: 1, outcome: 'failed', result: evil, failure: { class: evil, code: evil, message: evil } };
    }
    d.waiting = { kind: 'approval', reason: evil, plan: null, steps: [{ step: 0, operator: evil, actuator: evil, args: { a: evil }, readOnly: false }], decided: { decision: evil, by: evil, note: evil } };
    const text = renderDescription(d, { store: '--dir D', queue: '' }).join('\n');
    expect(text).not.toMatch(ACTIVE);
    expect(text).toContain('\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202eevil\\u2028line');
    d.waiting = { kind: 'suspended', class: evil, code: evil, reason: evil, state: evil };
    d.fix = evil;
    expect(renderDescription(d, { store: '', queue: '' }).join('\n')).not.toMatch(ACTIVE);
  });
});
