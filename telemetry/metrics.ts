/**
 * Weft's metrics, kept in this process and written as Prometheus text (exposition format 0.0.4) —
 * no client library: counters, gauges and histograms with labels, each named under `weft_`.
 *
 * `METRICS` is the one registry a process has (a `serve` or a `worker` serves it at `/metrics`:
 * metrics-server.ts). Every metric is declared here, with its help text, so docs/operations.md can
 * list them all; updating one costs a map look-up, so it is done whether or not anything scrapes.
 * Gauges that are read, not counted (jobs waiting on a queue), are refreshed by a collector just
 * before each scrape (`onScrape`).
 */
type Labels = Record<string, string>;

/** The look-up key of a label set: cheap (no sort, no escaping); its text is written only on a scrape. */
const keyOf = (labels: Labels): string => {
  let key = '';
  for (const k in labels) key += `${k}\u0001${labels[k]}\u0002`;
  return key;
};

const labelText = (labels: Labels): string => {
  const keys = Object.keys(labels).sort();
  if (keys.length === 0) return '';
  return `{${keys.map((k) => `${k}="${String(labels[k]).replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`).join(',')}}`;
};

const num = (n: number): string => (Number.isFinite(n) ? String(n) : n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN');

abstract class Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'gauge' | 'histogram',
  ) {}
  abstract lines(): string[];
  text(): string {
    return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`, ...this.lines()].join('\n');
  }
}

export class Counter extends Metric {
  private readonly values = new Map<string, { labels: Labels; value: number }>();
  constructor(name: string, help: string) {
    super(name, help, 'counter');
  }
  inc(labels: Labels = {}, by = 1): void {
    const key = keyOf(labels);
    const entry = this.values.get(key);
    if (entry) entry.value += by;
    else this.values.set(key, { labels: { ...labels }, value: by });
  }
  get(labels: Labels = {}): number {
    return this.values.get(keyOf(labels))?.value ?? 0;
  }
  lines(): string[] {
    return [...this.values.values()].map((e) => `${this.name}${labelText(e.labels)} ${num(e.value)}`).sort();
  }
}

export class Gauge extends Metric {
  private readonly values = new Map<string, number>();
  constructor(name: string, help: string) {
    super(name, help, 'gauge');
  }
  set(labels: Labels, value: number): void {
    this.values.set(labelText(labels), value);
  }
  /** Replace every labelled value at once (a listing's counts: a status no longer seen goes to 0). */
  replace(rows: Array<[Labels, number]>): void {
    for (const k of this.values.keys()) this.values.set(k, 0);
    for (const [labels, value] of rows) this.values.set(labelText(labels), value);
  }
  lines(): string[] {
    return [...this.values.keys()].sort().map((k) => `${this.name}${k} ${num(this.values.get(k)!)}`);
  }
}

export class Histogram extends Metric {
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(
    name: string,
    help: string,
    readonly buckets: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  ) {
    super(name, help, 'histogram');
  }
  observe(labels: Labels, value: number): void {
    const key = keyOf(labels);
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { labels: { ...labels }, counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }
  lines(): string[] {
    const out: string[] = [];
    for (const s of [...this.series.values()].sort((a, b) => (labelText(a.labels) < labelText(b.labels) ? -1 : 1))) {
      const key = labelText(s.labels);
      this.buckets.forEach((b, i) => out.push(`${this.name}_bucket${labelText({ ...s.labels, le: num(b) })} ${s.counts[i]}`));
      out.push(`${this.name}_bucket${labelText({ ...s.labels, le: '+Inf' })} ${s.count}`);
      out.push(`${this.name}_sum${key} ${num(s.sum)}`);
      out.push(`${this.name}_count${key} ${s.count}`);
    }
    return out;
  }
}

/** Every metric Weft exports (docs/operations.md lists them). */
export const METRICS = {
  steps: new Counter('weft_steps_total', 'Step attempts that ended, by outcome (ok, or the failure class) and actuator; counted where the journal records them (a run, resume or serve).'),
  stepSeconds: new Histogram('weft_step_duration_seconds', 'Seconds from a step attempt\'s dispatch to its recorded outcome, by actuator.'),
  modelCalls: new Counter('weft_model_calls_total', 'Model calls that ended, by purpose and outcome (ok, or the failure class).'),
  modelSeconds: new Histogram('weft_model_call_duration_seconds', 'Seconds from a model request to its recorded reply or failure, by purpose.'),
  refusals: new Counter('weft_step_refusals_total', 'Jobs a worker refused without running them (another domain, an actuator or library it lacks, bad args), by code.'),
  jobs: new Counter('weft_worker_jobs_total', 'Jobs a worker ran, by actuator and outcome (ok, the failure class, or refused).'),
  jobSeconds: new Histogram('weft_worker_job_duration_seconds', 'Seconds a worker spent on a job, by actuator.'),
  stalls: new Counter('weft_worker_stalled_jobs_total', 'Jobs found stalled (their worker died holding them); each is recorded as a transient failure of its attempt.'),
  invocations: new Gauge('weft_open_invocations', 'Invocations not yet ended, by status, as serve\'s last poll listed them.'),
  waiting: new Gauge('weft_queue_jobs_waiting', 'Jobs waiting (waiting, delayed or prioritized) on a queue: the domain\'s effects queue and its -timers queue.'),
  outageSeconds: new Counter('weft_redis_outage_seconds_total', 'Seconds Redis was out of reach, summed over ended outages.'),
  outages: new Counter('weft_redis_outages_total', 'Redis outages that started.'),
  redisUp: new Gauge('weft_redis_up', '1 while Redis answers, 0 during an outage.'),
  polls: new Counter('weft_serve_polls_total', 'Polls serve made of the open invocations, by outcome (ok, failed).'),
} as const;

const collectors = new Set<() => Promise<void>>();

/** Run `collect` before each scrape (refresh a read gauge); returns how to stop. */
export function onScrape(collect: () => Promise<void>): () => void {
  collectors.add(collect);
  return () => collectors.delete(collect);
}

/** The registry as Prometheus text, after the collectors ran (each bounded to `withinMs`; one that fails leaves its last values). */
export async function metricsText(withinMs = 2_000): Promise<string> {
  await Promise.all([...collectors].map((c) => Promise.race([c().catch(() => undefined), new Promise((r) => setTimeout(r, withinMs).unref())])));
  return `${Object.values(METRICS).map((m) => m.text()).join('\n')}\n`;
}

/** An outage of Redis started or ended (queue/outage.ts tells each once). */
export function countOutage(change: { state: 'started' } | { state: 'ended'; ms: number }): void {
  if (change.state === 'started') {
    METRICS.outages.inc();
    METRICS.redisUp.set({}, 0);
  } else {
    METRICS.outageSeconds.inc({}, change.ms / 1000);
    METRICS.redisUp.set({}, 1);
  }
}

/** serve's poll listed the open invocations (`statuses`), or could not. */
export function countPoll(statuses: readonly string[] | undefined): void {
  METRICS.polls.inc({ outcome: statuses === undefined ? 'failed' : 'ok' });
  if (statuses === undefined) return;
  const by = new Map<string, number>();
  for (const s of statuses) by.set(s, (by.get(s) ?? 0) + 1);
  METRICS.invocations.replace([...by].map(([status, n]) => [{ status }, n]));
}
