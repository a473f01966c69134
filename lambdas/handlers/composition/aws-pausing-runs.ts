import { announceClosedCards } from '../../adapters/card-closing-announcer.js';
import { DynamoRunAndUserRepository } from '../../adapters/dynamo/run-and-user-repository.js';
import { meterRunRepository } from '../../adapters/metered-run-repository.js';
import type { RunDependencies } from '../../core/run-dependencies.js';
import { awsBaseDependencies, awsRunStoreOptions } from './aws-base-dependencies.js';
import { awsNotifier } from './aws-notifier.js';

let pausingRuns: RunDependencies['runs'] | undefined;

/**
 * The run store of the functions that pause a run: it also reads a run and its owner in one
 * BatchGetItem (`DynamoRunAndUserRepository`), so only those functions bundle that read. Same
 * table, overflow bucket and retention as the base part's run store.
 *
 * @example
 * const step = createAwaitApprovalStep({ ...awsBaseDependencies(), runs: awsPausingRuns(), ... });
 */
export function awsPausingRuns(): RunDependencies['runs'] {
  const { clock, logger, metrics } = awsBaseDependencies();
  pausingRuns ??= announceClosedCards(
    meterRunRepository(new DynamoRunAndUserRepository(awsRunStoreOptions()), metrics),
    { notifier: awsNotifier(), clock, logger, metrics },
  );
  return pausingRuns;
}
