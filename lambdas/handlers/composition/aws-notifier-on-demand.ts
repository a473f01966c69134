import type { RunNotifier } from '../../core/ports.js';

let loaded: Promise<RunNotifier> | undefined;

/**
 * `awsNotifier()` for the functions that only announce a card's closing (`Card Closed`, once per
 * decision, cancel or expiry): the EventBridge client is imported on the first event, so a
 * function that closes no card does not pay for it at cold start.
 */
export function awsNotifierOnDemand(): RunNotifier {
  const load = (): Promise<RunNotifier> => {
    loaded ??= import('./aws-notifier.js').then(({ awsNotifier }) => awsNotifier());
    return loaded;
  };
  return {
    runAwaitingApproval: async (event) => (await load()).runAwaitingApproval(event),
    cardClosed: async (event) => (await load()).cardClosed(event),
  };
}
