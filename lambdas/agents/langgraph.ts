import { Command, INTERRUPT, interrupt } from '@langchain/langgraph';
import * as z from 'zod/mini';
import { canonicalJson, sha256Hex } from '../core/canonical-json.js';
import { CountersignError } from '../core/errors.js';
import { DECLARED_EFFECTS } from '../core/external-runs/external-turn.js';
import { TEXTS } from '../core/texts.js';
import type {
  ApprovalRequest,
  CallVerdict,
  CountersignAnswer,
  CountersignApprovals,
  WaitOptions,
} from './countersign-approvals.js';

/** Marks the interrupts this adapter answers among any others a graph raises. */
const COUNTERSIGN_INTERRUPT = 'countersign-approval';

/** What a node asks countersign: the calls it proposes and their tools' effects. */
export type CountersignTurn = Omit<ApprovalRequest, 'configurationId' | 'clientKey'>;

const interruptValueSchema = z.object({
  kind: z.literal(COUNTERSIGN_INTERRUPT),
  summary: z.optional(z.string()),
  tools: z.array(
    z.object({ name: z.string(), effect: z.enum(DECLARED_EFFECTS), editable: z.optional(z.boolean()) }),
  ),
  calls: z.array(
    z.object({
      tool: z.string(),
      arguments: z.unknown(),
      callId: z.optional(z.string()),
      preview: z.optional(z.array(z.string())),
    }),
  ),
});

const verdictSchema = z.union([
  z.object({
    decision: z.literal('approved'),
    index: z.number(),
    callId: z.string(),
    tool: z.string(),
    arguments: z.record(z.string(), z.unknown()),
    edited: z.optional(z.object({ by: z.string() })),
  }),
  z.object({
    decision: z.literal('rejected'),
    index: z.number(),
    callId: z.string(),
    tool: z.string(),
    reason: z.optional(z.string()),
  }),
]);
const answerSchema = z.object({ runId: z.string(), calls: z.array(verdictSchema) });

/**
 * In a LangGraph node: interrupts the graph with the calls the node proposes, and returns the
 * countersign answer the graph is resumed with (`invokeWithCountersign` does both). A node runs
 * again from its start on resume, so build the turn from the graph's state; one countersign
 * interrupt per node run. An answer that does not match the turn throws: nothing runs.
 *
 * @example
 * const answer = awaitCountersign({ tools: [{ name: 'send_invoice', effect: 'write' }], calls });
 * const outcomes = await runCountersignedCalls(answer, { send_invoice: sendInvoice }, { approvals });
 */
export function awaitCountersign(turn: CountersignTurn): CountersignAnswer {
  const resumed: unknown = interrupt({ kind: COUNTERSIGN_INTERRUPT, ...turn });
  const answer = answerSchema.safeParse(resumed);
  const matches =
    answer.success &&
    answer.data.calls.length === turn.calls.length &&
    answer.data.calls.every((call, index) => call.index === index && call.tool === turn.calls[index]?.tool);
  if (!answer.success || !matches) {
    throw new CountersignError('bad-request', TEXTS.agentAnswerMismatch(answer.data?.runId ?? 'unknown'));
  }
  return answer.data as CountersignAnswer;
}

/** What became of one call of a countersigned turn. */
export type CountersignedCallOutcome =
  | {
      readonly kind: 'ran';
      readonly verdict: CallVerdict & { decision: 'approved' };
      readonly result: unknown;
    }
  | {
      readonly kind: 'failed';
      readonly verdict: CallVerdict & { decision: 'approved' };
      readonly error: unknown;
    }
  | { readonly kind: 'rejected'; readonly verdict: CallVerdict; readonly message: string };

/** What an approved call's outcome is reported as (an approved call without an executor is skipped). */
const REPORTED_OUTCOME = { ran: 'succeeded', failed: 'failed', rejected: 'skipped' } as const;

/**
 * Runs each approved call of the answer with the arguments it carries (an approver's edit, when
 * there is one: LangGraph resumes with any value, so this adapter runs what was approved), one at a
 * time in the turn's order; a rejected call does not run and says why. With `approvals`, reports
 * what ran to countersign for the audit.
 */
export async function runCountersignedCalls(
  answer: CountersignAnswer,
  executors: Readonly<Record<string, (input: Record<string, unknown>) => unknown>>,
  options: { readonly approvals?: CountersignApprovals; readonly signal?: AbortSignal } = {},
): Promise<CountersignedCallOutcome[]> {
  const outcomes: CountersignedCallOutcome[] = [];
  for (const verdict of answer.calls) {
    const execute = Object.hasOwn(executors, verdict.tool) ? executors[verdict.tool] : undefined;
    if (verdict.decision === 'rejected' || execute === undefined) {
      const message =
        verdict.decision === 'rejected'
          ? TEXTS.agentCallRejected(verdict.reason)
          : TEXTS.agentTurnInvalid(`calls[${verdict.index}].tool: no executor for "${verdict.tool}"`);
      outcomes.push({ kind: 'rejected', verdict, message });
      continue;
    }
    try {
      outcomes.push({ kind: 'ran', verdict, result: await execute(verdict.arguments) });
    } catch (error) {
      outcomes.push({ kind: 'failed', verdict, error });
    }
  }
  const reports = outcomes.flatMap((outcome) => {
    if (outcome.verdict.decision !== 'approved') return [];
    const edited = outcome.kind === 'ran' ? outcome.verdict.edited : undefined;
    return [
      {
        index: outcome.verdict.index,
        outcome: REPORTED_OUTCOME[outcome.kind],
        ...(edited ? { detail: TEXTS.agentRanEditedArguments(edited.by) } : {}),
      },
    ];
  });
  if (options.approvals && reports.length > 0) {
    await options.approvals.reportExecution(answer.runId, reports, options);
  }
  return outcomes;
}

export interface LangGraphCountersignOptions extends WaitOptions {
  readonly approvals: CountersignApprovals;
  /** The configuration whose policy each turn is decided under. */
  readonly configurationId: string;
}

/** The part of a compiled graph this adapter drives. */
export interface InvocableGraph<State> {
  invoke(input: unknown, config: { configurable: { thread_id: string } }): Promise<State>;
}

/**
 * Invokes the graph, and while it stops on countersign interrupts, submits each one's turn,
 * awaits the decision and resumes the graph with the answers (`Command({ resume })`, by interrupt
 * id). The client key of a turn is derived from the thread, the interrupt and the turn, so a
 * retry after a crash finds the same card. Returns the graph's last result: finished, or stopped
 * on an interrupt that is not countersign's (yours to answer). The graph needs a checkpointer.
 *
 * @example
 * const state = await invokeWithCountersign(graph, { request }, { configurable: { thread_id } }, { approvals, configurationId: 'billing-agent' });
 */
export async function invokeWithCountersign<State>(
  graph: InvocableGraph<State>,
  input: unknown,
  config: { configurable: { thread_id: string } },
  options: LangGraphCountersignOptions,
): Promise<State> {
  let result = await graph.invoke(input, config);
  for (;;) {
    const pending = interruptsOf(result);
    const turns = pending.map((each) => ({ id: each.id, value: interruptValueSchema.safeParse(each.value) }));
    if (turns.length === 0 || turns.some((turn) => !turn.value.success || turn.id === undefined))
      return result;
    const resume: Record<string, CountersignAnswer> = {};
    for (const turn of turns) {
      const { kind: _kind, ...request } = turn.value.data as z.output<typeof interruptValueSchema>;
      const clientKey = `langgraph-${sha256Hex(canonicalJson([config.configurable.thread_id, turn.id, request]))}`;
      resume[turn.id as string] = await options.approvals.requestApproval(
        { ...request, configurationId: options.configurationId, clientKey },
        options,
      );
    }
    result = await graph.invoke(new Command({ resume }), config);
  }
}

function interruptsOf(result: unknown): Array<{ id?: string; value?: unknown }> {
  if (typeof result !== 'object' || result === null || !(INTERRUPT in result)) return [];
  const interrupts = (result as Record<string, unknown>)[INTERRUPT];
  return Array.isArray(interrupts) ? interrupts : [];
}
