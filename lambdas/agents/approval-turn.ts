import { CountersignError } from '../core/errors.js';
import {
  type DeclaredEffect,
  type SubmitExternalRunRequest,
  submitExternalRunRequestSchema,
} from '../core/external-runs/external-turn.js';
import { nestsDeeperThan } from '../core/json-depth.js';
import { MAX_TURN_ARGUMENTS_BYTES, MAX_TURN_ARGUMENTS_DEPTH } from '../core/runs/take-model-turn.js';
import { formatSchemaIssues } from '../core/schema-messages.js';
import { TEXTS } from '../core/texts.js';

/** An SDK's call id, echoed on the card and in the answer: printable ASCII, no spaces. */
const CALL_ID_PATTERN = /^[\x21-\x7e]{1,200}$/;

/** One call an agent proposes, as its SDK gave it. */
export interface ProposedCall {
  readonly tool: string;
  /** The model's arguments: a JSON object (checked before anything is sent). */
  readonly arguments: unknown;
  /** The SDK's id of the call (echoed in the answer). @default - `call-<index>` */
  readonly callId?: string;
  /** Lines the caller computed to preview the call, flagged on the card as supplied by the caller. */
  readonly preview?: readonly string[];
}

/** A turn to countersign: the calls that need approval, under a configuration's policy. */
export interface ApprovalRequest {
  readonly configurationId: string;
  /** One per turn, the same on every retry of it: a retry finds the run the first attempt started. */
  readonly clientKey: string;
  readonly summary?: string;
  /**
   * Each tool once, with its effect; `editable` lets an approver correct its calls' arguments
   * (the answer then says what to run), for an agent that can run them (LangGraph).
   */
  readonly tools: ReadonlyArray<{
    readonly name: string;
    readonly effect: DeclaredEffect;
    readonly editable?: boolean;
  }>;
  readonly calls: readonly ProposedCall[];
}

/** The request body of a turn, every value checked against the API's own schema and bounds first. */
export function turnBodyOf(request: ApprovalRequest): SubmitExternalRunRequest {
  const problems: string[] = [];
  const calls = request.calls.map((call, index) => {
    const field = `calls[${index}]`;
    const argumentsObject = jsonObjectOf(call.arguments);
    if (argumentsObject === undefined) problems.push(`${field}.arguments: not a JSON object`);
    else if (nestsDeeperThan(argumentsObject, MAX_TURN_ARGUMENTS_DEPTH)) {
      problems.push(`${field}.arguments: nested more than ${MAX_TURN_ARGUMENTS_DEPTH} levels deep`);
    }
    if (call.callId !== undefined && !CALL_ID_PATTERN.test(call.callId)) {
      problems.push(`${field}.callId: 1 to 200 printable characters without spaces`);
    } else if (
      call.callId !== undefined &&
      request.calls.findIndex((other) => other.callId === call.callId) < index
    ) {
      // Reports and answers are matched by call id: two calls may not share one.
      problems.push(`${field}.callId: the same as an earlier call's`);
    }
    return {
      tool: call.tool,
      arguments: argumentsObject ?? {},
      ...(call.callId === undefined ? {} : { callId: call.callId }),
      ...(call.preview === undefined ? {} : { preview: [...call.preview] }),
    };
  });
  const argumentsBytes = calls.reduce(
    (total, call) => total + Buffer.byteLength(JSON.stringify(call.arguments)),
    0,
  );
  if (argumentsBytes > MAX_TURN_ARGUMENTS_BYTES) {
    problems.push(`calls: arguments of ${argumentsBytes} bytes, more than ${MAX_TURN_ARGUMENTS_BYTES}`);
  }
  const body = {
    configurationId: request.configurationId,
    clientKey: request.clientKey,
    ...(request.summary === undefined ? {} : { summary: request.summary }),
    tools: request.tools.map((tool) => ({
      name: tool.name,
      effect: tool.effect,
      ...(tool.editable ? { editable: true } : {}),
    })),
    calls,
  };
  const parsed = submitExternalRunRequestSchema.safeParse(body);
  if (!parsed.success) problems.push(formatSchemaIssues(parsed.error.issues));
  if (problems.length > 0 || !parsed.success) {
    throw new CountersignError('bad-request', TEXTS.agentTurnInvalid(problems.join('; ')));
  }
  return parsed.data;
}

/** The value as a plain JSON object (a copy, as JSON carries it), or undefined. */
function jsonObjectOf(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  try {
    const copy: unknown = JSON.parse(JSON.stringify(value));
    return typeof copy === 'object' && copy !== null && !Array.isArray(copy)
      ? (copy as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
