// Types for conformance-actuators.mjs (plain JS so that a `weft worker` child process can load it).
import type { Actuator } from '../../actors/actuator.js';
import type { Library } from '../../htn/library/schema.js';

export interface ConformanceCall {
  actuator: string;
  op: 'run' | 'compensate' | 'shadow';
  args: unknown;
  key: string;
  attempt: number;
  invocation: string;
  tenant: string;
  epoch: number;
  step: number;
  asOf: string;
  draw: number;
  result?: unknown;
  phase?: 'start';
  pid?: number;
}

export declare const CONF: {
  readonly observe: 'conf.observe';
  readonly echo: 'conf.echo';
  readonly flaky: 'conf.flaky';
  readonly permanent: 'conf.permanent';
  readonly policy: 'conf.policy';
  readonly throws: 'conf.throws';
  readonly badResult: 'conf.bad-result';
  readonly slow: 'conf.slow';
};

export declare const DRAW_STREAM: 'conformance';

export declare function conformanceActuators(deps: {
  z: unknown;
  ActuatorError: unknown;
  record: (call: ConformanceCall) => void;
}): Actuator[];

export declare function conformanceLibrary(htn: unknown): Library;
