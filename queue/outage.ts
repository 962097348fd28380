/**
 * When Redis went out of reach and when it came back, for long-lived processes (`weft serve`,
 * `weft worker`) that keep reconnecting with a bounded backoff: an outage is told once, at its start,
 * and once at its end, with its duration — never once per retry or per failed poll.
 *
 * `Outage` keeps that account and hands each change to whoever tells it (serve: an `outage` event);
 * `OutageLog` tells it as one line each (the worker). `unreachable` and `reachable` may be called as
 * often as the connection's events fire: only the first of an outage and the first after it count.
 */
import { countOutage } from '../telemetry/metrics.js';
import { startOutageSpan } from '../telemetry/serve-spans.js';

/** A change: the outage started (`reason`: what failed), or ended after `ms`. Times in ms since the epoch. */
export type OutageChange = { state: 'started'; since: number; reason: string } | { state: 'ended'; since: number; at: number; ms: number };

export class Outage {
  private since: number | undefined;
  /** The span over the outage under way (telemetry/serve-spans.ts). */
  private span: { end(at: number, ongoing?: boolean): void } | undefined;

  constructor(
    private readonly tell: (change: OutageChange) => void,
    private readonly now: () => number = Date.now,
    /** Which process this is (`serve`, `worker`), as its outage spans say. */
    private readonly who: string = 'weft serve',
  ) {}

  /** True while an outage is under way. */
  get down(): boolean {
    return this.since !== undefined;
  }

  /** Redis could not be reached (`reason`: what failed): the outage starts, once. */
  unreachable(reason: string): void {
    if (this.since !== undefined) return;
    this.since = this.now();
    countOutage({ state: 'started' });
    this.span = startOutageSpan(this.since, this.who);
    this.tell({ state: 'started', since: this.since, reason });
  }

  /** The process stops: the span of an outage still under way ends, marked ongoing (the outage itself is not told as ended). */
  stop(): void {
    this.span?.end(this.now(), true);
    this.span = undefined;
  }

  /** Redis answered: the outage under way, if any, ends. */
  reachable(): void {
    if (this.since === undefined) return;
    const at = this.now();
    const since = this.since;
    this.since = undefined;
    countOutage({ state: 'ended', ms: at - since });
    this.span?.end(at);
    this.span = undefined;
    this.tell({ state: 'ended', since, at, ms: at - since });
  }
}

/** An Outage told as one line at its start and one at its end. */
export class OutageLog extends Outage {
  constructor(
    /** Who is speaking, e.g. `weft worker`. */
    who: string,
    log: (line: string) => void,
    now: () => number = Date.now,
  ) {
    super((change) => log(outageLine(who, change)), now, who);
  }
}

function outageLine(who: string, change: OutageChange): string {
  const since = new Date(change.since).toISOString();
  return change.state === 'started'
    ? `${who}: Redis unreachable since ${since} (${change.reason.slice(0, 200)}); retrying`
    : `${who}: Redis reachable again at ${new Date(change.at).toISOString()}, after an outage of ${change.ms} ms (since ${since})`;
}
