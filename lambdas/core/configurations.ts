import * as z from 'zod';

const identifier = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9._-]*$/, 'use letters, digits, ".", "_" or "-"');

export const MODEL_PROVIDER_NAMES = ['bedrock', 'openai-compatible', 'scripted'] as const;

export const configurationOptionsSchema = z.object({
  /** Model turns a run may take before it ends as failed. */
  maxTurns: z.number().int().min(1).max(200).default(12),
  /** Model turns one execution may take before the run continues as a new execution. */
  turnsPerExecution: z.number().int().min(1).max(500).default(40),
  maxTokens: z.number().int().min(1).max(200_000).default(2048),
  temperature: z.number().min(0).max(2).default(0),
  /** Four-eyes: the run's owner may not approve their own run. */
  fourEyes: z.boolean().default(false),
  /** Whether an approver's rejection reason is passed on to the model. */
  revealRejectionReason: z.boolean().default(false),
});

/**
 * An LLM configuration: which provider and model, the system prompt, and which tools the
 * model is offered.
 */
export const configurationSchema = z.object({
  configurationId: identifier,
  label: z.string().min(1).max(200),
  provider: z.enum(MODEL_PROVIDER_NAMES),
  model: z.string().min(1).max(200),
  systemPrompt: z.string().max(20_000).default(''),
  allowedTools: z.array(z.string().min(1).max(64)).max(100).default([]),
  options: configurationOptionsSchema.default(configurationOptionsSchema.parse({})),
  skillIds: z.array(z.string().max(300)).max(100).default([]),
});
export type Configuration = z.infer<typeof configurationSchema>;

/** A task: a prompt template (`{{input}}` is replaced by the run input) on a configuration. */
export const taskSchema = z.object({
  taskId: identifier,
  label: z.string().min(1).max(200),
  configurationId: identifier,
  promptTemplate: z.string().min(1).max(20_000),
  skillIds: z.array(z.string().max(300)).max(100).default([]),
});
export type Task = z.infer<typeof taskSchema>;

export function renderPrompt(task: Task, input: string): string {
  return task.promptTemplate.includes('{{input}}')
    ? task.promptTemplate.split('{{input}}').join(input)
    : `${task.promptTemplate}\n\n${input}`;
}

/** Port: configurations and tasks (records in DynamoDB, administered over the admin API). */
export interface ConfigurationRepository {
  getConfiguration(configurationId: string): Promise<Configuration | undefined>;
  getTask(taskId: string): Promise<Task | undefined>;
  putConfiguration(configuration: Configuration): Promise<void>;
  putTask(task: Task): Promise<void>;
  listConfigurations(): Promise<Configuration[]>;
  listTasks(): Promise<Task[]>;
  deleteConfiguration(configurationId: string): Promise<boolean>;
  deleteTask(taskId: string): Promise<boolean>;
}
