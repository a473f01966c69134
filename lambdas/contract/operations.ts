import * as z from 'zod/mini';
import type * as zc from 'zod/v4/core';
import { approverAnalyticsQuerySchema } from '../core/analytics/read-approver-analytics.js';
import { slackInteractionFormSchema } from '../core/channels/receive-slack-interaction.js';
import { awayRequestSchema } from '../core/delegation/set-away.js';
import { externalRunQuerySchema } from '../core/external-runs/await-external-answer.js';
import { submitExternalRunRequestSchema } from '../core/external-runs/external-turn.js';
import { reportExecutionRequestSchema } from '../core/external-runs/report-external-execution.js';
import { completeRequestSchema, translateRequestSchema } from '../core/generation/generate-text.js';
import { runSummarySchema } from '../core/run-record.js';
import { cancelRequestSchema } from '../core/runs/cancel-run.js';
import { decisionRequestSchema } from '../core/runs/decide-run.js';
import { startRunRequestSchema } from '../core/runs/start-run.js';
import { attachSkillsRequestSchema } from '../core/skills/attach-skills.js';
import { ingestSummarySchema } from '../core/skills/ingest-skills.js';
import { enableSkillRequestSchema } from '../core/skills/review-skill.js';
import {
  ADMIN_COLLECTION_SCHEMAS,
  adminItemPathSchema,
  adminListQuerySchema,
  attachmentPathSchema,
  attachmentSchema,
  deletedSchema,
  ingestRequestSchema,
  skillPathSchema,
  skillSummarySchema,
  skillWithAuditSchema,
} from './admin-schemas.js';
import { approverAnalyticsSchema } from './analytics-schemas.js';
import {
  CONFIGURATION_ID_PATTERN,
  callPathSchema,
  decisionUnavailableBodySchema,
  pagedListSchema,
  runPathSchema,
} from './common-schemas.js';
import { externalRunViewSchema, submitExternalRunResponseSchema } from './external-schemas.js';
import { receiptResponseSchema } from './receipt-schemas.js';
import type { OperationId, RouteAuth } from './routes.js';
import {
  approvalRecordedSchema,
  awayResponseSchema,
  cancelResponseSchema,
  decidedSchema,
  generationResponseSchema,
  historyQuerySchema,
  inboxPageSchema,
  inboxQuerySchema,
  pendingCallViewSchema,
  recordedActSchema,
  redriveResponseSchema,
  runAuditSchema,
  runEventSchema,
  runViewSchema,
  startRunResponseSchema,
} from './run-schemas.js';

/** What a successful answer carries: a JSON body, and/or HTML for the page, or a server-sent event stream. */
export interface SuccessContent {
  readonly description: string;
  readonly json?: zc.$ZodType;
  /** The same data as escaped HTML, for a request that sends `Accept: text/html` (the inbox page). */
  readonly html?: string;
  /** `text/event-stream`: one `event:` and one JSON `data:` line per event, each event as this schema reads it. */
  readonly eventStream?: { readonly description: string; readonly event: zc.$ZodType };
  /** `text/javascript`: a script module the page loads (its description). */
  readonly script?: string;
}

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 410 | 413 | 429 | 500 | 502 | 503 | 504;

/** One operation of the API: the schemas its handler validates requests with, and what it answers. */
export interface OperationContract {
  readonly summary: string;
  readonly path?: zc.$ZodObject;
  readonly query?: zc.$ZodObject;
  readonly body?: zc.$ZodType;
  /** Whether the body may be left out (a bare POST). @default false */
  readonly bodyOptional?: boolean;
  /** How the body is sent. @default 'application/json' */
  readonly bodyMediaType?: 'application/json' | 'application/x-www-form-urlencoded';
  readonly success: Readonly<Partial<Record<200 | 202, SuccessContent>>>;
  /** Refusals beyond the ones every route can answer (see {@link errorStatusesOf}). */
  readonly errors?: readonly ErrorStatus[];
  /**
   * The 200 carries an `ETag`; a request whose `If-None-Match` names it gets 304 with no body,
   * so a page that polls pays no transfer while nothing changed.
   * @default false
   */
  readonly conditional?: boolean;
  /** A refusal whose body says more than `{"error": {"code", "message"}}`, by status. */
  readonly errorBodies?: Readonly<Partial<Record<ErrorStatus, { description: string; json: zc.$ZodType }>>>;
}

const configurationPathSchema = z.object({ id: z.string().check(z.regex(CONFIGURATION_ID_PATTERN)) });
const userPathSchema = z.object({ id: z.string().check(z.minLength(1), z.maxLength(200)) });

const json = <Schema extends zc.$ZodType>(description: string, schema: Schema) => ({
  description,
  json: schema,
});

/**
 * The admin CRUD operations of one collection, from its schemas. The schemas come in as their own
 * type parameters (not indexed by the collection's name) so each operation keeps its exact types.
 */
function adminCollection<Body extends zc.$ZodType, Item extends zc.$ZodType, Page extends zc.$ZodType>(
  label: string,
  schemas: { readonly body: Body; readonly item: Item; readonly page: Page },
) {
  return {
    list: {
      summary: `List ${label}s, paged.`,
      query: adminListQuerySchema,
      success: { 200: json(`A page of ${label}s.`, schemas.page) },
    },
    get: {
      summary: `Read one ${label}.`,
      path: adminItemPathSchema,
      success: { 200: json(`The ${label}.`, schemas.item) },
    },
    put: {
      summary: `Create or replace one ${label}; the body's id must equal the path's.`,
      path: adminItemPathSchema,
      body: schemas.body,
      success: { 200: json(`The ${label} as stored.`, schemas.item) },
    },
    delete: {
      summary: `Delete one ${label}.`,
      path: adminItemPathSchema,
      success: { 200: json('What was deleted.', deletedSchema) },
      errors: [409],
    },
  } satisfies Record<string, OperationContract>;
}

const configurations = adminCollection('configuration', ADMIN_COLLECTION_SCHEMAS.configurations);
const tasks = adminCollection('task', ADMIN_COLLECTION_SCHEMAS.tasks);
const users = adminCollection('user', ADMIN_COLLECTION_SCHEMAS.users);
const pages = adminCollection('page', ADMIN_COLLECTION_SCHEMAS.pages);
const slackUsers = adminCollection('Slack user link', ADMIN_COLLECTION_SCHEMAS['slack-users']);

/**
 * The contract of every operation in the route manifest, by operationId: the same schema objects
 * the handlers validate requests with, and the response schemas the OpenAPI document, the typed
 * client and the end-to-end response checks read.
 */
export const OPERATIONS = {
  startRun: {
    summary: 'Start a run of a task or a configuration with an input.',
    body: startRunRequestSchema,
    success: { 202: json('The run started.', startRunResponseSchema) },
  },
  submitExternalRun: {
    summary:
      'An agent that runs elsewhere submits a turn for approval (machine clients only); a retry with the same clientKey gets the same run.',
    body: submitExternalRunRequestSchema,
    success: { 202: json('The turn waits for a decision on its card.', submitExternalRunResponseSchema) },
    errors: [409],
  },
  getExternalRun: {
    summary:
      'The answer to a submitted turn: per call, approved or rejected. `?wait=` holds the request up to 25 s until it is decided (long poll).',
    path: runPathSchema,
    query: externalRunQuerySchema,
    success: {
      200: json(
        'The run as it stands (pending, decided, expired, cancelled, failed).',
        externalRunViewSchema,
      ),
    },
  },
  reportExternalExecution: {
    summary:
      'What the agent did with each call of its answered turn, for the audit; the first report of a call stands.',
    path: runPathSchema,
    body: reportExecutionRequestSchema,
    success: { 200: json('The run with every report on record.', externalRunViewSchema) },
    errors: [409],
  },
  getRun: {
    summary:
      'A run as its owner, an admin or an approver its card was routed to sees it, with its pending calls while it waits.',
    path: runPathSchema,
    success: {
      200: {
        description: 'The run.',
        json: runViewSchema,
        html: 'The run and its waiting card as escaped HTML, for the page at the card’s own address.',
      },
    },
  },
  getRunAudit: {
    summary:
      'A run’s audit: each decision record, each k-of-n approval (who, when, digest, tally), a cancel, an expiry.',
    path: runPathSchema,
    success: {
      200: {
        description: 'The audit, oldest first.',
        json: runAuditSchema,
        html: 'The audit as escaped HTML, for the page.',
      },
    },
  },
  listMyDecisions: {
    summary: 'What the signed-in user decided or approved, newest first, paged.',
    query: historyQuerySchema,
    success: {
      200: {
        description: 'A page of decisions and approvals, each with its run as it is now.',
        json: pagedListSchema(recordedActSchema),
        html: 'The page as escaped HTML, for the page.',
      },
    },
  },
  listMyRuns: {
    summary: 'The runs the signed-in user started, newest first, paged.',
    query: historyQuerySchema,
    success: {
      200: {
        description: 'A page of runs.',
        json: pagedListSchema(runSummarySchema),
        html: 'The page as escaped HTML, for the page.',
      },
    },
  },
  cancelRun: {
    summary: 'Stop a run, close its card and record who cancelled it and why (owner or admin).',
    path: runPathSchema,
    body: cancelRequestSchema,
    bodyOptional: true,
    success: { 200: json('The run is cancelled (`repeated` when it already was).', cancelResponseSchema) },
    errors: [409],
  },
  getApproverAnalytics: {
    summary:
      'Approver analytics (admin): per approver group and per approver, the time from a card appearing to the answer, the share of approvals within `quickSeconds`, the reject rate.',
    query: approverAnalyticsQuerySchema,
    success: { 200: json('Statistics over the last `days`.', approverAnalyticsSchema) },
  },
  getRunReceipt: {
    summary:
      'The run’s receipt: every approval, decision, cancel and expiry as a hash chain, decisions signed; verify it offline with `countersign verify` (owner, routed approvers, admin).',
    path: runPathSchema,
    success: { 200: json('The receipt, entries oldest first, as stored.', receiptResponseSchema) },
  },
  redriveRun: {
    summary:
      'Resume a run that failed on a transient cause from the step that failed, in a new execution (owner or admin).',
    path: runPathSchema,
    success: {
      202: json(
        'The run is back at work from the failed step (`repeated` when this redrive was already made).',
        redriveResponseSchema,
      ),
    },
    errors: [409],
  },
  streamRunEvents: {
    summary: 'Server-sent events of a run: turns, tool results, `awaiting_approval`, the final state.',
    path: runPathSchema,
    success: {
      200: {
        description: 'The event stream, until the run ends or waits.',
        eventStream: {
          description:
            'Events `turn`, `tool_result`, `awaiting_approval`, `card_unopenable` and `state`, each with one JSON data line.',
          event: runEventSchema,
        },
      },
    },
  },
  decideRun: {
    summary: 'Approve or reject the waiting turn whose digest the card showed.',
    path: runPathSchema,
    body: decisionRequestSchema,
    // A bare POST reads as `{}`: refused for its missing decision, like any incomplete body.
    bodyOptional: true,
    success: {
      200: json('The decision is on record.', decidedSchema),
      202: json('A k-of-n approval is on record; the turn waits for more approvers.', approvalRecordedSchema),
    },
    errors: [409, 410],
    errorBodies: {
      503: {
        description:
          'A service was busy or unavailable (send it again after `Retry-After` seconds); `decisionOnRecord` says whether the decision is on record.',
        json: decisionUnavailableBodySchema,
      },
    },
  },
  setAway: {
    summary:
      'Set an approver away until a date with a delegate, who decides the cards routed to them acting for them (the approver themself or an admin).',
    path: userPathSchema,
    body: awayRequestSchema,
    success: { 200: json('The approver’s delegation as it now stands.', awayResponseSchema) },
  },
  clearAway: {
    summary: 'The approver is back: their cards reach only them again (the approver themself or an admin).',
    path: userPathSchema,
    success: { 200: json('The approver, no longer away.', awayResponseSchema) },
  },
  getCall: {
    summary: 'The whole arguments of a pending call whose card shows an excerpt.',
    path: callPathSchema,
    success: {
      200: {
        description: 'The call with its whole arguments.',
        json: pendingCallViewSchema,
        html: 'The escaped block that replaces the excerpt on the inbox page.',
      },
    },
    // The card reader answers 410 for a card it cannot open (and ends its run).
    errors: [410],
  },
  listInbox: {
    summary:
      'Cards of the runs waiting for the viewer’s decision, newest first or closing soon, filtered, paged.',
    query: inboxQuerySchema,
    conditional: true,
    success: {
      200: {
        description: 'A page of cards (a card that cannot be opened is a flagged placeholder).',
        json: inboxPageSchema,
        html: 'The cards as escaped HTML, for the inbox page.',
      },
    },
  },
  getInboxPage: {
    summary: 'The inbox web page (a shell without data: it reads the inbox with the viewer’s token).',
    success: { 200: { description: 'The page.', html: 'The inbox page.' } },
  },
  getCardPage: {
    summary: 'A card’s own address: the inbox page, which opens this run’s card once the viewer signed in.',
    path: runPathSchema,
    success: { 200: { description: 'The page.', html: 'The inbox page.' } },
  },
  getSignInLibrary: {
    summary: 'The OAuth 2.0 / OpenID Connect client library the page signs in with (oauth4webapi).',
    success: {
      200: { description: 'The library.', script: 'An ES module, pinned by the page’s integrity.' },
    },
    conditional: true,
  },
  getOpenApiDocument: {
    summary: 'This document.',
    success: { 200: json('The OpenAPI 3.1 document.', z.record(z.string(), z.unknown())) },
  },
  getRunbook: {
    summary: 'The operators’ runbook: docs/runbook.md as a page, each alarm’s entry at its anchor.',
    success: { 200: { description: 'The runbook.', html: 'The runbook page.' } },
  },
  completeText: {
    summary: 'Configuration-driven completion with its skills (docs/skills.md): no run, no tools.',
    path: configurationPathSchema,
    body: completeRequestSchema,
    success: { 200: json('The generated text.', generationResponseSchema) },
    errors: [502, 503, 504],
  },
  translateText: {
    summary: 'Configuration-driven translation with its skills (docs/skills.md): no run, no tools.',
    path: configurationPathSchema,
    body: translateRequestSchema,
    success: { 200: json('The translation.', generationResponseSchema) },
    errors: [502, 503, 504],
  },
  listConfigurations: configurations.list,
  getConfiguration: configurations.get,
  putConfiguration: configurations.put,
  deleteConfiguration: configurations.delete,
  listTasks: tasks.list,
  getTask: tasks.get,
  putTask: tasks.put,
  deleteTask: tasks.delete,
  listUsers: users.list,
  getUser: users.get,
  putUser: users.put,
  deleteUser: users.delete,
  listPages: pages.list,
  getPage: pages.get,
  putPage: pages.put,
  listSlackUsers: slackUsers.list,
  getSlackUser: slackUsers.get,
  putSlackUser: slackUsers.put,
  deleteSlackUser: slackUsers.delete,
  receiveSlackInteraction: {
    summary:
      'A button of a card’s Slack message (Slack’s interactivity Request URL), decided like POST /runs/{id}/decision. Authenticated by Slack’s request signature, not a token.',
    body: slackInteractionFormSchema,
    bodyMediaType: 'application/x-www-form-urlencoded',
    success: {
      200: {
        description:
          'Received. A refusal (an unlinked Slack user, a stale button, a gate) is shown to the presser alone; the message is brought up to date.',
      },
    },
    errors: [401],
  },
  listSkills: {
    summary: 'List skills without their bodies, paged.',
    query: adminListQuerySchema,
    success: { 200: json('A page of skills.', pagedListSchema(skillSummarySchema)) },
  },
  getSkill: {
    summary: 'One skill with its body and its audit.',
    path: skillPathSchema,
    success: { 200: json('The skill and its audit.', skillWithAuditSchema) },
  },
  ingestSkills: {
    summary: 'Ingest skills from an upload or a GitHub source; new and changed skills arrive disabled.',
    body: ingestRequestSchema,
    success: { 200: json('What the ingest did, by skill id.', ingestSummarySchema) },
    errors: [409],
  },
  enableSkill: {
    summary: 'Enable a skill whose reviewed body checksum is given.',
    path: skillPathSchema,
    body: enableSkillRequestSchema,
    success: { 200: json('The skill.', skillSummarySchema) },
    errors: [409],
  },
  disableSkill: {
    summary: 'Disable a skill.',
    path: skillPathSchema,
    success: { 200: json('The skill.', skillSummarySchema) },
    errors: [409],
  },
  attachSkills: {
    summary: 'Set the skills attached to a task or a configuration, in order.',
    path: attachmentPathSchema,
    body: attachSkillsRequestSchema,
    success: { 200: json('The attached skills.', attachmentSchema) },
    errors: [409],
  },
} as const satisfies Record<OperationId, OperationContract>;

export type Operations = typeof OPERATIONS;

/**
 * The refusals an operation may answer: those of every route (bad input or path, unknown
 * resource, body too large, throttled, an internal failure, a service countersign depends on
 * busy or unavailable), the token's and the grant's on authenticated routes, and the operation's own.
 */
export function errorStatusesOf(operation: OperationContract, auth: RouteAuth): ErrorStatus[] {
  const common: ErrorStatus[] = [400, 404, 413, 429, 500, 503];
  const authenticated: ErrorStatus[] = auth === 'none' ? [] : [401, 403];
  return [...new Set([...common, ...authenticated, ...(operation.errors ?? [])])].sort((a, b) => a - b);
}
