import { describe, expect, it } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import { settle, useTestRuntime } from '../support/local-runtime.js';
import { sendRequest, signTokenWithRuntimeKey } from './approvers-support.js';

describe('a user the identity provider knows but countersign has no record of', () => {
  const runtime = useTestRuntime();
  const startRun = (token: string) =>
    sendRequest(runtime.url, 'POST', '/runs', {
      token,
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
    expect(refused.json.error.message).toBe(TEXTS.noUserRecord('idp-only'));
    expect(refused.json.error.message).toContain('PUT /admin/users/idp-only');
    expect(refused.json.runId).toBeUndefined();
    expect(runtime.runner.runningCount()).toBe(executionsBefore);
  });

  it('starts a run that completes once an admin has created the record', async () => {
    // Prepare
    const token = await signTokenWithRuntimeKey(runtime, { sub: 'idp-later', groups: ['agent_run'] });
    const created = await runtime.sendRaw('PUT', '/admin/users/idp-later', {
      as: 'admin',
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
    const finished = await settle(runtime, started.json.runId, 'admin');

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
    const inbox = await sendRequest(runtime.url, 'GET', '/inbox', { token: approver });
    const refused = await sendRequest(runtime.url, 'GET', '/inbox', { token: stranger });

    // Assess
    expect(inbox.status).toBe(200);
    expect(refused.status).toBe(403);
  });
});
