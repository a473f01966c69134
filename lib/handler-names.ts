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
