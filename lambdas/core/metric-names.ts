/**
 * countersign's own metrics: the names the core emits through the `Metrics` port and the
 * dashboard and alarms read. One table, so a metric the core emits cannot be missing from the
 * dashboard (the port accepts only these names; test/core/metric-names.test.ts and
 * test/infra/observability-dashboard-and-settings.test.ts check both ends).
 */

/** The CloudWatch namespace of countersign's own metrics. */
export const COUNTERSIGN_METRICS_NAMESPACE = 'Countersign';

/**
 * Every metric the core and its decorators emit, by name, in the groups the dashboard graphs
 * them in (docs/runbook.md says when each is emitted).
 */
export const METRIC_GROUPS = {
  runs: [
    'RunsStarted',
    'RunsCompleted',
    'RunsFailed',
    'RunsExpired',
    'RunsCancelled',
    'RunsSuspended',
    'RunsRedriven',
  ],
  /**
   * `Decisions` by `outcome`; `Approvals`: each k-of-n approval recorded (short of K or the K-th);
   * `CardsEscalated`: each escalation step that routed an unanswered card to more groups.
   */
  decisions: ['Decisions', 'Approvals', 'CardsEscalated', 'PauseToDecision'],
  /**
   * Measured by the waiting-runs probe: claimed decisions older than a minute it delivered
   * itself, and those it could not (the `DecisionsUndelivered` alarm).
   */
  delivery: ['DecisionsRedelivered', 'UndeliveredDecisions'],
  /** Measured by the waiting-runs probe: nothing runs while a run waits. */
  waiting: ['RunsWaiting', 'OldestWaitingRunAge'],
  previews: ['PreviewsCaptured', 'PreviewsFailed', 'PreviewsWithheld'],
  skills: ['SkillsIngested', 'SkillsDropped', 'SkillChecksumMismatches', 'ContextMessagesTrimmed'],
  sealedSizes: ['SealedStateBytes', 'SealedCardBytes'],
  /** `GateRefusals` by `gate`; `QuotaRefusals` by `quota` (a per-principal quota answered 429). */
  refusals: [
    'StaleDigestRefusals',
    'SealedStateRejections',
    'StartRefusals',
    'GateRefusals',
    'QuotaRefusals',
  ],
  /** By `tool` and `outcome`. */
  tools: ['ToolCalls'],
  /**
   * Agents that run elsewhere (docs/external-agents.md): turns submitted, answered (by
   * `outcome`), webhooks delivered and failed (each failed attempt), and reports of a call run
   * without its approval.
   */
  external: [
    'ExternalRunsSubmitted',
    'ExternalRunsAnswered',
    'WebhookDeliveries',
    'WebhookDeliveryFailures',
    'ExecutionsWithoutApproval',
  ],
  /**
   * Each model call, by `configuration` and `provider` (the dashboard's lines) and for the
   * deployment as a whole (the alarms: an alarm cannot search). `ModelCost` is an estimate in US
   * dollars from the `modelPrices` prop, recorded only for a priced model.
   */
  model: [
    'ModelCalls',
    'ModelInputTokens',
    'ModelOutputTokens',
    'ModelLatency',
    'ModelErrors',
    'ModelThrottles',
    'ModelRetries',
    'ModelCost',
  ],
  /**
   * Reaching approvers (docs/approvers.md): `ChannelDeliveries` and `ChannelDeliveryFailures` by
   * `channel` (`slack`, `email`); `SlackInteractionRefusals` by `reason`; `CardEventFailures`: a
   * `Card Closed` event that could not be put (the channels then miss that card's closing).
   */
  channels: ['ChannelDeliveries', 'ChannelDeliveryFailures', 'SlackInteractionRefusals', 'CardEventFailures'],
  /**
   * Each approver response (a k-of-n approval, or a decision its decider gave alone) by
   * `approverGroup` (`(every approver)` for a card routed to no group): the time from the card
   * appearing, and `QuickApprovals` (approvals within 10 s), `ApproverRejects` and
   * `ApproverEdits` as 0 or 1, so their average is a share (docs/runbook.md, "Approver analytics").
   */
  approvers: ['ApproverResponseTime', 'QuickApprovals', 'ApproverRejects', 'ApproverEdits'],
} as const;

/** Every metric name, flat. */
export const METRIC_NAMES: readonly MetricName[] = Object.values(METRIC_GROUPS).flat();

/**
 * The name of one of countersign's metrics.
 *
 * @example
 * const name: MetricName = 'RunsStarted';
 */
export type MetricName = (typeof METRIC_GROUPS)[keyof typeof METRIC_GROUPS][number];

/** The units a countersign metric is recorded in (`None`: a plain number, the cost in US dollars). */
export type MetricUnit = 'Count' | 'Milliseconds' | 'Bytes' | 'None';
