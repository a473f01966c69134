import { afterEach, describe, expect, it, vi } from 'vitest';
import { ERROR_NAMES } from '../../lambdas/contract/state-names.js';
import {
  replaceTaskTokenPlaceholder,
  TASK_TOKEN_PLACEHOLDER,
  TaskTokenBroker,
} from '../../lambdas/local/task-token-broker.js';

const A_MINUTE = { expiresInMilliseconds: 60_000, failsAtExpiry: false };

describe('TaskTokenBroker', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('delivers a decision once per token and answers false for a used or unknown one', async () => {
    // Prepare
    const broker = new TaskTokenBroker<string>(() => {});
    const { taskToken, decision } = broker.open('execution-1', A_MINUTE);

    // Act
    const first = broker.deliver(taskToken, { kind: 'approve' });
    const second = broker.deliver(taskToken, { kind: 'approve' });
    const unknown = broker.deliver('not-a-token', { kind: 'approve' });

    // Assess
    expect([first, second, unknown]).toEqual([true, false, false]);
    await expect(decision).resolves.toEqual({ decision: 'approve' });
    expect(taskToken).toMatch(/^[A-Za-z0-9_-]{64}$/);
  });

  it('fails a rejected wait with countersign.Rejected and the reason', async () => {
    // Prepare
    const broker = new TaskTokenBroker<string>(() => {});
    const { taskToken, decision } = broker.open('execution-1', A_MINUTE);

    // Act
    broker.deliver(taskToken, { kind: 'reject', reason: 'Wrong page.' });

    // Assess
    await expect(decision).rejects.toMatchObject({ name: ERROR_NAMES.rejected, message: 'Wrong page.' });
  });

  it('stops the waits of the executions named, and only those', async () => {
    // Prepare
    const broker = new TaskTokenBroker<string>(() => {});
    const stopped = broker.open('execution-1', A_MINUTE);
    const kept = broker.open('execution-2', A_MINUTE);

    // Act
    broker.stopWaits((execution) => execution === 'execution-1');

    // Assess
    await expect(stopped.decision).rejects.toMatchObject({ name: ERROR_NAMES.aborted });
    expect(broker.deliver(stopped.taskToken, { kind: 'approve' })).toBe(false);
    expect(broker.deliver(kept.taskToken, { kind: 'approve' })).toBe(true);
  });

  it('spends a token at expiry, and fails the wait only when it was cut short', async () => {
    // Prepare
    vi.useFakeTimers();
    const broker = new TaskTokenBroker<string>(() => {});
    const cutShort = broker.open('execution-1', { expiresInMilliseconds: 1_000, failsAtExpiry: true });
    const libraryTimed = broker.open('execution-2', { expiresInMilliseconds: 1_000, failsAtExpiry: false });
    let libraryTimedSettled = false;
    libraryTimed.decision.then(
      () => {
        libraryTimedSettled = true;
      },
      () => {
        libraryTimedSettled = true;
      },
    );

    // Act
    await vi.advanceTimersByTimeAsync(1_000);

    // Assess
    await expect(cutShort.decision).rejects.toMatchObject({ name: ERROR_NAMES.timeout });
    expect(libraryTimedSettled).toBe(false);
    expect(broker.deliver(libraryTimed.taskToken, { kind: 'approve' })).toBe(false);
  });

  it('counts parked waits per execution and tells when a wait parks or leaves', () => {
    // Prepare
    let changes = 0;
    const broker = new TaskTokenBroker<string>(() => {
      changes += 1;
    });
    const first = broker.open('execution-1', A_MINUTE);
    broker.open('execution-1', A_MINUTE);

    // Act
    broker.park(first.taskToken);
    const parkedBefore = broker.parkedWaitsOf('execution-1');
    broker.withdraw(first.taskToken);

    // Assess
    expect(parkedBefore).toBe(1);
    expect(broker.parkedWaitsOf('execution-1')).toBe(0);
    expect(changes).toBe(2);
  });

  it('puts the token where the definition passed the placeholder, at any depth', () => {
    // Act
    const payload = replaceTaskTokenPlaceholder(
      { Payload: { runId: 'run-1', taskToken: TASK_TOKEN_PLACEHOLDER, list: [TASK_TOKEN_PLACEHOLDER] } },
      'token-1',
    );

    // Assess
    expect(payload).toEqual({ Payload: { runId: 'run-1', taskToken: 'token-1', list: ['token-1'] } });
  });
});
