import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { runInInvocationScope } from '../../adapters/invocation-scope.js';
import {
  receiveSlackInteraction,
  type SlackInteractionDependencies,
} from '../../core/channels/receive-slack-interaction.js';
import { CountersignError, nameErrorClass } from '../../core/errors.js';
import { type RecordingDependencies, withReceiptRecording } from '../../core/receipts/receipt-recording.js';
import { TEXTS } from '../../core/texts.js';
import type { HttpLambdaHandler } from '../http/http-api.js';
import { errorResponse, JSON_HEADERS } from '../http/http-errors.js';

/** Slack's interaction payloads carry the whole message; a body past this is not one of ours. */
export const SLACK_INTERACTION_MAX_BODY_BYTES = 1024 * 1024;

/**
 * POST /integrations/slack/interactions (`auth: 'slack-signature'` in the manifest: no JWT, so
 * the function authenticates the request itself). The signature covers the body's exact bytes,
 * so they are read as API Gateway hands them over: base64 when `isBase64Encoded` (an HTTP API
 * encodes a form body so), else the UTF-8 text. A refused signature is a 401 and nothing else is
 * read; any other answer is Slack's empty 200 (a refusal of the decision is shown to the presser
 * in Slack). Wiring only: `receiveSlackInteraction` decides. Like the API's decision function,
 * it signs the receipt entry of each approval and decision it records (docs/receipts.md).
 *
 * @example
 * export const handler = createSlackInteractionsHandler({ ...decisionDependencies, receipts, slack, slackUsers, slackReplays, slackSigningSecret });
 */
export function createSlackInteractionsHandler(
  deciding: SlackInteractionDependencies & RecordingDependencies,
): HttpLambdaHandler {
  const dependencies = withReceiptRecording(deciding, 'sign');
  return (event) =>
    runInInvocationScope(
      { correlationId: event.requestContext?.requestId ?? 'unknown', operation: event.routeKey },
      async (): Promise<APIGatewayProxyStructuredResultV2> => {
        try {
          const rawBody = Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8');
          if (rawBody.byteLength > SLACK_INTERACTION_MAX_BODY_BYTES) {
            return errorResponse(
              new CountersignError(
                'payload-too-large',
                TEXTS.requestTooLarge(SLACK_INTERACTION_MAX_BODY_BYTES),
              ),
            );
          }
          const headers = Object.fromEntries(
            Object.entries(event.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
          );
          const outcome = await receiveSlackInteraction(dependencies, {
            rawBody,
            timestamp: headers['x-slack-request-timestamp'],
            signature: headers['x-slack-signature'],
          });
          if (outcome.kind === 'unauthenticated') {
            return errorResponse(new CountersignError('unauthenticated', TEXTS.slackInteractionRefused));
          }
          return { statusCode: 200, headers: { ...JSON_HEADERS, 'content-type': 'text/plain' }, body: '' };
        } catch (error) {
          // Every 5xx logs one line: the request and the error's class, nothing of the body.
          dependencies.logger.error('slack interaction failed', {
            requestId: event.requestContext?.requestId,
            errorClass: nameErrorClass(error),
          });
          return errorResponse(error);
        }
      },
    );
}
