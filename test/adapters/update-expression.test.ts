import { describe, expect, it } from 'vitest';
import { UpdateExpression } from '../../lambdas/adapters/dynamo/update-expression.js';

describe('UpdateExpression', () => {
  it('names each attribute once, so a condition on a field the update sets shares its placeholder', () => {
    // Prepare
    const update = new UpdateExpression().set('status', 'running').remove('failure');

    // Act
    const input = update.toInput(`${update.name('status')} IN (${update.value('waiting')})`);

    // Assess
    expect(input).toEqual({
      UpdateExpression: 'SET #a0 = :v0 REMOVE #a1',
      ConditionExpression: '#a0 IN (:v1)',
      ExpressionAttributeNames: { '#a0': 'status', '#a1': 'failure' },
      ExpressionAttributeValues: { ':v0': 'running', ':v1': 'waiting' },
    });
  });

  it('leaves out the value map when nothing has a value, as DynamoDB refuses an empty one', () => {
    // Prepare
    const update = new UpdateExpression().remove('inboxPk').setWhenDefined('removeAfter', undefined);

    // Act
    const input = update.toInput();

    // Assess
    expect(input).toEqual({
      UpdateExpression: 'REMOVE #a0',
      ExpressionAttributeNames: { '#a0': 'inboxPk' },
    });
  });

  it('appends to a list that may not exist yet and adds to a set', () => {
    // Prepare
    const update = new UpdateExpression()
      .appendToList('audit', ['entry'])
      .addToSet('approvedBy', new Set(['ann']));

    // Act
    const input = update.toInput();

    // Assess
    expect(input.UpdateExpression).toBe('SET #a0 = list_append(if_not_exists(#a0, :v0), :v1) ADD #a1 :v2');
    expect(input.ExpressionAttributeValues).toEqual({ ':v0': [], ':v1': ['entry'], ':v2': new Set(['ann']) });
  });
});
