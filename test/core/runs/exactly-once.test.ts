import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../../lambdas/core/errors.js';
import { withReceiptRecording } from '../../../lambdas/core/receipts/receipt-recording.js';
import type { RunRecord } from '../../../lambdas/core/run-record.js';
import { awaitApproval } from '../../../lambdas/core/runs/await-approval.js';
import { decideRun } from '../../../lambdas/core/runs/decide-run.js';
import { executeTools } from '../../../lambdas/core/runs/execute-tools.js';
import { loadRun, unsealRunState } from '../../../lambdas/core/runs/load-run.js';
import {
  redeliverDecisions,
  UNDELIVERED_DECISION_AGE_MS,
} from '../../../lambdas/core/runs/redeliver-decisions.js';
import { RUN_STATE_SCHEMA_VERSION, type RunState } from '../../../lambdas/core/runs/run-state.js';
import { sealJson } from '../../../lambdas/core/sealed-json.js';
import { InMemoryPageStore } from '../../support/in-memory-page-store.js';
import {
  APPROVER,
  createHarness,
  digestShownTo,
  OWNER,
  PAGE_ID,
  person,
  refusalOf,
  START,
  startPausedRun,
  type UseCaseHarness,
} from './use-case-harness.js';

const unavailable = () => new CountersignError('unavailable', 'A service is busy.');

/** The decision as api-decision makes it: its claim followed by its receipt entry, which the probe checks. */
const asDecidingFunction = (harness: UseCaseHarness) => withReceiptRecording(harness.dependencies, 'sign');

describe('a retried pause (AwaitApproval)', () => {
  it('keeps the card an approver may be deciding on, seals the new token, and sends its one event', async () => {
    // Prepare: the first attempt put the card, then failed marking the run waiting.
    const harness = createHarness();
    const updateRun = harness.runs.updateRun.bind(harness.runs);
    let failed = false;
    harness.runs.updateRun = async (runId, changes, options) => {
      if (!failed && changes.status === 'waiting') {
        failed = true;
        throw unavailable();
      }
      return updateRun(runId, changes, options);
    };
    const paused = await startPausedRun(harness).catch(() => undefined);
    const [first] = (await harness.runs.listWaitingCards({ limit: 10 })).cards;

    // Act
    const retried = await awaitApproval(harness.dependencies, {
      runId: first?.runId ?? '',
      turn: first?.turn ?? -1,
      taskToken: 'task-token-retry',
    });
    const card = await harness.runs.getCard(first?.runId ?? '');

    // Assess
    expect(paused).toBeUndefined();
    expect(retried).toEqual({ kind: 'waiting' });
    expect(card).toMatchObject({
      digest: first?.digest,
      pausedAt: first?.pausedAt,
      state: 'open',
      notification: 'sent',
    });
    expect(card?.waitId).not.toBe(first?.waitId);
    expect(await harness.runs.getRunRecord(first?.runId ?? '')).toMatchObject({ status: 'waiting' });
    expect(harness.notifier.events).toHaveLength(1);
  });

  it('carries on a decision already on record instead of reopening the card', async () => {
    // Prepare: decided while the pause was being retried (the first attempt's token is spent).
    const harness = createHarness();
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, APPROVER, paused.runId);
    await decideRun(asDecidingFunction(harness), APPROVER, paused.runId, { decision: 'reject', digest });

    // Act
    const retried = await awaitApproval(harness.dependencies, {
      runId: paused.runId,
      turn: paused.turn,
      taskToken: 'task-token-retry',
    });

    // Assess
    expect(retried).toEqual({ kind: 'decided', decision: 'reject' });
    expect(await harness.runs.getCard(paused.runId)).toMatchObject({
      state: 'closed',
      closedBecause: 'decided',
    });
    expect(await harness.runs.listUndeliveredDecisions({ decidedBefore: '9999', limit: 10 })).toEqual([]);
    expect(harness.notifier.events).toHaveLength(1);
  });

  it('carries no decision on without its receipt entry: it re-enters the wait, and the repeat appends and delivers', async () => {
    // Prepare: the decision is claimed, then signing its entry fails (issue #25: two faults)
    const harness = createHarness();
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, APPROVER, paused.runId);
    const signer = harness.dependencies.receipts.signer as NonNullable<
      typeof harness.dependencies.receipts.signer
    >;
    const sign = signer.sign.bind(signer);
    signer.sign = async () => {
      throw unavailable();
    };
    const failed = decideRun(asDecidingFunction(harness), APPROVER, paused.runId, {
      decision: 'approve',
      digest,
    });
    await expect(failed).rejects.toMatchObject({ code: 'unavailable' });
    signer.sign = sign;

    // Act
    const retried = await awaitApproval(harness.dependencies, {
      runId: paused.runId,
      turn: paused.turn,
      taskToken: 'task-token-retry',
    });
    const cardWhileMissing = await harness.runs.getCard(paused.runId);
    harness.clock.advance(31_000);
    const repeat = await decideRun(asDecidingFunction(harness), APPROVER, paused.runId, {
      decision: 'approve',
      digest,
    });

    // Assess
    expect(retried).toEqual({ kind: 'waiting' });
    expect(cardWhileMissing).toMatchObject({ state: 'open', turn: paused.turn });
    expect(repeat).toMatchObject({ kind: 'decided', decision: 'approve' });
    expect(harness.executions.resumed).toEqual([
      { taskToken: 'task-token-retry', decision: { kind: 'approve' } },
    ]);
    expect(await harness.dependencies.receipts.chain.readEntries(paused.runId)).toMatchObject([
      { kind: 'decision', decision: 'approve', turn: paused.turn },
    ]);
  });
});

describe('a decision under faults (decideRun)', () => {
  it('recognises its own claim met by the retry of a claim that had applied, and delivers', async () => {
    // Prepare: the claim lands, its answer is lost, the SDK's retry meets it.
    const harness = createHarness();
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, APPROVER, paused.runId);
    const claimDecision = harness.runs.claimDecision.bind(harness.runs);
    harness.runs.claimDecision = async (record) => {
      await claimDecision(record);
      return claimDecision(record);
    };

    // Act
    const outcome = await decideRun(harness.dependencies, APPROVER, paused.runId, {
      decision: 'approve',
      digest,
    });

    // Assess
    expect(outcome).toMatchObject({ kind: 'decided', repeated: false });
    expect(harness.executions.resumed).toHaveLength(1);
    expect(await harness.runs.listUndeliveredDecisions({ decidedBefore: '9999', limit: 10 })).toEqual([]);
  });

  it('delivers to the newest wait when the token it read was spent by a retried pause', async () => {
    // Prepare: the pause is retried (a new token sealed) after the approver's request read the card.
    const harness = createHarness();
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, APPROVER, paused.runId);
    const claimDecision = harness.runs.claimDecision.bind(harness.runs);
    harness.runs.claimDecision = async (record) => {
      harness.runs.claimDecision = claimDecision;
      // The first attempt's wait is gone (its token spent), and its retry sealed its own token.
      await harness.executions.resume(paused.taskToken, { kind: 'reject' });
      await awaitApproval(harness.dependencies, {
        runId: paused.runId,
        turn: paused.turn,
        taskToken: 'task-token-newer',
      });
      return claimDecision(record);
    };

    // Act
    const outcome = await decideRun(harness.dependencies, APPROVER, paused.runId, {
      decision: 'approve',
      digest,
    });

    // Assess
    expect(outcome).toMatchObject({ kind: 'decided', repeated: false });
    expect(harness.executions.resumed.slice(1)).toEqual([
      { taskToken: 'task-token-newer', decision: { kind: 'approve' } },
    ]);
    expect(await harness.runs.getCard(paused.runId)).toMatchObject({ state: 'closed' });
  });

  it.each([
    ['the card read', 'getCard', 'no'],
    ['the claim, not applied', 'claimDecision', 'no'],
    ['the delivery', 'resume', 'yes'],
  ] as const)(
    'answers a transient fault at %s as unavailable, saying whether the decision is on record',
    async (_label, call, onRecord) => {
      // Prepare
      const harness = createHarness();
      const paused = await startPausedRun(harness);
      const digest = await digestShownTo(harness, APPROVER, paused.runId);
      const target = call === 'resume' ? harness.executions : harness.runs;
      const original = (target as unknown as Record<string, (...args: unknown[]) => unknown>)[call];
      (target as unknown as Record<string, unknown>)[call] = async () => {
        (target as unknown as Record<string, unknown>)[call] = original;
        throw unavailable();
      };

      // Act
      const refusal = await refusalOf(
        decideRun(harness.dependencies, APPROVER, paused.runId, { decision: 'approve', digest }),
      );

      // Assess
      expect(refusal.code).toBe('unavailable');
      expect(refusal.details).toEqual({ decisionOnRecord: onRecord });
      expect(Boolean(await harness.runs.getDecision(paused.runId, paused.turn))).toBe(onRecord === 'yes');
    },
  );
});

describe('the probe redelivers a claimed decision its request left undelivered', () => {
  it('delivers a claim older than a minute to the wait its card holds, once', async () => {
    // Prepare: the request claimed, then Step Functions failed; nobody comes back.
    const harness = createHarness();
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, APPROVER, paused.runId);
    harness.executions.failNext = { call: 'resume', error: unavailable() };
    await refusalOf(
      decideRun(asDecidingFunction(harness), APPROVER, paused.runId, { decision: 'approve', digest }),
    );

    // Act
    const tooYoung = await redeliverDecisions(harness.dependencies);
    harness.clock.advance(UNDELIVERED_DECISION_AGE_MS + 1);
    const report = await redeliverDecisions(harness.dependencies);
    const again = await redeliverDecisions(harness.dependencies);

    // Assess
    expect(tooYoung).toEqual({ redelivered: 0, undelivered: 0 });
    expect(report).toEqual({ redelivered: 1, undelivered: 0 });
    expect(again).toEqual({ redelivered: 0, undelivered: 0 });
    expect(harness.executions.resumed).toEqual([
      { taskToken: paused.taskToken, decision: { kind: 'approve' } },
    ]);
    expect(harness.metrics.counts.get('DecisionsRedelivered')).toBe(1);
  });

  it('counts a claim it could not deliver as undelivered (the alarm), and delivers it on a later probe', async () => {
    // Prepare
    const harness = createHarness();
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, APPROVER, paused.runId);
    harness.executions.failNext = { call: 'resume', error: unavailable() };
    await refusalOf(
      decideRun(asDecidingFunction(harness), APPROVER, paused.runId, { decision: 'approve', digest }),
    );
    harness.clock.advance(UNDELIVERED_DECISION_AGE_MS + 1);
    harness.executions.failNext = { call: 'resume', error: unavailable() };

    // Act
    const failing = await redeliverDecisions(harness.dependencies);
    const later = await redeliverDecisions(harness.dependencies);

    // Assess
    expect(failing).toEqual({ redelivered: 0, undelivered: 1 });
    expect(harness.metrics.counts.get('UndeliveredDecisions')).toBe(1);
    expect(later).toEqual({ redelivered: 1, undelivered: 0 });
  });
});

describe('a turn whose record changed as a later call wrote (ExecuteTools)', () => {
  /** A waiting run whose one turn proposes a title write on page 12, then an append on page 13. */
  async function twoCallTurn(harness: UseCaseHarness): Promise<{ runId: string; turn: number }> {
    const runId = 'run-two-calls';
    const calls = [
      {
        index: 0,
        callId: 'call-1-0',
        tool: 'update_page_metadata',
        arguments: { pageId: PAGE_ID, title: 'Sale' },
        offered: true,
      },
      {
        index: 1,
        callId: 'call-1-1',
        tool: 'append_page_keywords',
        arguments: { pageId: '13', keywords: ['sale'] },
        offered: true,
      },
    ];
    const state: RunState = {
      schemaVersion: RUN_STATE_SCHEMA_VERSION,
      runId,
      turn: 1,
      transcript: [
        { role: 'user', content: [{ type: 'text', text: 'Two writes.' }] },
        {
          role: 'assistant',
          content: calls.map((call) => ({
            type: 'tool_call',
            callId: call.callId,
            name: call.tool,
            arguments: call.arguments,
          })),
        },
      ],
      pendingCalls: calls,
    };
    const record: RunRecord = {
      runId,
      owner: OWNER.userId,
      label: 'Two writes',
      configurationId: 'pages',
      status: 'running',
      turn: 1,
      executionCount: 1,
      executionStartTurn: 0,
      createdAt: START,
      updatedAt: START,
      policy: { fourEyes: false, revealRejectionReason: false },
    };
    await harness.runs.createRun(
      record,
      await sealJson(harness.dependencies.sealer, 'run-state', runId, state),
    );
    await awaitApproval(harness.dependencies, { runId, turn: 1, taskToken: 'token-1' });
    return { runId, turn: 1 };
  }

  it('keeps the result of the call that ran, asks again only for the other, and applies each once', async () => {
    // Prepare: page 13's keywords change between the check and the append's write.
    const approver = person(APPROVER.userId, {
      grants: ['agent_approve'],
      pageAccess: [PAGE_ID, '13'],
      toolAccess: '*',
    });
    const users = [
      person(OWNER.userId, {
        grants: ['agent_run', 'agent_approve'],
        pageAccess: [PAGE_ID, '13'],
        toolAccess: '*',
      }),
      approver,
    ];
    const harness = createHarness({
      users,
      configuration: { allowedTools: ['update_page_metadata', 'append_page_keywords'] },
    });
    const pages = new InMemoryPageStore(
      [
        { pageId: PAGE_ID, language: 'en', title: 'Home' },
        { pageId: '13', language: 'en', keywords: 'spring' },
      ],
      { now: () => harness.clock.now() },
    );
    harness.dependencies.pages = pages;
    const { runId, turn } = await twoCallTurn(harness);
    const digest = await digestShownTo(harness, approver, runId);
    await decideRun(harness.dependencies, approver, runId, { decision: 'approve', digest });
    const applyMetadata = pages.applyMetadata.bind(pages);
    pages.applyMetadata = async (pageId, write) => {
      if (pageId === '13') {
        pages.applyMetadata = applyMetadata;
        await pages.updateMetadata('13', { keywords: 'spring, edited' }, 'someone');
      }
      return applyMetadata(pageId, write);
    };

    // Act
    const first = await executeTools(harness.dependencies, { runId, turn });
    const reopened = await unsealRunState(harness.dependencies, await loadRun(harness.dependencies, runId));
    await awaitApproval(harness.dependencies, {
      runId,
      turn: first.turn,
      taskToken: 'token-2',
    });
    const second = await digestShownTo(harness, approver, runId);
    await decideRun(harness.dependencies, approver, runId, { decision: 'approve', digest: second });
    const done = await executeTools(harness.dependencies, { runId, turn: first.turn });
    const final = await unsealRunState(harness.dependencies, await loadRun(harness.dependencies, runId));

    // Assess
    expect(first).toMatchObject({ route: 'review', turn: turn + 1 });
    // The call left to review is the fresh card's only call (a card numbers its calls from 0).
    expect(reopened.pendingCalls).toEqual([
      expect.objectContaining({ index: 0, callId: 'call-1-1', recordChanged: true }),
    ]);
    expect(reopened.completedCalls).toEqual([
      { index: 0, callId: 'call-1-0', content: `Updated page ${PAGE_ID} (en): title.`, isError: false },
    ]);
    expect(done.route).toBe('model');
    expect(final.transcript.at(-1)).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          callId: 'call-1-0',
          content: `Updated page ${PAGE_ID} (en): title.`,
          isError: false,
        },
        { type: 'tool_result', callId: 'call-1-1', content: 'Added to page 13 (en): sale.', isError: false },
      ],
    });
    expect(pages.callCounts.applyMetadata).toBe(3); // the title once, the append lost once, then applied
    expect((await pages.getPage('13'))?.keywords).toBe('spring, edited, sale');
    expect((await pages.getPage(PAGE_ID))?.title).toBe('Sale');
  });
});
