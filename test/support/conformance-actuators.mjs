/**
 * The dispatcher conformance suite's actuators (test/dispatcher-conformance.ts), defined ONCE for
 * every process that runs them: the test process (in-process dispatcher, in-process BullMQ worker)
 * and a `weft worker` child process (conformance-domain.mjs). Their dependencies — zod's `z`,
 * `ActuatorError`, the HTN builder — are injected, so the same definitions run against the
 * TypeScript sources in vitest and against dist/ in a child process.
 *
 * Every call is reported to `record` with the context the actuator saw (key, attempt, invocation,
 * tenant, epoch, step, asOf) and one draw from its seeded PRNG, so a test can check that the job
 * reached the actuator unchanged whichever process ran it.
 */

/** Names of the actuators, for the tests. */
export const CONF = {
  observe: 'conf.observe',
  echo: 'conf.echo',
  flaky: 'conf.flaky',
  permanent: 'conf.permanent',
  policy: 'conf.policy',
  throws: 'conf.throws',
  badResult: 'conf.bad-result',
  slow: 'conf.slow',
};

/** The PRNG stream every conformance actuator draws once from. */
export const DRAW_STREAM = 'conformance';

export function conformanceActuators({ z, ActuatorError, record }) {
  const seen = (actuator, op, args, ctx, extra = {}) =>
    record({
      actuator,
      op,
      args,
      key: ctx.key,
      attempt: ctx.attempt,
      invocation: ctx.invocation,
      tenant: ctx.tenant,
      epoch: ctx.epoch,
      step: ctx.step,
      asOf: ctx.asOf,
      draw: ctx.random.stream(DRAW_STREAM).next(),
      ...extra,
    });
  const noArgs = z.object({}).passthrough();
  return [
    {
      name: CONF.observe,
      kind: 'state',
      readOnly: true,
      argsSchema: noArgs,
      resultSchema: z.object({ objects: z.array(z.unknown()), facts: z.array(z.unknown()) }),
      async run() {
        return { objects: [], facts: [] };
      },
    },
    {
      name: CONF.echo,
      kind: 'tool',
      readOnly: false,
      argsSchema: z.object({ text: z.string(), n: z.number().int().min(0) }),
      resultSchema: z.object({ echoed: z.string(), n: z.number(), key: z.string(), attempt: z.number() }),
      async run(args, ctx) {
        seen(CONF.echo, 'run', args, ctx);
        return { echoed: args.text, n: args.n, key: ctx.key, attempt: ctx.attempt };
      },
      async compensate(args, result, ctx) {
        seen(CONF.echo, 'compensate', args, ctx, { result });
        return { undone: result.echoed };
      },
      // What run would return, changing nothing (a shadow run's op 'shadow').
      async shadow(args, ctx) {
        seen(CONF.echo, 'shadow', args, ctx);
        return { echoed: `would echo ${args.text}`, n: args.n, key: ctx.key, attempt: ctx.attempt };
      },
    },
    {
      name: CONF.flaky,
      kind: 'tool',
      readOnly: false,
      argsSchema: noArgs,
      resultSchema: z.object({ key: z.string(), attempt: z.number() }),
      // Attempt 1 of any key fails transiently; later attempts succeed. Stateless, so it behaves the
      // same in every process.
      async run(args, ctx) {
        seen(CONF.flaky, 'run', args, ctx);
        if (ctx.attempt < 2) throw new ActuatorError('conf.flaky', 'transient', `attempt ${ctx.attempt} of ${ctx.key} fails; try again`);
        return { key: ctx.key, attempt: ctx.attempt };
      },
    },
    {
      name: CONF.permanent,
      kind: 'tool',
      readOnly: false,
      argsSchema: noArgs,
      resultSchema: z.object({}),
      async run(args, ctx) {
        seen(CONF.permanent, 'run', args, ctx);
        throw new ActuatorError('conf.broken', 'permanent', 'the provider rejects this for good');
      },
    },
    {
      name: CONF.policy,
      kind: 'tool',
      readOnly: false,
      argsSchema: noArgs,
      resultSchema: z.object({}),
      async run(args, ctx) {
        seen(CONF.policy, 'run', args, ctx);
        throw new ActuatorError('conf.forbidden', 'policy', 'the provider forbids this');
      },
    },
    {
      name: CONF.throws,
      kind: 'tool',
      readOnly: false,
      argsSchema: noArgs,
      resultSchema: z.object({}),
      async run(args, ctx) {
        seen(CONF.throws, 'run', args, ctx);
        throw new Error('the provider hung up');
      },
    },
    {
      name: CONF.badResult,
      kind: 'tool',
      readOnly: false,
      argsSchema: noArgs,
      resultSchema: z.object({ ok: z.literal(true) }),
      async run(args, ctx) {
        seen(CONF.badResult, 'run', args, ctx);
        return { ok: 'not quite' };
      },
    },
    {
      name: CONF.slow,
      kind: 'tool',
      readOnly: false,
      argsSchema: z.object({ ms: z.number().int().min(0) }),
      resultSchema: z.object({ slept: z.number() }),
      async run(args, ctx) {
        seen(CONF.slow, 'run', args, ctx, { phase: 'start' });
        await new Promise((resolve) => setTimeout(resolve, args.ms));
        return { slept: args.ms };
      },
    },
  ];
}

/** A one-operator method library, so a domain can be defined around the actuators. */
export function conformanceLibrary(htn) {
  const { LibraryBuilder, atom, not, add } = htn;
  return new LibraryBuilder('conformance')
    .type('thing')
    .predicate('echoed', { '?x': 'thing' })
    .task('echo', { '?x': 'thing' })
    .operator('echo_it', {
      params: { '?x': 'thing' },
      precondition: not(atom('echoed', '?x')),
      effect: add('echoed', '?x'),
      actuator: { actuator: CONF.echo, args: { text: '?x', n: 0 } },
    })
    .method('echo-once', { task: ['echo', '?x'], params: { '?x': 'thing' }, subtasks: [['echo_it', '?x']] })
    .build();
}
