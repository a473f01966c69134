import type { SlackUserMappings } from './channels/slack-ports.js';
import type { ConfigurationRepository } from './configurations.js';
import type { ExternalRunStore } from './external-runs/external-run-store.js';
import type { WebhookPoster, WebhookSecrets } from './external-runs/webhook-delivery.js';
import type { WebhookUrlPolicy } from './external-runs/webhook-url.js';
import type { ModelPrices } from './generation/model-prices.js';
import type { ModelProviderResolver } from './model.js';
import type { PageStore } from './pages.js';
import type { PolicyFloor } from './policy/policy-floor.js';
import type {
  Clock,
  EscalationTimers,
  Logger,
  Metrics,
  RunExecutions,
  RunNotifier,
  RunRepository,
  StateSealer,
  UserDirectory,
} from './ports.js';
import type { IdentityGroupGrants } from './principal.js';
import type { PrincipalQuotas } from './quotas/principal-quotas.js';
import type { QuotaStore } from './quotas/quota-store.js';
import type { ReceiptDependencies } from './receipts/receipt-recording.js';
import type { SkillRepository } from './skills/skill-record.js';
import type { McpHostPolicy } from './tools/mcp/mcp-host-policy.js';
import type { McpServers } from './tools/mcp/mcp-servers.js';
import type { ToolRegistry } from './tools/tool.js';

/** Deployment-wide settings the use cases need (read once by the config module). */
export interface RunSettings {
  /** How long a run waits for a decision before it ends as `expired`. */
  approvalTimeoutSeconds: number;
  /** A deployment-wide cap on model turns, over any configuration's own. */
  maxTurns: number;
  /** `skills.maxBytes` (docs/skills.md); missing or not positive means 24,000. */
  skillsMaxBytes?: number;
  /** Overrides the model's context window, in tokens (tests; models the table does not know). */
  contextWindowTokens?: number;
  /** Which identity-provider groups give which grants to users without a record. Absent: none. */
  identityGroupGrants?: IdentityGroupGrants;
  /**
   * How long a completion or translation waits for the model before it answers 504: below the
   * HTTP API's 30 s integration limit. @default - TEXT_GENERATION_TIMEOUT_MILLISECONDS (25 s)
   */
  textGenerationTimeoutMilliseconds?: number;
  /** The deployment's policy floor; every configuration's policy is raised to it. @default - DEFAULT_POLICY_FLOOR */
  policyFloor?: PolicyFloor;
  /** Per-principal limits (runs, waiting runs, event streams, completions). @default - PRINCIPAL_QUOTA_DEFAULTS */
  principalQuotas?: PrincipalQuotas;
  /**
   * Which MCP server URLs an admin may store (docs/mcp.md, "Allowed hosts"); the MCP client checks
   * the same policy again before it connects. @default - NO_MCP_HOSTS: no MCP server is allowed
   */
  mcpHostPolicy?: McpHostPolicy;
  /**
   * Where an external run's answer may be posted (docs/external-agents.md).
   * @default - DEPLOYED_WEBHOOK_URL_POLICY: https, no loopback or link-local host
   */
  webhookUrlPolicy?: WebhookUrlPolicy;
  /**
   * The team's model prices (the `modelPrices` prop), for the cost estimate each model call
   * records. @default - none: tokens are counted, no cost is estimated
   */
  modelPrices?: ModelPrices;
}

/**
 * Everything the run use cases may touch. Each use case asks for the part it needs with
 * `Pick<RunDependencies, ...>`, so a handler's wiring shows its reach.
 */
export interface RunDependencies {
  runs: RunRepository;
  sealer: StateSealer;
  configurations: ConfigurationRepository;
  users: UserDirectory;
  /** The admin's links of Slack users to users (docs/approvers.md, "Slack"). */
  slackUsers: SlackUserMappings;
  pages: PageStore;
  /** Skill records (docs/skills.md). Absent: attached skills are not injected, with a warning per run. */
  skills?: SkillRepository;
  tools: ToolRegistry;
  /** The MCP client the run steps use. Absent: a configuration naming MCP servers fails its runs. */
  mcp?: McpServers;
  /** The per-principal quota counters. Absent: no quota is enforced (unit tests that do not need them). */
  quotas?: QuotaStore;
  /** Client keys and execution reports of external runs (docs/external-agents.md). */
  externalRuns: ExternalRunStore;
  /** The webhook signing secrets, per machine client. Absent: no webhook is sent. */
  webhookSecrets?: WebhookSecrets;
  /** Posts an external run's signed answer. Absent: no webhook is sent. */
  webhookPoster?: WebhookPoster;
  models: ModelProviderResolver;
  executions: RunExecutions;
  notifier: RunNotifier;
  /** The one-time timers of card escalations (EventBridge Scheduler deployed). */
  escalations: EscalationTimers;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  settings: RunSettings;
  newId: () => string;
  /**
   * Receipt chains (docs/receipts.md): the functions that record approvals, decisions, cancels
   * and expiries append to them, and GET /runs/{id}/receipt reads them.
   */
  receipts: ReceiptDependencies;
}

/**
 * What the card reader (`approvals/card-reader.ts`) and the surfaces built on it need (the inbox,
 * GET /runs/{id}, its calls and its event stream): the repository and sealer to open a card, the
 * tools and pages for its previews and policy, and what ending a run whose card cannot be opened
 * takes.
 */
export type CardReaderDependencies = Pick<
  RunDependencies,
  'runs' | 'sealer' | 'tools' | 'pages' | 'logger' | 'metrics' | 'executions' | 'clock'
> &
  Partial<Pick<RunDependencies, 'settings'>>;

/**
 * What a surface that lists or opens cards for an approver reads (the inbox, a call's arguments):
 * the card reader, and the records of the approvers away who named the viewer their delegate.
 */
export type InboxDependencies = CardReaderDependencies & { users: Pick<UserDirectory, 'getUser'> };

/**
 * What a decision needs: the card reader, the settings its policy floor and expiry come from,
 * the users (k-of-n re-checks each approver's current record when the K-th approval comes), and
 * ids (the claim names the request that wrote it).
 */
export type DecisionDependencies = CardReaderDependencies &
  Pick<RunDependencies, 'settings' | 'users' | 'newId'>;

/**
 * What the steps that run a turn's tools for the run's acting user need (AwaitApproval builds
 * their previews, ExecuteTools runs them): the run, its user, the pages and the tools, with
 * the configuration and MCP client for the run's MCP tools, and ids for each attempt.
 */
export type ToolStepDependencies = Pick<
  RunDependencies,
  'runs' | 'sealer' | 'users' | 'pages' | 'tools' | 'clock' | 'logger' | 'metrics' | 'newId'
> &
  Partial<Pick<RunDependencies, 'configurations' | 'mcp'>>;
