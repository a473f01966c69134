import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UserProfile } from '../../lambdas/core/identity.js';
import { createEscalationTimerHandler } from '../../lambdas/handlers/timers/escalation-timer.js';
import { DEMO_USERS } from '../../lambdas/local/demo-data.js';
import { bodyOf, openedCard } from '../support/api-answers.js';
import {
  eventually,
  type ResponseJson,
  removeTestData,
  settle,
  startRunAndSettle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';

const demoUser = (userId: string): UserProfile => {
  const user = DEMO_USERS.find((candidate) => candidate.userId === userId);
  if (!user) throw new Error(`no demo user ${userId}`);
  return user;
};

/** A finance configuration whose unanswered cards go to the leads after `afterMinutes`. */
const escalatingConfiguration = (configurationId: string, afterMinutes: number) => ({
  configurationId,
  label: `Escalating ${configurationId}`,
  provider: 'scripted' as const,
  model: 'scripted-v1',
  allowedTools: ['get_page', 'update_page_metadata'],
  approverGroups: ['finance'],
  escalation: [{ afterMinutes, approverGroups: ['leads'] }],
});

/** Two approvers with the same rights: `approver` in finance, `reviewer` in leads. */
async function prepare(runtime: TestRuntime): Promise<void> {
  await runtime.dependencies.users.putUser({ ...demoUser('approver'), groups: ['finance'] });
  await runtime.dependencies.users.putUser({ ...demoUser('reviewer'), groups: ['leads'] });
  for (const [configurationId, afterMinutes] of [
    ['escalates-fast', 0.05],
    ['escalates-later', 600],
  ] as const) {
    const put = await runtime.client('admin').putConfiguration({
      path: { id: configurationId },
      body: escalatingConfiguration(configurationId, afterMinutes),
    });
    expect(put.status).toBe(200);
  }
}

async function inboxOf(runtime: TestRuntime, as: string): Promise<ResponseJson[]> {
  return bodyOf(await runtime.client(as).listInbox({ query: { limit: 100 } })).cards;
}

describe('card escalation (issue #22, part 3)', () => {
  let runtime: TestRuntime;

  beforeAll(async () => {
    runtime = await startTestRuntime();
    await prepare(runtime);
  });

  afterAll(async () => {
    await runtime.stop();
    await removeTestData(runtime);
  });

  it('refuses a ladder whose steps do not come later one after the other, naming the step', async () => {
    // Act
    const answer = await runtime.sendRaw('PUT', '/admin/configurations/bad-ladder', {
      as: 'admin',
      body: {
        ...escalatingConfiguration('bad-ladder', 30),
        escalation: [
          { afterMinutes: 30, approverGroups: ['leads'] },
          { afterMinutes: 30, approverGroups: ['directors'] },
        ],
      },
    });

    // Assess
    expect(answer.status).toBe(400);
    expect(answer.json.error.message).toContain('escalation.1.afterMinutes');
  });

  it('routes an unanswered card to the next group when its timer fires, announces it, and lets that group decide', async () => {
    // Prepare
    const { runId, view } = await startRunAndSettle(runtime, "Set the title of page 12 to 'Escalated'", {
      configurationId: 'escalates-fast',
    });
    const financeCard = openedCard((await inboxOf(runtime, 'approver')).find((card) => card.runId === runId));
    const leadsBefore = (await inboxOf(runtime, 'reviewer')).map((card) => card.runId);

    // Act: the in-process timer fires about 3 seconds after the pause
    const leadsCard = await eventually(async () =>
      (await inboxOf(runtime, 'reviewer')).find((card) => card.runId === runId),
    );
    const decided = await runtime.client('reviewer').decideRun({
      path: { id: runId },
      body: { digest: view.digest, decision: 'approve' },
    });

    // Assess
    expect(view.status).toBe('waiting');
    expect(leadsBefore).not.toContain(runId);
    expect(financeCard.escalation).toEqual({
      steps: [
        {
          at: new Date(Date.parse(view.pausedAt) + 3_000).toISOString(),
          approverGroups: ['leads'],
          reached: false,
        },
      ],
    });
    expect(openedCard(leadsCard).escalation.steps[0].reached).toBe(true);
    expect(runtime.notifications.filter((event) => event.runId === runId)).toEqual([
      expect.objectContaining({ reason: 'paused', approverGroups: ['finance'] }),
      expect.objectContaining({ reason: 'escalated', approverGroups: ['leads'] }),
    ]);
    expect(bodyOf(decided, 200)).toMatchObject({ kind: 'decided', decision: 'approve' });
    expect((await settle(runtime, runId, 'editor', view.turn)).status).not.toBe('waiting');
    expect(runtime.logLines.some((line) => line.includes('"card escalated"'))).toBe(true);
  });

  it('arms one schedule per step at the pause, and an escalation step costs what the README says', async () => {
    // Prepare
    runtime.calls.reset();
    const { runId, view } = await startRunAndSettle(runtime, "Set the title of page 14 to 'Counted'", {
      configurationId: 'escalates-later',
    });
    const atPause = runtime.calls.snapshot();
    const escalate = createEscalationTimerHandler(runtime.dependencies);
    runtime.calls.reset();

    // Act
    const outcome = await escalate({ runId, turn: view.turn, digest: view.digest, step: 0 });
    const atStep = runtime.calls.snapshot();

    // Assess: 2 reads of the card, the leads entry, the routing and the outbox mark, one event
    expect(atPause['Scheduler:CreateSchedule']).toBe(1);
    expect(outcome).toMatchObject({ kind: 'escalated', approverGroups: ['leads'] });
    expect(atStep).toEqual({
      'DynamoDB:GetItem': 2,
      'DynamoDB:UpdateItem': 3,
      'EventBridge:PutEvents': 1,
    });
  });

  it('carries out a decision once when its card’s escalation fires at the same moment, and lists the card nowhere after (10 races)', async () => {
    // Prepare: the handler the timer invokes, called by hand at the moment the decision is sent
    const escalate = createEscalationTimerHandler(runtime.dependencies);
    const races = await Promise.all(
      Array.from({ length: 10 }, (_unused, position) =>
        startRunAndSettle(runtime, `Set the title of page 14 to 'Race ${position}'`, {
          configurationId: 'escalates-later',
        }),
      ),
    );

    // Act
    const outcomes = await Promise.all(
      races.map(async ({ runId, view }) => {
        const [decision, escalation] = await Promise.all([
          runtime.client('approver').decideRun({
            path: { id: runId },
            body: { digest: view.digest, decision: 'approve' },
          }),
          escalate({ runId, turn: view.turn, digest: view.digest, step: 0 }),
        ]);
        return { runId, view, decision, escalation };
      }),
    );

    // Assess
    for (const { runId, view, decision, escalation } of outcomes) {
      expect(bodyOf(decision, 200)).toMatchObject({ kind: 'decided', repeated: false });
      expect(['escalated', 'ignored']).toContain((escalation as { kind: string }).kind);
      const ended = await settle(runtime, runId, 'editor', view.turn);
      expect(ended.status).not.toBe('waiting');
      const decisionRecord = await runtime.dependencies.runs.getDecision(runId, view.turn);
      expect(decisionRecord?.decidedBy).toBe('approver');
      expect((await runtime.dependencies.runs.getCard(runId))?.state).toBe('closed');
    }
    const listed = new Set([
      ...(await inboxOf(runtime, 'reviewer')).map((card) => card.runId),
      ...(await inboxOf(runtime, 'approver')).map((card) => card.runId),
    ]);
    expect(outcomes.filter(({ runId }) => listed.has(runId))).toEqual([]);
  }, 60_000);
});

describe('card escalation across a local restart', () => {
  let baseDirectory = '';
  let runtime: TestRuntime | undefined;

  afterAll(async () => {
    await runtime?.stop();
    await removeTestData({ baseDirectory });
  });

  it('fires a step the stopped process never reached, once the restarted one re-enters the wait', async () => {
    // Prepare: a card that escalates 6 seconds after its pause; the process stops before that
    baseDirectory = await mkdtemp(join(tmpdir(), 'countersign-escalation-restart-'));
    runtime = await startTestRuntime({ baseDirectory });
    await prepare(runtime);
    await runtime.client('admin').putConfiguration({
      path: { id: 'escalates-restarted' },
      body: escalatingConfiguration('escalates-restarted', 0.1),
    });
    const { runId } = await startRunAndSettle(runtime, "Set the title of page 12 to 'Restarted'", {
      configurationId: 'escalates-restarted',
    });
    await runtime.stop();

    // Act
    runtime = await startTestRuntime({ baseDirectory });
    const restarted = runtime;
    // A start seeds the demo users afresh: the groups of this test go back on.
    await prepare(restarted);
    const leadsCard = await eventually(
      async () => (await inboxOf(restarted, 'reviewer')).find((card) => card.runId === runId),
      20_000,
    );

    // Assess
    expect(openedCard(leadsCard).escalation.steps[0].reached).toBe(true);
    expect(restarted.notifications).toEqual([
      expect.objectContaining({ runId, reason: 'escalated', approverGroups: ['leads'] }),
    ]);
  }, 40_000);
});
