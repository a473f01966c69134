import { describe, expect, it } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import { apiClientWithToken, startRunAndSettle, useTestRuntime } from '../support/local-runtime.js';
import { decide, signTokenWithRuntimeKey, waitingRun } from './approvers-support.js';

describe('approver decisions and the inbox over HTTP: every status code', () => {
  const runtime = useTestRuntime();

  describe('404: unknown runs and runs the viewer may not see get the same answer', () => {
    it('answers a decision on an unknown run, a malformed id and a run that never paused alike', async () => {
      // Prepare
      const { runId: readOnlyRun, view } = await startRunAndSettle(runtime, 'What is on page 12?');
      expect(view.status).toBe('completed');

      // Act
      const unknown = await decide(runtime, 'a8c5a3f0-0000-4000-8000-000000000000', {
        digest: 'x',
        decision: 'approve',
      });
      const malformed = await decide(runtime, 'not_a*run', { digest: 'x', decision: 'approve' });
      const neverPaused = await decide(runtime, readOnlyRun, { digest: 'x', decision: 'approve' });

      // Assess
      for (const response of [unknown, malformed, neverPaused]) {
        expect(response.status).toBe(404);
        expect(response.body).toEqual({ error: { code: 'not-found', message: TEXTS.runNotFound } });
      }
    });

    it("answers GET /runs/{id} and its audit of someone else's run exactly like an unknown run, unless the viewer could decide it", async () => {
      // Prepare: a signed-in user who may start runs but approves nothing
      const { runId } = await waitingRun(runtime, "Set the keywords of page 12 to 'not yours'");
      const stranger = apiClientWithToken(
        runtime.url,
        await signTokenWithRuntimeKey(runtime, { sub: 'stranger', groups: ['agent_run'] }),
      );
      const unknownId = 'a8c5a3f0-0000-4000-8000-000000000001';

      // Act
      const notVisible = await stranger.getRun({ path: { id: runId } });
      const unknown = await stranger.getRun({ path: { id: unknownId } });
      const auditNotVisible = await stranger.getRunAudit({ path: { id: runId } });
      const auditUnknown = await stranger.getRunAudit({ path: { id: unknownId } });
      const asApprover = await runtime.client('approver').getRun({ path: { id: runId } });

      // Assess
      expect(notVisible.status).toBe(404);
      expect(unknown.status).toBe(404);
      expect(notVisible.text).toBe(unknown.text);
      expect(auditNotVisible.status).toBe(404);
      expect(auditNotVisible.text).toBe(auditUnknown.text);
      // The card went to every approver: an approver who could decide it reads the run.
      expect(asApprover.status).toBe(200);
    });
  });
});
