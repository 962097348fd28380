/**
 * What a dispatcher knows about the actuators it can dispatch to, before anything runs: their
 * names, whether each can undo its own effect or give a shadow result, and whether args fit its schema — the certification
 * an epoch needs (fail closed) whether the actuators run in this process or on workers.
 */
import type { Actuator } from '../actors/actuator.js';
import type { Dispatcher, Job, JobOutcome } from './dispatcher.js';

export class ActuatorCatalogue {
  private readonly byName = new Map<string, Actuator>();

  constructor(actuators: readonly Actuator[]) {
    for (const actuator of actuators) {
      if (this.byName.has(actuator.name)) throw new Error(`two actuators are named ${actuator.name}; names must be unique`);
      this.byName.set(actuator.name, actuator);
    }
  }

  get(actuator: string): Actuator | undefined {
    return this.byName.get(actuator);
  }

  knows(actuator: string): boolean {
    return this.byName.has(actuator);
  }

  canCompensate(actuator: string): boolean {
    return typeof this.byName.get(actuator)?.compensate === 'function';
  }

  canShadow(actuator: string): boolean {
    return typeof this.byName.get(actuator)?.shadow === 'function';
  }

  checkArgs(actuator: string, args: unknown): string | undefined {
    const found = this.byName.get(actuator);
    if (!found) return `unknown actuator ${JSON.stringify(actuator)}`;
    const parsed = found.argsSchema.safeParse(args);
    if (parsed.success) return undefined;
    const issue = parsed.error.issues[0]!;
    return `args for ${actuator} fail its schema${issue.path.length ? ` at ${issue.path.join('.')}` : ''}: ${issue.message}`;
  }
}

/** A dispatcher's certification side, answered from its catalogue; subclasses say how jobs run. */
export abstract class CatalogueDispatcher implements Dispatcher {
  abstract readonly name: string;
  protected readonly catalogue: ActuatorCatalogue;

  constructor(actuators: readonly Actuator[]) {
    this.catalogue = new ActuatorCatalogue(actuators);
  }

  knows(actuator: string): boolean {
    return this.catalogue.knows(actuator);
  }

  canCompensate(actuator: string): boolean {
    return this.catalogue.canCompensate(actuator);
  }

  canShadow(actuator: string): boolean {
    return this.catalogue.canShadow(actuator);
  }

  checkArgs(actuator: string, args: unknown): string | undefined {
    return this.catalogue.checkArgs(actuator, args);
  }

  abstract dispatch(job: Job): Promise<JobOutcome>;
  abstract close(): Promise<void>;
}
