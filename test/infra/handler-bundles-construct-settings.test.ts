import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoRunRepository } from '../../lambdas/adapters/dynamo/run-repository.js';
import { TABLE_LAYOUT } from '../../lambdas/contract/table-layout.js';
import { startDynalite } from '../support/dynalite.js';
import { makeStoredRun } from '../support/stored-run-fixtures.js';
import {
  bundle,
  HANDLERS_DIRECTORY,
  invokeInFreshProcess,
  useBundleDirectory,
} from './handler-bundles-support.js';
import { synthesizeTestStack } from './synthesize-test-stack.js';

describe('the Lambda handler bundles', () => {
  const bundles = useBundleDirectory();

  it('serve the runbook from the inbox bundle: this build’s docs/runbook.md, every alarm at its anchor', async () => {
    // Prepare: the alarms the construct creates, and the inbox function as it deploys
    const alarmNames = Object.keys(synthesizeTestStack().stack.countersign.observability.alarms);
    await bundle(join(HANDLERS_DIRECTORY, 'api-inbox.ts'), bundles.directory, 'api-inbox-runbook');
    const bundled = await readFile(join(bundles.directory, 'api-inbox-runbook.mjs'), 'utf8');
    const event = {
      version: '2.0',
      rawPath: '/runbook',
      routeKey: 'GET /runbook',
      headers: { accept: 'text/html' },
      requestContext: { http: { method: 'GET', path: '/runbook' }, requestId: 'bundle-test' },
    };

    // Act: a fresh process, as a cold Lambda; no table is reached for a public page
    const answer = (await invokeInFreshProcess(join(bundles.directory, 'api-inbox-runbook.mjs'), event, {
      COUNTERSIGN_TABLE_NAME: 'countersign-runbook-test',
    })) as { statusCode: number; headers: Record<string, string>; body: string };

    // Assess: the runbook's text is inside the bundle (no file is read beside it) and rendered
    expect(bundled).toContain('This is the on-call page.');
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(answer.headers['content-security-policy']).toMatch(/^default-src 'none'; style-src 'sha256-/);
    expect(alarmNames.length).toBeGreaterThan(15);
    for (const name of alarmNames) expect(answer.body, name).toContain(`id="${name.toLowerCase()}"`);
    for (const anchor of ['redrive', 'spend-and-model-health', 'production-checklist', 'smoke-test']) {
      expect(answer.body, anchor).toContain(`id="${anchor}"`);
    }
    expect(answer.body).toContain('href="https://unpkg.com/countersign/docs/approvers.md#the-inbox"');
  });

  it('stamp the retention the construct sets on a run the bundled composition ends', async () => {
    // Prepare: a running run in dynalite; the bundle gets the retention as the construct sets it.
    const dynamo = await startDynalite();
    const retentionSeconds = 30 * 86_400;
    const runId = 'run-ending';
    await new DynamoRunRepository({
      client: dynamo.documentClient,
      tableName: dynamo.tableName,
    }).createRun(makeStoredRun(runId), Uint8Array.from([1, 2, 3]));
    await bundle(join(HANDLERS_DIRECTORY, 'finish-run.ts'), bundles.directory, 'finish-run');

    try {
      // Act
      const before = Math.floor(Date.now() / 1000);
      const answer = await invokeInFreshProcess(
        join(bundles.directory, 'finish-run.mjs'),
        { runId, turn: 0, executionId: 'arn:aws:states:us-east-1:111122223333:execution:m:run-ending' },
        {
          AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
          COUNTERSIGN_TABLE_NAME: dynamo.tableName,
          COUNTERSIGN_ENDED_RUN_RETENTION_SECONDS: String(retentionSeconds),
        },
      );
      const after = Math.ceil(Date.now() / 1000);
      const { Item } = await dynamo.documentClient.send(
        new GetCommand({
          TableName: dynamo.tableName,
          Key: { [TABLE_LAYOUT.partitionKey]: `RUN#${runId}`, [TABLE_LAYOUT.sortKey]: 'RUN' },
        }),
      );

      // Assess: the per-handler composition passes the retention on to the run repository.
      expect(answer).toEqual({ runId });
      expect(Item?.status).toBe('completed');
      const removeAfter = Item?.[TABLE_LAYOUT.timeToLiveAttribute] as number;
      expect(removeAfter).toBeGreaterThanOrEqual(before + retentionSeconds);
      expect(removeAfter).toBeLessThanOrEqual(after + retentionSeconds);
    } finally {
      await dynamo.stop();
    }
  });
});
