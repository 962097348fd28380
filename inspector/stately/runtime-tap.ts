/**
 * What feeds the Stately relay from a runtime: an XState inspection observer (`createRuntime({ inspect })`)
 * and a tap on the store's durable appends. Both only translate and queue (relay.ts `publish`); a
 * failure in either is swallowed, so inspection can never fail or stall a run.
 *
 * - Only the invocation's own (root) actor is shown, keyed by its invocation id. Its snapshot is
 *   read at the moment XState reports it (never later: a late read would show the wrong state),
 *   and bounded (protocol.ts).
 * - A restored actor (a resume, or `serve` taking an invocation over) is announced with its restored
 *   snapshot, and its `xstate.init` is sent as `weft.resumed`, so the inspector shows it where it
 *   stands, under the same actor as before.
 * - Events the machine receives are sent by type only: an actor's done event carries its output,
 *   which holds customer data.
 * - Each durable journal record that marks progress becomes an event (record-events.ts).
 */
import type { InspectionEvent, Observer } from 'xstate';
import type { JournalRecord } from '../../journal/records.js';
import type { JournalStore } from '../../journal/store.js';
import { invocationMachine } from '../../machines/invocation-machine.js';
import { QUEUES_ONLY } from '../../runtime/inspection.js';
import { actorMessage, boundedSnapshot, definitionJson, eventMessage, snapshotMessage } from './protocol.js';
import { recordEvent } from './record-events.js';
import type { StatelyRelay } from './relay.js';

let definition: string | undefined;
/** The invocation machine's definition as the inspector draws it (computed once). */
export function machineDefinition(): string {
  return (definition ??= definitionJson(invocationMachine.config));
}

interface RootActor {
  invocation: string;
  restored: boolean;
}

export interface StatelyTap {
  /** The observer to pass as `createRuntime({ inspect })`. */
  inspect: Observer<InspectionEvent>;
  /** `store`, with every durable append also reported to the relay. */
  tapStore<S extends JournalStore>(store: S): S;
}

export function statelyTap(relay: StatelyRelay, now: () => number = () => Date.now()): StatelyTap {
  const roots = new WeakMap<object, RootActor>();
  const rootOf = (ref: object): RootActor | undefined => roots.get(ref);
  /** Root actors reported but not started yet, with whether they were restored from a snapshot. */
  const pending = new WeakMap<object, boolean>();

  const onInspection = (event: InspectionEvent) => {
    const ref = event.actorRef;
    switch (event.type) {
      case '@xstate.actor': {
        // XState reports an actor before it has its first snapshot: the actor is announced on its
        // xstate.init, when its snapshot — the initial one, or the restored one — is there to read.
        if ((ref as { _parent?: unknown })._parent) return; // an invoked actor of an epoch state: not shown
        pending.set(ref, (ref as { options?: { snapshot?: unknown } }).options?.snapshot !== undefined);
        return;
      }
      case '@xstate.event': {
        const type = typeof event.event?.type === 'string' ? event.event.type : 'unknown';
        if (type === 'xstate.init' && pending.has(ref)) {
          const restored = pending.get(ref)!;
          pending.delete(ref);
          const snapshot = (ref as { getSnapshot(): unknown }).getSnapshot() as { value?: unknown; context?: { invocation?: unknown } };
          const invocation = snapshot.context?.invocation;
          if (typeof invocation !== 'string') return;
          roots.set(ref, { invocation, restored });
          relay.publish(actorMessage(invocation, machineDefinition(), boundedSnapshot(snapshot as never), now()));
          // A restored actor is not initialised: it goes on from where it was.
          relay.publish(eventMessage(invocation, restored ? { type: 'weft.resumed', state: typeof snapshot.value === 'string' ? snapshot.value : null } : { type }, now()));
          return;
        }
        const root = rootOf(ref);
        if (root) relay.publish(eventMessage(root.invocation, { type }, now()));
        return;
      }
      case '@xstate.snapshot': {
        const root = rootOf(ref);
        if (!root) return;
        const type = typeof event.event?.type === 'string' ? event.event.type : '';
        relay.publish(snapshotMessage(root.invocation, boundedSnapshot(event.snapshot as never), { type: type === 'xstate.init' && root.restored ? 'weft.resumed' : type }, now()));
        return;
      }
      default:
        return;
    }
  };

  const onDurable = (invocation: string, records: readonly JournalRecord[]) => {
    for (const record of records) {
      const synthesized = recordEvent(record);
      if (synthesized) relay.publish(eventMessage(invocation, synthesized, now()));
    }
  };

  return {
    inspect: {
      // Only queues (relay.ts publish): the runtime need not time its calls (runtime/inspection.ts).
      [QUEUES_ONLY]: true,
      next: (event) => {
        try {
          onInspection(event);
        } catch {
          /* inspection is observation only */
        }
      },
    } as Observer<InspectionEvent>,
    tapStore<S extends JournalStore>(store: S): S {
      // Each method is bound once (a relayed run calls the store on every step), append with its report.
      const bound = new Map<PropertyKey, { from: unknown; fn: unknown }>();
      return new Proxy(store, {
        get(target, property) {
          const value = Reflect.get(target, property, target) as unknown;
          if (typeof value !== 'function') return value;
          const known = bound.get(property);
          if (known?.from === value) return known.fn;
          const fn =
            property !== 'append'
              ? (value as (...a: unknown[]) => unknown).bind(target)
              : async (...args: Parameters<JournalStore['append']>) => {
                  const result = await (value as JournalStore['append']).apply(target, args);
                  try {
                    onDurable(args[0].invocation, args[2]);
                  } catch {
                    /* observation only */
                  }
                  return result;
                };
          bound.set(property, { from: value, fn });
          return fn;
        },
      });
    },
  };
}
