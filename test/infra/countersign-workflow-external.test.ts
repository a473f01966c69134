import { StateMachine } from 'aws-local-stepfunctions';
import { beforeAll, describe, expect, it } from 'vitest';
import { extractStateMachineDefinition } from '../../lib/state-machine-definition.js';
import { synthesizeTestStack } from './synthesize-test-stack.js';

type Handler = (input: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** The execution context aws-local-stepfunctions cannot mint itself (a task token among it). */
const CONTEXT = { Execution: { Id: 'execution-3' }, Task: { Token: 'token-3' } };

// The synthesized definition run by aws-local-stepfunctions for an agent that runs elsewhere
// (docs/external-agents.md): what the wait on its card leads to.
describe('Countersign workflow: external runs', () => {
  let definition: Record<string, unknown>;
  beforeAll(() => {
    definition = extractStateMachineDefinition(synthesizeTestStack().template.toJSON());
  });

  it.each([
    ['approved', undefined],
    ['rejected', 'countersign.Rejected'],
  ])(
    'runs an external run once %s: the wait on its card, its answer, its webhook',
    async (_outcome, error) => {
      // Prepare
      const visited: string[] = [];
      const handlers: Record<string, Handler> = {
        Prepare: async (input) => {
          visited.push('Prepare');
          return { runId: input.runId, turn: 0, next: 'await', owner: 'agent-1', kind: 'external' };
        },
        AwaitApproval: async () => {
          visited.push('AwaitApproval');
          if (error === undefined) return { approved: true };
          throw Object.assign(new Error('Rejected.'), { name: error });
        },
        RecordExternalDecision: async (input) => {
          visited.push(`RecordExternalDecision:${String(input.turn)}`);
          return { runId: input.runId };
        },
        NotifyCaller: async (input) => {
          visited.push(`NotifyCaller:${String(input.runId)}`);
          return { runId: input.runId, webhook: 'delivered' };
        },
      };

      // Act
      const stateMachine = new StateMachine(definition as never, {
        validationOptions: { checkPaths: true, checkArn: false },
      });
      await stateMachine.run(
        { runId: 'run-2' },
        {
          overrides: { taskResourceLocalHandlers: handlers as never },
          context: { Execution: { Id: 'execution-2' }, Task: { Token: 'token-2' } } as never,
        },
      ).result;

      // Assess: no model turn, no tool run, no rejection told to a model
      expect(visited).toEqual(['Prepare', 'AwaitApproval', 'RecordExternalDecision:0', 'NotifyCaller:run-2']);
    },
  );

  it('puts an external run’s edit on a fresh card (ExecuteTools reopens it), then answers', async () => {
    // Prepare: the first decision on record is an edit, the second the approval of it
    const visited: string[] = [];
    const external = { owner: 'agent-1', kind: 'external' };
    const handlers: Record<string, Handler> = {
      Prepare: async (input) => ({ runId: input.runId, turn: 0, next: 'await', ...external }),
      AwaitApproval: async (input) => {
        // The pause is handed its run and turn only (the owner is read from the run record).
        const payload = (input.Payload ?? input) as { turn?: unknown; owner?: unknown };
        visited.push(
          `AwaitApproval:${String(payload.turn)}:${payload.owner === undefined ? 'no owner' : 'owner'}`,
        );
        return { approved: true };
      },
      RecordExternalDecision: async ({ runId, turn }) => {
        visited.push(`RecordExternalDecision:${String(turn)}`);
        return { runId, turn, route: turn === 0 ? 'edited' : 'answered' };
      },
      ExecuteTools: async ({ runId, turn }) => {
        visited.push(`ExecuteTools:${String(turn)}`);
        return { runId, turn: 1, route: 'review', ...external };
      },
      NotifyCaller: async ({ runId }) => {
        visited.push('NotifyCaller');
        return { runId, webhook: 'delivered' };
      },
    };

    // Act
    const stateMachine = new StateMachine(definition as never, {
      validationOptions: { checkPaths: true, checkArn: false },
    });
    const options = { taskResourceLocalHandlers: handlers as never };
    await stateMachine.run({ runId: 'run-3' }, { overrides: options, context: CONTEXT as never }).result;

    // Assess: the edit pauses again at the next turn, and the run stays external (no model turn)
    expect(visited).toEqual([
      'AwaitApproval:0:no owner',
      'RecordExternalDecision:0',
      'ExecuteTools:0',
      'AwaitApproval:1:no owner',
      'RecordExternalDecision:1',
      'NotifyCaller',
    ]);
  });
});
