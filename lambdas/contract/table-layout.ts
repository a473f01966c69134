/**
 * The single DynamoDB table's key layout, shared by the CDK construct (which creates the
 * table) and the adapters and local mode (which use it), so the three cannot drift.
 */
export const TABLE_LAYOUT = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /**
   * Waiting approval cards, newest first: partition `WAITING#<route>#<shard>` (`WAITING` for
   * cards paused before sharding; inbox-index.ts), sort `<pausedAt>#<runId>`.
   */
  inboxIndex: { name: 'inbox', partitionKey: 'inboxPk', sortKey: 'inboxSk' },
  /**
   * DynamoDB TTL: epoch seconds after which an item may be removed (ended runs, closed cards,
   * and decisions when a decision retention is set). Not `expiresAt`: runs use that name for
   * their approval deadline.
   */
  timeToLiveAttribute: 'removeAfter',
  /**
   * The partition of a principal's quota counters: `QUOTA#<user id>`. The functions that count
   * may write only items under this prefix (an IAM condition on `dynamodb:LeadingKeys`).
   */
  quotaPartitionPrefix: 'QUOTA#',
} as const;

/**
 * How many shards each inbox route is written under (the construct's `inboxShards` prop). Here,
 * beside the layout, because the construct validates it and must not load the adapters' SDK.
 */
export const INBOX_SHARDS_DEFAULT = 4;
export const INBOX_SHARDS_MAX = 64;
