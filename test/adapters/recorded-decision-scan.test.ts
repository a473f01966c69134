import { readFileSync } from 'node:fs';
import { PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPolicyReplay } from '../../bin/policy-replay.js';
import { DynamoConfigurationRepository } from '../../lambdas/adapters/dynamo/configuration-repository.js';
import { DynamoRecordedDecisions } from '../../lambdas/adapters/dynamo/recorded-decision-scan.js';
import { decisionItemKey, runItemKey } from '../../lambdas/adapters/dynamo/run-item-keys.js';
import { userItemKey } from '../../lambdas/adapters/dynamo/user-directory.js';
import { configurationSchema } from '../../lambdas/core/configurations.js';
import { silentLogger } from '../../lambdas/core/ports.js';
import { type RunningDynalite, startDynalite } from '../support/dynalite.js';

const recorded = JSON.parse(
  readFileSync(new URL('../fixtures/policy-replay/recorded-decisions.json', import.meta.url), 'utf8'),
) as {
  decisions: Array<{ runId: string; turn: number }>;
  runs: Array<{ runId: string }>;
  users: Array<{ userId: string }>;
  configurations: unknown[];
};

/** The policy replay against a table, as against a deployment: the Scan adapter and the CLI's --table. */
describe('the recorded decisions on DynamoDB (dynalite)', () => {
  let dynamo: RunningDynalite;
  const environment = { ...process.env };

  beforeAll(async () => {
    dynamo = await startDynalite();
    const put = (item: Record<string, unknown>) =>
      dynamo.documentClient.send(new PutCommand({ TableName: dynamo.tableName, Item: item }));
    for (const decision of recorded.decisions)
      await put({ ...decision, ...decisionItemKey(decision.runId, decision.turn) });
    // A cancel decided nothing: never replayed.
    await put({
      ...recorded.decisions[0],
      runId: 'run-cancelled',
      decision: 'cancel',
      ...decisionItemKey('run-cancelled', 1),
    });
    for (const run of recorded.runs) await put({ ...run, ...runItemKey(run.runId) });
    for (const user of recorded.users) await put({ ...user, ...userItemKey(user.userId) });
    const configurations = new DynamoConfigurationRepository({
      client: dynamo.documentClient,
      tableName: dynamo.tableName,
      logger: silentLogger,
    });
    for (const configuration of recorded.configurations) {
      await configurations.putConfiguration(configurationSchema.parse(configuration));
    }
  });

  afterAll(async () => {
    process.env = environment;
    await dynamo.stop();
  });

  it('scans decision items since a time, page by page, leaving out cancels and older ones', async () => {
    // Prepare
    const source = new DynamoRecordedDecisions({
      client: dynamo.documentClient,
      tableName: dynamo.tableName,
    });

    // Act
    const pages: string[][] = [];
    for await (const page of source.pages({ since: new Date('2026-02-11T00:00:00.000Z'), pageSize: 3 })) {
      pages.push(page.map((record) => record.runId));
    }

    // Assess
    expect(pages.flat().sort()).toEqual(['run-finance', 'run-gone', 'run-self', 'run-two']);
    expect(pages.length).toBeGreaterThan(1);
  });

  it('replays with --table through the AWS SDK’s default configuration, and writes nothing', async () => {
    // Prepare: the SDK's own endpoint and credential variables point it at dynalite
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    });
    const before = await dynamo.documentClient.send(new ScanCommand({ TableName: dynamo.tableName }));
    const out: string[] = [];

    // Act
    const status = await runPolicyReplay(
      [
        '--policy',
        new URL('../fixtures/policy-replay/four-eyes-floor.json', import.meta.url).pathname,
        '--table',
        dynamo.tableName,
        '--region',
        'us-east-1',
        '--days',
        '3650',
      ],
      {
        print: (line) => out.push(line),
        printError: (line) => out.push(line),
        now: () => new Date('2026-03-01T00:00:00.000Z'),
        baseDirectory: process.cwd(),
      },
    );
    const after = await dynamo.documentClient.send(new ScanCommand({ TableName: dynamo.tableName }));

    // Assess
    expect(status).toBe(0);
    expect(out.join('\n')).toContain('refused: four-eyes (the run’s owner approved it)');
    expect(out.at(-1)).toBe(
      '4 decisions replayed: 1 would have been refused, 1 needed more approvers, 0 needed the record check, 0 gone to another group; 2 unaffected. 1 decision of a run no longer kept was left out.',
    );
    expect(after.Items).toEqual(before.Items);
  });
});
