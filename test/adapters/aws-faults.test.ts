import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTransientAwsFault, surfaceTransientFaults } from '../../lambdas/adapters/aws-faults.js';
import { type CountersignError, isCountersignError } from '../../lambdas/core/errors.js';
import { type RunningDynalite, startDynalite } from '../support/dynalite.js';
import { injectFault } from '../support/fault-seams.js';

describe('transient AWS faults', () => {
  let dynamo: RunningDynalite;

  beforeAll(async () => {
    dynamo = await startDynalite();
    surfaceTransientFaults(dynamo.client);
  });

  afterAll(async () => {
    await dynamo.stop();
  });

  const put = (sk: string, condition?: string) =>
    dynamo.documentClient.send(
      new PutCommand({
        TableName: dynamo.tableName,
        Item: { pk: 'FAULTS', sk },
        ...(condition ? { ConditionExpression: condition } : {}),
      }),
    );

  it('reach the core as `unavailable` once the SDK gave up, with the SDK error as the cause', async () => {
    // Prepare
    const fault = injectFault(dynamo.client, { command: 'PutItem', when: 'before-applied' });

    // Act
    const error = await put('one').then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    fault.remove();

    // Assess
    expect(isCountersignError(error, 'unavailable')).toBe(true);
    expect(((error as CountersignError).cause as Error).name).toBe('ThrottlingException');
  });

  it('are retried by the SDK itself first: a fault it can retry never reaches the caller', async () => {
    // Prepare
    const fault = injectFault(dynamo.client, {
      command: 'PutItem',
      when: 'before-applied',
      layer: 'inside-sdk-retries',
    });

    // Act
    await put('two');
    fault.remove();

    // Assess
    expect(fault.fired()).toBe(1);
  });

  it('leave every other error as it is: a failed condition is the caller’s to read', async () => {
    // Prepare
    await put('three');

    // Act
    const error = await put('three', 'attribute_not_exists(pk)').then(
      () => undefined,
      (thrown: unknown) => thrown,
    );

    // Assess
    expect((error as Error).name).toBe('ConditionalCheckFailedException');
    expect(isTransientAwsFault(error)).toBe(false);
  });

  it.each([
    ['ThrottlingException', { $metadata: { httpStatusCode: 400 } }, true],
    ['ProvisionedThroughputExceededException', { $metadata: { httpStatusCode: 400 } }, true],
    ['RequestLimitExceeded', {}, true],
    ['ServiceUnavailable', { $metadata: { httpStatusCode: 503 } }, true],
    ['TimeoutError', {}, true],
    ['ValidationException', { $metadata: { httpStatusCode: 400 } }, false],
    ['AccessDeniedException', { $metadata: { httpStatusCode: 400 } }, false],
  ])('classifies %s as transient: %s', (name, fields, transient) => {
    expect(isTransientAwsFault(Object.assign(new Error(name), { name, ...fields }))).toBe(transient);
  });
});
