import type { IConstruct } from 'constructs';
import { INBOX_SHARDS_DEFAULT, INBOX_SHARDS_MAX } from '../lambdas/contract/table-layout.js';
import { invalidProp } from './validation-error.js';

/**
 * The inbox index's shards per route (docs/runbook.md "The ceiling"): validated here so a bad
 * value fails `cdk synth` with the value and the fix, not a Lambda at cold start.
 */
export function resolveInboxShards(scope: IConstruct, inboxShards: number | undefined): number {
  const shards = inboxShards ?? INBOX_SHARDS_DEFAULT;
  if (!Number.isInteger(shards) || shards < 1 || shards > INBOX_SHARDS_MAX) {
    throw invalidProp(
      scope,
      `inboxShards ${JSON.stringify(shards)} is invalid; use a whole number between 1 and ${INBOX_SHARDS_MAX} (default ${INBOX_SHARDS_DEFAULT}), and only ever raise it.`,
    );
  }
  return shards;
}
