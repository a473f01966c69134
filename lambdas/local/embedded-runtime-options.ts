import type { LogLineWriter, StructuredLogLevel } from '../adapters/structured-logger.js';
import type { WebhookUrlPolicy } from '../core/external-runs/webhook-url.js';
import type { ModelPrices } from '../core/generation/model-prices.js';
import type { ThrottlingLimits } from '../core/limits.js';
import type { PolicyFloorInput } from '../core/policy/policy-floor.js';
import type { Logger } from '../core/ports.js';
import type { IdentityGroupGrants } from '../core/principal.js';
import type { PrincipalQuotas } from '../core/quotas/principal-quotas.js';
import type { McpHostPolicy } from '../core/tools/mcp/mcp-host-policy.js';
import type { Tool } from '../core/tools/tool.js';
import type { LocalChannelOptions } from './local-channels.js';

/** How the embedded runtime (embedded-runtime.ts) starts: `npm start`, the tests and the benches each choose. */
export interface EmbeddedRuntimeOptions {
  /** The state machine definition: the ASL synthesized from the CDK app. */
  readonly definition: Record<string, unknown>;
  /** Where the git-ignored data folder lives (dynalite data, blobs, keys). */
  readonly baseDirectory: string;
  /** @default - `<baseDirectory>/.countersign` */
  readonly dataDirectory?: string;
  /** @default 0 (a free port) */
  readonly port?: number;
  /**
   * Must equal the definition's approval wait (refused otherwise).
   * @default - the definition's AwaitApproval TimeoutSeconds
   */
  readonly approvalTimeoutSeconds?: number;
  /** A real OpenAI-compatible provider for configurations that name `openai-compatible`. */
  readonly openAiCompatible?: { baseUrl: string; apiKey: string };
  /** Extra tools (a team's module), registered beside the built-ins. */
  readonly extraTools?: readonly Tool[];
  /**
   * A logger in place of the structured one. Leave it unset to log like the Lambdas do.
   * @default - the deployed StructuredLogger, writing JSON lines to `writeLogLine`
   */
  readonly logger?: Logger;
  /** Where JSON log lines go (the runner's, the HTTP server's and the handlers'). @default - stdout */
  readonly writeLogLine?: LogLineWriter;
  /** Where EMF metric lines go, flushed per request and per step. @default - `writeLogLine` */
  readonly writeMetricLine?: LogLineWriter;
  /** @default 'INFO' */
  readonly logLevel?: StructuredLogLevel;
  /** Keep the data folder's contents in memory only (tests). @default false */
  readonly inMemory?: boolean;
  /** `skills.maxBytes`. @default - COUNTERSIGN_SKILLS_MAX_BYTES, else 24000 */
  readonly skillsMaxBytes?: number;
  /** The price table of the cost estimate (the construct's `modelPrices`). @default - none */
  readonly modelPrices?: ModelPrices;
  /**
   * Which token groups give which grants to a user without a record.
   * @default - COUNTERSIGN_IDENTITY_GROUP_GRANTS, else the local issuer's groups (`agent_run`, `agent_approve`, `admin`), each its grant
   */
  readonly identityGroupGrants?: IdentityGroupGrants;
  /**
   * The deployment-wide policy floor (the construct's `policyFloor` prop, locally).
   * @default - COUNTERSIGN_POLICY_FLOOR (JSON), else the default floor
   */
  readonly policyFloor?: PolicyFloorInput;
  /**
   * The HTTP API's rate and burst, enforced per client by the local server.
   * @default - THROTTLING_DEFAULTS, the construct's defaults
   */
  readonly throttling?: ThrottlingLimits;
  /**
   * How long ended runs (and decisions) are kept; expired items are swept when the runtime starts.
   * @default - ended runs 90 days, decisions forever (the construct's defaults)
   */
  readonly retention?: { readonly endedRunSeconds: number; readonly decisionSeconds?: number };
  /** Which MCP server URLs may be stored and reached. @default - loopback, plus COUNTERSIGN_MCP_ALLOWED_HOSTS over https */
  readonly mcpHostPolicy?: McpHostPolicy;
  /**
   * The notification channels (Slack, email), switched on as the construct's `channels` props do:
   * the notifier hands them its events in-process and the server serves the Slack route.
   * @default - none: the Slack route answers 404, as deployed without Slack
   */
  readonly channels?: LocalChannelOptions;
  /**
   * The local sign-in provider (the inbox page's OpenID Connect issuer, on its own port).
   * @default - a free port; access tokens live an hour, as Cognito's
   */
  readonly signIn?: { readonly port?: number; readonly accessTokenSeconds?: number };
  /**
   * How often the waiting-runs probe runs (it redelivers claimed decisions left undelivered).
   * @default - the deployed schedule's interval (WAITING_RUNS_PROBE_INTERVAL_MINUTES)
   */
  readonly probeIntervalMs?: number;
  /**
   * The per-principal quotas (the construct's `quotas` prop, locally), counted in dynalite as
   * DynamoDB counts them deployed. @default - COUNTERSIGN_PRINCIPAL_QUOTAS (JSON), else the defaults
   */
  readonly principalQuotas?: Partial<PrincipalQuotas>;
  /**
   * Where external runs' answers may be posted.
   * @default - loopback over http too (a local receiver), like the MCP host policy of local mode
   */
  readonly webhookUrlPolicy?: WebhookUrlPolicy;
  /** The token endpoint's port (the client-credentials grant of machine clients). @default 0 (a free port) */
  readonly tokenPort?: number;
}
