import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { ToolResultBlock } from '../../lambdas/core/model.js';
import { MAXIMUM_TOOL_ATTEMPTS } from '../../lambdas/core/runs/call-ledger.js';
import { parseRunState } from '../../lambdas/core/runs/run-state.js';
import { unsealJson } from '../../lambdas/core/sealed-json.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { defineTool, type Tool } from '../../lambdas/core/tools/tool.js';
import { TransientToolError } from '../../lambdas/core/tools/transient-tool-error.js';
import { decide, recordWritesAndDeliveries } from '../e2e/approvers-support.js';
import { type InjectedFault, injectFault, serverErrorStatuses } from '../support/fault-seams.js';
import {
  removeTestData,
  settle,
  startRunAndSettle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';

/** What the team tools below did, by idempotency key: each attempt, and each effect applied. */
const attempts: Array<{ tool: string; key: string }> = [];
const applied: Array<{ tool: string; key: string }> = [];
/** Transient failures a ticket still has to go through before its tool succeeds. */
const failuresLeft = new Map<string, number>();

const ticketInput = z.object({ ticket: z.string(), transientFailures: z.number().int().min(0).max(10) });

/** A team tool whose backend fails temporarily a given number of times, then closes the ticket. */
function ticketTool(name: string, options: { idempotent: boolean }): Tool {
  return defineTool({
    name,
    description: 'Closes a ticket (a test tool that fails temporarily first).',
    effect: 'write',
    idempotent: options.idempotent,
    input: ticketInput,
    execute: async ({ ticket, transientFailures }, context) => {
      attempts.push({ tool: name, key: context.idempotencyKey });
      const left = failuresLeft.get(context.idempotencyKey) ?? transientFailures;
      if (left > 0) {
        failuresLeft.set(context.idempotencyKey, left - 1);
        throw new TransientToolError('The ticket service is busy.');
      }
      // An idempotent backend refuses a key it applied; a careless one applies it again.
      if (!(options.idempotent && applied.some((effect) => effect.key === context.idempotencyKey))) {
        applied.push({ tool: name, key: context.idempotencyKey });
      }
      return { content: `Closed ${ticket}.`, isError: false };
    },
  }) as Tool;
}

const TEAM_TOOLS = [
  ticketTool('close_ticket', { idempotent: false }),
  ticketTool('close_ticket_once', { idempotent: true }),
];

/** Matches the DynamoDB items of the call ledger (`CALL#<turn>#<index>`). */
const onLedger = (input: string) => input.includes('CALL#');

/**
 * The execute path under faults (issue #29): each AWS call of ExecuteTools failing once, before
 * or after it applied (the workflow retries the step), team tools that fail transiently, and the
 * process killed between a write and its record. Each approved call applies at most once, and at
 * least once unless it fails for good; every tool gets one idempotency key per call.
 */
describe('approved calls under faults', () => {
  let runtime: TestRuntime;
  const pageWrites: string[] = [];
  let faults: InjectedFault[] = [];

  beforeAll(async () => {
    runtime = await startTestRuntime({ extraTools: TEAM_TOOLS });
    recordWritesAndDeliveries(runtime, { pageWrites, deliveries: [] });
    const scripted = await runtime.dependencies.configurations.getConfiguration('demo-scripted');
    if (!scripted) throw new Error('the demo configuration is missing');
    await runtime.dependencies.configurations.putConfiguration({
      ...scripted,
      configurationId: 'faults-team-tools',
      allowedTools: [...scripted.allowedTools, ...TEAM_TOOLS.map((tool) => tool.name)],
    });
    const approver = await runtime.dependencies.users.getUser('approver');
    if (!approver || approver.toolAccess === '*') throw new Error('the demo approver changed');
    await runtime.dependencies.users.putUser({
      ...approver,
      toolAccess: [...approver.toolAccess, ...TEAM_TOOLS.map((tool) => tool.name)],
    });
  });

  afterEach(() => {
    for (const fault of faults) fault.remove();
    faults = [];
  });

  afterAll(async () => {
    // No answer of the whole file was a 500: a transient fault is a 503, a refusal a 4xx.
    expect(serverErrorStatuses(runtime.logLines)).not.toContain(500);
    await runtime.stop();
    await removeTestData(runtime);
  });

  /** Starts a run to its card, approves it, and returns the results the model was given. */
  async function approveRun(input: string, configurationId?: string) {
    const { runId, view } = await startRunAndSettle(
      runtime,
      input,
      configurationId ? { configurationId } : {},
    );
    expect(view.status).toBe('waiting');
    const answer = await decide(runtime, runId, { digest: view.digest as string, decision: 'approve' });
    expect(answer.status).toBe(200);
    const finished = await settle(runtime, runId, 'editor', view.turn as number);
    return { runId, turn: view.turn as number, finished, results: await toolResults(runId) };
  }

  /** The idempotency keys a page item applied, as the DynamoDB page store keeps them. */
  async function appliedKeysOf(pageId: string): Promise<string[]> {
    const { Item: item } = await runtime.dynamo.documentClient.send(
      new GetCommand({ TableName: runtime.dynamo.tableName, Key: { pk: 'PAGES', sk: `PAGE#${pageId}` } }),
    );
    return (item?.appliedKeys as string[] | undefined) ?? [];
  }

  /** The tool results in the run's transcript, read from its sealed state. */
  async function toolResults(runId: string): Promise<ToolResultBlock[]> {
    const run = await runtime.dependencies.runs.getRun(runId);
    if (!run) throw new Error(`no run ${runId}`);
    const state = parseRunState(
      await unsealJson(runtime.dependencies.sealer, 'run-state', runId, run.sealedState),
    );
    return state.transcript.flatMap((message) =>
      message.role === 'user'
        ? message.content.filter((block): block is ToolResultBlock => block.type === 'tool_result')
        : [],
    );
  }

  const callTicket = (tool: string, ticket: string, transientFailures: number) =>
    `call ${tool} with ${JSON.stringify({ ticket, transientFailures })}`;

  it('runs a team call again after a TransientToolError, with the same key, until it applies once', async () => {
    // Act
    const { runId, finished, results } = await approveRun(
      callTicket('close_ticket', 'T-1', 2),
      'faults-team-tools',
    );

    // Assess
    const mine = attempts.filter((attempt) => attempt.key.startsWith(`${runId}/`));
    expect(finished.status).toBe('completed');
    expect(mine).toHaveLength(3);
    expect(new Set(mine.map((attempt) => attempt.key)).size).toBe(1);
    expect(applied.filter((effect) => effect.key.startsWith(`${runId}/`))).toHaveLength(1);
    expect(results).toEqual([expect.objectContaining({ content: 'Closed T-1.', isError: false })]);
  });

  it(`ends a call that keeps failing temporarily "not applied" after ${MAXIMUM_TOOL_ATTEMPTS} attempts, and the run goes on`, async () => {
    // Act
    const { runId, finished, results } = await approveRun(
      callTicket('close_ticket', 'T-2', 10),
      'faults-team-tools',
    );

    // Assess
    expect(finished.status).toBe('completed');
    expect(attempts.filter((attempt) => attempt.key.startsWith(`${runId}/`))).toHaveLength(
      MAXIMUM_TOOL_ATTEMPTS,
    );
    expect(applied.filter((effect) => effect.key.startsWith(`${runId}/`))).toHaveLength(0);
    expect(results).toEqual([
      expect.objectContaining({
        content: TEXTS.toolNotApplied('close_ticket', 'TransientToolError', MAXIMUM_TOOL_ATTEMPTS),
        isError: true,
      }),
    ]);
  });

  it('does not run a call again that started and never reported back, unless its tool is idempotent', async () => {
    // Prepare: both tools apply, then recording their result fails (the step is retried).
    const faultAfterRun = () =>
      injectFault(runtime.dynamo.client, {
        command: 'PutItem',
        matching: (input) => onLedger(input) && input.includes('"ran"'),
        when: 'before-applied',
      });

    // Act
    faults.push(faultAfterRun());
    const careless = await approveRun(callTicket('close_ticket', 'T-3', 0), 'faults-team-tools');
    faults.push(faultAfterRun());
    const idempotent = await approveRun(callTicket('close_ticket_once', 'T-4', 0), 'faults-team-tools');

    // Assess: at most once for the one, once by its key for the other.
    const attemptsOf = (runId: string) => attempts.filter((attempt) => attempt.key.startsWith(`${runId}/`));
    const appliedOf = (runId: string) => applied.filter((effect) => effect.key.startsWith(`${runId}/`));
    expect(faults.every((fault) => fault.fired() === 1)).toBe(true);
    expect(attemptsOf(careless.runId)).toHaveLength(1);
    expect(appliedOf(careless.runId)).toHaveLength(1);
    expect(careless.results).toEqual([
      expect.objectContaining({ content: TEXTS.toolOutcomeUnknown('close_ticket'), isError: true }),
    ]);
    expect(attemptsOf(idempotent.runId)).toHaveLength(2);
    expect(new Set(attemptsOf(idempotent.runId).map((attempt) => attempt.key)).size).toBe(1);
    expect(appliedOf(idempotent.runId)).toHaveLength(1);
    expect(idempotent.results).toEqual([expect.objectContaining({ content: 'Closed T-4.', isError: false })]);
  });

  const builtInCases = [
    ['the call ledger read', 'Query', onLedger],
    [
      'the call taken in the ledger',
      'PutItem',
      (input: string) => onLedger(input) && input.includes('"started"'),
    ],
    [
      'the page write',
      'UpdateItem',
      (input: string) => input.includes('PAGE#12') && input.includes('appliedKeys'),
    ],
    [
      'the result recorded in the ledger',
      'PutItem',
      (input: string) => onLedger(input) && input.includes('"ran"'),
    ],
    [
      'the run saving its results',
      'UpdateItem',
      (input: string) => input.includes('"RUN"') && input.includes('sealedState'),
    ],
  ] as const;

  for (const [label, command, matching] of builtInCases) {
    for (const when of ['before-applied', 'after-applied'] as const) {
      it(`applies an approved page write once when ${label} fails once ${when.replace('-', ' ')}`, async () => {
        // Prepare
        const description = `${label} ${when}`;
        const writesBefore = pageWrites.length;
        faults.push(injectFault(runtime.dynamo.client, { command, matching, when }));

        // Act
        const { runId, turn, finished, results } = await approveRun(
          `Set the description of page 12 to '${description}'`,
        );

        // Assess: the page applied the call's key once (a write whose answer was lost counts too).
        expect(faults[0]?.fired()).toBe(1);
        expect(finished.status).toBe('completed');
        expect((await appliedKeysOf('12')).filter((key) => key === `${runId}/${turn}/0`)).toHaveLength(1);
        expect(pageWrites.slice(writesBefore)).toEqual(
          label === 'the page write' && when === 'after-applied' ? [] : [JSON.stringify({ description })],
        );
        expect((await runtime.dependencies.pages.getPage('12'))?.description).toBe(description);
        expect(results).toEqual([
          expect.objectContaining({ content: 'Updated page 12 (en): description.', isError: false }),
        ]);
      });
    }
  }
});
