import * as z from 'zod';
import { resolveSkillsMaxBytes } from '../core/skills/compose-skills.js';

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
  // Seed 003: a missing, unparsable or non-positive value means 24,000, never a failed cold start.
  COUNTERSIGN_SKILLS_MAX_BYTES: z.string().optional().transform(resolveSkillsMaxBytes),
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

const eventsEndpointSchema = z.object({
  COUNTERSIGN_JWT_ISSUER: z.string().url(),
  COUNTERSIGN_JWT_AUDIENCE: z
    .string()
    .min(1)
    .transform((value) => value.split(',').map((audience) => audience.trim()))
    .pipe(z.array(z.string().min(1)).min(1)),
});

/** What the run events function (a function URL, no JWT authorizer) needs to verify tokens itself. */
export type EventsEndpointEnvironment = z.infer<typeof eventsEndpointSchema>;

/** Validates the events endpoint's issuer and audiences (comma-separated); throws naming the variable. */
export function readEventsEndpointEnvironment(
  environment: Record<string, string | undefined>,
): EventsEndpointEnvironment {
  const parsed = eventsEndpointSchema.safeParse(environment);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
  throw new Error(`countersign configuration is invalid: ${problems}`);
}

/** The events endpoint's token settings, validated once per container. */
export function eventsEndpointEnvironment(): EventsEndpointEnvironment {
  return readEventsEndpointEnvironment(process.env);
}

/** `skills.maxBytes` for local mode (`npm start`), read from the same variable the Lambdas get. */
export function localSkillsMaxBytes(): number {
  return resolveSkillsMaxBytes(process.env.COUNTERSIGN_SKILLS_MAX_BYTES);
}
