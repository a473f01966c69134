import { describe, expect, it } from 'vitest';
import { refusalOf } from '../support/api-answers.js';
import { useTestRuntime } from '../support/local-runtime.js';

describe('admin input that no stored item could match', () => {
  const runtime = useTestRuntime();

  // Longer than any DynamoDB key allows: it must be answered before a read is tried.
  const longId = 'a'.repeat(3000);

  for (const kind of ['tasks', 'configurations'] as const) {
    it(`answers an attachment to a ${kind} id too long to exist with the 404 of an unknown one`, async () => {
      // Prepare
      const unknown = await runtime
        .client('admin')
        .attachSkills({ path: { owner: kind, id: 'no-such-id' }, body: { skillIds: [] } });

      // Act
      const tooLong = await runtime
        .client('admin')
        .attachSkills({ path: { owner: kind, id: longId }, body: { skillIds: [] } });

      // Assess
      expect(unknown.status).toBe(404);
      expect(tooLong.status).toBe(404);
      expect(refusalOf(tooLong).error.code).toBe('not-found');
    });
  }
});
