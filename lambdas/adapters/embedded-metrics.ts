import { Metrics as PowertoolsMetrics } from '@aws-lambda-powertools/metrics';
import { COUNTERSIGN_METRICS_NAMESPACE, type MetricName, type MetricUnit } from '../core/metric-names.js';
import type { Logger, Metrics } from '../core/ports.js';
import { currentInvocationKey, flushWhenInvocationEnds, type InvocationFlusher } from './invocation-scope.js';
import type { LogLineWriter } from './structured-logger.js';

interface MetricEntry {
  readonly name: MetricName;
  readonly unit: MetricUnit;
  readonly value: number;
  readonly dimensions: Readonly<Record<string, string>>;
}

export interface EmbeddedMetricsOptions {
  /** @default - {@link COUNTERSIGN_METRICS_NAMESPACE} (the dashboard and alarms read it) */
  readonly namespace?: string;
  /** The `service` dimension of every metric. @default - POWERTOOLS_SERVICE_NAME, else 'countersign' */
  readonly service?: string;
  /**
   * Where each document goes instead of stdout (the local mode, a test's capture).
   * @default - Powertools Metrics prints each document on stdout (`publishStoredMetrics`)
   */
  readonly writeLine?: LogLineWriter;
  /** Where Powertools' own warnings (an invalid dimension) go. @default - dropped */
  readonly logger?: Logger;
}

// Powertools publishes by itself (on stdout) at 100 metrics or 100 values of one metric;
// documents are cut below that so every line goes where `writeLine` says.
const VALUES_PER_DOCUMENT = 90;

/**
 * Metrics in CloudWatch embedded metric format, serialized by Powertools Metrics: Lambda
 * ships the JSON lines to CloudWatch Logs, which turns them into metrics with no API call.
 *
 * Entries are buffered per invocation (an API request or a step, see
 * {@link runInInvocationScope}) and written when it ends, grouped by dimension set. A
 * long-lived local process therefore never mixes two requests' metrics in one document and
 * never holds metrics past the request that recorded them. Outside any invocation an entry
 * is written at once.
 *
 * Through Powertools' documented API only: one instance, each document's dimensions added,
 * its metrics added, then `publishStoredMetrics()` (stdout, every Lambda). Powertools offers
 * no documented way to print elsewhere, so with `writeLine` the same document comes from
 * `serializeMetrics()` and goes to the writer.
 *
 * @example
 * const metrics = new EmbeddedMetrics({ service: 'countersign' });
 * await runInInvocationScope({ correlationId }, async () => {
 *   metrics.count('Decisions', 1, { outcome: 'approve' });
 * }); // one EMF line: {"_aws":{...},"service":"countersign","outcome":"approve","Decisions":1}
 */
export class EmbeddedMetrics implements Metrics {
  private readonly buffers = new WeakMap<object, InvocationBuffer>();
  private readonly powertools: PowertoolsMetrics;
  private readonly writeLine: LogLineWriter | undefined;

  public constructor(options: EmbeddedMetricsOptions = {}) {
    const logger = options.logger;
    this.writeLine = options.writeLine;
    this.powertools = new PowertoolsMetrics({
      namespace: options.namespace ?? COUNTERSIGN_METRICS_NAMESPACE,
      ...(options.service === undefined ? {} : { serviceName: options.service }),
      logger: {
        debug: () => {},
        info: () => {},
        warn: (message: unknown) => logger?.warn('metrics warning', { detail: String(message) }),
        error: (message: unknown) => logger?.error('metrics error', { detail: String(message) }),
      },
    });
  }

  public count(name: MetricName, value = 1, dimensions: Record<string, string> = {}): void {
    this.record({ name, unit: 'Count', value, dimensions });
  }

  public observe(
    name: MetricName,
    value: number,
    unit: MetricUnit,
    dimensions: Record<string, string> = {},
  ): void {
    this.record({ name, unit, value, dimensions });
  }

  private record(entry: MetricEntry): void {
    if (!Number.isFinite(entry.value)) return;
    const key = currentInvocationKey();
    if (!key) {
      this.write([entry]);
      return;
    }
    let buffer = this.buffers.get(key);
    if (!buffer) {
      buffer = new InvocationBuffer((entries) => this.write(entries));
      this.buffers.set(key, buffer);
      flushWhenInvocationEnds(buffer);
    }
    buffer.entries.push(entry);
  }

  /** One document per dimension set (and per {@link VALUES_PER_DOCUMENT} values of it). */
  private write(entries: readonly MetricEntry[]): void {
    const groups = new Map<string, MetricEntry[]>();
    for (const entry of entries) {
      const key = JSON.stringify(Object.entries(entry.dimensions).sort(([a], [b]) => a.localeCompare(b)));
      groups.set(key, [...(groups.get(key) ?? []), entry]);
    }
    for (const group of groups.values()) {
      for (let start = 0; start < group.length; start += VALUES_PER_DOCUMENT) {
        const document = group.slice(start, start + VALUES_PER_DOCUMENT);
        // Dimensions added here are cleared with the metrics when the document is written.
        this.powertools.addDimensions({ ...document[0]?.dimensions });
        for (const entry of document) this.powertools.addMetric(entry.name, entry.unit, entry.value);
        this.publish();
      }
    }
  }

  private publish(): void {
    if (this.writeLine === undefined) {
      this.powertools.publishStoredMetrics();
      return;
    }
    try {
      this.writeLine(JSON.stringify(this.powertools.serializeMetrics()));
    } finally {
      this.powertools.clearMetrics();
      this.powertools.clearDimensions();
    }
  }
}

class InvocationBuffer implements InvocationFlusher {
  public readonly entries: MetricEntry[] = [];

  public constructor(private readonly writeEntries: (entries: readonly MetricEntry[]) => void) {}

  public flush(): void {
    if (this.entries.length > 0) this.writeEntries(this.entries.splice(0));
  }
}
