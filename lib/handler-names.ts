/** The Lambda handlers, one per file in `lambdas/handlers/`. */
export const HANDLER_NAMES = [
  'prepare',
  'model-turn',
  'await-approval',
  'execute-tools',
  'record-rejection',
  'finish-run',
  'mark-failed',
  'mark-expired',
  'record-external-decision',
  'notify-caller',
  'api-runs',
  'api-inbox',
  'api-decision',
  'api-admin',
  'api-generate',
  'api-run-events',
  'api-external',
  'report-waiting-runs',
  'escalate-card',
] as const;

/** The name of one handler file (without `.ts`). */
export type HandlerName = (typeof HANDLER_NAMES)[number];

/**
 * The notification channels' handlers: a function each only where the team switched its channel
 * on (the construct's `channels` props), so they are no part of {@link HANDLER_NAMES}.
 */
export const CHANNEL_HANDLER_NAMES = ['slack-notify', 'slack-interactions', 'email-notify'] as const;

/** The name of one channel handler file (without `.ts`). */
export type ChannelHandlerName = (typeof CHANNEL_HANDLER_NAMES)[number];

/** Every handler a package ships prebuilt: the core's and the channels'. */
export type BundledHandlerName = HandlerName | ChannelHandlerName;
