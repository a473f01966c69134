import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { DynamoRunRepository } from '../../../lambdas/adapters/dynamo/run-repository.js';
import { InMemoryRunRepository } from '../../../lambdas/adapters/memory/in-memory-run-repository.js';
import {
  DECISION_RECORD_SCHEMA_VERSION,
  readCardShown,
} from '../../../lambdas/core/approvals/decision-record.js';
import type { ModelProvider, ModelReply, ModelRequest } from '../../../lambdas/core/model.js';
import type { RunRepository } from '../../../lambdas/core/ports.js';
import { decideRun } from '../../../lambdas/core/runs/decide-run.js';
import { defineTool, type Tool } from '../../../lambdas/core/tools/tool.js';
import { type RunningDynalite, startDynalite } from '../../support/dynalite.js';
import { createHarness, person, startPausedRun, type UseCaseHarness } from './use-case-harness.js';

// Issue #20 item 4: arguments holding a number beyond 2^53 (or 1e300), an empty key or more
// than 32 levels made approve and reject both answer 500, because the decision record stored
// what was shown as native DynamoDB attributes. Any JSON a model proposes must be decidable.

/** A write tool that takes any JSON, so every generated call is one an approver may release. */
const acceptAnything: Tool = defineTool({
  name: 'accept_anything',
  description: 'Takes any arguments.',
  effect: 'write',
  input: z.unknown(),
  execute: async () => ({ content: 'done', isError: false }),
});

/** Proposes the call it is given on the first turn, then ends the run. */
class ProposingModel implements ModelProvider {
  public readonly name = 'scripted';
  public proposal: unknown = {};

  public async converse(request: ModelRequest): Promise<ModelReply> {
    const usage = { inputTokens: 1, outputTokens: 1 };
    if (request.messages.some((message) => message.role === 'assistant'))
      return { content: [{ type: 'text', text: 'Done.' }], stopReason: 'end_turn', usage };
    return {
      content: [
        { type: 'tool_call', callId: 'call-1-0', name: acceptAnything.name, arguments: this.proposal },
      ],
      stopReason: 'tool_use',
      usage,
    };
  }
}

const extremeNumber = fc.constantFrom(
  2 ** 53 + 2,
  -(2 ** 60),
  Number('12345678901234567890'),
  1e300,
  -1e300,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  1e-300,
  -0,
);
const oddString = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.constantFrom('', '\uD800', 'x\uDFFFy', '\u0000', '\u202E'),
);
const leaf = fc.oneof(fc.jsonValue({ maxDepth: 2 }), extremeNumber, oddString);

/** `value` inside `depth` levels of alternating arrays and objects (DynamoDB stops at 32). */
function nested(value: unknown, depth: number): unknown {
  let current = value;
  for (let level = 0; level < depth; level += 1) current = level % 2 === 0 ? [current] : { '': current };
  return current;
}

const anyArguments = fc.oneof(
  fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('', '__proto__', 'constructor')), leaf, { maxKeys: 6 }),
  fc.tuple(leaf, fc.integer({ min: 0, max: 60 })).map(([value, depth]) => nested(value, depth)),
  fc.jsonValue({ maxDepth: 4 }),
);

/** What the audit keeps of a value: JSON's view of it (`-0` reads back as `0`). */
const asJson = (value: unknown) => JSON.parse(JSON.stringify(value) ?? 'null');

const decider = person('alice', { grants: ['agent_approve'], toolAccess: [acceptAnything.name] });
const owner = person('olivia', { grants: ['agent_run', 'agent_approve'], toolAccess: [acceptAnything.name] });

let dynamo: RunningDynalite;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo.stop();
});

describe.each([
  {
    store: 'DynamoDB (dynalite)',
    runs: (): RunRepository =>
      new DynamoRunRepository({ client: dynamo.documentClient, tableName: dynamo.tableName }),
    numRuns: 25,
  },
  { store: 'in memory', runs: (): RunRepository => new InMemoryRunRepository(), numRuns: 100 },
])('deciding a turn whatever JSON its call holds, $store', ({ runs, numRuns }) => {
  function harnessProposing(): { harness: UseCaseHarness; model: ProposingModel } {
    const model = new ProposingModel();
    const harness = createHarness({
      runs: runs(),
      model,
      extraTools: [acceptAnything],
      users: [owner, decider],
      configuration: { allowedTools: [acceptAnything.name] },
    });
    return { harness, model };
  }

  it('approves and rejects, and the audit keeps the arguments as shown', async () => {
    const { harness, model } = harnessProposing();
    await fc.assert(
      fc.asyncProperty(anyArguments, async (proposal) => {
        // Prepare: two runs paused on the same call.
        model.proposal = proposal;
        const toApprove = await startPausedRun(harness, owner);
        const toReject = await startPausedRun(harness, owner);
        const digestOf = async (runId: string) => (await harness.runs.getCard(runId))?.digest ?? '';

        // Act
        const approved = await decideRun(harness.dependencies, decider, toApprove.runId, {
          digest: await digestOf(toApprove.runId),
          decision: 'approve',
        });
        const rejected = await decideRun(harness.dependencies, decider, toReject.runId, {
          digest: await digestOf(toReject.runId),
          decision: 'reject',
          reason: 'not this one',
        });

        // Assess
        expect(approved).toMatchObject({ kind: 'decided', decision: 'approve' });
        expect(rejected).toMatchObject({ kind: 'decided', decision: 'reject' });
        for (const run of [toApprove, toReject]) {
          const record = await harness.runs.getDecision(run.runId, run.turn);
          expect(record?.schemaVersion).toBe(DECISION_RECORD_SCHEMA_VERSION);
          expect(readCardShown(record?.cardShown ?? '').calls).toEqual([
            { index: 0, tool: acceptAnything.name, arguments: asJson(proposal), preview: 'none' },
          ]);
        }
      }),
      { numRuns },
    );
  });
});
