/**
 * `runtime.start(intent, opts?)` takes the CLI's defaults — tenant `default`, seed `1`, the domain's
 * `asOf` — and refuses malformed options with a RuntimeUsageError before anything is written: no
 * lease, no blob, no journal (issue 19, point 7: each crash the issue reported is one test here).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { signingKeyFromSecret } from '../journal/seal.js';
import { FileStore } from '../stores/file.js';
import type { JournalRecord } from '../journal/records.js';
import { travelDomain, TRAVEL_AS_OF } from '../examples/travel/domain.js';
import { createRuntime, Runtime, RuntimeUsageError } from '../runtime/index.js';

const key = signingKeyFromSecret(new Uint8Array(32).fill(21));
const scratch = mkdtempSync(path.join(tmpdir(), 'weft-start-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let n = 0;

function fresh(withDomain = true) {
  const dir = path.join(scratch, `ws-${n++}`);
  const stateDir = path.join(dir, 'state');
  const runtime = withDomain
    ? createRuntime({ store: new FileStore(dir), domain: travelDomain, stateDir, signingKey: key })
    : // The domain's parts without the domain: no asOf to default to.
      createRuntime({ store: new FileStore(dir), libraries: travelDomain.libraries, actuators: travelDomain.actuators({ stateDir }), observe: travelDomain.observe, model: travelDomain.model({ stateDir })!, policy: travelDomain.policy!, evaluables: travelDomain.evaluables!, signingKey: key });
  return { dir, runtime };
}

/** Nothing the store would write: no journal, no lease, no blob. */
function wroteNothing(dir: string): void {
  const written = existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String).filter((f) => f !== 'state' && !f.startsWith(`state${path.sep}`)) : [];
  expect(written).toEqual([]);
}

async function refusal(promise: Promise<unknown>): Promise<RuntimeUsageError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(RuntimeUsageError);
  expect((err as Error).message).not.toContain('\n');
  return err as RuntimeUsageError;
}

describe('runtime.start defaults', () => {
  test("start(intent) takes the CLI's defaults: tenant default, seed 1, the domain's asOf — the id weft run gives", async () => {
    const { runtime } = fresh();
    const result = await (await runtime.start(travelDomain.intent!)).done;
    expect(result.status).toBe('completed');
    const pinned = (await runtime.store.read(result.id, 0, 1))[0] as JournalRecord<'invocation.pinned'>;
    expect(pinned.body.tenant).toBe('default');
    expect(pinned.body.pin).toMatchObject({ seed: '1', asOf: TRAVEL_AS_OF });
    expect(result.id).toBe(Runtime.defaultId(travelDomain.intent!, { tenant: 'default', seed: '1', asOf: travelDomain.asOf! }));
  });

  test('start(intent, { seed }) no longer throws RangeError: asOf comes from the domain', async () => {
    const { runtime } = fresh();
    const handle = await runtime.start(travelDomain.intent!, { seed: 7 });
    handle.hibernate();
    const result = await handle.done;
    const pinned = (await runtime.store.read(result.id, 0, 1))[0] as JournalRecord<'invocation.pinned'>;
    expect(pinned.body.pin).toMatchObject({ seed: '7', asOf: TRAVEL_AS_OF });
  });

  test('without a domain that names asOf, start(intent) is refused saying to pass asOf, writing nothing', async () => {
    const { dir, runtime } = fresh(false);
    const err = await refusal(runtime.start('x'));
    expect(err.code).toBe('runtime.no_as_of');
    expect(err.message).toContain('pass asOf');
    wroteNothing(dir);
  });
});

describe('runtime.start refuses malformed options before writing anything', () => {
  const cases: Array<[string, unknown, string]> = [
    ['an empty tenant', { tenant: '' }, 'runtime.bad_tenant'],
    ['a tenant that is not a string', { tenant: 42 }, 'runtime.bad_tenant'],
    ['an asOf that is not a time', { asOf: 'next tuesday' }, 'runtime.bad_as_of'],
    ['an asOf that is a number', { asOf: 1780000000000 }, 'runtime.bad_as_of'],
    ['a seed that is an object', { seed: { n: 1 } }, 'runtime.bad_seed'],
    ['a seed that is not an integer', { seed: Number.NaN }, 'runtime.bad_seed'],
    ['an id a store cannot name', { id: '../escape' }, 'runtime.bad_id'],
    ['an unknown option', { tennant: 'acme' }, 'runtime.bad_start_options'],
    ['options that are not an object', 'acme', 'runtime.bad_start_options'],
    ['an unknown library', { library: 'nope' }, 'runtime.unknown_library'],
  ];
  test.each(cases)('%s', async (_what, opts, code) => {
    const { dir, runtime } = fresh();
    const err = await refusal(runtime.start(travelDomain.intent!, opts as never));
    expect(err.code).toBe(code);
    wroteNothing(dir);
  });

  test('an intent that is not a string is refused the same way', async () => {
    const { dir, runtime } = fresh();
    expect((await refusal(runtime.start(undefined as never))).code).toBe('runtime.bad_intent');
    wroteNothing(dir);
  });
});
