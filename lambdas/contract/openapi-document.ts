import * as z from 'zod/mini';
import {
  createDocument,
  type ZodOpenApiOperationObject,
  type ZodOpenApiResponseObject,
  type ZodOpenApiResponsesObject,
} from 'zod-openapi';
import { ADMIN_COLLECTION_SCHEMAS, skillSummarySchema } from './admin-schemas.js';
import { errorBodySchema, gatewayErrorBodySchema } from './common-schemas.js';
import {
  type ErrorStatus,
  EXTERNAL_RUNS_SCOPE,
  errorStatusesOf,
  type RouteAuth,
  type RouteDefinition,
  type SuccessContent,
} from './route-definition.js';
import { ROUTES } from './routes.js';
import {
  cardCallViewSchema,
  cardViewSchema,
  runEventSchema,
  runViewSchema,
  unopenableCardSchema,
} from './run-schemas.js';

/** The name of the bearer-token security scheme (the JWT authorizer deployed, the local issuer in `npm start`). */
const BEARER = 'bearerToken';
/** The security scheme of the routes only machine clients reach (agents that run elsewhere). */
const MACHINE_BEARER = 'machineToken';

/** Where the event-stream route says its events are described (one JSON data line each). */
export const RUN_EVENT_SCHEMA_NAME = 'RunEvent';

/** The refusals API Gateway answers itself, before (or instead of) the function. */
const GATEWAY_STATUSES: ReadonlySet<number> = new Set([401, 413, 429, 500]);

const ERROR_DESCRIPTIONS: Record<ErrorStatus, string> = {
  400: 'Bad input: the message names the field.',
  401: 'No token, or a token that is not valid.',
  403: 'The grant or the decision gate refused.',
  404: 'Unknown, or not visible to this caller.',
  409: 'A stale digest, already decided differently, or a state that does not allow it.',
  410: 'The wait for a decision expired, or the run ended (also: its card could not be opened).',
  413: 'The body is too large.',
  429: 'Too many requests from this client, or a per-principal quota (runs started, waiting runs, event streams, completions) is used up; a quota refusal says when to try again in Retry-After (seconds).',
  500: 'An internal failure; the message says nothing about its cause.',
  502: 'The model provider failed.',
  503: 'A service countersign depends on is busy or unavailable (or, for text generation, the model provider is not configured): send the request again after `Retry-After` seconds.',
  504: 'The model provider did not answer in time.',
};

/**
 * The OpenAPI 3.1 document of the API: one operation per route of the manifest, its request
 * schemas the ones the router validates with, its responses the manifest's response schemas.
 * `npm run openapi` writes it to docs/openapi.json; a test regenerates it and compares.
 *
 * @example
 * const document = createOpenApiDocument({ version: '0.2.0' });
 * document.paths['/runs'].post.operationId // 'startRun'
 */
export function createOpenApiDocument(options: { version: string }): ReturnType<typeof createDocument> {
  const paths: Record<string, Record<string, ZodOpenApiOperationObject>> = {};
  for (const route of ROUTES as readonly RouteDefinition[]) {
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, ZodOpenApiOperationObject>)[route.method.toLowerCase()] = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [tagOf(route.path)],
      security: securityOf(route.auth),
      ...(route.pathParameters || route.query
        ? {
            requestParams: {
              ...(route.pathParameters ? { path: route.pathParameters } : {}),
              ...(route.query ? { query: route.query } : {}),
            },
          }
        : {}),
      ...(route.body
        ? {
            requestBody: {
              required: route.bodyOptional !== true,
              content: { [route.bodyMediaType ?? 'application/json']: { schema: route.body } },
            },
          }
        : {}),
      responses: responsesOf(route),
      ...(route.transport ? { 'x-countersign-transport': route.transport } : {}),
      ...(route.channel ? { 'x-countersign-channel': route.channel } : {}),
    };
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'countersign',
      version: options.version,
      description:
        'Runs of LLM agents whose every write waits for a human to countersign it. Errors are `{"error": {"code", "message"}}`.',
    },
    paths,
    components: {
      securitySchemes: {
        [BEARER]: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        [MACHINE_BEARER]: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: `A machine client's access token from the OAuth client-credentials grant, carrying the scope ${EXTERNAL_RUNS_SCOPE} (docs/external-agents.md). A person's token is refused.`,
        },
      },
      schemas: {
        ErrorBody: errorBodySchema,
        GatewayErrorBody: gatewayErrorBodySchema,
        RunView: runViewSchema,
        PendingTool: cardCallViewSchema,
        InboxCard: cardViewSchema,
        UnopenableCard: unopenableCardSchema,
        [RUN_EVENT_SCHEMA_NAME]: runEventSchema,
        Configuration: ADMIN_COLLECTION_SCHEMAS.configurations.item,
        Task: ADMIN_COLLECTION_SCHEMAS.tasks.item,
        User: ADMIN_COLLECTION_SCHEMAS.users.item,
        Page: ADMIN_COLLECTION_SCHEMAS.pages.item,
        SlackUser: ADMIN_COLLECTION_SCHEMAS['slack-users'].item,
        SkillSummary: skillSummarySchema,
      },
    },
  });
}

/** One shared response per refusal status (components/responses), so each is written once. */
const ERROR_RESPONSES = Object.fromEntries(
  Object.entries(ERROR_DESCRIPTIONS).map(([status, description]) => {
    const deployedGatewayMayAnswer = GATEWAY_STATUSES.has(Number(status));
    const response: ZodOpenApiResponseObject = {
      id: `Error${status}`,
      description: `${description}${deployedGatewayMayAnswer ? ' Deployed, API Gateway may answer it itself, with its own body.' : ''}`,
      content: {
        'application/json': {
          schema: deployedGatewayMayAnswer
            ? z.union([errorBodySchema, gatewayErrorBodySchema])
            : errorBodySchema,
        },
      },
    };
    return [status, response];
  }),
) as Record<ErrorStatus, ZodOpenApiResponseObject>;

/** Who may call a route: a person's bearer token, a machine client's, or anyone (Slack signs its own). */
function securityOf(auth: RouteAuth): Array<Record<string, string[]>> {
  if (auth === 'none' || auth === 'slack-signature') return [];
  return [{ [auth === 'jwt' ? BEARER : MACHINE_BEARER]: [] }];
}

function responsesOf(operation: RouteDefinition): ZodOpenApiResponsesObject {
  const responses: ZodOpenApiResponsesObject = {};
  for (const [status, content] of Object.entries(operation.success) as [string, SuccessContent][]) {
    responses[status as '200'] = {
      description: content.description,
      ...(operation.conditional && status === '200'
        ? {
            headers: {
              ETag: {
                description: 'The version of this answer, for If-None-Match.',
                schema: { type: 'string' },
              },
            },
          }
        : {}),
      content: {
        ...(content.script
          ? { 'text/javascript': { schema: { type: 'string', description: content.script } } }
          : {}),
        ...(content.json ? { 'application/json': { schema: content.json } } : {}),
        ...(content.html ? { 'text/html': { schema: { type: 'string', description: content.html } } } : {}),
        ...(content.eventStream
          ? {
              'text/event-stream': {
                schema: {
                  type: 'string',
                  description: `${content.eventStream.description} Each event reads as #/components/schemas/${RUN_EVENT_SCHEMA_NAME}.`,
                },
              },
            }
          : {}),
      },
    };
  }
  if (operation.conditional) {
    responses['304'] = {
      description: 'Not modified: the request’s If-None-Match names the current ETag. No body.',
    };
  }
  for (const status of errorStatusesOf(operation)) {
    const own = operation.errorBodies?.[status];
    responses[String(status) as '400'] = own
      ? { description: own.description, content: { 'application/json': { schema: own.json } } }
      : ERROR_RESPONSES[status];
  }
  return responses;
}

/** Operations are grouped by the first path segment: runs, inbox, configurations, admin. */
function tagOf(path: string): string {
  return path.split('/')[1] || 'page';
}
