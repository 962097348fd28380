/**
 * The `workers` bench suite's domain: bench/noop-app.ts's library and no-op actuator as a domain
 * (defineDomain), loaded both by the runtime (names and schemas only, for certification) and by
 * the worker processes (which run them). The observe actuator runs on a worker, which cannot be
 * told per invocation how many items to list, so it reads the count from the invocation's tenant:
 * `tenantFor(n)` = `bench-s<n>` lists n pending items, so one worker serves epochs of any length.
 *
 * Also the raw baseline's job payload and the return value its worker gives (the same shapes a
 * Weft job and a Weft worker's outcome have, so the raw round trip carries the same bytes).
 */
import { z } from 'zod';
import type { Actuator, ActuatorContext } from '../actors/actuator.js';
import { libraryDigest } from '../htn/library/digest.js';
import { defineDomain } from '../runtime/domain.js';
import { noopActuator, noopLibrary, noopModel } from './noop-app.js';

export const tenantFor = (steps: number) => `bench-s${steps}`;

function stepsOf(tenant: string): number {
  const m = /^bench-s(\d+)$/.exec(tenant);
  if (!m) throw new Error(`bench observe: tenant ${JSON.stringify(tenant)} does not say how many items to list (bench-s<n>)`);
  return Number(m[1]);
}

const observeByTenant: Actuator = {
  name: 'bench.observe',
  kind: 'state',
  readOnly: true,
  argsSchema: z.object({ goal: z.unknown() }),
  resultSchema: z.unknown(),
  run: async (_args: unknown, ctx: ActuatorContext) => {
    const items = Array.from({ length: stepsOf(ctx.tenant) }, (_, i) => `item-${String(i).padStart(6, '0')}`);
    return { objects: items.map((name) => ({ name, type: 'item' })), facts: items.map((i) => ['pending', i]) };
  },
};

export const benchDomain = defineDomain({
  name: 'bench-noop',
  description: 'one epoch of N no-op world-effect steps (N from the tenant: bench-s<N>)',
  libraries: [noopLibrary],
  actuators: [observeByTenant, noopActuator],
  observe: 'bench.observe',
  model: noopModel(),
});

/** A raw job's payload: the shape (and about the size) of the Job a Weft step puts on the queue. */
export function rawJobData(tag: string, i: number): Record<string, unknown> {
  return {
    op: 'run',
    actuator: 'noop',
    args: { item: `item-${String(i).padStart(6, '0')}` },
    key: `inv-raw-${tag}.1.${i}`,
    attempt: 1,
    step: i,
    invocation: `inv-raw-${tag}`,
    tenant: 'bench-raw',
    epoch: 1,
    asOf: '2026-01-01T00:00:00.000Z',
    seed: tag,
    library: libraryDigest(noopLibrary),
  };
}

/** What the raw worker's processor returns at once: a Weft worker's outcome for a no-op step. */
export const RAW_RESULT = { ok: true, result: { ok: true } } as const;
