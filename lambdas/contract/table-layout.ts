/**
 * The single DynamoDB table's key layout, shared by the CDK construct (which creates the
 * table) and the adapters and local mode (which use it), so the three cannot drift.
 */
export const TABLE_LAYOUT = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /**
   * Waiting approval cards, newest first: partition `WAITING#<route>#<shard>` (`WAITING` for
   * cards paused before sharding; inbox-index.ts), sort `<pausedAt>#<runId>`; and claimed
   * decisions not yet delivered: partition `UNDELIVERED#<shard>`, sort `<decidedAt>#<runId>`.
   */
  inboxIndex: { name: 'inbox', partitionKey: 'inboxPk', sortKey: 'inboxSk' },
  /**
   * What a person did and started, newest first (issue #21's history): partition `ACTOR#<userId>`
   * on decision and approval records, `OWNER#<userId>` on run records; sort `<when>#<runId>…`
   * (history-index.ts). It carries only the attributes a history list shows, never sealed state.
   */
  historyIndex: {
    name: 'history',
    partitionKey: 'historyPk',
    sortKey: 'historySk',
    projectedAttributes: [
      'runId',
      'turn',
      'digest',
      'decision',
      'decidedAt',
      'approvedAt',
      'label',
      'status',
      'configurationId',
      'createdAt',
      'updatedAt',
      'endedAt',
    ],
  },
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

/**
 * How often the waiting-runs probe runs (deployed: an EventBridge schedule; locally: a timer):
 * it measures the backlog and redelivers claimed decisions their request left undelivered.
 */
export const WAITING_RUNS_PROBE_INTERVAL_MINUTES = 5;
