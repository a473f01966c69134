import { describe, expect, it } from 'vitest';
import { COUNTERSIGN_METRICS_NAMESPACE, METRIC_NAMES } from '../../lambdas/core/metric-names.js';
import { reportWaitingRuns } from '../../lambdas/core/runs/report-waiting-runs.js';
import { settle, startRunAndSettle, useTestRuntime } from '../support/local-runtime.js';

interface EmbeddedMetricDocument {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: Array<{
      Namespace: string;
      Dimensions: string[][];
      Metrics: Array<{ Name: string; Unit: string }>;
    }>;
  };
  [key: string]: unknown;
}

/** One metric value as CloudWatch would read it from an EMF document. */
interface MetricPoint {
  name: string;
  unit: string;
  value: number;
  dimensions: Record<string, string>;
}

/** Reads EMF lines as CloudWatch does: each listed metric, its dimension values, each value. */
function readMetricPoints(lines: readonly string[]): MetricPoint[] {
  return lines.flatMap((line) => {
    const document = JSON.parse(line) as EmbeddedMetricDocument;
    return document._aws.CloudWatchMetrics.flatMap((directive) => {
      const dimensionNames = directive.Dimensions.flat();
      const dimensions = Object.fromEntries(dimensionNames.map((name) => [name, String(document[name])]));
      return directive.Metrics.flatMap((metric) => {
        const raw = document[metric.Name];
        const values = Array.isArray(raw) ? raw : [raw];
        return values.map((value) => ({
          name: metric.Name,
          unit: metric.Unit,
          value: Number(value),
          dimensions,
        }));
      });
    });
  });
}

/** Sum and count of one metric (with a dimension filter), over the given points. */
function total(points: readonly MetricPoint[], name: string, dimensions: Record<string, string> = {}) {
  const matching = points.filter(
    (point) =>
      point.name === name &&
      Object.entries(dimensions).every(([key, value]) => point.dimensions[key] === value),
  );
  return { sum: matching.reduce((sum, point) => sum + point.value, 0), samples: matching.length };
}

describe('the metrics a run emits', () => {
  const runtime = useTestRuntime();

  async function pointsOf(work: () => Promise<void>): Promise<MetricPoint[]> {
    const before = runtime.metricLines.length;
    await work();
    return readMetricPoints(runtime.metricLines.slice(before));
  }

  it('writes CloudWatch embedded metric documents in the countersign namespace with the service dimension', async () => {
    // Act
    const points = await pointsOf(async () => {
      await startRunAndSettle(runtime, "Set the title of page 12 to 'Metrics format'");
    });
    const documents = runtime.metricLines.map((line) => JSON.parse(line) as EmbeddedMetricDocument);

    // Assess
    expect(points.length).toBeGreaterThan(0);
    for (const document of documents) {
      const [directive] = document._aws.CloudWatchMetrics;
      expect(directive?.Namespace).toBe(COUNTERSIGN_METRICS_NAMESPACE);
      expect(directive?.Dimensions[0]).toContain('service');
      expect(document.service).toBe('countersign-local');
      expect(typeof document._aws.Timestamp).toBe('number');
    }
  });

  it('counts an approved run as one start, one suspension, one approve decision and one completion', async () => {
    // Act
    const points = await pointsOf(async () => {
      const { runId, view } = await startRunAndSettle(runtime, "Set the description of page 12 to 'Metered'");
      const decision = await runtime
        .client('approver')
        .decideRun({ path: { id: runId }, body: { digest: view.digest, decision: 'approve' } });
      expect(decision.status).toBe(200);
      expect((await settle(runtime, runId, 'editor', view.turn)).status).toBe('completed');
    });

    // Assess
    expect(total(points, 'RunsStarted').sum).toBe(1);
    expect(total(points, 'RunsSuspended').sum).toBe(1);
    expect(total(points, 'Decisions', { outcome: 'approve' }).sum).toBe(1);
    expect(total(points, 'Decisions', { outcome: 'reject' }).sum).toBe(0);
    expect(total(points, 'RunsCompleted').sum).toBe(1);
    expect(total(points, 'RunsFailed').sum).toBe(0);
    expect(total(points, 'RunsExpired').sum).toBe(0);
    expect(total(points, 'PreviewsCaptured').sum).toBe(1);
    expect(total(points, 'PreviewsFailed').sum).toBe(0);
    const pauseToDecision = total(points, 'PauseToDecision');
    expect(pauseToDecision.samples).toBe(1);
    expect(points.find((point) => point.name === 'PauseToDecision')?.unit).toBe('Milliseconds');
    expect(total(points, 'SealedStateBytes').samples).toBeGreaterThan(1);
    expect(total(points, 'SealedCardBytes').samples).toBe(1);
    expect(points.every((point) => Number.isFinite(point.value))).toBe(true);
  });

  it('counts a rejected run as one reject decision, and a stale digest as a refusal', async () => {
    // Act
    const points = await pointsOf(async () => {
      const { runId, view } = await startRunAndSettle(runtime, "Set the title of page 14 to 'Refused'");
      const stale = await runtime
        .client('approver')
        .decideRun({ path: { id: runId }, body: { digest: `${view.digest}0`, decision: 'reject' } });
      expect(stale.status).toBe(409);
      const decision = await runtime.client('approver').decideRun({
        path: { id: runId },
        body: { digest: view.digest, decision: 'reject', reason: 'Not now.' },
      });
      expect(decision.status).toBe(200);
      expect((await settle(runtime, runId, 'editor', view.turn)).status).toBe('completed');
    });

    // Assess
    expect(total(points, 'RunsStarted').sum).toBe(1);
    expect(total(points, 'RunsSuspended').sum).toBe(1);
    expect(total(points, 'StaleDigestRefusals').sum).toBe(1);
    expect(total(points, 'Decisions', { outcome: 'reject' }).sum).toBe(1);
    expect(total(points, 'Decisions', { outcome: 'approve' }).sum).toBe(0);
    expect(total(points, 'RunsCompleted').sum).toBe(1);
  });

  it('reports how many runs wait and how long the oldest has waited', async () => {
    // Prepare
    const { runId } = await startRunAndSettle(runtime, "Set the title of page 12 to 'Still waiting'");

    // Act
    const points = await pointsOf(async () => {
      const report = await reportWaitingRuns(runtime.dependencies);
      expect(report.waiting).toBeGreaterThanOrEqual(1);
    });

    // Assess
    expect(runId).toBeTruthy();
    expect(total(points, 'RunsWaiting').sum).toBeGreaterThanOrEqual(1);
    expect(total(points, 'OldestWaitingRunAge').samples).toBe(1);
    expect(total(points, 'OldestWaitingRunAge').sum).toBeGreaterThanOrEqual(0);
  });

  it('emits only metric names the dashboard and alarms know', () => {
    // Act
    const names = new Set(readMetricPoints(runtime.metricLines).map((point) => point.name));

    // Assess
    const known = new Set<string>(METRIC_NAMES);
    expect([...names].filter((name) => !known.has(name))).toEqual([]);
  });
});
