import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UserProfile } from '../../../lambdas/core/identity.js';
import type { ModelProvider } from '../../../lambdas/core/model.js';
import type { PolicyFloorInput } from '../../../lambdas/core/policy/policy-floor.js';
import { awaitApproval } from '../../../lambdas/core/runs/await-approval.js';
import { decideRun } from '../../../lambdas/core/runs/decide-run.js';
import { executeTools } from '../../../lambdas/core/runs/execute-tools.js';
import { listInbox } from '../../../lambdas/core/runs/list-inbox.js';
import { startRun } from '../../../lambdas/core/runs/start-run.js';
import { takeModelTurn } from '../../../lambdas/core/runs/take-model-turn.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import {
  type ListingAnswer,
  MCP_TEST_TOKEN,
  type McpTestServer,
  startMcpTestServer,
} from '../../support/mcp-test-server.js';
import { APPROVER, createHarness, person, refusalOf, type UseCaseHarness } from './use-case-harness.js';

// Issue #20 item 1: a tool whose effect cannot be established is a write, under every gate, and
// execution runs only what the approval covered. Against a real MCP server on loopback (the
// official SDK on both sides); each step is its use case, as the state machine runs them.

const OWNER = person('olivia', {
  grants: ['agent_run', 'agent_approve'],
  toolAccess: ['tickets__create_ticket'],
});
/** May release the ticket writer. `APPROVER` (alice) may not: her toolAccess names only page tools. */
const TICKET_APPROVER = person('bob', { grants: ['agent_approve'], toolAccess: ['tickets__create_ticket'] });
const SECOND_TICKET_APPROVER = person('carol', {
  grants: ['agent_approve'],
  toolAccess: ['tickets__create_ticket', 'tickets__lookup'],
});
const USERS = [OWNER, APPROVER, TICKET_APPROVER, SECOND_TICKET_APPROVER];
const CREATE_TICKET = 'call tickets__create_ticket with {"title":"Printer jam"}';

/** How the server answers the pause's listing; the model turn and the execution list as usual. */
const LISTINGS_AT_PAUSE: Array<[string, ListingAnswer]> = [
  ['the listing fails at the pause', 'fail'],
  ['the tool claims readOnlyHint at the pause', { readOnlyHints: { create_ticket: true } }],
];

describe('a tool whose effect cannot be established is a write (issue #20, item 1)', () => {
  let tickets: McpTestServer;

  beforeAll(async () => {
    tickets = await startMcpTestServer();
  });

  afterAll(async () => {
    await tickets.stop();
  });

  function ticketsHarness(
    options: {
      options?: Record<string, unknown>;
      approversMayReadPreviews?: boolean;
      policyFloor?: PolicyFloorInput;
      model?: ModelProvider;
    } = {},
  ): UseCaseHarness {
    return createHarness({
      users: USERS,
      mcpSecrets: { COUNTERSIGN_MCP_SECRET_TICKETS_TOKEN: MCP_TEST_TOKEN },
      ...(options.policyFloor ? { policyFloor: options.policyFloor } : {}),
      ...(options.model ? { model: options.model } : {}),
      configuration: {
        allowedTools: ['get_page'],
        mcpServers: [
          {
            name: 'tickets',
            url: tickets.url,
            authSecret: 'tickets-token',
            timeoutMs: 5_000,
            approversMayReadPreviews: options.approversMayReadPreviews ?? false,
          },
        ],
        ...(options.options ? { options: options.options } : {}),
      },
    });
  }

  /** Model turn (the server lists as usual), then the pause with `listing` as the server's answer. */
  async function pauseRun(harness: UseCaseHarness, listing: ListingAnswer, input = CREATE_TICKET) {
    const { runId } = await startRun(
      harness.dependencies,
      OWNER,
      { configurationId: 'pages', input },
      'user-record',
    );
    const { turn, route } = await takeModelTurn(harness.dependencies, { runId, turn: 0 });
    expect(route).toBe('approval');
    tickets.scriptListings([listing]);
    await awaitApproval(harness.dependencies, {
      runId,
      turn,
      taskToken: `token-${runId}-${turn}`,
    });
    const { cards } = await listInbox(harness.dependencies, TICKET_APPROVER, { limit: 100 });
    const card = cards.find((each) => each.runId === runId);
    if (card === undefined || !('digest' in card)) throw new Error('the run did not pause on a card');
    return { runId, turn, card };
  }

  const approve = (harness: UseCaseHarness, approver: UserProfile, runId: string, digest: string) =>
    decideRun(harness.dependencies, approver, runId, { decision: 'approve', digest });

  /** The ticket writes the server received since `before` calls. */
  const writesSince = (before: number) =>
    tickets.calls.slice(before).filter((call) => call.tool === 'create_ticket');

  describe.each(LISTINGS_AT_PAUSE)('%s', (_case, listing) => {
    it('puts the call on the card as needing approval, saying why, and guards it as a write', async () => {
      // Prepare
      const harness = ticketsHarness();

      // Act
      const { runId, card } = await pauseRun(harness, listing);

      // Assess
      expect(card.pendingTools[0]).toMatchObject({
        tool: 'tickets__create_ticket',
        requiresApproval: true,
        effectUnconfirmed: TEXTS.effectUnconfirmed,
      });
      const stored = await harness.runs.getCard(runId);
      expect(stored?.writeToolNames).toEqual(['tickets__create_ticket']);
      expect(stored?.callGuards).toEqual([
        { index: 0, tool: 'tickets__create_ticket', guard: 'unconfirmed' },
      ]);
    });

    it('tool gate: refuses an approver without tool access; the write runs only once one with access approves', async () => {
      // Prepare
      const harness = ticketsHarness();
      const before = tickets.calls.length;
      const { runId, turn, card } = await pauseRun(harness, listing);

      // Act
      const refused = await refusalOf(approve(harness, APPROVER, runId, card.digest));
      const writesAfterRefusal = writesSince(before).length;
      const approved = await approve(harness, TICKET_APPROVER, runId, card.digest);
      const executed = await executeTools(harness.dependencies, { runId, turn });

      // Assess
      expect(refused.code).toBe('forbidden');
      expect(refused.message).toBe(TEXTS.gateToolRefused('tickets__create_ticket'));
      expect(writesAfterRefusal).toBe(0);
      expect(approved).toMatchObject({ kind: 'decided', decision: 'approve' });
      expect(executed.route).toBe('model');
      expect(writesSince(before)).toEqual([{ tool: 'create_ticket', arguments: { title: 'Printer jam' } }]);
    });

    it('record gate: no approver passes the record check of a server whose previews they may not read', async () => {
      // Prepare
      const harness = ticketsHarness({ options: { decisionGate: 'record' } });
      const before = tickets.calls.length;
      const { runId, turn, card } = await pauseRun(harness, listing);

      // Act: the approval is refused; an execution driven anyway finds no approval covering it.
      const refused = await refusalOf(approve(harness, TICKET_APPROVER, runId, card.digest));
      const forced = await executeTools(harness.dependencies, { runId, turn });

      // Assess
      expect(refused.message).toBe(TEXTS.gateRecordRefused('tickets__create_ticket'));
      expect(harness.executions.resumed).toEqual([]);
      expect(forced.route).toBe('review');
      expect(writesSince(before)).toEqual([]);
    });

    it("the floor's fourEyesTools: the run's owner may not release the write", async () => {
      // Prepare
      const harness = ticketsHarness({ policyFloor: { fourEyesTools: ['tickets__create_ticket'] } });
      const before = tickets.calls.length;
      const { runId, turn, card } = await pauseRun(harness, listing);

      // Act: the approval is refused; an execution driven anyway finds no approval covering it.
      const refused = await refusalOf(approve(harness, OWNER, runId, card.digest));
      const forced = await executeTools(harness.dependencies, { runId, turn });

      // Assess
      expect(refused.message).toBe(TEXTS.gateFourEyes);
      expect(harness.executions.resumed).toEqual([]);
      expect((await harness.runs.getCard(runId))?.fourEyes).toBe(true);
      expect(forced.route).toBe('review');
      expect(writesSince(before)).toEqual([]);
    });

    it('k-of-n: an approval without tool access does not count; two with access release the write', async () => {
      // Prepare
      const harness = ticketsHarness({ options: { requiredApprovals: 2 } });
      const before = tickets.calls.length;
      const { runId, turn, card } = await pauseRun(harness, listing);

      // Act
      const first = await approve(harness, TICKET_APPROVER, runId, card.digest);
      const refused = await refusalOf(approve(harness, APPROVER, runId, card.digest));
      const resumedBeforeSecond = harness.executions.resumed.length;
      const second = await approve(harness, SECOND_TICKET_APPROVER, runId, card.digest);
      await executeTools(harness.dependencies, { runId, turn });

      // Assess
      expect(first).toMatchObject({ kind: 'approval-recorded', approvals: { count: 1, required: 2 } });
      expect(refused.message).toBe(TEXTS.gateToolRefused('tickets__create_ticket'));
      expect(resumedBeforeSecond).toBe(0);
      expect(second).toMatchObject({ kind: 'decided', decision: 'approve' });
      expect((await harness.runs.getDecision(runId, turn))?.approvedBy).toEqual(['bob', 'carol']);
      expect(writesSince(before)).toHaveLength(1);
    });
  });

  describe('execution runs only what the approval covered', () => {
    /** A model that proposes these calls, then ends the run once it reads their results. */
    function proposing(
      calls: ReadonlyArray<{ name: string; arguments: Record<string, unknown> }>,
    ): ModelProvider {
      return {
        name: 'scripted',
        async converse(request) {
          const answered = request.messages.some(
            (message) =>
              message.role === 'user' && message.content.some((block) => block.type === 'tool_result'),
          );
          if (answered) return { stopReason: 'end_turn', content: [{ type: 'text', text: 'Done.' }] };
          return {
            stopReason: 'tool_use',
            content: calls.map((call, index) => ({
              type: 'tool_call' as const,
              callId: `call-${index}`,
              name: call.name,
              arguments: call.arguments,
            })),
          };
        },
      };
    }

    it('puts a turn that needed no approval on a card when a read became a write, instead of running it', async () => {
      // Prepare: the turn routes the read-only lookup straight to execution.
      const harness = ticketsHarness();
      const before = tickets.calls.length;
      const { runId } = await startRun(
        harness.dependencies,
        OWNER,
        { configurationId: 'pages', input: 'call tickets__lookup with {"ticket":"T-1"}' },
        'user-record',
      );
      const { turn, route } = await takeModelTurn(harness.dependencies, { runId, turn: 0 });
      expect(route).toBe('tools');
      tickets.scriptListings([{ readOnlyHints: { lookup: false } }]);

      // Act
      const executed = await executeTools(harness.dependencies, { runId, turn });
      await awaitApproval(harness.dependencies, {
        runId,
        turn: executed.turn,
        taskToken: 'token-review',
      });

      // Assess: nothing ran; the call waits on a card, guarded at least as the execution found it.
      expect(executed).toMatchObject({ route: 'review', turn: turn + 1 });
      expect(tickets.calls.slice(before).filter((call) => call.tool === 'lookup')).toEqual([]);
      const stored = await harness.runs.getCard(runId);
      expect(stored?.turn).toBe(turn + 1);
      expect(stored?.writeToolNames).toEqual(['tickets__lookup']);
      expect(stored?.callGuards?.[0]?.guard).toBe('unconfirmed');
    });

    it('re-pauses an approved turn whose read call became a write; the fresh card, approved, runs both', async () => {
      // Prepare: the card guards the write; the lookup ran as a read when the card was decided.
      const harness = ticketsHarness({
        model: proposing([
          { name: 'tickets__lookup', arguments: { ticket: 'T-1' } },
          { name: 'tickets__create_ticket', arguments: { title: 'Printer jam' } },
        ]),
      });
      const before = tickets.calls.length;
      const { runId, turn, card } = await pauseRun(harness, 'as-listed', 'two calls');
      expect(card.pendingTools.map((tool) => tool.requiresApproval)).toEqual([false, true]);
      await approve(harness, SECOND_TICKET_APPROVER, runId, card.digest);
      tickets.scriptListings([{ readOnlyHints: { lookup: false } }]);

      // Act
      const executed = await executeTools(harness.dependencies, { runId, turn });
      const writesAfterFirstApproval = tickets.calls
        .slice(before)
        .filter((call) => call.tool !== 'create_ticket__preview');
      await awaitApproval(harness.dependencies, {
        runId,
        turn: executed.turn,
        taskToken: 'token-review',
      });
      const { cards } = await listInbox(harness.dependencies, SECOND_TICKET_APPROVER, { limit: 100 });
      const fresh = cards.find((each) => each.runId === runId);
      if (fresh === undefined || !('digest' in fresh)) throw new Error('no fresh card');
      await approve(harness, SECOND_TICKET_APPROVER, runId, fresh.digest);
      const finished = await executeTools(harness.dependencies, { runId, turn: executed.turn });

      // Assess: the approval of the first card ran nothing; the second, taken with the lookup
      // guarded, ran both calls once.
      expect(executed).toMatchObject({ route: 'review', turn: turn + 1 });
      expect(writesAfterFirstApproval).toEqual([]);
      expect(fresh.pendingTools.map((tool) => tool.requiresApproval)).toEqual([true, true]);
      expect(finished.route).toBe('model');
      expect(
        tickets.calls
          .slice(before)
          .map((call) => call.tool)
          .filter((tool) => tool !== 'create_ticket__preview'),
      ).toEqual(['lookup', 'create_ticket']);
    });
  });
});
