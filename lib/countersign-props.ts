import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ModelPrice } from '../lambdas/core/generation/model-prices.js';
import type { CountersignAlarmThresholds } from './alarm-thresholds.js';
import type { CountersignAlarmTopics } from './alarm-topics.js';
import type { ExternalIdentityProvider } from './auth.js';
import type { CountersignChannelsProps } from './channel-props.js';
import type { ExternalAgentsProps } from './external-agents.js';
import type { HandlerName } from './handler-names.js';
import type { IdentityGroupGrantsProp } from './identity-group-grants.js';
import type { InboxSignInProps } from './inbox-sign-in.js';
import type {
  CountersignReservedConcurrency,
  CountersignRetention,
  CountersignThrottling,
} from './limits.js';
import type { ModelProvider, OpenAiCompatibleEndpoint } from './model-permissions.js';
import type { CountersignPolicyFloor } from './policy-floor-props.js';
import type { CountersignQuotas } from './quota-props.js';

/** Properties of the {@link Countersign} construct. */
export interface CountersignProps {
  /**
   * How long a run waits for a human decision before it ends as expired. Between 1 minute and
   * 24 days, in whole seconds: the local runner overflows its timer above about 24.8 days.
   *
   * @default - Duration.days(7)
   */
  readonly approvalTimeout?: Duration;
  /**
   * Retention of every log group (functions, state machine, API access logs).
   *
   * @default - RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * What happens to the table, the KMS key, the buckets and the log groups when they leave the
   * stack. With DESTROY, a non-empty overflow bucket still blocks deletion until emptied.
   *
   * @default - RemovalPolicy.RETAIN: run data outlives the stack.
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Which model provider `model-turn` (runs) and `api-generate` (completion, translation) may call.
   *
   * @default - 'bedrock'
   */
  readonly modelProvider?: ModelProvider;
  /**
   * The Bedrock model or cross-Region inference profile id (used when `modelProvider` is
   * `'bedrock'`); the model-turn and api-generate roles may invoke this model only.
   *
   * @default - 'global.anthropic.claude-sonnet-4-5-20250929-v1:0' (Claude Sonnet 4.5, global inference profile)
   */
  readonly bedrockModelId?: string;
  /**
   * The OpenAI-compatible endpoint; required when `modelProvider` is `'openai-compatible'`.
   *
   * @default - none
   */
  readonly openAiCompatible?: OpenAiCompatibleEndpoint;
  /**
   * Path of a TypeScript or JavaScript module that exports `teamTools: Tool[]` (import
   * `defineTool` and `Tool` from `countersign/tools`). A relative path resolves against the
   * working directory of the CDK app. The module is bundled on its own, with the app's esbuild
   * at synth, into the handlers that offer or run tools, beside their prebuilt code.
   *
   * @default - no team tools: every handler deploys prebuilt, and synth needs no esbuild
   */
  readonly toolsModule?: string;
  /**
   * The Secrets Manager secrets the configurations' MCP servers name as `authSecret`
   * (docs/mcp.md). Only the model turn, the pause and the execution may read them.
   *
   * @default - none (a server with an `authSecret` then fails its runs with AccessDenied)
   */
  readonly mcpServerSecrets?: readonly ISecret[];
  /**
   * The hosts (`host` or `host:port`, exact, case-insensitive) the configurations' MCP servers
   * may be on (docs/mcp.md, "Allowed hosts"). Servers are reached over https only; an admin
   * cannot store a configuration naming another host, and a configuration stored earlier fails
   * its runs before any request is sent. Loopback, link-local (instance metadata) and wildcard
   * entries are refused.
   *
   * @example ['mcp.tickets.example.com', 'mcp.internal.example.com:8443']
   * @default - none: no MCP server can be reached until a host is listed
   */
  readonly mcpAllowedHosts?: readonly string[];
  /**
   * Byte budget of the skills block prepended to the first user message (docs/skills.md).
   *
   * @default - 24000
   */
  readonly skillsMaxBytes?: number;
  /**
   * The deployment-wide cap on model turns per run; a configuration may ask for fewer.
   *
   * @default - 50
   */
  readonly maxTurns?: number;
  /**
   * Who may call the API: tokens of this OpenID Connect provider (issuer URL and audiences),
   * checked by the HTTP API's JWT authorizer. Its groups give grants only as
   * `identityGroupGrants` maps them.
   *
   * @default - a Cognito user pool created by the construct (groups `agent_run`, `agent_approve`, `admin`; TOTP MFA required) and one app client
   */
  readonly externalIdentityProvider?: ExternalIdentityProvider;
  /**
   * Agents that run elsewhere (docs/external-agents.md): the machine clients that may submit
   * turns for approval to `POST /external-runs` with the OAuth client-credentials grant and the
   * scope `countersign/external-runs`, and only there. With the construct's user pool each
   * client is an app client it creates (and a Cognito domain serves the token endpoint); with
   * `externalIdentityProvider`, give each client's id. Each gets a webhook signing secret.
   *
   * @default - no machine client: the approval API refuses every token
   */
  readonly externalAgents?: ExternalAgentsProps;
  /**
   * How approvers sign in to the inbox page: the authorization code flow with PKCE, on Cognito's
   * managed login (the construct creates the domain and an app client whose callback and sign-out
   * URL is the page's), or at `externalIdentityProvider` with the page's client registered there.
   *
   * @default - managed login on the prefix domain `countersign-<stack id>`, scopes openid, email and profile; with `externalIdentityProvider`, a pasted token only
   */
  readonly inboxSignIn?: InboxSignInProps;
  /**
   * The inbox page's public URL, ending in `/`, when the API is served under your own domain:
   * sign-in returns there, and the `Run Awaiting Approval` event links each card under it.
   *
   * @default - the HTTP API's default stage URL
   */
  readonly inboxUrl?: string;
  /**
   * Which identity-provider groups (the tokens' `cognito:groups` or `groups` claim) give which
   * grants to a signed-in user without a user record. A user record, when there is one, decides
   * alone; and only a user with a record may start runs.
   *
   * @example { 'countersign-approvers': ['agent_approve'], 'platform-admins': ['admin'] }
   * @default - with the construct's user pool, its groups `agent_run`, `agent_approve` and `admin` give the grant they name; with `externalIdentityProvider`, no group gives a grant
   */
  readonly identityGroupGrants?: IdentityGroupGrantsProp;
  /**
   * The level every Lambda logs from (structured JSON lines). DEBUG adds one line per request;
   * no level ever logs a token, a preview, a transcript, a skill body or a tool's exception text.
   *
   * @default - 'INFO'
   */
  readonly logLevel?: CountersignLogLevel;
  /**
   * The `service` of every log line and the `service` dimension of every metric, which keeps two
   * deployments in one account apart on the dashboard and in the alarms.
   *
   * @default - `<stack name>-<construct id>`
   */
  readonly serviceName?: string;
  /**
   * The SNS topics the alarms notify (and tell when they recover), one per severity: `page`
   * for what needs someone now, `ticket` for what can wait for office hours. See docs/runbook.md.
   *
   * @default - a topic per severity, encrypted with their own customer managed key; subscribe to `observability.pageTopic` and `observability.ticketTopic`
   */
  readonly alarmTopics?: CountersignAlarmTopics;
  /**
   * Alarm thresholds, among them how long a run may wait for a decision before an alarm.
   *
   * @default - see ALARM_THRESHOLD_DEFAULTS in lib/alarm-thresholds.ts (24 hours, 5 s p99, 20 %, 300000 bytes)
   */
  readonly alarmThresholds?: CountersignAlarmThresholds;
  /**
   * The approval policy floor every configuration is raised to (four-eyes, four-eyes tools,
   * required approvals, decision gate); a configuration may tighten it, never loosen it.
   * See docs/approvers.md, "Policy".
   *
   * @default - four-eyes per configuration, no four-eyes tools, 1 approval, the `tool` gate
   */
  readonly policyFloor?: CountersignPolicyFloor;
  /**
   * Rate and burst limits of the HTTP API (a throttled client gets 429). See docs/runbook.md, "Limits".
   *
   * @default - { rateLimit: 50, burstLimit: 100 }
   */
  readonly throttling?: CountersignThrottling;
  /**
   * What one signed-in user may use: runs started per minute, waiting runs, open event streams,
   * completions per minute (a user over a limit gets 429 with `Retry-After`). See
   * docs/runbook.md, "Quotas".
   *
   * @default - { runsStartedPerMinute: 20, waitingRuns: 25, openEventStreams: 3, completionsPerMinute: 60 }
   */
  readonly quotas?: CountersignQuotas;
  /**
   * Reserved concurrency per function group (per function of the group); a group left out is
   * unreserved. For production, `RESERVED_CONCURRENCY_FOR_PRODUCTION` (101 in all, which needs an
   * account concurrency quota of at least 201; docs/runbook.md, "Production checklist").
   *
   * @default - nothing reserved, so a first deploy fits a new account's concurrency quota
   */
  readonly reservedConcurrency?: CountersignReservedConcurrency;
  /**
   * How long ended runs (transcripts, cards, overflow) and decisions are kept.
   *
   * @default - ended runs 90 days; decisions and the skills audit forever
   */
  readonly retention?: CountersignRetention;
  /**
   * The runbook every alarm description links to (`<runbookUrl>#<alarm name in lower case>`),
   * e.g. your team's copy of docs/runbook.md on your wiki.
   *
   * @default - the deployment's own copy: the API serves docs/runbook.md as a page at `<apiUrl>runbook`
   */
  readonly runbookUrl?: string;
  /**
   * What each model's tokens cost, in US dollars per million, by model id as configurations
   * name it: each model call then records its estimated cost (`ModelCost`), which the dashboard
   * adds up by configuration and per run. Your own list prices: countersign ships none.
   *
   * @example { 'global.anthropic.claude-sonnet-4-5-20250929-v1:0': { inputPerMillionTokens: 3, outputPerMillionTokens: 15 } }
   * @default - none: tokens are counted, no model cost is estimated
   */
  readonly modelPrices?: Readonly<Record<string, ModelPrice>>;
  /**
   * Whether to create the CloudWatch dashboard (about $3 a month). The alarms exist either way.
   *
   * @default true
   */
  readonly dashboard?: boolean;
  /**
   * Cognito threat protection in full function mode on the user pool the construct creates,
   * which needs the Plus feature plan (billed per monthly active user). Without it the pool
   * uses the Essentials plan. Ignored with `externalIdentityProvider`.
   *
   * @default true
   */
  readonly threatProtection?: boolean;
  /**
   * Memory of individual handlers in MB (128 to 10240), over the defaults (256 to 1024 MB by
   * handler; see HANDLER_SIZING in lib/handler-sizing.ts). Lambda CPU grows with memory.
   *
   * @default - each handler's default
   */
  readonly memorySize?: Readonly<Partial<Record<HandlerName, number>>>;
  /**
   * Shards per approver group of the inbox index: one shard takes about 1,000 card writes a
   * second (docs/runbook.md). Raise it for a higher pause rate; never lower it on a deployed
   * stack (cards in a dropped shard would leave the inbox).
   *
   * @default 4
   */
  readonly inboxShards?: number;
  /**
   * Reach approvers where they work (docs/approvers.md, "Slack" and "Email"): each channel is a
   * Lambda target of countersign's events on the default bus, with retries and a dead-letter
   * queue, and its failures alarm. A Slack button is decided like the API; a mail only links.
   *
   * @example { slack: { signingSecret, botToken, routes: [{ channelId: 'C0123456789' }] }, email: { identity, fromAddress: 'countersign@example.com' } }
   * @default - no channel: the events are on the default bus for the team's own rules
   */
  readonly channels?: CountersignChannelsProps;
}

/** The levels of {@link CountersignProps.logLevel}. */
export type CountersignLogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/** The defaults of {@link CountersignProps}, in one place for the construct and its tests. */
export const COUNTERSIGN_DEFAULTS = {
  approvalTimeout: Duration.days(7),
  logRetention: RetentionDays.ONE_MONTH,
  removalPolicy: RemovalPolicy.RETAIN,
  modelProvider: 'bedrock' as ModelProvider,
  bedrockModelId: 'global.anthropic.claude-sonnet-4-5-20250929-v1:0',
  skillsMaxBytes: 24_000,
  maxTurns: 50,
  logLevel: 'INFO' as CountersignLogLevel,
} as const;
