import * as z from 'zod/mini';
import { approverGroupsSchema } from './approvals/card-routing.js';
import { escalationLadderSchema } from './approvals/escalation-ladder.js';
import { DECISION_GATES, requiredApprovalsSchema } from './policy/policy-floor.js';
import { startAccessSchema } from './policy/start-access.js';
import type { PageRequest } from './ports.js';
import { configurationQuotasSchema } from './quotas/principal-quotas.js';
import { mcpServersSchema } from './tools/mcp/mcp-server-configuration.js';

const identifier = z
  .string()
  .check(
    z.minLength(1),
    z.maxLength(100),
    z.regex(/^[a-zA-Z0-9][a-zA-Z0-9._-]*$/, 'use letters, digits, ".", "_" or "-"'),
  );

export const MODEL_PROVIDER_NAMES = ['bedrock', 'openai-compatible', 'scripted'] as const;

// Strict at every depth: a misspelt option (`four_eyes`) is a 400 naming its path, never a
// silently ignored key that leaves a safeguard off.
export const configurationOptionsSchema = z.strictObject({
  /** Model turns a run may take before it ends as failed. */
  maxTurns: z._default(z.number().check(z.int(), z.gte(1), z.lte(200)), 12),
  /** Model turns one execution may take before the run continues as a new execution. */
  turnsPerExecution: z._default(z.number().check(z.int(), z.gte(1), z.lte(500)), 40),
  maxTokens: z._default(z.number().check(z.int(), z.gte(1), z.lte(200_000)), 2048),
  temperature: z._default(z.number().check(z.gte(0), z.lte(2)), 0),
  /** Four-eyes: the run's owner may not approve their own run. */
  fourEyes: z._default(z.boolean(), false),
  /** Distinct approvers a write turn needs (k-of-n); the deployment's floor may raise it. */
  requiredApprovals: z._default(requiredApprovalsSchema, 1),
  /** `record`: approving also needs the approver to pass each call's record check. */
  decisionGate: z._default(z.enum(DECISION_GATES), 'tool'),
  /** Whether an approver's rejection reason is passed on to the model. */
  revealRejectionReason: z._default(z.boolean(), false),
});

/**
 * An LLM configuration: which provider and model, the system prompt, and which tools the
 * model is offered.
 */
export const configurationSchema = z.strictObject({
  configurationId: identifier,
  label: z.string().check(z.minLength(1), z.maxLength(200)),
  provider: z.enum(MODEL_PROVIDER_NAMES),
  model: z.string().check(z.minLength(1), z.maxLength(200)),
  systemPrompt: z._default(z.string().check(z.maxLength(20_000)), ''),
  allowedTools: z._default(
    z.array(z.string().check(z.minLength(1), z.maxLength(64))).check(z.maxLength(100)),
    [],
  ),
  options: z._default(configurationOptionsSchema, configurationOptionsSchema.parse({})),
  skillIds: z._default(z.array(z.string().check(z.maxLength(300))).check(z.maxLength(100)), []),
  /** MCP servers whose tools are offered as `<server>__<tool>` (docs/mcp.md). */
  mcpServers: z.optional(mcpServersSchema),
  /** Who may start runs with it. @default - every holder of `agent_run` */
  startAccess: z.optional(startAccessSchema),
  /** Which approver groups its cards go to. @default - every holder of `agent_approve` */
  approverGroups: z.optional(approverGroupsSchema),
  /**
   * Where an unanswered card goes next: after each step's minutes from the pause, the card is
   * also routed to its groups and announced again (docs/approvers.md, "Escalation"). @default - none
   */
  escalation: z.optional(escalationLadderSchema),
  /**
   * Lower per-principal limits for its runs and completions, on top of the deployment's
   * (docs/runbook.md, "Quotas"). @default - the deployment's only
   */
  quotas: z.optional(configurationQuotasSchema),
});
export type Configuration = z.infer<typeof configurationSchema>;

/** A task: a prompt template (`{{input}}` is replaced by the run input) on a configuration. */
export const taskSchema = z.strictObject({
  taskId: identifier,
  label: z.string().check(z.minLength(1), z.maxLength(200)),
  configurationId: identifier,
  promptTemplate: z.string().check(z.minLength(1), z.maxLength(20_000)),
  skillIds: z._default(z.array(z.string().check(z.maxLength(300))).check(z.maxLength(100)), []),
  /** Who may start runs of it, on top of its configuration's list. @default - every holder of `agent_run` */
  startAccess: z.optional(startAccessSchema),
  /** Which approver groups its cards go to, instead of its configuration's. @default - the configuration's */
  approverGroups: z.optional(approverGroupsSchema),
});
export type Task = z.infer<typeof taskSchema>;

export function renderPrompt(task: Task, input: string): string {
  return task.promptTemplate.includes('{{input}}')
    ? task.promptTemplate.split('{{input}}').join(input)
    : `${task.promptTemplate}\n\n${input}`;
}

/**
 * A stored record as the admin sees it: its value under today's schema, and the keys the
 * schema does not know (dotted paths). Such keys are reported, never guessed into known ones.
 */
export interface StoredRecordReport<Value> {
  value: Value;
  unknownKeys: string[];
}

/** Port: configurations and tasks (records in DynamoDB, administered over the admin API). */
export interface ConfigurationRepository {
  /** Like `getConfiguration`, with the unknown keys the stored record carries. */
  inspectConfiguration(configurationId: string): Promise<StoredRecordReport<Configuration> | undefined>;
  inspectTask(taskId: string): Promise<StoredRecordReport<Task> | undefined>;
  /** Every configuration, with its unknown keys. */
  inspectConfigurationsPage(
    options: PageRequest,
  ): Promise<{ items: StoredRecordReport<Configuration>[]; cursor?: string }>;
  inspectTasksPage(options: PageRequest): Promise<{ items: StoredRecordReport<Task>[]; cursor?: string }>;
  getConfiguration(configurationId: string): Promise<Configuration | undefined>;
  getTask(taskId: string): Promise<Task | undefined>;
  putConfiguration(configuration: Configuration): Promise<void>;
  putTask(task: Task): Promise<void>;
  listConfigurations(): Promise<Configuration[]>;
  listTasks(): Promise<Task[]>;
  /** One page in id order, with an opaque cursor (a forged one is a 400). */
  listConfigurationsPage(options: PageRequest): Promise<{ items: Configuration[]; cursor?: string }>;
  listTasksPage(options: PageRequest): Promise<{ items: Task[]; cursor?: string }>;
  deleteConfiguration(configurationId: string): Promise<boolean>;
  deleteTask(taskId: string): Promise<boolean>;
}
