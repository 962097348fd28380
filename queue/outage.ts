/**
 * One line when Redis becomes unreachable and one when it is back, for long-lived processes
 * (`weft serve`, `weft worker`) that keep reconnecting with a bounded backoff: an outage is logged
 * once, with its start, and once at its end, with its duration — never one line per retry.
 *
 * `down` and `up` may be called as often as the connection's events fire: only the first `down` of
 * an outage and the first `up` after it say anything.
 */
export class OutageLog {
  private since: number | undefined;

  constructor(
    /** Who is speaking, e.g. `weft worker`. */
    private readonly who: string,
    private readonly log: (line: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** True while an outage is under way. */
  get down(): boolean {
    return this.since !== undefined;
  }

  /** Redis could not be reached (`reason`: what failed): logs the outage's start, once. */
  unreachable(reason: string): void {
    if (this.since !== undefined) return;
    this.since = this.now();
    this.log(`${this.who}: Redis unreachable since ${new Date(this.since).toISOString()} (${reason.slice(0, 200)}); retrying`);
  }

  /** Redis answered: logs the outage's end and duration, if one was under way. */
  reachable(): void {
    if (this.since === undefined) return;
    const at = this.now();
    this.log(`${this.who}: Redis reachable again at ${new Date(at).toISOString()}, after an outage of ${at - this.since} ms (since ${new Date(this.since).toISOString()})`);
    this.since = undefined;
  }
}
