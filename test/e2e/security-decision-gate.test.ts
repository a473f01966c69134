import { describe, expect, it } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import { refusalOf } from '../support/api-answers.js';
import { apiClientWithToken, settle, startRunAndSettle, useTestRuntime } from '../support/local-runtime.js';
import { decide, signTokenWithRuntimeKey } from './approvers-support.js';

describe('the decision gate on a repeated approval', () => {
  const runtime = useTestRuntime();

  async function approvedRun(input: string, options: { as?: string; configurationId?: string } = {}) {
    const { runId, view } = await startRunAndSettle(runtime, input, options);
    expect(view.status).toBe('waiting');
    const approval = await decide(runtime, runId, { digest: view.digest, decision: 'approve' }, 'approver');
    expect(approval.status).toBe(200);
    return { runId, digest: view.digest as string, turn: view.turn as number };
  }

  it('refuses the run owner repeating an approval under four-eyes, as it refused them before', async () => {
    // Prepare: the admin owns the run; another approver released it.
    const { runId, digest, turn } = await approvedRun("Set the keywords of page 12 to 'four eyes'", {
      as: 'admin',
      configurationId: 'demo-four-eyes',
    });

    // Act
    const repeated = await decide(runtime, runId, { digest, decision: 'approve' }, 'admin');

    // Assess
    expect(repeated.status).toBe(403);
    expect(refusalOf(repeated).error.message).toBe(TEXTS.gateFourEyes);
    expect((await settle(runtime, runId, 'admin', turn)).status).toBe('completed');
  });

  it('refuses an approver without authority over the tool repeating an approval', async () => {
    // Prepare: a signed-in approver with no user record has the grant but no tool authority.
    const { runId, digest } = await approvedRun("Set the keywords of page 12 to 'no authority'");
    const token = await signTokenWithRuntimeKey(runtime, { sub: 'gate-less', groups: ['agent_approve'] });

    // Act
    const repeated = await apiClientWithToken(runtime.url, token).decideRun({
      path: { id: runId },
      body: { digest, decision: 'approve' },
    });

    // Assess
    expect(repeated.status).toBe(403);
    expect(refusalOf(repeated).error.message).toBe(TEXTS.gateToolRefused('update_page_metadata'));
  });

  it('still answers the approver who released the turn with the same decision, marked repeated', async () => {
    // Prepare
    const { runId, digest } = await approvedRun("Set the keywords of page 12 to 'again'");

    // Act
    const repeated = await decide(runtime, runId, { digest, decision: 'approve' }, 'approver');

    // Assess
    expect(repeated.status).toBe(200);
    expect(repeated.body).toMatchObject({ decision: 'approve', repeated: true });
  });
});
