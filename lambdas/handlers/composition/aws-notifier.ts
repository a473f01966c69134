import { EventBridgeRunNotifier } from '../../adapters/event-bridge-run-notifier.js';
import type { RunDependencies } from '../../core/runs/run-dependencies.js';
import { lambdaEnvironment } from '../config.js';

let notifier: RunDependencies['notifier'] | undefined;

/**
 * Tells EventBridge a run waits for approval, or that a card closed. Its client is loaded on the
 * first event (it ships beside the bundle), so every function may hold one at no cold-start cost.
 */
export function awsNotifier(): RunDependencies['notifier'] {
  notifier ??= new EventBridgeRunNotifier({ eventBusName: lambdaEnvironment().COUNTERSIGN_EVENT_BUS_NAME });
  return notifier;
}
