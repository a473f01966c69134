import type { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventBridgeRunNotifier } from '../../lambdas/adapters/event-bridge-run-notifier.js';
import {
  removeTestData,
  startRunAndSettle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';

describe('Run Awaiting Approval notifications', () => {
  let runtime: TestRuntime;

  beforeAll(async () => {
    runtime = await startTestRuntime();
    await runtime.dependencies.pages.updateMetadata('12', { description: 'Old-description-text' }, 'test');
  });

  afterAll(async () => {
    await runtime.stop();
    await removeTestData(runtime);
  });

  it("announces each suspension with the run id, tool names, paused at and the card's own address, and nothing else", async () => {
    // Prepare
    const { runId, view } = await startRunAndSettle(
      runtime,
      "Set the description of page 12 to 'Secret-new-description'",
    );
    const sent: PutEventsCommand['input'][] = [];
    const client = {
      send: async (command: PutEventsCommand) => {
        sent.push(command.input);
        return { FailedEntryCount: 0, Entries: [{ EventId: 'event-1' }] };
      },
    } as unknown as EventBridgeClient;
    const inboxUrl = `${runtime.url}/`;
    const notifier = new EventBridgeRunNotifier({ client, eventBusName: 'default', inboxUrl });

    // Act: the event the await-approval use case emitted, through the deployed adapter
    const emitted = runtime.notifications.filter((notification) => notification.runId === runId);
    for (const notification of emitted) await notifier.runAwaitingApproval(notification);

    // Assess
    expect(view.status).toBe('waiting');
    const cardUrl = `${runtime.url}/inbox/runs/${runId}`;
    expect(emitted).toEqual([
      {
        runId,
        toolNames: ['update_page_metadata'],
        pausedAt: view.pausedAt,
        approverGroups: [],
        reason: 'paused',
        cardUrl,
      },
    ]);
    expect(sent).toHaveLength(1);
    const entry = sent[0]?.Entries?.[0];
    expect(entry).toMatchObject({
      EventBusName: 'default',
      Source: 'countersign',
      DetailType: 'Run Awaiting Approval',
    });
    const detail = JSON.parse(entry?.Detail ?? '{}');
    expect(Object.keys(detail).sort()).toEqual([
      'approverGroups',
      'cardUrl',
      'pausedAt',
      'reason',
      'runId',
      'toolNames',
    ]);
    expect(detail).toEqual({
      runId,
      toolNames: ['update_page_metadata'],
      pausedAt: view.pausedAt,
      approverGroups: [],
      reason: 'paused',
      cardUrl,
    });
    // The address opens the page (the shell, which signs the viewer in and then opens the card).
    const opened = await fetch(cardUrl);
    expect(opened.status).toBe(200);
    expect(opened.headers.get('content-type')).toMatch(/^text\/html/);
    // No arguments, no preview (old value), no token: nothing of the card travels.
    const serialized = JSON.stringify(sent);
    expect(serialized).not.toContain('Secret-new-description');
    expect(serialized).not.toContain('Old-description-text');
    expect(serialized).not.toMatch(/token|digest|arguments|preview/i);
  });

  it('fails loudly when EventBridge refuses the event', async () => {
    // Prepare
    const client = {
      send: async () => ({ FailedEntryCount: 1, Entries: [{ ErrorCode: 'InternalFailure' }] }),
    } as unknown as EventBridgeClient;
    const notifier = new EventBridgeRunNotifier({ client, eventBusName: 'default' });

    // Act
    const notify = notifier.runAwaitingApproval({
      runId: 'run-1',
      toolNames: ['update_page_metadata'],
      pausedAt: '2026-01-01T00:00:00.000Z',
      approverGroups: [],
      reason: 'paused',
    });

    // Assess
    await expect(notify).rejects.toThrow('EventBridge refused the Run Awaiting Approval event.');
  });
});
