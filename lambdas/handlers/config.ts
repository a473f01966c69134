import * as z from 'zod';

/**
 * The one place that reads `process.env`. Each Lambda validates what it needs at cold start
 * and fails with a message naming the variable, instead of failing later on a request.
 */
const environmentSchema = z.object({
  COUNTERSIGN_TABLE_NAME: z.string().min(1),
  COUNTERSIGN_SEALING_KEY_ARN: z.string().startsWith('arn:'),
  COUNTERSIGN_OVERFLOW_BUCKET: z.string().min(1),
  COUNTERSIGN_STATE_MACHINE_ARN: z.string().startsWith('arn:').optional(),
  COUNTERSIGN_EVENT_BUS_NAME: z.string().min(1).default('default'),
  COUNTERSIGN_APPROVAL_TIMEOUT_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(24 * 86_400)
    .default(7 * 86_400),
  COUNTERSIGN_MODEL_PROVIDER: z.enum(['bedrock', 'openai-compatible', 'scripted']).default('bedrock'),
  COUNTERSIGN_BEDROCK_MODEL_ID: z.string().min(1).optional(),
  COUNTERSIGN_OPENAI_BASE_URL: z.string().url().optional(),
  COUNTERSIGN_OPENAI_SECRET_ARN: z.string().startsWith('arn:').optional(),
  COUNTERSIGN_SKILLS_MAX_BYTES: z.string().optional(),
  COUNTERSIGN_MAX_TURNS: z.coerce.number().int().min(1).max(500).default(50),
});

export type CountersignEnvironment = z.infer<typeof environmentSchema>;

/** Validates an environment; throws one error naming every missing or malformed variable. */
export function readEnvironment(environment: Record<string, string | undefined>): CountersignEnvironment {
  const parsed = environmentSchema.safeParse(environment);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
  throw new Error(`countersign configuration is invalid: ${problems}`);
}

let cached: CountersignEnvironment | undefined;

/** The Lambda's environment, validated once per container. */
export function lambdaEnvironment(): CountersignEnvironment {
  cached ??= readEnvironment(process.env);
  return cached;
}
