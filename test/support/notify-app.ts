/**
 * A tiny app for runtime tests: notify a person, optionally charge them, with counting actuators.
 * Every call is counted per idempotency key (attempts) and applied once per key (applied), so a
 * test can tell "dispatched twice" from "applied twice".
 */
import { z } from 'zod';
import { ActuatorError, type Actuator } from '../../actors/actuator.js';
import { LibraryBuilder, atom, add, not } from '../../htn/library/builder.js';

export interface Ledger {
  attempts: Record<string, number>;
  applied: Record<string, unknown>;
  undone: string[];
  /** Make the next N calls of an actuator fail with this class. */
  failures: Record<string, { class: 'transient' | 'permanent'; times: number }>;
}

export function newLedger(): Ledger {
  return { attempts: {}, applied: {}, undone: [], failures: {} };
}

export const notifyLibrary = new LibraryBuilder('notify')
  .type('person')
  .predicate('reachable', { '?p': 'person' })
  .predicate('notified', { '?p': 'person' })
  .predicate('charged', { '?p': 'person' })
  .task('notify', { '?p': 'person' })
  .task('charge_and_notify', { '?p': 'person' })
  .task('reach', { '?p': 'person' })
  .operator('send', {
    params: { '?p': 'person' },
    precondition: atom('reachable', '?p'),
    effect: add('notified', '?p'),
    actuator: { actuator: 'msg.send', args: { to: '?p' } },
  })
  .operator('charge', {
    params: { '?p': 'person' },
    precondition: not(atom('charged', '?p')),
    effect: add('charged', '?p'),
    actuator: { actuator: 'card.charge', args: { who: '?p', amount: 10 } },
  })
  .method('notify-direct', { task: ['notify', '?p'], params: { '?p': 'person' }, precondition: atom('reachable', '?p'), subtasks: [['send', '?p']] })
  .method('charge-then-notify', { task: ['charge_and_notify', '?p'], params: { '?p': 'person' }, subtasks: [['charge', '?p'], ['send', '?p']] })
  .build();

export function notifyActuators(ledger: Ledger): Actuator[] {
  const effect = (name: string, kind: 'message' | 'tool', apply: (args: any) => unknown): Actuator => ({
    name,
    kind,
    readOnly: false,
    argsSchema: z.record(z.string(), z.union([z.string(), z.number()])),
    resultSchema: z.unknown(),
    async run(args, ctx) {
      ledger.attempts[ctx.key] = (ledger.attempts[ctx.key] ?? 0) + 1;
      const failure = ledger.failures[name];
      if (failure && failure.times > 0) {
        failure.times--;
        throw new ActuatorError(`${name}.down`, failure.class, `${name} is down`);
      }
      if (!(ctx.key in ledger.applied)) ledger.applied[ctx.key] = apply(args);
      return ledger.applied[ctx.key];
    },
    async compensate(_args, _result, ctx) {
      ledger.undone.push(ctx.key);
      return { undone: true };
    },
  });
  return [
    {
      name: 'world.observe',
      kind: 'state',
      readOnly: true,
      argsSchema: z.object({ goal: z.unknown() }),
      resultSchema: z.unknown(),
      async run() {
        return { objects: [{ name: 'alice', type: 'person' }, { name: 'bob', type: 'person' }], facts: [['reachable', 'alice']] };
      },
    },
    effect('msg.send', 'message', (args) => ({ sent: args.to })),
    effect('card.charge', 'tool', (args) => ({ charged: args.who, amount: args.amount })),
  ];
}
