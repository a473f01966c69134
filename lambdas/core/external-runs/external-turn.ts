import * as z from 'zod/mini';
import type { CallGuard } from '../approvals/needs-human-approval.js';
import { PREVIEW_MAX_LINE_CHARACTERS, PREVIEW_MAX_LINES } from '../previews/bound-preview-lines.js';
import { MAX_TURN_CALLS } from '../runs/take-model-turn.js';
import { TOOL_NAME_PATTERN } from '../tools/tool.js';

/**
 * What a tool of an agent that runs elsewhere does, as the agent declares it. `unknown` is a
 * write that says so: every gate covers it as a write, and the card shows the effect was not
 * confirmed (the rule of `approvals/needs-human-approval.ts`).
 */
export const DECLARED_EFFECTS = ['read', 'write', 'unknown'] as const;
export type DeclaredEffect = (typeof DECLARED_EFFECTS)[number];

/** How a call of a tool so declared is guarded: a read runs without a human, the rest wait. */
export function guardOfDeclaredEffect(effect: DeclaredEffect): CallGuard {
  if (effect === 'read') return 'none';
  return effect === 'write' ? 'write' : 'unconfirmed';
}

/** The longest idempotency key a caller may send (a UUID fits four times over). */
export const MAX_CLIENT_KEY_CHARACTERS = 200;
/** The longest description of what the turn is for: it opens the run's transcript, as a run's input does. */
export const MAX_EXTERNAL_SUMMARY_CHARACTERS = 4_000;
/** The most tools one turn may declare: one per call at most. */
const MAX_DECLARED_TOOLS = MAX_TURN_CALLS;

const callerToolNameSchema = z
  .string()
  .check(z.regex(TOOL_NAME_PATTERN, 'use a letter, then letters, digits, "_" or "-", at most 64'));

/**
 * One call of an external turn. Arguments are a JSON object, as every tool call's are; preview
 * lines are the caller's own (bounded as ours are, quoted and flagged on the card).
 */
const externalCallSchema = z.strictObject({
  tool: callerToolNameSchema,
  arguments: z.record(z.string(), z.unknown()),
  /** The caller's id of the call, echoed in the answer. @default - `call-<index>` */
  callId: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
  preview: z.optional(
    z
      .array(z.string().check(z.maxLength(PREVIEW_MAX_LINE_CHARACTERS)))
      .check(z.minLength(1), z.maxLength(PREVIEW_MAX_LINES)),
  ),
});

/**
 * `POST /external-runs`: an agent that runs elsewhere submits its turn for approval under a
 * configuration's policy. `clientKey` makes a retry return the run the first request started.
 */
export const submitExternalRunRequestSchema = z
  .strictObject({
    configurationId: z.string().check(z.minLength(1), z.maxLength(100)),
    clientKey: z.string().check(z.minLength(1), z.maxLength(MAX_CLIENT_KEY_CHARACTERS)),
    summary: z.optional(z.string().check(z.minLength(1), z.maxLength(MAX_EXTERNAL_SUMMARY_CHARACTERS))),
    tools: z
      .array(
        z.strictObject({
          name: callerToolNameSchema,
          effect: z.enum(DECLARED_EFFECTS),
          /**
           * Whether an approver may edit the arguments of this tool's calls (the answer then
           * carries the arguments to run instead). Checked as a JSON object within a turn's bounds:
           * countersign runs no JSON Schema validator, so a tool cannot give a schema. @default false
           */
          editable: z.optional(z.boolean()),
        }),
      )
      .check(z.minLength(1), z.maxLength(MAX_DECLARED_TOOLS)),
    calls: z.array(externalCallSchema).check(z.minLength(1), z.maxLength(MAX_TURN_CALLS)),
    /** Where the answer is posted, signed (https; docs/external-agents.md). */
    webhookUrl: z.optional(z.string().check(z.minLength(1), z.maxLength(2_000))),
  })
  .check(
    z.refine(
      (body: { tools: ReadonlyArray<{ name: string }> }) =>
        new Set(body.tools.map((tool) => tool.name)).size === body.tools.length,
      { message: 'declare each tool once', path: ['tools'] },
    ),
  );
export type SubmitExternalRunRequest = z.infer<typeof submitExternalRunRequestSchema>;
