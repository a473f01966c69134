import * as z from 'zod/mini';
import { CountersignError, isCountersignError, nameErrorClass } from '../errors.js';
import { requireGrant, type UserProfile } from '../identity.js';
import {
  type Message,
  type ModelOperationName,
  type ModelReply,
  type ModelRequest,
  textOf,
} from '../model.js';
import { mayStartWith } from '../policy/start-access.js';
import { systemClock } from '../ports.js';
import { enforceCompletionQuota } from '../quotas/enforce-quotas.js';
import type { RunDependencies } from '../run-dependencies.js';
import { composeRunSkills } from '../skills/compose-run-skills.js';
import { fitModelSend } from '../skills/fit-model-send.js';
import { injectIntoTranscript } from '../skills/inject-skills.js';
import { TEXTS } from '../texts.js';
import { callModel } from './call-model.js';

/**
 * The HTTP API cuts a synchronous Lambda integration at 30 s; the model gets 25 of them, so a
 * slow provider (or its retries) becomes a 504 that says so, not a bare gateway timeout.
 */
export const TEXT_GENERATION_TIMEOUT_MILLISECONDS = 25_000;

/**
 * The largest reply a completion returns, as JSON text: a Lambda response is at most 6 MB and
 * its envelope escapes the body once more (up to twice the bytes), so a reply past this could
 * not be returned at all. The provider adapters cap what they read higher up (4 MiB).
 */
export const MAX_GENERATION_REPLY_BYTES = 2_500_000;

/** One prompt, one text to translate or one message: far below the 64 KiB body limit. */
export const MAX_GENERATION_TEXT_CHARACTERS = 32_000;
export const MAX_GENERATION_MESSAGES = 50;

const generationText = z.string().check(z.minLength(1), z.maxLength(MAX_GENERATION_TEXT_CHARACTERS));
// A language is a name or a tag ("German", "pt-BR"): letters, spaces, hyphens and brackets only,
// so it cannot end the instruction sentence it is placed in.
const language = z
  .string()
  .check(
    z.minLength(1),
    z.maxLength(50),
    z.regex(/^[\p{L}][\p{L}\p{M} ()-]*$/u, 'use a language name or tag, such as "German" or "de-AT"'),
  );

// Strict at every depth: a misspelt field is a 400 naming its path, never silently ignored.
export const completeRequestSchema = z
  .strictObject({
    prompt: z.optional(generationText),
    messages: z.optional(
      z
        .array(z.strictObject({ role: z.enum(['user', 'assistant']), content: generationText }))
        .check(z.minLength(1), z.maxLength(MAX_GENERATION_MESSAGES)),
    ),
  })
  .check(
    z.refine(
      (body: { prompt?: string; messages?: unknown[] }) =>
        (body.prompt === undefined) !== (body.messages === undefined),
      { message: 'give exactly one of "prompt" or "messages"', path: ['prompt'] },
    ),
    // Seed 003: the block goes into the first user message and is never moved into another
    // role to fill a missing user turn, so a message list starts with the user's.
    z.refine(
      (body: { messages?: Array<{ role: string }> }) =>
        body.messages === undefined || body.messages[0]?.role === 'user',
      { message: 'the first message must be the user\'s ("role": "user")', path: ['messages', 0, 'role'] },
    ),
  );
export type CompleteRequest = z.infer<typeof completeRequestSchema>;

export const translateRequestSchema = z.strictObject({
  text: generationText,
  targetLanguage: language,
  sourceLanguage: z.optional(language),
});
export type TranslateRequest = z.infer<typeof translateRequestSchema>;

/** What a caller asks for; only text generation is served (docs/skills.md). */
export type GenerationRequest =
  | { operation: 'complete'; body: CompleteRequest }
  | { operation: 'translate'; body: TranslateRequest }
  | { operation: Exclude<ModelOperationName, 'converse' | 'complete' | 'translate'> };

export type GenerationOutcome = {
  kind: 'generated';
  text: string;
  stopReason: ModelReply['stopReason'];
  usage?: ModelReply['usage'];
};

export type GenerationDependencies = Pick<
  RunDependencies,
  'configurations' | 'models' | 'logger' | 'metrics' | 'settings'
> &
  Partial<Pick<RunDependencies, 'skills' | 'quotas' | 'clock'>>;

/**
 * The configuration-driven entry point of docs/skills.md: a completion or a translation with the
 * configuration's model and system prompt, and the configuration's skills (there is no task on
 * this path) prepended to the first user message behind the guard preamble. No tools are
 * offered. Embeddings, vision and speech are refused: skills never reach them, and countersign
 * does not serve them. The caller needs `agent_run` and the configuration's access list; the
 * send is bounded by the context-window manager (skills block counted) and by
 * `TEXT_GENERATION_TIMEOUT_MILLISECONDS`. Logs carry counts and identifiers, never prompt,
 * skill or reply text.
 *
 * @example
 * const { text } = await generateText(dependencies, principal, 'support-bot', {
 *   operation: 'translate',
 *   body: { text: 'Hallo Welt', targetLanguage: 'English' },
 * });
 */
export async function generateText(
  dependencies: GenerationDependencies,
  principal: UserProfile,
  configurationId: string,
  request: GenerationRequest,
): Promise<GenerationOutcome> {
  const operation = requireTextGeneration(request.operation);
  requireGrant(principal, 'agent_run');
  const configuration = await dependencies.configurations.getConfiguration(configurationId);
  if (!configuration) throw new CountersignError('not-found', TEXTS.configurationNotFound);
  // Who may use a configuration is data the admins set, on this path as on POST /runs.
  if (!mayStartWith(principal, configuration.startAccess)) {
    dependencies.metrics.count('StartRefusals');
    throw new CountersignError(
      'forbidden',
      TEXTS.startAccessRefused(`configuration "${configuration.configurationId}"`),
    );
  }
  await enforceCompletionQuota(
    { ...dependencies, clock: dependencies.clock ?? systemClock },
    principal,
    configuration,
  );
  const logFields = { configurationId, operation };
  const skills = await composeRunSkills(dependencies, { logFields, configuration });
  const messages = injectIntoTranscript(
    messagesOf(request as Exclude<GenerationRequest, { operation: 'embed' | 'vision' | 'speech' }>),
    skills?.block ?? '',
  ).value;

  const model = resolveProvider(dependencies, configuration.provider);
  const whole: ModelRequest & { maxTokens: number } = {
    model: configuration.model,
    ...(configuration.systemPrompt ? { system: configuration.systemPrompt } : {}),
    messages,
    tools: [],
    maxTokens: configuration.options.maxTokens,
  };
  const send = await fitModelSend(dependencies, {
    provider: configuration.provider,
    model,
    request: whole,
    logFields,
  }).catch((error: unknown) => {
    // Only "does not fit" is thrown here (a failed token count falls back to the byte bound):
    // what does not fit is what the client sent, so a 413, never a 500.
    if (isCountersignError(error, 'model-failed')) {
      throw new CountersignError('payload-too-large', TEXTS.generationTooLarge, { field: 'body' });
    }
    throw error;
  });

  const timeoutMilliseconds =
    dependencies.settings.textGenerationTimeoutMilliseconds ?? TEXT_GENERATION_TIMEOUT_MILLISECONDS;
  const reply = await withDeadline(
    (signal) =>
      callModel(
        { ...dependencies, clock: dependencies.clock ?? systemClock },
        {
          configurationId,
          provider: configuration.provider,
          model,
          request: { ...whole, messages: send.messages, temperature: configuration.options.temperature },
          options: { signal },
          logFields,
        },
      ),
    timeoutMilliseconds,
  ).catch((error: unknown) => {
    if (isCountersignError(error, 'model-timeout')) {
      dependencies.logger.warn('model did not answer in time', { ...logFields, timeoutMilliseconds });
      throw error;
    }
    // The adapter's reason stays in the logs' class only: the client reads one plain sentence.
    dependencies.logger.warn('model provider failed', {
      ...logFields,
      errorClass: nameErrorClass(error),
      code: isCountersignError(error) ? error.code : undefined,
    });
    throw new CountersignError('model-provider-failed', TEXTS.generationProviderFailed);
  });
  const text = textOf(reply.content);
  if (text.trim() === '') throw new CountersignError('model-provider-failed', TEXTS.generationEmptyReply);
  if (new TextEncoder().encode(JSON.stringify(text)).byteLength > MAX_GENERATION_REPLY_BYTES) {
    dependencies.logger.warn('model reply too large to return', { ...logFields, characters: text.length });
    throw new CountersignError('model-provider-failed', TEXTS.generationReplyTooLarge);
  }
  dependencies.logger.info('text generated', {
    ...logFields,
    stopReason: reply.stopReason,
    skillsIncluded: skills?.included.length ?? 0,
  });
  return {
    kind: 'generated',
    text,
    stopReason: reply.stopReason,
    ...(reply.usage ? { usage: reply.usage } : {}),
  };
}

/**
 * Refuses every operation that is not text generation (docs/skills.md: skills are never applied to
 * embeddings, vision or speech, and countersign has no such path to apply them to).
 */
export function requireTextGeneration(operation: GenerationRequest['operation']): 'complete' | 'translate' {
  if (operation === 'complete' || operation === 'translate') return operation;
  throw new CountersignError('bad-request', TEXTS.nonTextOperation(operation), { field: 'operation' });
}

/** The user turn of a completion or a translation; the configuration's system prompt stays as it is. */
function messagesOf(
  request: Exclude<GenerationRequest, { operation: 'embed' | 'vision' | 'speech' }>,
): Message[] {
  if (request.operation === 'translate') {
    const { text, targetLanguage, sourceLanguage } = request.body;
    const from = sourceLanguage === undefined ? '' : ` from ${sourceLanguage}`;
    const instruction = `Translate the text below${from} into ${targetLanguage}. Reply with the translation only.\n\n`;
    return [{ role: 'user', content: [{ type: 'text', text: `${instruction}${text}` }] }];
  }
  const { prompt, messages } = request.body;
  if (prompt !== undefined) return [{ role: 'user', content: [{ type: 'text', text: prompt }] }];
  return (messages ?? []).map(
    (message): Message => ({ role: message.role, content: [{ type: 'text', text: message.content }] }),
  );
}

function resolveProvider(dependencies: GenerationDependencies, providerName: string) {
  try {
    return dependencies.models.resolve(providerName);
  } catch (error) {
    dependencies.logger.warn('model provider not available', {
      provider: providerName,
      errorClass: nameErrorClass(error),
    });
    throw new CountersignError('model-provider-unavailable', TEXTS.generationProviderUnavailable);
  }
}

/**
 * The model's answer, or a `model-timeout` error once `milliseconds` have passed. The deadline
 * also aborts the call's signal, so the provider adapter stops there: no retry goes out after
 * the client was told 504.
 */
async function withDeadline<T>(work: (signal: AbortSignal) => Promise<T>, milliseconds: number): Promise<T> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const timeout = new CountersignError(
        'model-timeout',
        TEXTS.generationTimeout(Math.round(milliseconds / 1000)),
      );
      controller.abort(timeout);
      reject(timeout);
    }, milliseconds);
  });
  try {
    return await Promise.race([work(controller.signal), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
