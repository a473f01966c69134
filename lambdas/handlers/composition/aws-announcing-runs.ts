import { announceClosedCards } from '../../adapters/card-closing-announcer.js';
import type { RunDependencies } from '../../core/run-dependencies.js';
import { awsBaseDependencies } from './aws-base-dependencies.js';
import { awsNotifier } from './aws-notifier.js';

let announcingRuns: RunDependencies['runs'] | undefined;

/**
 * The base run store, announcing each card it closes (`Card Closed`), for the functions that may
 * close one (lib/countersign-functions.ts, CARD_CLOSING_HANDLERS, grants them `events:PutEvents`):
 * the others bundle no EventBridge client.
 *
 * @example
 * const decide = createDecisionApi({ ...awsBaseDependencies(), runs: awsAnnouncingRuns(), ... });
 */
export function awsAnnouncingRuns(): RunDependencies['runs'] {
  const { runs, clock, logger, metrics } = awsBaseDependencies();
  announcingRuns ??= announceClosedCards(runs, { notifier: awsNotifier(), clock, logger, metrics });
  return announcingRuns;
}
