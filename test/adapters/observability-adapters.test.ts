import { afterEach, describe, expect, it, vi } from 'vitest';
import { EmbeddedMetrics } from '../../lambdas/adapters/embedded-metrics.js';
import { runInInvocationScope } from '../../lambdas/adapters/invocation-scope.js';
import { StructuredLogger } from '../../lambdas/adapters/structured-logger.js';

describe('StructuredLogger and EmbeddedMetrics', () => {
  it('keeps the fields and metrics of concurrent invocations apart and flushes each when it ends', async () => {
    // Prepare
    const lines: string[] = [];
    const logger = new StructuredLogger({ service: 'test', writeLine: (line) => lines.push(line) });
    const metrics = new EmbeddedMetrics({ service: 'test', writeLine: (line) => lines.push(line) });
    // Interleaved by explicit gates, not timers: 'a' starts first and logs last, whatever the load.
    let releaseA: () => void = () => {};
    const gateA = new Promise<void>((resolve) => {
      releaseA = resolve;
    });
    const invocation = (runId: string, gate: Promise<void>) =>
      runInInvocationScope({ correlationId: `request-${runId}`, runId }, async () => {
        metrics.count('RunsStarted');
        await gate;
        logger.info('run started');
        metrics.count('Decisions', 1, { outcome: runId === 'a' ? 'approve' : 'reject' });
      });

    // Act
    const first = invocation('a', gateA);
    await invocation('b', Promise.resolve());
    releaseA();
    await first;

    // Assess
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const logs = entries.filter((entry) => entry.message === 'run started');
    expect(logs.map((entry) => [entry.runId, entry.correlationId])).toEqual([
      ['b', 'request-b'],
      ['a', 'request-a'],
    ]);
    const documents = entries.filter((entry) => entry._aws !== undefined);
    // Each invocation wrote its own documents: one without and one with the outcome dimension.
    expect(documents).toHaveLength(4);
    expect(documents.filter((document) => document.RunsStarted === 1)).toHaveLength(2);
    expect(documents.filter((document) => document.outcome === 'approve')).toHaveLength(1);
    expect(documents.filter((document) => document.outcome === 'reject')).toHaveLength(1);
  });

  it('drops fields named like secrets at any depth and logs an error as its class only', () => {
    // Prepare
    const lines: string[] = [];
    const logger = new StructuredLogger({ service: 'test', writeLine: (line) => lines.push(line) });

    // Act
    logger.warn('tool failed', {
      tool: 'update_page_metadata',
      taskToken: 'AAAA-secret-token',
      nested: { previewLines: ['old → new'], kept: 1 },
      failure: new TypeError('exception text with /srv/keys'),
    });

    // Assess
    const entry = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    expect(entry).toMatchObject({
      level: 'WARN',
      tool: 'update_page_metadata',
      nested: { kept: 1 },
      failure: 'TypeError',
    });
    expect(lines[0]).not.toContain('secret-token');
    expect(lines[0]).not.toContain('old → new');
    expect(lines[0]).not.toContain('/srv/keys');
  });

  it('writes a metric at once outside any invocation, and nothing below the log level', () => {
    // Prepare
    const lines: string[] = [];
    const logger = new StructuredLogger({
      service: 'test',
      level: 'WARN',
      writeLine: (line) => lines.push(line),
    });
    const metrics = new EmbeddedMetrics({ service: 'test', writeLine: (line) => lines.push(line) });

    // Act
    logger.info('not written');
    metrics.observe('SealedStateBytes', 1234, 'Bytes');

    // Assess
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({
      _aws: {
        CloudWatchMetrics: [
          { Namespace: 'Countersign', Metrics: [{ Name: 'SealedStateBytes', Unit: 'Bytes' }] },
        ],
      },
      service: 'test',
      SealedStateBytes: 1234,
    });
  });

  describe('without a writer, as every Lambda runs them', () => {
    afterEach(() => {
      vi.restoreAllMocks();
    });

    /** The lines Powertools prints (stdout, and stderr for warnings and errors) while `work` runs. */
    async function printedLines(work: () => Promise<void>): Promise<string[]> {
      const printed: string[] = [];
      const capture = (chunk: string | Uint8Array) => {
        printed.push(String(chunk));
        return true;
      };
      vi.spyOn(process.stdout, 'write').mockImplementation(capture);
      vi.spyOn(process.stderr, 'write').mockImplementation(capture);
      await work();
      vi.restoreAllMocks();
      return printed
        .join('')
        .split('\n')
        .filter((line) => line.length > 0);
    }

    it('prints through Powertools Logger the line the writer gets: same formatter, same fields', async () => {
      // Prepare
      const written: string[] = [];
      const captured = new StructuredLogger({ service: 'test', writeLine: (line) => written.push(line) });
      const fields = { tool: 'close_ticket', taskToken: 'AAAA-secret', failure: new RangeError('/srv/keys') };

      // Act
      const printed = await printedLines(async () => {
        const deployed = new StructuredLogger({ service: 'test', level: 'INFO' });
        await runInInvocationScope({ correlationId: 'request-1', runId: 'run-1' }, async () => {
          deployed.debug('below the level');
          deployed.warn('tool failed', fields);
        });
      });
      await runInInvocationScope({ correlationId: 'request-1', runId: 'run-1' }, async () => {
        captured.warn('tool failed', fields);
      });

      // Assess
      expect(printed).toHaveLength(1);
      const withoutTimestamp = (line: string) => ({ ...JSON.parse(line), timestamp: undefined });
      expect(withoutTimestamp(printed[0] ?? '{}')).toEqual(withoutTimestamp(written[0] ?? '{}'));
      expect(JSON.parse(printed[0] ?? '{}')).toMatchObject({
        level: 'WARN',
        service: 'test',
        correlationId: 'request-1',
        runId: 'run-1',
        tool: 'close_ticket',
        failure: 'RangeError',
      });
      expect(printed[0]).not.toContain('secret');
      expect(printed[0]).not.toContain('/srv/keys');
    });

    it('publishes through Powertools Metrics one document per dimension set, dimensions not carried over', async () => {
      // Act
      const printed = await printedLines(async () => {
        const metrics = new EmbeddedMetrics({ service: 'test' });
        await runInInvocationScope({ correlationId: 'request-1' }, async () => {
          metrics.count('Decisions', 1, { outcome: 'approve' });
          metrics.count('RunsStarted');
        });
        metrics.count('RunsStarted');
      });

      // Assess
      const documents = printed.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(documents).toHaveLength(3);
      expect(documents[0]).toMatchObject({ service: 'test', outcome: 'approve', Decisions: 1 });
      expect(documents[1]).toMatchObject({ service: 'test', RunsStarted: 1 });
      expect(documents[1]).not.toHaveProperty('outcome');
      expect(documents[2]).not.toHaveProperty('outcome');
    });
  });
});
