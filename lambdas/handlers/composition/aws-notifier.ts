import { EventBridgeRunNotifier } from '../../adapters/event-bridge-run-notifier.js';
import type { RunDependencies } from '../../core/run-dependencies.js';
import { lambdaEnvironment } from '../config.js';

let notifier: RunDependencies['notifier'] | undefined;

/** Tells EventBridge a run waits for approval, or that a card closed (its client made on the first event). */
export function awsNotifier(): RunDependencies['notifier'] {
  const environment = lambdaEnvironment();
  notifier ??= new EventBridgeRunNotifier({
    eventBusName: environment.COUNTERSIGN_EVENT_BUS_NAME,
    ...(environment.COUNTERSIGN_INBOX_URL ? { inboxUrl: environment.COUNTERSIGN_INBOX_URL } : {}),
  });
  return notifier;
}
