/*
 * The one place that reads `process.env`, through the contract's schemas
 * (lambdas/contract/environment.ts, the table the construct sets the variables from).
 */
import * as z from 'zod/mini';
import type * as zc from 'zod/v4/core';
import {
  emailChannelEnvironmentSchema,
  environmentSchema,
  eventsEndpointSchema,
  parseIdentityGroupGrants,
  slackChannelEnvironmentSchema,
} from '../contract/environment.js';
import type { InboxSignIn } from '../contract/inbox-sign-in.js';
import type { PolicyFloor } from '../core/policy/policy-floor.js';
import { type IdentityGroupGrants, OWN_GROUP_GRANTS } from '../core/principal.js';
import type { PrincipalQuotas } from '../core/quotas/principal-quotas.js';
import { formatSchemaIssues } from '../core/schema-messages.js';
import { resolveSkillsMaxBytes } from '../core/skills/compose-skills.js';
import type { McpHostPolicy } from '../core/tools/mcp/mcp-host-policy.js';

export type CountersignEnvironment = z.infer<typeof environmentSchema>;

/** Validates an environment; throws one error naming every missing or malformed variable. */
export function readEnvironment(environment: Record<string, string | undefined>): CountersignEnvironment {
  return parseConfiguration(environmentSchema, environment);
}

/**
 * Parses configuration with its schema, or stops the process with one error naming every
 * malformed variable (`variable` prefixes the paths when a single variable's value is parsed).
 */
function parseConfiguration<Schema extends zc.$ZodType>(
  schema: Schema,
  value: unknown,
  variable?: string,
): z.infer<Schema> {
  const parsed = z.safeParse(schema, value);
  if (parsed.success) return parsed.data;
  const problems = formatSchemaIssues(parsed.error.issues, variable);
  throw new Error(`countersign configuration is invalid: ${problems}`);
}

let cached: CountersignEnvironment | undefined;

/** The Lambda's environment, validated once per container. */
export function lambdaEnvironment(): CountersignEnvironment {
  cached ??= readEnvironment(process.env);
  return cached;
}

/** What the run events function (a function URL, no JWT authorizer) needs to verify tokens itself. */
export type EventsEndpointEnvironment = z.infer<typeof eventsEndpointSchema>;

/** Validates the events endpoint's issuer and audiences (comma-separated); throws naming the variable. */
export function readEventsEndpointEnvironment(
  environment: Record<string, string | undefined>,
): EventsEndpointEnvironment {
  return parseConfiguration(eventsEndpointSchema, environment);
}

/** The events endpoint's token settings, validated once per container. */
export function eventsEndpointEnvironment(): EventsEndpointEnvironment {
  return readEventsEndpointEnvironment(process.env);
}

/** The Slack channel's settings (its functions only), validated once per container. */
export function slackChannelEnvironment(): z.infer<typeof slackChannelEnvironmentSchema> {
  slackCached ??= parseConfiguration(slackChannelEnvironmentSchema, process.env);
  return slackCached;
}

/** The email channel's settings (its function only), validated once per container. */
export function emailChannelEnvironment(): z.infer<typeof emailChannelEnvironmentSchema> {
  emailCached ??= parseConfiguration(emailChannelEnvironmentSchema, process.env);
  return emailCached;
}

let slackCached: z.infer<typeof slackChannelEnvironmentSchema> | undefined;
let emailCached: z.infer<typeof emailChannelEnvironmentSchema> | undefined;

/** The policy floor for local mode (`npm start`), from the same variable the Lambdas get. */
export function localPolicyFloor(): PolicyFloor {
  return readEnvironmentPolicyFloor(process.env);
}

/** Reads `COUNTERSIGN_POLICY_FLOOR` alone; throws naming the variable when it is malformed. */
export function readEnvironmentPolicyFloor(environment: Record<string, string | undefined>): PolicyFloor {
  const variable = 'COUNTERSIGN_POLICY_FLOOR';
  return parseConfiguration(environmentSchema.shape[variable], environment[variable], variable);
}

/** The per-principal quotas for local mode (`npm start`), from the same variable the Lambdas get. */
export function localPrincipalQuotas(): PrincipalQuotas {
  const variable = 'COUNTERSIGN_PRINCIPAL_QUOTAS';
  return parseConfiguration(environmentSchema.shape[variable], process.env[variable], variable);
}

/** `skills.maxBytes` for local mode (`npm start`), read from the same variable the Lambdas get. */
export function localSkillsMaxBytes(): number {
  return resolveSkillsMaxBytes(process.env.COUNTERSIGN_SKILLS_MAX_BYTES);
}

/**
 * Local mode's group mapping: COUNTERSIGN_IDENTITY_GROUP_GRANTS when set, else the local
 * issuer's own groups, each named after its grant. A malformed value stops `npm start`.
 */
export function localIdentityGroupGrants(): IdentityGroupGrants {
  const value = process.env.COUNTERSIGN_IDENTITY_GROUP_GRANTS;
  if (value === undefined) return OWN_GROUP_GRANTS;
  const parsed = parseIdentityGroupGrants(value);
  if (parsed.kind === 'valid') return parsed.mapping;
  throw new Error(
    `countersign configuration is invalid: COUNTERSIGN_IDENTITY_GROUP_GRANTS: ${parsed.problem}`,
  );
}

/**
 * Where the pausing function arms card escalations: the schedule group, the escalate-card
 * function and the role Scheduler invokes it with. Each is required there; a missing one fails
 * the first pause that arms a step, naming it (the construct sets all three on that function only).
 */
export function lambdaEscalationSchedule(): { groupName: string; targetArn: string; roleArn: string } {
  const environment = lambdaEnvironment();
  const groupName = environment.COUNTERSIGN_ESCALATION_SCHEDULE_GROUP;
  const targetArn = environment.COUNTERSIGN_ESCALATION_TARGET_ARN;
  const roleArn = environment.COUNTERSIGN_ESCALATION_ROLE_ARN;
  const missing = [
    ...(groupName === undefined ? ['COUNTERSIGN_ESCALATION_SCHEDULE_GROUP'] : []),
    ...(targetArn === undefined ? ['COUNTERSIGN_ESCALATION_TARGET_ARN'] : []),
    ...(roleArn === undefined ? ['COUNTERSIGN_ESCALATION_ROLE_ARN'] : []),
  ];
  if (groupName === undefined || targetArn === undefined || roleArn === undefined) {
    throw new Error(`countersign configuration is invalid: ${missing.join(', ')}: required`);
  }
  return { groupName, targetArn, roleArn };
}

/** The inbox page's sign-in (COUNTERSIGN_INBOX_SIGN_IN); unset: the page takes a pasted token only. */
export function lambdaInboxPage(): { signIn?: InboxSignIn } {
  const signIn = lambdaEnvironment().COUNTERSIGN_INBOX_SIGN_IN;
  return signIn === undefined ? {} : { signIn };
}

/** The deployed MCP host policy: https to the listed hosts only (COUNTERSIGN_MCP_ALLOWED_HOSTS). */
export function lambdaMcpHostPolicy(): McpHostPolicy {
  return { allowedHosts: lambdaEnvironment().COUNTERSIGN_MCP_ALLOWED_HOSTS, allowLoopback: false };
}

/**
 * Local mode's MCP host policy: loopback servers over http or https, plus the hosts of
 * COUNTERSIGN_MCP_ALLOWED_HOSTS over https. A malformed entry stops `npm start`, naming it.
 */
export function localMcpHostPolicy(): McpHostPolicy {
  const variable = 'COUNTERSIGN_MCP_ALLOWED_HOSTS';
  const allowedHosts = parseConfiguration(environmentSchema.shape[variable], process.env[variable], variable);
  return { allowedHosts, allowLoopback: true };
}
