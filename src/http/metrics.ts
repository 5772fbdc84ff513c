// Prometheus text exposition of request counts and latencies, ingested events and VMs by state.

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

interface Histogram {
  counts: number[];
  sum: number;
  count: number;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

export class Metrics {
  readonly #requests: { labels: string; value: number }[] = [];
  readonly #series = new Map<string, { histogram: Histogram; counters: Map<string, { labels: string; value: number }> }>();
  readonly #latency = new Map<string, Histogram>();
  readonly #events = new Map<string, number>();
  /** Values read at scrape time, by name (`metric:label` for a family). */
  readonly #read = new Map<string, { type: 'gauge' | 'counter'; help: string; read: () => Record<string, number> | number }>();

  recordRequest(route: string, method: string, status: number, seconds: number): void {
    // Hot path: label strings are built once per (route, method, status), not per request.
    let byRoute = this.#series.get(route);
    if (byRoute === undefined) {
      const histogram = { counts: new Array<number>(BUCKETS.length).fill(0), sum: 0, count: 0 };
      byRoute = { histogram, counters: new Map() };
      this.#series.set(route, byRoute);
      this.#latency.set(`route="${escapeLabel(route)}"`, histogram);
    }
    const counterKey = `${method} ${status}`;
    let counter = byRoute.counters.get(counterKey);
    if (counter === undefined) {
      counter = { labels: `route="${escapeLabel(route)}",method="${method}",status="${status}"`, value: 0 };
      byRoute.counters.set(counterKey, counter);
      this.#requests.push(counter);
    }
    counter.value++;
    const histogram = byRoute.histogram;
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]) histogram.counts[i]++;
    histogram.sum += seconds;
    histogram.count++;
  }

  recordEvents(type: string, count: number): void {
    this.#events.set(type, (this.#events.get(type) ?? 0) + count);
  }

  /**
   * A gauge computed at scrape time: one number, or with `name` as `metric:label`, a family of label value →
   * number.
   */
  gauge(name: string, help: string, read: () => Record<string, number> | number): void {
    this.#read.set(name, { type: 'gauge', help, read });
  }

  /** The same for a count that only grows (its name ends in `_total`): rates are taken of it. */
  counter(name: string, help: string, read: () => Record<string, number> | number): void {
    this.#read.set(name, { type: 'counter', help, read });
  }

  render(): string {
    const lines: string[] = [];
    lines.push('# HELP jvmlens_http_requests_total HTTP requests by route, method and status.');
    lines.push('# TYPE jvmlens_http_requests_total counter');
    for (const { labels, value } of this.#requests) lines.push(`jvmlens_http_requests_total{${labels}} ${value}`);
    lines.push('# HELP jvmlens_http_request_duration_seconds Time to answer a request.');
    lines.push('# TYPE jvmlens_http_request_duration_seconds histogram');
    for (const [labels, histogram] of this.#latency) {
      BUCKETS.forEach((bound, i) => lines.push(`jvmlens_http_request_duration_seconds_bucket{${labels},le="${bound}"} ${histogram.counts[i]}`));
      lines.push(`jvmlens_http_request_duration_seconds_bucket{${labels},le="+Inf"} ${histogram.count}`);
      lines.push(`jvmlens_http_request_duration_seconds_sum{${labels}} ${histogram.sum}`);
      lines.push(`jvmlens_http_request_duration_seconds_count{${labels}} ${histogram.count}`);
    }
    lines.push('# HELP jvmlens_ingested_events_total Agent events stored, by type.');
    lines.push('# TYPE jvmlens_ingested_events_total counter');
    for (const [type, value] of this.#events) lines.push(`jvmlens_ingested_events_total{type="${escapeLabel(type)}"} ${value}`);
    for (const [name, { type, help, read }] of this.#read) {
      const [metric, label] = name.split(':');
      lines.push(`# HELP ${metric} ${help}`);
      lines.push(`# TYPE ${metric} ${type}`);
      const values = read();
      if (typeof values === 'number') lines.push(`${metric} ${values}`);
      else for (const [value, count] of Object.entries(values)) lines.push(`${metric}{${label}="${escapeLabel(value)}"} ${count}`);
    }
    return lines.join('\n') + '\n';
  }
}
