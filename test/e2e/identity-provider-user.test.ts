import { describe, expect, it } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf, refusalOf } from '../support/api-answers.js';
import { apiClientWithToken, settle, useTestRuntime } from '../support/local-runtime.js';
import { signTokenWithRuntimeKey } from './approvers-support.js';

describe('a user the identity provider knows but countersign has no record of', () => {
  const runtime = useTestRuntime();
  const startRun = (token: string) =>
    apiClientWithToken(runtime.url, token).startRun({
      body: { taskId: 'page-metadata', input: 'What is on page 12?' },
    });

  it('is refused at the start (403 naming the missing record), not handed a run that cannot finish', async () => {
    // Prepare: groups map agent_run (the local issuer's own groups), but there is no user record
    const token = await signTokenWithRuntimeKey(runtime, { sub: 'idp-only', groups: ['agent_run'] });
    const executionsBefore = runtime.runner.runningCount();

    // Act
    const refused = await startRun(token);

    // Assess
    expect(refused.status).toBe(403);
    expect(refusalOf(refused).error.message).toBe(TEXTS.noUserRecord('idp-only'));
    expect(refusalOf(refused).error.message).toContain('PUT /admin/users/idp-only');
    expect(refused.body).not.toHaveProperty('runId');
    expect(runtime.runner.runningCount()).toBe(executionsBefore);
  });

  it('starts a run that completes once an admin has created the record', async () => {
    // Prepare
    const token = await signTokenWithRuntimeKey(runtime, { sub: 'idp-later', groups: ['agent_run'] });
    const created = await runtime.client('admin').putUser({
      path: { id: 'idp-later' },
      body: {
        userId: 'idp-later',
        displayName: 'Later',
        grants: ['agent_run'],
        pageAccess: ['12'],
        languageAccess: '*',
      },
    });

    // Act
    const started = await startRun(token);
    const finished = await settle(runtime, bodyOf(started).runId, 'admin');

    // Assess
    expect(created.status).toBe(200);
    expect(started.status).toBe(202);
    expect(finished.status).toBe('completed');
    expect(finished.transcript.finalAnswer).toContain('get_page succeeded');
  });

  it('still reads the inbox with a mapped approver group, and gets nothing from an unmapped one', async () => {
    // Prepare
    const approver = await signTokenWithRuntimeKey(runtime, {
      sub: 'idp-approver',
      groups: ['agent_approve'],
    });
    const stranger = await signTokenWithRuntimeKey(runtime, { sub: 'idp-stranger', groups: ['approvers'] });

    // Act
    const inbox = await apiClientWithToken(runtime.url, approver).listInbox();
    const refused = await apiClientWithToken(runtime.url, stranger).listInbox();

    // Assess
    expect(inbox.status).toBe(200);
    expect(refused.status).toBe(403);
  });
});
