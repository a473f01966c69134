import * as z from 'zod/mini';
import type { CardCallView, PreviewView } from '../core/approvals/build-card-call-views.js';
import type { CardView } from '../core/approvals/card-reader.js';
import { approverGroupSchema } from '../core/approvals/card-routing.js';
import type { PendingCallView } from '../core/approvals/read-pending-call.js';
import type { UnopenableCard } from '../core/approvals/unopenable-card.js';
import type { AwayOutcome } from '../core/delegation/set-away.js';
import type { GenerationOutcome } from '../core/generation/generate-text.js';
import type { RecordedAct } from '../core/ports.js';
import { textDiffSchema } from '../core/previews/text-diff.js';
import { RUN_STATUSES } from '../core/run-record.js';
import type { RunAudit } from '../core/runs/audit-run.js';
import type { CancelOutcome } from '../core/runs/cancel-run.js';
import type { DecisionOutcome } from '../core/runs/decide-run.js';
import { HISTORY_PAGE_SIZE_DEFAULT, HISTORY_PAGE_SIZE_MAX } from '../core/runs/list-history.js';
import { INBOX_PAGE_SIZE_DEFAULT, INBOX_PAGE_SIZE_MAX, type InboxEntry } from '../core/runs/list-inbox.js';
import type { RedriveOutcome } from '../core/runs/redrive-run.js';
import type { RunEvent } from '../core/runs/run-events.js';
import type { RunView } from '../core/runs/view-run.js';
import { type Agrees, CONFIGURATION_ID_PATTERN, pageQuerySchema, type SameShape } from './common-schemas.js';

// The response bodies of the run, inbox, decision and generation routes. Each is checked at
// compile time against the domain type its handler returns (ResponseShapesAgree below), so a
// field added to a view and not here fails the typecheck instead of the published document.

const count = z.number().check(z.int(), z.nonnegative());
const argumentPath = z.array(z.union([z.string(), z.number()]));

export const previewSchema = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('shown'),
    lines: z.array(z.string()),
    caveat: z.string(),
    /** The lines came with an external run's turn (docs/external-agents.md): the caller's, not ours. */
    suppliedBy: z.optional(z.literal('caller')),
    diffs: z.optional(z.array(textDiffSchema)),
  }),
  z.object({ status: z.literal('refused'), lines: z.array(z.string()) }),
  z.object({ status: z.literal('failed'), lines: z.array(z.string()), message: z.string() }),
  z.object({ status: z.literal('withheld'), message: z.string() }),
  z.object({ status: z.literal('none'), message: z.string() }),
]);

/**
 * One call of a card as every surface shows it (docs/previews.md): arguments or their excerpt, and
 * its preview. The API keeps its names: the `pendingTools` entries, the `PendingTool` component.
 */
export const cardCallViewSchema = z.object({
  index: count,
  tool: z.string(),
  arguments: z.unknown(),
  argumentsExcerpt: z.optional(
    z.object({
      cuts: z.array(
        z.discriminatedUnion('kind', [
          z.object({
            kind: z.literal('text'),
            path: argumentPath,
            shownCharacters: count,
            totalCharacters: count,
          }),
          z.object({
            kind: z.literal('entries'),
            path: argumentPath,
            shownEntries: count,
            totalEntries: count,
          }),
        ]),
      ),
      totalCharacters: count,
    }),
  ),
  registered: z.boolean(),
  willRun: z.boolean(),
  requiresApproval: z.boolean(),
  recordChanged: z.optional(z.string()),
  effectUnconfirmed: z.optional(z.string()),
  /** Whether an approver may edit the call's arguments (`decision: "edit"`). */
  editable: z.boolean(),
  /** An approver edited the call: who, and the changes against the model's own proposal. */
  edited: z.optional(
    z.object({
      by: z.string(),
      note: z.string(),
      changes: z.array(
        z.discriminatedUnion('kind', [
          z.object({
            kind: z.literal('changed'),
            path: argumentPath,
            before: z.unknown(),
            after: z.unknown(),
          }),
          z.object({ kind: z.literal('added'), path: argumentPath, after: z.unknown() }),
          z.object({ kind: z.literal('removed'), path: argumentPath, before: z.unknown() }),
        ]),
      ),
      more: count,
    }),
  ),
  preview: previewSchema,
});

/** k-of-n: who approved, out of how many; `lapsedApprovers` no longer count (their authority changed). */
const approvalTallySchema = z.object({
  count,
  required: count,
  approvedBy: z.array(z.string()),
  /** Of `approvedBy`, who approved as the delegate of an approver who is away, and for whom. */
  delegatedApprovals: z.optional(z.array(z.object({ approver: z.string(), actingFor: z.string() }))),
  /** Approvers who made other per-call choices: they do not count toward these approvals. */
  differingApprovers: z.optional(z.array(z.string())),
  lapsedApprovers: z.optional(z.array(z.string())),
});

/** k-of-n progress of a waiting turn. */
const approvalsSchema = z.extend(approvalTallySchema, { summary: z.string() });

/** The flagged placeholder of a card that cannot be opened (the rest of the inbox still renders). */
export const unopenableCardSchema = z.object({
  runId: z.string(),
  unopenable: z.literal(true),
  message: z.string(),
});

/**
 * One waiting card as one viewer sees it (the card reader's CardView): the inbox lists it whole,
 * GET /runs/{id} and the `awaiting_approval` event show the part they name.
 */
/** A text of a card's context, excerpted: `totalCharacters` is the whole text's length. */
const contextTextSchema = z.object({ text: z.string(), totalCharacters: count });

export const cardViewSchema = z.object({
  runId: z.string(),
  owner: z.string(),
  label: z.string(),
  turn: count,
  pausedAt: z.string(),
  expiresAt: z.string(),
  digest: z.string(),
  pendingTools: z.array(cardCallViewSchema),
  approvals: z.optional(approvalsSchema),
  approveRefusal: z.optional(z.string()),
  approverGroups: z.optional(z.array(z.string())),
  /** When and to whom the card escalates while unanswered (its configuration's ladder). */
  escalation: z.optional(
    z.object({
      steps: z.array(z.object({ at: z.string(), approverGroups: z.array(z.string()), reached: z.boolean() })),
    }),
  ),
  /** Indexes of calls decided together (their tools declare it): per-call choices keep each group whole. */
  decidedTogether: z.optional(z.array(z.array(count))),
  /** Delegation: the approver away whom this card reaches the viewer through; decide with `actingFor`. */
  actingFor: z.optional(z.string()),
  context: z.optional(
    z.object({
      ownerName: z.optional(z.string()),
      request: z.optional(contextTextSchema),
      reasoning: z.optional(contextTextSchema),
      withheld: z.optional(z.string()),
    }),
  ),
});

const card = cardViewSchema.shape;

export const runViewSchema = z.object({
  runId: z.string(),
  owner: z.string(),
  label: z.string(),
  status: z.enum(RUN_STATUSES),
  turn: count,
  createdAt: z.string(),
  updatedAt: z.string(),
  endedAt: z.optional(z.string()),
  failureReason: z.optional(z.string()),
  cancellation: z.optional(z.object({ by: z.string(), reason: z.optional(z.string()) })),
  pausedAt: z.optional(card.pausedAt),
  expiresAt: z.optional(card.expiresAt),
  transcript: z.object({
    messages: count,
    toolCalls: count,
    finalAnswer: z.optional(z.string()),
    sealed: z.optional(z.literal('refused')),
  }),
  digest: z.optional(card.digest),
  pendingTools: z.optional(card.pendingTools),
  unopenableCard: z.optional(unopenableCardSchema),
  approvals: card.approvals,
  approveRefusal: card.approveRefusal,
  approverGroups: card.approverGroups,
  context: card.context,
  usage: z.optional(z.object({ inputTokens: count, outputTokens: count, modelCalls: count })),
  failure: z.optional(z.object({ step: z.string(), turn: count, error: z.string(), transient: z.boolean() })),
  redrives: z.optional(count),
});

export const startRunResponseSchema = z.object({ runId: z.string(), status: z.literal('running') });

export const cancelResponseSchema = z.object({
  runId: z.string(),
  status: z.literal('cancelled'),
  cancelledBy: z.string(),
  cancelledAt: z.string(),
  reason: z.optional(z.string()),
  repeated: z.boolean(),
});

/** A filter value a person types: no control characters, bounded. */
const filterText = (maximum: number) =>
  z.optional(
    z.string().check(z.minLength(1), z.maxLength(maximum), z.regex(/^[^\p{Cc}]+$/u, 'no control characters')),
  );

/**
 * The inbox's `?limit=&cursor=` (1 to 100 cards, 20 when absent), its filters (`configuration`,
 * `tool`, `owner`, `group`: the routed group) and `sort` (`newest`, or `deadline`: closing soon).
 * Anything else is a 400 naming it.
 */
export const inboxQuerySchema = z.strictObject({
  ...pageQuerySchema(INBOX_PAGE_SIZE_MAX, INBOX_PAGE_SIZE_DEFAULT).shape,
  configuration: z.optional(z.string().check(z.regex(CONFIGURATION_ID_PATTERN, 'a configuration id'))),
  tool: filterText(128),
  owner: filterText(200),
  group: z.optional(approverGroupSchema),
  sort: z._default(z.enum(['newest', 'deadline']), 'newest'),
});
export const redriveResponseSchema = z.object({
  runId: z.string(),
  status: z.enum(['running', 'waiting']),
  failedStep: z.string(),
  redrives: count,
  redrivenBy: z.string(),
  redrivenAt: z.string(),
  repeated: z.boolean(),
});

export const inboxPageSchema = z.object({
  cards: z.array(z.union([cardViewSchema, unopenableCardSchema])),
  cursor: z.optional(z.string()),
});

/** 200: the decision is on record (`repeated` when this request said it again). */
/** One call's own choice in a per-call decision (a rejection with its reason), as answers show it. */
const callChoiceViewSchema = z.object({
  index: count,
  tool: z.string(),
  decision: z.enum(['approve', 'reject']),
  reason: z.optional(z.string()),
});

export const decidedSchema = z.object({
  kind: z.literal('decided'),
  runId: z.string(),
  turn: count,
  /** `edit`: the edited calls go on a fresh card (the next turn) for approval; nothing ran. */
  decision: z.enum(['approve', 'reject', 'edit']),
  /** Per-call decisions: what the decision did with each call of the card. */
  choices: z.optional(z.array(callChoiceViewSchema)),
  repeated: z.boolean(),
});

/** 202: a k-of-n approval is on record, and the turn waits for more distinct approvers. */
export const approvalRecordedSchema = z.object({
  kind: z.literal('approval-recorded'),
  runId: z.string(),
  turn: count,
  approvals: approvalTallySchema,
  message: z.string(),
});

/** PUT and DELETE /users/{id}/away: the approver's delegation as it now stands. */
export const awayResponseSchema = z.object({
  userId: z.string(),
  away: z.optional(
    z.object({ delegate: z.string(), until: z.string(), setBy: z.string(), setAt: z.string() }),
  ),
});

/** GET /runs/{id}/calls/{index}: one pending call's full arguments, at the turn and digest it waits on. */
export const pendingCallViewSchema = z.object({
  runId: z.string(),
  turn: count,
  digest: z.string(),
  index: count,
  tool: z.string(),
  arguments: z.unknown(),
});

export const generationResponseSchema = z.object({
  text: z.string(),
  stopReason: z.enum(['end_turn', 'tool_use', 'max_tokens', 'other']),
  usage: z.optional(z.object({ inputTokens: count, outputTokens: count })),
});

/** One server-sent event of GET /runs/{id}/events: its name and its one JSON data line. */
export const runEventSchema = z.discriminatedUnion('event', [
  z.object({
    event: z.literal('turn'),
    data: z.object({
      turn: count,
      text: z.string(),
      toolCalls: z.array(z.object({ index: count, tool: z.string() })),
    }),
  }),
  z.object({
    event: z.literal('tool_result'),
    data: z.object({ turn: count, index: count, tool: z.string(), isError: z.boolean() }),
  }),
  z.object({
    event: z.literal('awaiting_approval'),
    data: z.pick(cardViewSchema, {
      runId: true,
      turn: true,
      digest: true,
      pausedAt: true,
      expiresAt: true,
      pendingTools: true,
      approvals: true,
    }),
  }),
  z.object({ event: z.literal('card_unopenable'), data: unopenableCardSchema }),
  z.object({
    event: z.literal('state'),
    data: z.object({
      runId: z.string(),
      status: z.enum(RUN_STATUSES),
      turn: count,
      updatedAt: z.string(),
      endedAt: z.optional(z.string()),
      failureReason: z.optional(z.string()),
      cancellation: z.optional(z.object({ by: z.string(), reason: z.optional(z.string()) })),
    }),
  }),
]);

const previewShownSchema = z.enum(['captured', 'refused', 'failed', 'none']);

/** GET /runs/{id}/audit: the run's decisions, approvals and ending, oldest first. */
export const runAuditSchema = z.object({
  runId: z.string(),
  owner: z.string(),
  label: z.string(),
  status: z.enum(RUN_STATUSES),
  createdAt: z.string(),
  endedAt: z.optional(z.string()),
  entries: z.array(
    z.discriminatedUnion('kind', [
      z.object({
        kind: z.literal('approval'),
        turn: count,
        at: z.string(),
        by: z.string(),
        digest: z.string(),
        count,
        required: z.optional(count),
      }),
      z.object({
        kind: z.literal('decision'),
        turn: count,
        at: z.string(),
        by: z.string(),
        digest: z.string(),
        decision: z.enum(['approve', 'reject', 'edit']),
        reason: z.optional(z.string()),
        approvedBy: z.optional(z.array(z.string())),
        actingFor: z.optional(z.string()),
        choices: z.optional(z.array(callChoiceViewSchema)),
        calls: z.array(z.object({ index: count, tool: z.string(), preview: previewShownSchema })),
      }),
      z.object({
        kind: z.literal('cancel'),
        at: z.string(),
        by: z.string(),
        reason: z.optional(z.string()),
        turn: z.optional(count),
      }),
      z.object({ kind: z.literal('expiry'), at: z.string(), reason: z.optional(z.string()) }),
      z.object({ kind: z.literal('failure'), at: z.string(), reason: z.optional(z.string()) }),
    ]),
  ),
});

/** One act of "decided by me". */
export const recordedActSchema = z.object({
  kind: z.enum(['decision', 'approval']),
  runId: z.string(),
  turn: count,
  at: z.string(),
  digest: z.string(),
  decision: z.optional(z.enum(['approve', 'reject', 'edit', 'cancel'])),
  run: z.optional(z.object({ label: z.string(), status: z.enum(RUN_STATUSES) })),
});

/** `?limit=&cursor=` of the history lists (1 to 100, 20 when absent). */
export const historyQuerySchema = pageQuerySchema(HISTORY_PAGE_SIZE_MAX, HISTORY_PAGE_SIZE_DEFAULT);

type Without<Value, Key extends PropertyKey> = Value extends unknown ? Omit<Value, Key> : never;

/** Compile-time agreement of each response schema with the type its handler answers. */
export type ResponseShapesAgree = [
  Agrees<SameShape<z.output<typeof previewSchema>, PreviewView>>,
  Agrees<SameShape<z.output<typeof cardCallViewSchema>, CardCallView>>,
  Agrees<SameShape<z.output<typeof unopenableCardSchema>, UnopenableCard>>,
  Agrees<SameShape<z.output<typeof runViewSchema>, RunView>>,
  Agrees<SameShape<z.output<typeof cardViewSchema>, CardView>>,
  Agrees<SameShape<z.output<typeof inboxPageSchema>['cards'][number], InboxEntry>>,
  Agrees<SameShape<z.output<typeof cancelResponseSchema>, Without<CancelOutcome, 'kind'>>>,
  Agrees<SameShape<z.output<typeof redriveResponseSchema>, Without<RedriveOutcome, 'kind'>>>,
  Agrees<
    SameShape<z.output<typeof decidedSchema> | z.output<typeof approvalRecordedSchema>, DecisionOutcome>
  >,
  Agrees<SameShape<z.output<typeof pendingCallViewSchema>, PendingCallView>>,
  Agrees<SameShape<z.output<typeof awayResponseSchema>, AwayOutcome>>,
  Agrees<SameShape<z.output<typeof runEventSchema>, RunEvent>>,
  Agrees<SameShape<z.output<typeof generationResponseSchema>, Without<GenerationOutcome, 'kind'>>>,
  Agrees<SameShape<z.output<typeof runAuditSchema>, RunAudit>>,
  Agrees<SameShape<z.output<typeof recordedActSchema>, RecordedAct>>,
];
