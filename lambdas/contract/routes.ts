import * as z from 'zod/mini';
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
import { ADMIN_COLLECTION_ROUTES, ADMIN_READ_ROUTES } from './admin-routes.js';
import { decisionUnavailableBodySchema, pagedListSchema } from './common-schemas.js';
import { externalRunViewSchema, submitExternalRunResponseSchema } from './external-schemas.js';
import {
  callPathParameters,
  cardPagePathParameters,
  configurationPathParameters,
  runPathParameters,
  userPathParameters,
} from './path-parameters.js';
import { receiptResponseSchema } from './receipt-schemas.js';
import { json, type RouteDefinition, type RouteFunction, withHtml } from './route-definition.js';
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

/**
 * The one route manifest: every operation countersign serves, written once (route-definition.ts
 * says what an entry holds). The CDK API, the local server, the handlers' router, the inbox page,
 * the OpenAPI document, the typed client and the tests all read this table; none of them writes
 * its own, and a route's handler receives its input as the entry's schemas parsed it.
 */

const runs = { function: 'api-runs', auth: 'jwt' } as const;
const external = { function: 'api-external', auth: 'machine' } as const;
const decision = { function: 'api-decision', auth: 'jwt' } as const;
const inbox = { function: 'api-inbox', auth: 'jwt' } as const;
/** The page and what it loads carry no data: no token. */
const publicPage = { function: 'api-inbox', auth: 'none' } as const;
/** Text generation: of one configuration; the model provider may fail, be missing or be late. */
const generate = {
  function: 'api-generate',
  auth: 'jwt',
  ...configurationPathParameters,
  errors: [502, 503, 504],
} as const;

export const ROUTES = [
  {
    operationId: 'startRun',
    method: 'POST',
    path: '/runs',
    ...runs,
    summary: 'Start a run of a task or a configuration with an input.',
    body: startRunRequestSchema,
    success: { 202: json('The run started.', startRunResponseSchema) },
  },
  // Agents that run elsewhere submit their turns, wait for the answer and report what ran.
  {
    operationId: 'submitExternalRun',
    method: 'POST',
    path: '/external-runs',
    ...external,
    summary:
      'An agent that runs elsewhere submits a turn for approval (machine clients only); a retry with the same clientKey gets the same run.',
    body: submitExternalRunRequestSchema,
    success: { 202: json('The turn waits for a decision on its card.', submitExternalRunResponseSchema) },
    errors: [409],
  },
  {
    operationId: 'getExternalRun',
    method: 'GET',
    path: '/external-runs/{id}',
    ...external,
    summary:
      'The answer to a submitted turn: per call, approved or rejected. `?wait=` holds the request up to 25 s until it is decided (long poll).',
    ...runPathParameters,
    query: externalRunQuerySchema,
    success: {
      200: json(
        'The run as it stands (pending, decided, expired, cancelled, failed).',
        externalRunViewSchema,
      ),
    },
  },
  {
    operationId: 'reportExternalExecution',
    method: 'POST',
    path: '/external-runs/{id}/report',
    ...external,
    summary:
      'What the agent did with each call of its answered turn, for the audit; the first report of a call stands.',
    ...runPathParameters,
    body: reportExecutionRequestSchema,
    success: { 200: json('The run with every report on record.', externalRunViewSchema) },
    errors: [409],
  },
  {
    operationId: 'getRun',
    method: 'GET',
    path: '/runs/{id}',
    ...runs,
    summary:
      'A run as its owner, an admin or an approver its card was routed to sees it, with its pending calls while it waits.',
    ...runPathParameters,
    success: {
      200: withHtml(
        'The run.',
        runViewSchema,
        'The run and its waiting card as escaped HTML, for the page at the card’s own address.',
      ),
    },
  },
  {
    operationId: 'cancelRun',
    method: 'POST',
    path: '/runs/{id}/cancel',
    ...runs,
    summary: 'Stop a run, close its card and record who cancelled it and why (owner or admin).',
    ...runPathParameters,
    body: cancelRequestSchema,
    // A bare POST cancels without a reason.
    bodyOptional: true,
    success: { 200: json('The run is cancelled (`repeated` when it already was).', cancelResponseSchema) },
    errors: [409],
  },
  // The run's signed hash chain of decisions, verifiable offline (docs/receipts.md).
  {
    operationId: 'getRunReceipt',
    method: 'GET',
    path: '/runs/{id}/receipt',
    ...runs,
    summary:
      'The run’s receipt: every approval, decision, cancel and expiry as a hash chain, decisions signed; verify it offline with `countersign verify` (owner, routed approvers, admin).',
    ...runPathParameters,
    success: { 200: json('The receipt, entries oldest first, as stored.', receiptResponseSchema) },
  },
  // History (issue #21): a run's audit, and what the signed-in user decided and started.
  {
    operationId: 'getRunAudit',
    method: 'GET',
    path: '/runs/{id}/audit',
    ...runs,
    summary:
      'A run’s audit: each decision record, each k-of-n approval (who, when, digest, tally), a cancel, an expiry.',
    ...runPathParameters,
    success: {
      200: withHtml('The audit, oldest first.', runAuditSchema, 'The audit as escaped HTML, for the page.'),
    },
  },
  {
    operationId: 'listMyDecisions',
    method: 'GET',
    path: '/me/decisions',
    ...runs,
    summary: 'What the signed-in user decided or approved, newest first, paged.',
    query: historyQuerySchema,
    success: {
      200: withHtml(
        'A page of decisions and approvals, each with its run as it is now.',
        pagedListSchema(recordedActSchema),
        'The page as escaped HTML, for the page.',
      ),
    },
  },
  {
    operationId: 'listMyRuns',
    method: 'GET',
    path: '/me/runs',
    ...runs,
    summary: 'The runs the signed-in user started, newest first, paged.',
    query: historyQuerySchema,
    success: {
      200: withHtml(
        'A page of runs.',
        pagedListSchema(runSummarySchema),
        'The page as escaped HTML, for the page.',
      ),
    },
  },
  {
    operationId: 'redriveRun',
    method: 'POST',
    path: '/runs/{id}/redrive',
    ...runs,
    summary:
      'Resume a run that failed on a transient cause from the step that failed, in a new execution (owner or admin).',
    ...runPathParameters,
    success: {
      202: json(
        'The run is back at work from the failed step (`repeated` when this redrive was already made).',
        redriveResponseSchema,
      ),
    },
    errors: [409],
  },
  {
    operationId: 'streamRunEvents',
    method: 'GET',
    path: '/runs/{id}/events',
    function: 'api-run-events',
    auth: 'jwt',
    transport: 'function-url',
    summary: 'Server-sent events of a run: turns, tool results, `awaiting_approval`, the final state.',
    ...runPathParameters,
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
  {
    operationId: 'decideRun',
    method: 'POST',
    path: '/runs/{id}/decision',
    ...decision,
    summary: 'Approve or reject the waiting turn whose digest the card showed.',
    ...runPathParameters,
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
  // Delegation: an approver away names who decides their cards meanwhile (they or an admin).
  {
    operationId: 'setAway',
    method: 'PUT',
    path: '/users/{id}/away',
    ...decision,
    summary:
      'Set an approver away until a date with a delegate, who decides the cards routed to them acting for them (the approver themself or an admin).',
    ...userPathParameters,
    body: awayRequestSchema,
    success: { 200: json('The approver’s delegation as it now stands.', awayResponseSchema) },
  },
  {
    operationId: 'clearAway',
    method: 'DELETE',
    path: '/users/{id}/away',
    ...decision,
    summary: 'The approver is back: their cards reach only them again (the approver themself or an admin).',
    ...userPathParameters,
    success: { 200: json('The approver, no longer away.', awayResponseSchema) },
  },
  // The whole arguments of a call a card excerpts: the inbox's reader, with the inbox's reads.
  {
    operationId: 'getCall',
    method: 'GET',
    path: '/runs/{id}/calls/{index}',
    ...inbox,
    summary: 'The whole arguments of a pending call whose card shows an excerpt.',
    ...callPathParameters,
    success: {
      200: withHtml(
        'The call with its whole arguments.',
        pendingCallViewSchema,
        'The escaped block that replaces the excerpt on the inbox page.',
      ),
    },
    // The card reader answers 410 for a card it cannot open (and ends its run).
    errors: [410],
  },
  {
    operationId: 'listInbox',
    method: 'GET',
    path: '/inbox',
    ...inbox,
    summary:
      'Cards of the runs waiting for the viewer’s decision, newest first or closing soon, filtered, paged.',
    query: inboxQuerySchema,
    conditional: true,
    success: {
      200: withHtml(
        'A page of cards (a card that cannot be opened is a flagged placeholder).',
        inboxPageSchema,
        'The cards as escaped HTML, for the inbox page.',
      ),
    },
  },
  // The page shell carries no data: it reads the inbox with the viewer's token.
  {
    operationId: 'getInboxPage',
    method: 'GET',
    path: '/',
    ...publicPage,
    summary: 'The inbox web page (a shell without data: it reads the inbox with the viewer’s token).',
    success: { 200: { description: 'The page.', html: 'The inbox page.' } },
  },
  // A card's own address: the same shell, which opens the run's card once signed in.
  {
    operationId: 'getCardPage',
    method: 'GET',
    path: '/inbox/runs/{id}',
    ...publicPage,
    summary: 'A card’s own address: the inbox page, which opens this run’s card once the viewer signed in.',
    ...cardPagePathParameters,
    success: { 200: { description: 'The page.', html: 'The inbox page.' } },
  },
  // The page's OAuth client library (oauth4webapi), pinned by the page's import map integrity. Its
  // path names no package: a bundle ships the library beside it only when its code names it.
  {
    operationId: 'getSignInLibrary',
    method: 'GET',
    path: '/assets/oauth-client.js',
    ...publicPage,
    summary: 'The OAuth 2.0 / OpenID Connect client library the page signs in with (oauth4webapi).',
    success: {
      200: { description: 'The library.', script: 'An ES module, pinned by the page’s integrity.' },
    },
    conditional: true,
  },
  // The OpenAPI 3.1 document of this manifest: public, it describes shapes and holds no data.
  {
    operationId: 'getOpenApiDocument',
    method: 'GET',
    path: '/openapi.json',
    ...publicPage,
    summary: 'This document.',
    success: { 200: json('The OpenAPI 3.1 document.', z.record(z.string(), z.unknown())) },
  },
  // The operators' runbook (docs/runbook.md as a page), which every alarm links to: public, no data.
  {
    operationId: 'getRunbook',
    method: 'GET',
    path: '/runbook',
    ...publicPage,
    summary: 'The operators’ runbook: docs/runbook.md as a page, each alarm’s entry at its anchor.',
    success: { 200: { description: 'The runbook.', html: 'The runbook page.' } },
  },
  // Seed 003's configuration-driven completion and translation: synchronous, bounded below 30 s.
  {
    operationId: 'completeText',
    method: 'POST',
    path: '/configurations/{id}/complete',
    ...generate,
    summary: 'Configuration-driven completion with its skills (docs/skills.md): no run, no tools.',
    body: completeRequestSchema,
    success: { 200: json('The generated text.', generationResponseSchema) },
  },
  {
    operationId: 'translateText',
    method: 'POST',
    path: '/configurations/{id}/translate',
    ...generate,
    summary: 'Configuration-driven translation with its skills (docs/skills.md): no run, no tools.',
    body: translateRequestSchema,
    success: { 200: json('The translation.', generationResponseSchema) },
  },
  ...ADMIN_COLLECTION_ROUTES,
  // Slack's interactivity Request URL: a button of a card's message, decided like the API.
  {
    operationId: 'receiveSlackInteraction',
    method: 'POST',
    path: '/integrations/slack/interactions',
    function: 'slack-interactions',
    auth: 'slack-signature',
    channel: 'slack',
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
  ...ADMIN_READ_ROUTES,
] as const satisfies readonly RouteDefinition[];

export type Route = (typeof ROUTES)[number];
export type OperationId = Route['operationId'];
/** The manifest's entry of one operation. */
export type RouteOf<Id extends OperationId> = Extract<Route, { operationId: Id }>;

/** The manifest's entry of one operation. */
export function routeOf<Id extends OperationId>(operationId: Id): RouteOf<Id> {
  return ROUTES.find((route) => route.operationId === operationId) as RouteOf<Id>;
}

/** API Gateway's route key of a route: `METHOD /path`. */
export function routeKeyOf(route: Pick<RouteDefinition, 'method' | 'path'>): string {
  return `${route.method} ${route.path}`;
}

/** The operations one function serves: the keys its route handlers must have. */
export type OperationOf<Function extends RouteFunction> = Extract<
  Route,
  { function: Function }
>['operationId'];

/** The routes one function answers. */
export function routesOfFunction(name: RouteFunction): Route[] {
  return ROUTES.filter((route) => route.function === name);
}

/** How a route is reached deployed (`http-api` unless the manifest says otherwise). */
export function transportOf(route: Route): 'http-api' | 'function-url' {
  return 'transport' in route ? route.transport : 'http-api';
}
