import { Duration } from 'aws-cdk-lib';
import type { ChannelHandlerName, HandlerName } from './handler-names.js';

/** The timeout and the default memory of one handler's function. */
export interface FunctionSizing {
  readonly timeout: Duration;
  readonly memorySize: number;
}

/**
 * Each handler's timeout and default memory (the `memorySize` prop overrides the memory). API
 * handlers stay under the 30 s HTTP API integration limit; model and tool steps get minutes.
 *
 * @example
 * HANDLER_SIZING['model-turn'].timeout.toMinutes(); // 5
 */
export const HANDLER_SIZING: Record<HandlerName, FunctionSizing> = {
  prepare: { timeout: Duration.seconds(30), memorySize: 512 },
  'model-turn': { timeout: Duration.minutes(5), memorySize: 1024 },
  'await-approval': { timeout: Duration.minutes(1), memorySize: 1024 },
  'execute-tools': { timeout: Duration.minutes(5), memorySize: 1024 },
  'record-rejection': { timeout: Duration.seconds(30), memorySize: 512 },
  'finish-run': { timeout: Duration.seconds(30), memorySize: 512 },
  'mark-failed': { timeout: Duration.seconds(30), memorySize: 512 },
  'mark-expired': { timeout: Duration.seconds(30), memorySize: 512 },
  'record-external-decision': { timeout: Duration.seconds(30), memorySize: 512 },
  // A webhook delivery waits 10 s at most (WEBHOOK_DEADLINE_MILLISECONDS); the rest is reads.
  'notify-caller': { timeout: Duration.seconds(30), memorySize: 512 },
  'api-runs': { timeout: Duration.seconds(29), memorySize: 1024 },
  'api-inbox': { timeout: Duration.seconds(29), memorySize: 1024 },
  'api-decision': { timeout: Duration.seconds(29), memorySize: 1024 },
  'api-admin': { timeout: Duration.seconds(29), memorySize: 1024 },
  // The model gets 25 s of these (TEXT_GENERATION_TIMEOUT_MILLISECONDS), then the request is a 504.
  'api-generate': { timeout: Duration.seconds(29), memorySize: 1024 },
  // A function URL stream, not an HTTP API integration: it follows a run for 60 s, then ends.
  'api-run-events': { timeout: Duration.seconds(90), memorySize: 1024 },
  // The scheduled probe reads the inbox index only: one query per 100 waiting runs.
  'report-waiting-runs': { timeout: Duration.seconds(60), memorySize: 256 },
  // One card read, a few index writes and one event per escalation step.
  'escalate-card': { timeout: Duration.seconds(30), memorySize: 256 },
  // Its long poll holds a request up to 25 s (MAX_EXTERNAL_WAIT_SECONDS), under the 30 s integration limit.
  'api-external': { timeout: Duration.seconds(29), memorySize: 1024 },
};

/**
 * The channels' functions: the Slack interaction route answers Slack within its 3 seconds (a
 * decision is one card read, one KMS call, a claim and SendTaskSuccess), under the HTTP API's 30 s;
 * the notifiers have time for a retried Slack or SES call.
 */
export const CHANNEL_HANDLER_SIZING: Record<ChannelHandlerName, FunctionSizing> = {
  'slack-notify': { timeout: Duration.seconds(60), memorySize: 1024 },
  'slack-interactions': { timeout: Duration.seconds(29), memorySize: 1024 },
  'email-notify': { timeout: Duration.seconds(60), memorySize: 512 },
};
