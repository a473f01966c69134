import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsNotifier } from './composition/aws-notifier.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import { createEscalationTimerHandler } from './timers/escalation-timer.js';

/**
 * Lambda entry point of a card's escalation timer (an EventBridge Scheduler one-time schedule):
 * routes an unanswered card to the step's groups and announces it. The table and the event bus
 * only: no sealer, no model, no Step Functions.
 */
export const handler = composeOnFirstInvocation(() =>
  createEscalationTimerHandler({ ...awsBaseDependencies(), notifier: awsNotifier() }),
);
