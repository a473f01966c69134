import * as z from 'zod/mini';
import { refusingPrototypeKeys } from '../persisted-shape.js';
import type { ChainEntry } from '../receipts/chain-entry.js';

/**
 * One approver's response to a card, for approver analytics (docs/runbook.md, "Approver
 * analytics"): who answered, how, and how long after the card appeared. Derived from a receipt
 * entry as it is appended, so the analytics count what the receipts prove. Version 3 counts edits
 * (`outcome: "edit"`); version 2 was never written (it was the refused future version while
 * version 1 was current); version 1 reads as version 3. Fixtures: `test/fixtures/approver-response/`.
 */
export const APPROVER_RESPONSE_SCHEMA_VERSION = 3;

/** What an approver did with a card: approved (some or every call), rejected it, or edited calls. */
export const RESPONSE_OUTCOMES = ['approve', 'reject', 'edit'] as const;
export type ResponseOutcome = (typeof RESPONSE_OUTCOMES)[number];

/** The group a card routed to nobody in particular counts under: no group name can be written so. */
export const EVERY_APPROVER_GROUP = '(every approver)';

const responseFields = {
  runId: z.string().check(z.minLength(1)),
  turn: z.number().check(z.int(), z.nonnegative()),
  /** The receipt entry it came from: one response per entry. */
  sequence: z.number().check(z.int(), z.nonnegative()),
  approver: z.string().check(z.minLength(1)),
  /** The groups the card was routed to, sorted; `EVERY_APPROVER_GROUP` alone when none. */
  groups: z.array(z.string()).check(z.minLength(1)),
  cardShownAt: z.iso.datetime(),
  respondedAt: z.iso.datetime(),
  /** From the card appearing to this response, never negative (clocks of two functions). */
  responseMilliseconds: z.number().check(z.int(), z.nonnegative()),
};

export const approverResponseSchema = z.object({
  schemaVersion: z.literal(APPROVER_RESPONSE_SCHEMA_VERSION),
  ...responseFields,
  outcome: z.enum(RESPONSE_OUTCOMES),
});
export type ApproverResponse = z.infer<typeof approverResponseSchema>;

/** Version 1: approvals and rejections only, read as the current version. */
const version1Schema = z.pipe(
  z.object({ schemaVersion: z.literal(1), ...responseFields, outcome: z.enum(['approve', 'reject']) }),
  z.transform(
    ({ schemaVersion: _written, ...response }): ApproverResponse => ({
      schemaVersion: APPROVER_RESPONSE_SCHEMA_VERSION,
      ...response,
    }),
  ),
);

export const readableApproverResponseSchema = refusingPrototypeKeys<ApproverResponse>(
  z.union([approverResponseSchema, version1Schema]),
);

/**
 * The response a receipt entry records, if it records one: each k-of-n approval, a decision that
 * was its decider's own answer (a rejection, or an approval a single approver released), and each
 * edit. The decision that completes a k-of-n tally is not a second response: its approval was
 * counted.
 *
 * @example
 * readApproverResponse(entry) // { approver: 'ana', outcome: 'approve', responseMilliseconds: 4200, … }
 */
export function readApproverResponse(entry: ChainEntry): ApproverResponse | undefined {
  if (entry.kind === 'approval') {
    return response(entry, entry.approver.userId, 'approve', entry.approvedAt);
  }
  if (entry.kind === 'edit') return response(entry, entry.editedBy.userId, 'edit', entry.editedAt);
  if (entry.kind !== 'decision') return undefined;
  if (entry.decision === 'approve' && entry.policy.requiredApprovals > 1) return undefined;
  return response(entry, entry.decidedBy.userId, entry.decision, entry.decidedAt);
}

function response(
  entry: Extract<ChainEntry, { kind: 'approval' | 'decision' | 'edit' }>,
  approver: string,
  outcome: ResponseOutcome,
  respondedAt: string,
): ApproverResponse {
  const groups =
    entry.policy.approverGroups.length > 0 ? [...entry.policy.approverGroups] : [EVERY_APPROVER_GROUP];
  return {
    schemaVersion: APPROVER_RESPONSE_SCHEMA_VERSION,
    runId: entry.runId,
    turn: entry.turn,
    sequence: entry.sequence,
    approver,
    groups,
    outcome,
    cardShownAt: entry.cardShownAt,
    respondedAt,
    responseMilliseconds: Math.max(0, Date.parse(respondedAt) - Date.parse(entry.cardShownAt)),
  };
}

/**
 * The key responses are kept and listed by: their time, then their run and receipt entry, which
 * make it unique (recording a response again keeps one).
 *
 * @example
 * responseOrderKey(response) // '2026-03-01T10:00:30.000Z#run-1#00000002'
 */
export function responseOrderKey(
  response: Pick<ApproverResponse, 'respondedAt' | 'runId' | 'sequence'>,
): string {
  return `${response.respondedAt}#${response.runId}#${String(response.sequence).padStart(8, '0')}`;
}

/** Port: approver responses by time (DynamoDB deployed and locally), for the admin's analytics. */
export interface ApproverResponseStore {
  /** Idempotent: a response is kept under its run and receipt entry. */
  recordResponse(response: ApproverResponse): Promise<void>;
  /** Responses given from `from` up to `to`, oldest first, a page at a time. */
  listResponses(options: ResponsePageRequest): Promise<ResponsePage>;
}

/** One page of responses asked for: the window, the page size, and where the last page ended. */
export interface ResponsePageRequest {
  from: Date;
  to: Date;
  limit: number;
  cursor?: string;
}

export interface ResponsePage {
  items: ApproverResponse[];
  cursor?: string;
}
