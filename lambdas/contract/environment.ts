import * as z from 'zod/mini';
import { slackRoutesSchema } from '../core/channels/slack-routes.js';
import { modelPricesSchema } from '../core/generation/model-prices.js';
import { ENDED_RUN_RETENTION_DAYS_DEFAULT } from '../core/limits.js';
import { DEFAULT_POLICY_FLOOR, policyFloorSchema } from '../core/policy/policy-floor.js';
import { type IdentityGroupGrants, identityGroupGrantsSchema } from '../core/principal.js';
import { PRINCIPAL_QUOTA_DEFAULTS, principalQuotasSchema } from '../core/quotas/principal-quotas.js';
import { formatSchemaIssues } from '../core/schema-messages.js';
import { resolveSkillsMaxBytes } from '../core/skills/compose-skills.js';
import { normalizeMcpAllowedHost } from '../core/tools/mcp/mcp-host-policy.js';
import { inboxSignInSchema } from './inbox-sign-in.js';
import { INBOX_SHARDS_DEFAULT, INBOX_SHARDS_MAX } from './table-layout.js';

/**
 * The environment of countersign's Lambdas, as one table: the construct sets these variables
 * (lib/countersign-functions.ts and the constructs that add to it, typed by {@link EnvironmentVariableName})
 * and lambdas/handlers/config.ts reads them through these schemas at cold start.
 */

/**
 * COUNTERSIGN_IDENTITY_GROUP_GRANTS: a JSON object of group name to grants, e.g.
 * `{"countersign-approvers":["agent_approve"]}`. Unset: no group gives a grant (fail closed).
 *
 * @example
 * parseIdentityGroupGrants('{"approvers":["agent_approve"]}'); // { kind: 'valid', mapping: {...} }
 */
export function parseIdentityGroupGrants(
  value: string | undefined,
): { kind: 'valid'; mapping: IdentityGroupGrants } | { kind: 'invalid'; problem: string } {
  if (value === undefined || value === '') return { kind: 'valid', mapping: {} };
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return { kind: 'invalid', problem: 'not JSON' };
  }
  const parsed = identityGroupGrantsSchema.safeParse(json);
  if (parsed.success) return { kind: 'valid', mapping: parsed.data };
  return { kind: 'invalid', problem: formatSchemaIssues(parsed.error.issues.slice(0, 1)) };
}

const identityGroupGrantsVariable = z.pipe(
  z.optional(z.string()),
  z.transform((value: string | undefined, context) => {
    const parsed = parseIdentityGroupGrants(value);
    if (parsed.kind === 'valid') return parsed.mapping;
    context.issues.push({ code: 'custom', message: parsed.problem, input: value });
    return z.NEVER;
  }),
);

const mcpAllowedHostsVariable = z.pipe(
  z.optional(z.string()),
  z.transform((value: string | undefined, context) => {
    const hosts: string[] = [];
    for (const entry of (value ?? '').split(',').map((part) => part.trim())) {
      if (entry === '') continue;
      const normalized = normalizeMcpAllowedHost(entry);
      if (normalized.kind === 'invalid') {
        context.issues.push({ code: 'custom', message: `"${entry}" ${normalized.problem}`, input: value });
        return z.NEVER;
      }
      hosts.push(normalized.host);
    }
    return hosts;
  }),
);

/** A variable holding JSON, parsed; text that is not JSON is an issue naming the variable. */
function parseJsonText(value: string, context: { issues: unknown[] }): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch {
    context.issues.push({ code: 'custom', message: 'is not JSON', input: value });
    return z.NEVER;
  }
}

/** The inbox page's URL (ending in `/`): where the event, a channel's message or a mail links each card. */
const inboxUrlVariable = z.string().check(z.url(), z.endsWith('/'));

/**
 * What every countersign Lambda reads. Each Lambda validates it at cold start and fails with a
 * message naming the variable, instead of failing later on a request.
 */
export const environmentSchema = z.object({
  COUNTERSIGN_TABLE_NAME: z.string().check(z.minLength(1)),
  COUNTERSIGN_SEALING_KEY_ARN: z.string().check(z.startsWith('arn:')),
  COUNTERSIGN_OVERFLOW_BUCKET: z.string().check(z.minLength(1)),
  // The bucket's own key (SSE-KMS at rest), apart from the sealing key.
  COUNTERSIGN_OVERFLOW_KEY_ARN: z.string().check(z.startsWith('arn:')),
  COUNTERSIGN_STATE_MACHINE_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
  COUNTERSIGN_EVENT_BUS_NAME: z._default(z.string().check(z.minLength(1)), 'default'),
  // The pausing function arms card escalations as one-time schedules in this group, each invoking
  // the escalate-card function with this role (lambdas/handlers/composition/aws-escalation-timers.ts).
  COUNTERSIGN_ESCALATION_SCHEDULE_GROUP: z.optional(z.string().check(z.minLength(1), z.maxLength(64))),
  COUNTERSIGN_ESCALATION_TARGET_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
  COUNTERSIGN_ESCALATION_ROLE_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
  COUNTERSIGN_APPROVAL_TIMEOUT_SECONDS: z._default(
    z.coerce.number().check(z.int(), z.gte(60), z.lte(24 * 86_400)),
    7 * 86_400,
  ),
  COUNTERSIGN_MODEL_PROVIDER: z._default(z.enum(['bedrock', 'openai-compatible', 'scripted']), 'bedrock'),
  COUNTERSIGN_BEDROCK_MODEL_ID: z.optional(z.string().check(z.minLength(1))),
  COUNTERSIGN_OPENAI_BASE_URL: z.optional(z.string().check(z.url())),
  COUNTERSIGN_OPENAI_SECRET_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
  // Seed 003: a missing, unparsable or non-positive value means 24,000, never a failed cold start.
  COUNTERSIGN_SKILLS_MAX_BYTES: z.pipe(
    z.optional(z.string()),
    z.transform((value: string | undefined) => resolveSkillsMaxBytes(value)),
  ),
  COUNTERSIGN_MAX_TURNS: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(500)), 50),
  // Unset: no identity-provider group gives a grant (fail closed); the construct always sets it.
  COUNTERSIGN_IDENTITY_GROUP_GRANTS: identityGroupGrantsVariable,
  // The policy floor as JSON (the construct writes it from its props). Unset means the default
  // floor; set but malformed fails the cold start: a floor must never silently become none.
  COUNTERSIGN_POLICY_FLOOR: z._default(
    z.pipe(z.pipe(z.string(), z.transform(parseJsonText)), policyFloorSchema),
    DEFAULT_POLICY_FLOOR,
  ),
  // Retention (docs/runbook.md): ended runs and closed cards; decisions only when set (else forever).
  COUNTERSIGN_ENDED_RUN_RETENTION_SECONDS: z._default(
    z.coerce.number().check(z.int(), z.gte(86_400)),
    ENDED_RUN_RETENTION_DAYS_DEFAULT * 86_400,
  ),
  COUNTERSIGN_INBOX_SHARDS: z._default(
    z.coerce.number().check(z.int(), z.gte(1), z.lte(INBOX_SHARDS_MAX)),
    INBOX_SHARDS_DEFAULT,
  ),
  COUNTERSIGN_DECISION_RETENTION_SECONDS: z.optional(z.coerce.number().check(z.int(), z.gte(86_400))),
  // The asymmetric KMS key that signs receipt entries (docs/receipts.md): the deciding function's only.
  COUNTERSIGN_RECEIPT_KEY_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
  // The per-principal quotas as JSON (the construct's `quotas` prop); unset means the defaults,
  // set but malformed fails the cold start: a limit must never silently become another.
  COUNTERSIGN_PRINCIPAL_QUOTAS: z._default(
    z.pipe(z.pipe(z.string(), z.transform(parseJsonText)), principalQuotasSchema),
    PRINCIPAL_QUOTA_DEFAULTS,
  ),
  // Comma-separated host[:port] the MCP client may reach (the construct's mcpAllowedHosts).
  // Unset or empty: none (fail closed); a malformed entry fails the cold start, naming it.
  COUNTERSIGN_MCP_ALLOWED_HOSTS: mcpAllowedHostsVariable,
  // NotifyCaller only: each machine client's webhook signing secret, as a JSON list of client id
  // and Secrets Manager ARN (docs/external-agents.md). Unset: no client has one, no webhook is sent.
  COUNTERSIGN_WEBHOOK_SECRETS: z._default(
    z.pipe(
      z.pipe(
        z.pipe(z.string(), z.transform(parseJsonText)),
        z.array(
          z.object({
            clientId: z.string().check(z.minLength(1)),
            secretArn: z.string().check(z.startsWith('arn:')),
          }),
        ),
      ),
      z.transform(
        (entries): Record<string, string> =>
          Object.fromEntries(entries.map((entry) => [entry.clientId, entry.secretArn])),
      ),
    ),
    {},
  ),
  // The inbox page's sign-in (inbox-sign-in.ts), as JSON; unset: the page takes a pasted token only.
  COUNTERSIGN_INBOX_SIGN_IN: z.optional(
    z.pipe(z.pipe(z.string(), z.transform(parseJsonText)), inboxSignInSchema),
  ),
  // The inbox page's URL (ending in `/`): the card links of the `Run Awaiting Approval` event.
  COUNTERSIGN_INBOX_URL: z.optional(inboxUrlVariable),
  // The construct's modelPrices as JSON (model-turn and api-generate only): the cost estimate of
  // each model call. Unset: no cost is estimated; malformed: the cold start fails, naming it.
  COUNTERSIGN_MODEL_PRICES: z.optional(
    z.pipe(z.pipe(z.string(), z.transform(parseJsonText)), modelPricesSchema),
  ),
});

/** What the run events function (a function URL, no JWT authorizer) reads to verify tokens itself. */
export const eventsEndpointSchema = z.object({
  COUNTERSIGN_JWT_ISSUER: z.string().check(z.url()),
  COUNTERSIGN_JWT_AUDIENCE: z.pipe(
    z.pipe(
      z.string().check(z.minLength(1)),
      z.transform((value: string) => value.split(',').map((audience) => audience.trim())),
    ),
    z.array(z.string().check(z.minLength(1))).check(z.minLength(1)),
  ),
});

/**
 * What the Slack channel's functions read (docs/approvers.md, "Slack"): the secrets' ARNs (the
 * signing secret only where interactions are verified), where cards go, and where they link.
 */
export const slackChannelEnvironmentSchema = z.object({
  COUNTERSIGN_SLACK_BOT_TOKEN_SECRET_ARN: z.string().check(z.startsWith('arn:')),
  COUNTERSIGN_SLACK_SIGNING_SECRET_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
  // The routes as JSON: [{ channelId, approverGroup?, configurationId? }], 1 to 20.
  COUNTERSIGN_SLACK_ROUTES: z.pipe(z.pipe(z.string(), z.transform(parseJsonText)), slackRoutesSchema),
  COUNTERSIGN_INBOX_URL: inboxUrlVariable,
});

/** What the email channel's function reads (docs/approvers.md, "Email"): the verified sender, and where cards link. */
export const emailChannelEnvironmentSchema = z.object({
  COUNTERSIGN_EMAIL_FROM_ADDRESS: z.string().check(z.email()),
  COUNTERSIGN_INBOX_URL: inboxUrlVariable,
});

/** Read by Powertools Logger and Metrics themselves: the `service` of every line, the log level. */
export const POWERTOOLS_VARIABLES = ['POWERTOOLS_SERVICE_NAME', 'POWERTOOLS_LOG_LEVEL'] as const;

/**
 * The name of a variable a countersign Lambda reads: the only names the construct may set.
 *
 * @example
 * handler.addEnvironment('COUNTERSIGN_INBOX_SHARDS' satisfies EnvironmentVariableName, '4');
 */
export type EnvironmentVariableName =
  | keyof typeof environmentSchema.shape
  | keyof typeof eventsEndpointSchema.shape
  | keyof typeof slackChannelEnvironmentSchema.shape
  | keyof typeof emailChannelEnvironmentSchema.shape
  | (typeof POWERTOOLS_VARIABLES)[number];

/** Every variable name a countersign Lambda reads. */
export const ENVIRONMENT_VARIABLE_NAMES: readonly EnvironmentVariableName[] = [
  ...(Object.keys(environmentSchema.shape) as Array<keyof typeof environmentSchema.shape>),
  ...(Object.keys(eventsEndpointSchema.shape) as Array<keyof typeof eventsEndpointSchema.shape>),
  ...new Set(
    [
      ...Object.keys(slackChannelEnvironmentSchema.shape),
      ...Object.keys(emailChannelEnvironmentSchema.shape),
    ].map((name) => name as EnvironmentVariableName),
  ),
  ...POWERTOOLS_VARIABLES,
];
