import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { UserProfile } from '../../lambdas/core/identity.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf, refusalOf } from '../support/api-answers.js';
import { apiClientWithToken, settle, useTestRuntime } from '../support/local-runtime.js';
import { createUser } from './approvers-support.js';

/**
 * Issue 10's bypass: a user holding agent_run and agent_approve chose a configuration without
 * four-eyes and approved their own write. Under a floor of `always` the configuration they
 * choose no longer matters.
 */
describe('policy the run owner cannot side-step', () => {
  const runtime = useTestRuntime({ policyFloor: { fourEyes: 'always' } });
  const selfApprover: UserProfile = {
    userId: 'self-approver',
    displayName: 'Sam Self',
    grants: ['agent_run', 'agent_approve'],
    pageAccess: '*',
    languageAccess: '*',
    toolAccess: ['update_page_metadata'],
  };
  const outsider: UserProfile = {
    ...selfApprover,
    userId: 'outsider',
    grants: ['agent_run'],
    groups: ['sales'],
  };
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    tokens[selfApprover.userId] = await createUser(runtime, selfApprover);
    tokens[outsider.userId] = await createUser(runtime, outsider);
  });

  /** The typed client with the token of a user this file created. */
  const as = (userId: string) => apiClientWithToken(runtime.url, tokens[userId] ?? '');

  async function waitingRunOf(userId: string, input: string, configurationId: string) {
    const started = await as(userId).startRun({ body: { configurationId, input } });
    expect(started.status).toBe(202);
    const runId = bodyOf(started).runId;
    const view = await eventuallyWaiting(runId, userId);
    return { runId, digest: view.digest as string, turn: view.turn as number };
  }

  async function eventuallyWaiting(runId: string, userId: string) {
    for (let attempt = 0; attempt < 600; attempt += 1) {
      const view = (await as(userId).getRun({ path: { id: runId } })).body;
      if (view && 'status' in view && view.status !== 'running') return view;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error('the run did not pause');
  }

  it('refuses the owner approving their own write under a floor of `always`, even with demo-scripted (403)', async () => {
    // Prepare: demo-scripted itself has four-eyes off
    const { runId, digest, turn } = await waitingRunOf(
      selfApprover.userId,
      "Set the keywords of page 12 to 'self approved'",
      'demo-scripted',
    );

    // Act
    const own = await as(selfApprover.userId).decideRun({
      path: { id: runId },
      body: { digest, decision: 'approve' },
    });
    const other = await runtime
      .client('approver')
      .decideRun({ path: { id: runId }, body: { digest, decision: 'approve' } });

    // Assess
    expect(own.status).toBe(403);
    expect(refusalOf(own).error.message).toBe(TEXTS.gateFourEyes);
    expect(other.status).toBe(200);
    expect((await settle(runtime, runId, 'admin', turn)).status).toBe('completed');
    expect((await runtime.dependencies.pages.getPage('12'))?.keywords).toBe('self approved');
  });

  it('refuses an outsider starting a run with a configuration whose access list leaves them out, naming it (403)', async () => {
    // Act: demo-record-gate admits the marketing group; the outsider is in sales
    const refused = await as(outsider.userId).startRun({
      body: { configurationId: 'demo-record-gate', input: "Set the keywords of page 12 to 'outsider'" },
    });
    const member = await runtime
      .client('editor')
      .startRun({ body: { configurationId: 'demo-record-gate', input: 'List the pages' } });

    // Assess
    expect(refused.status).toBe(403);
    expect(refusalOf(refused).error.message).toBe(
      TEXTS.startAccessRefused('configuration "demo-record-gate"'),
    );
    expect(member.status).toBe(202);
  });

  it('refuses a task whose own access list leaves the user out, even when its configuration admits them', async () => {
    // Prepare
    const written = await runtime.client('admin').putTask({
      path: { id: 'editors-only' },
      body: {
        taskId: 'editors-only',
        label: 'Editors only',
        configurationId: 'demo-scripted',
        promptTemplate: '{{input}}',
        startAccess: { users: ['editor'] },
      },
    });

    // Act
    const refused = await as(outsider.userId).startRun({
      body: { taskId: 'editors-only', input: 'List the pages' },
    });
    const allowed = await runtime
      .client('editor')
      .startRun({ body: { taskId: 'editors-only', input: 'List the pages' } });

    // Assess
    expect(written.status).toBe(200);
    expect(refused.status).toBe(403);
    expect(refusalOf(refused).error.message).toBe(TEXTS.startAccessRefused('task "editors-only"'));
    expect(allowed.status).toBe(202);
  });

  it.each([
    ['options.four_eyes', { options: { four_eyes: true } }],
    ['startAccess.user', { startAccess: { user: ['editor'] } }],
  ])('answers 400 naming %s for an unknown nested key, and stores nothing', async (path, extra) => {
    // Act (raw: an unknown nested key, on purpose)
    const response = await runtime.sendRaw('PUT', '/admin/configurations/misspelt', {
      as: 'admin',
      body: {
        configurationId: 'misspelt',
        label: 'Misspelt',
        provider: 'scripted',
        model: 'scripted-v1',
        ...extra,
      },
    });

    // Assess
    expect(response.status).toBe(400);
    expect(response.json.error.field).toBe(`body.${path}`);
    expect(response.json.error.message).toContain(path);
    expect((await runtime.client('admin').getConfiguration({ path: { id: 'misspelt' } })).status).toBe(404);
  });

  it('reports a stored configuration with unknown keys in the admin GET and the log, without reinterpreting them', async () => {
    // Prepare: a record written before strict schemas
    await runtime.dynamo.documentClient.send(
      new PutCommand({
        TableName: runtime.dynamo.tableName,
        Item: {
          pk: 'CONFIGURATIONS',
          sk: 'CONFIGURATION#legacy',
          configurationId: 'legacy',
          label: 'Legacy',
          provider: 'scripted',
          model: 'scripted-v1',
          options: { four_eyes: true },
        },
      }),
    );

    // Act
    const one = await runtime.client('admin').getConfiguration({ path: { id: 'legacy' } });
    const all = await runtime.client('admin').listConfigurations();

    // Assess
    expect(one.status).toBe(200);
    const stored = bodyOf(one);
    expect(stored.unknownKeys).toEqual(['options.four_eyes']);
    expect(stored.options.fourEyes).toBe(false);
    const listed = bodyOf(all).items.find((item) => item.configurationId === 'legacy');
    expect(listed?.unknownKeys).toEqual(['options.four_eyes']);
    const warnings = runtime.logLines.filter((line) =>
      line.includes('stored configuration has unknown keys'),
    );
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings[0]).toContain('options.four_eyes');
  });
});
