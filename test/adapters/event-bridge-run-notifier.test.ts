import type { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { describe, expect, it } from 'vitest';
import { EventBridgeRunNotifier } from '../../lambdas/adapters/event-bridge-run-notifier.js';
import type { CardClosedEvent, ExternalRunAnsweredEvent } from '../../lambdas/core/ports.js';

/** A notifier whose PutEvents lands in `entries`, each entry's detail parsed. */
function recordingNotifier(): { notifier: EventBridgeRunNotifier; entries: Array<Record<string, unknown>> } {
  const entries: Array<Record<string, unknown>> = [];
  const client = {
    send: async (command: PutEventsCommand) => {
      for (const entry of command.input.Entries ?? []) {
        entries.push({ ...entry, Detail: JSON.parse(entry.Detail ?? 'null') });
      }
      return { FailedEntryCount: 0, Entries: [{ EventId: 'event-1' }] };
    },
  } as unknown as EventBridgeClient;
  return { notifier: new EventBridgeRunNotifier({ client, eventBusName: 'default' }), entries };
}

describe('EventBridgeRunNotifier details', () => {
  it('puts Card Closed with the run, turn, reason, time and groups, and nothing else the event holds', async () => {
    // Prepare: an event carrying a field the detail must not pass on
    const { notifier, entries } = recordingNotifier();
    const event: CardClosedEvent = {
      runId: 'run-1',
      turn: 3,
      because: 'decided',
      closedAt: '2026-01-01T00:00:00.000Z',
      approverGroups: ['finance'],
    };

    // Act
    await notifier.cardClosed({ ...event, sealedToken: 'secret' } as CardClosedEvent);

    // Assess
    expect(entries).toEqual([
      expect.objectContaining({ EventBusName: 'default', DetailType: 'Card Closed', Detail: event }),
    ]);
  });

  it('puts External Run Answered with the run, caller, configuration, outcome and calls, and nothing else', async () => {
    // Prepare
    const { notifier, entries } = recordingNotifier();
    const event: ExternalRunAnsweredEvent = {
      runId: 'run-2',
      owner: 'machine-client',
      configurationId: 'demo-external',
      status: 'decided',
      calls: [{ index: 0, tool: 'close_ticket', decision: 'approved' }],
    };

    // Act
    await notifier.externalRunAnswered({ ...event, reason: 'who decided' } as ExternalRunAnsweredEvent);

    // Assess
    expect(entries).toEqual([
      expect.objectContaining({ DetailType: 'External Run Answered', Detail: event }),
    ]);
  });
});
