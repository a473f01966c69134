import { describe, expect, it } from 'vitest';
import { refusalOf } from '../support/api-answers.js';
import { useTestRuntime } from '../support/local-runtime.js';
import { decide, decideWithAnyBody, statusOf, waitingRun } from './approvers-support.js';

describe('approver decisions and the inbox over HTTP: every status code', () => {
  const runtime = useTestRuntime();

  describe('400 and 413: malformed and oversized decisions name the problem', () => {
    it.each([
      ['an unknown decision', 'body.decision', { digest: 'x', decision: 'maybe' }],
      ['no decision', 'body.decision', { digest: 'x' }],
      ['a digest that is not a string', 'body.digest', { digest: 42, decision: 'approve' }],
      ['an oversized digest', 'body.digest', { digest: 'd'.repeat(201), decision: 'approve' }],
      ['an oversized reason', 'body.reason', { digest: 'x', decision: 'reject', reason: 'r'.repeat(2001) }],
      ['an unknown field', 'body.approvedBy', { digest: 'x', decision: 'approve', approvedBy: 'me' }],
      ['a JSON array', 'body', []],
    ])('answers 400 for %s, naming %s', async (_name, field, body) => {
      // Prepare
      const { runId } = await waitingRun(runtime, "Set the author of page 12 to 'bad input'");

      // Act
      const response = await decideWithAnyBody(runtime, runId, body);

      // Assess
      expect(response.status).toBe(400);
      expect(response.json.error.code).toBe('bad-request');
      expect(response.json.error.field).toBe(field);
      expect(response.json.error.message.startsWith(`${field}:`)).toBe(true);
      expect(await statusOf(runtime, runId)).toBe('waiting');
    });

    it('answers 400 for a body that is not JSON', async () => {
      // Prepare
      const { runId } = await waitingRun(runtime, "Set the author of page 12 to 'not json'");

      // Act
      const response = await decideWithAnyBody(runtime, runId, '{"digest": ');

      // Assess
      expect(response.status).toBe(400);
      expect(response.json.error.message).toBe('body: not valid JSON.');
    });

    it('answers 413 for a decision body over 64 KiB, and the run keeps waiting', async () => {
      // Prepare
      const { runId, digest } = await waitingRun(runtime, "Set the author of page 12 to 'too large'");

      // Act
      const response = await decide(runtime, runId, {
        digest,
        decision: 'reject',
        reason: 'r'.repeat(70_000),
      });

      // Assess
      expect(response.status).toBe(413);
      expect(refusalOf(response).error.code).toBe('payload-too-large');
      expect(refusalOf(response).error.message).toBe('body: larger than 65536 bytes.');
      expect(await statusOf(runtime, runId)).toBe('waiting');
    });
  });
});
