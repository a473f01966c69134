import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, refusalOf } from '../support/api-answers.js';
import {
  removeTestData,
  startRunAndSettle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';

/** A cursor with the right attribute names: only its values are the client's invention. */
function cursorOf(key: Record<string, string>): string {
  return Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
}

describe('a forged inbox cursor', () => {
  let runtime: TestRuntime;

  beforeAll(async () => {
    runtime = await startTestRuntime();
    await startRunAndSettle(runtime, "Set the description of page 12 to 'Spring sale'");
  });

  afterAll(async () => {
    await runtime.stop();
    await removeTestData(runtime);
  });

  const forged: Array<{ name: string; key: Record<string, string> }> = [
    { name: 'an empty sort key', key: { pk: 'RUN#x', sk: 'CARD', inboxPk: 'WAITING', inboxSk: '' } },
    { name: 'an empty run id', key: { pk: 'RUN#', sk: 'CARD', inboxPk: 'WAITING', inboxSk: 'a' } },
    {
      name: 'a sort key over the 1024 bytes DynamoDB allows',
      key: { pk: 'RUN#x', sk: 'CARD', inboxPk: 'WAITING', inboxSk: 'x'.repeat(1400) },
    },
  ];

  for (const testCase of forged) {
    it(`with ${testCase.name} is a 400 naming the cursor, never a 500`, async () => {
      // Act
      const response = await runtime
        .client('approver')
        .listInbox({ query: { cursor: cursorOf(testCase.key) } });

      // Assess
      expect(response.status).toBe(400);
      expect(refusalOf(response).error).toEqual({
        code: 'bad-request',
        message: 'The cursor is not valid.',
        field: 'cursor',
      });
    });
  }

  it('still pages with a cursor the inbox handed out', async () => {
    // Prepare
    await startRunAndSettle(runtime, "Set the description of page 14 to 'Autumn sale'");
    const first = await runtime.client('approver').listInbox({ query: { limit: 1 } });

    // Act
    const second = await runtime
      .client('approver')
      .listInbox({ query: { limit: 1, cursor: bodyOf(first).cursor } });

    // Assess
    expect(second.status).toBe(200);
    expect(bodyOf(second).cards).toHaveLength(1);
    expect(bodyOf(second).cards[0]?.runId).not.toBe(bodyOf(first).cards[0]?.runId);
  });
});
