import { describe, expect, it } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf, openedCard, refusalOf } from '../support/api-answers.js';
import { apiClientWithToken, settle, useTestRuntime } from '../support/local-runtime.js';
import { createUser, decide, signTokenWithRuntimeKey, statusOf, waitingRun } from './approvers-support.js';

describe('approver decisions and the inbox over HTTP: every status code', () => {
  const runtime = useTestRuntime();

  describe('403: the grant, then each gate of the decision', () => {
    it('refuses a decision from a user without agent_approve, naming the grant', async () => {
      // Prepare
      const { runId, digest } = await waitingRun(runtime, "Set the keywords of page 12 to 'grant'");

      // Act
      const response = await decide(runtime, runId, { digest, decision: 'approve' }, 'editor');

      // Assess
      expect(response.status).toBe(403);
      expect(refusalOf(response).error.message).toBe(TEXTS.grantRefused('agent_approve'));
      expect(await statusOf(runtime, runId)).toBe('waiting');
    });

    it('refuses approval from an approver without authority over the tool, but lets them reject', async () => {
      // Prepare
      const token = await createUser(runtime, {
        userId: 'approver-without-tools',
        displayName: 'No Tools',
        grants: ['agent_approve'],
        pageAccess: '*',
        languageAccess: '*',
        toolAccess: [],
      });
      const { runId, digest, turn } = await waitingRun(runtime, "Set the keywords of page 12 to 'tool gate'");

      // Act
      const approval = await apiClientWithToken(runtime.url, token).decideRun({
        path: { id: runId },
        body: { digest, decision: 'approve' },
      });
      const statusAfterRefusal = await statusOf(runtime, runId);
      const recordAfterRefusal = await runtime.dependencies.runs.getDecision(runId, turn);
      const rejection = await apiClientWithToken(runtime.url, token).decideRun({
        path: { id: runId },
        body: { digest, decision: 'reject' },
      });

      // Assess
      expect(approval.status).toBe(403);
      expect(refusalOf(approval).error.message).toBe(TEXTS.gateToolRefused('update_page_metadata'));
      expect(refusalOf(approval).error.message).toMatch(/^Decision gate refused/);
      expect(statusAfterRefusal).toBe('waiting');
      expect(recordAfterRefusal).toBeUndefined();
      expect(rejection.status).toBe(200);
      expect((await settle(runtime, runId, 'admin', turn)).status).toBe('completed');
    });

    it('refuses self-approval under the demo-four-eyes configuration, and another approver may approve', async () => {
      // Prepare: the admin holds every grant, so only four-eyes can refuse them.
      const { runId, digest, turn } = await waitingRun(
        runtime,
        "Set the keywords of page 12 to 'four eyes'",
        {
          as: 'admin',
          configurationId: 'demo-four-eyes',
        },
      );

      // Act
      const selfApproval = await decide(runtime, runId, { digest, decision: 'approve' }, 'admin');
      const statusAfterRefusal = await statusOf(runtime, runId);
      const otherApproval = await decide(runtime, runId, { digest, decision: 'approve' }, 'approver');

      // Assess
      expect(selfApproval.status).toBe(403);
      expect(refusalOf(selfApproval).error.message).toBe(TEXTS.gateFourEyes);
      expect(statusAfterRefusal).toBe('waiting');
      expect(otherApproval.status).toBe(200);
      expect((await settle(runtime, runId, 'admin', turn)).status).toBe('completed');
    });

    it('gives a signed-in user without a user record the grants of their groups and no tool authority', async () => {
      // Prepare
      const token = await signTokenWithRuntimeKey(runtime, { sub: 'group-only', groups: ['agent_approve'] });
      const { runId, digest } = await waitingRun(runtime, "Set the keywords of page 12 to 'groups'");

      // Act
      const inbox = await apiClientWithToken(runtime.url, token).listInbox({ query: { limit: 100 } });
      const approval = await apiClientWithToken(runtime.url, token).decideRun({
        path: { id: runId },
        body: { digest, decision: 'approve' },
      });

      // Assess
      const card = openedCard(bodyOf(inbox).cards.find((candidate) => candidate.runId === runId));
      expect(inbox.status).toBe(200);
      expect(card.pendingTools[0]?.preview.status).toBe('withheld');
      expect(approval.status).toBe(403);
      expect(refusalOf(approval).error.message).toBe(TEXTS.gateToolRefused('update_page_metadata'));
    });
  });
});
