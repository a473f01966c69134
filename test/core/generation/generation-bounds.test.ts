import { describe, expect, it } from 'vitest';
import { configurationSchema } from '../../../lambdas/core/configurations.js';
import { isCountersignError } from '../../../lambdas/core/errors.js';
import { type GenerationDependencies, generateText } from '../../../lambdas/core/generation/generate-text.js';
import type { UserProfile } from '../../../lambdas/core/identity.js';
import type { ModelProvider } from '../../../lambdas/core/model.js';
import { silentLogger } from '../../../lambdas/core/ports.js';

// What bounds a completion at its edges (issue #30): its deadline cancels the provider call,
// and a reply too large to send back is refused, not passed on past Lambda's 6 MB.

const RUNNER: UserProfile = {
  userId: 'editor',
  displayName: 'Editor',
  grants: ['agent_run'],
  pageAccess: [],
  languageAccess: [],
  toolAccess: [],
};

/** A completion's dependencies over one model; `signals` holds what each call was given to stop on. */
function setUp(reply: string | 'never', timeoutMilliseconds = 1_000) {
  const signals: Array<AbortSignal | undefined> = [];
  const model: ModelProvider = {
    name: 'scripted',
    converse: async (_request, options) => {
      signals.push(options?.signal);
      if (reply === 'never') return new Promise(() => {});
      return { content: [{ type: 'text', text: reply }], stopReason: 'end_turn' };
    },
  };
  const configuration = configurationSchema.parse({
    configurationId: 'writer',
    label: 'Writer',
    provider: 'scripted',
    model: 'scripted-1',
  });
  const dependencies: GenerationDependencies = {
    configurations: {
      getConfiguration: async (id: string) => (id === 'writer' ? configuration : undefined),
    } as unknown as GenerationDependencies['configurations'],
    models: { resolve: () => model },
    logger: silentLogger,
    metrics: { count() {}, observe() {} },
    settings: {
      approvalTimeoutSeconds: 60,
      maxTurns: 10,
      textGenerationTimeoutMilliseconds: timeoutMilliseconds,
    },
  };
  return { dependencies, signals };
}

const complete = { operation: 'complete', body: { prompt: 'Go.' } } as const;

describe('the bounds of a completion', () => {
  it('cancels the model call at the deadline, so its adapter sends no retry after the 504', async () => {
    // Prepare
    const { dependencies, signals } = setUp('never', 20);

    // Act
    const refusal = await generateText(dependencies, RUNNER, 'writer', complete).catch(
      (error: unknown) => error,
    );

    // Assess
    expect(isCountersignError(refusal, 'model-timeout')).toBe(true);
    expect(signals).toHaveLength(1);
    expect(signals[0]?.aborted).toBe(true);
  });

  it('refuses a reply too large to send back (Lambda 6 MB) with a 502-class error, not a failed response', async () => {
    // Prepare: 1.3 million quotes, each escaped once in the body and again in the Lambda envelope.
    const { dependencies } = setUp('"'.repeat(1_300_000));

    // Act
    const refusal = await generateText(dependencies, RUNNER, 'writer', complete).catch(
      (error: unknown) => error,
    );

    // Assess
    expect(isCountersignError(refusal, 'model-provider-failed')).toBe(true);
    expect((refusal as Error).message).toContain('too large to send back');
  });

  it('returns a large reply that fits', async () => {
    // Prepare
    const { dependencies } = setUp('a'.repeat(1_000_000));

    // Act
    const outcome = await generateText(dependencies, RUNNER, 'writer', complete);

    // Assess
    expect(outcome.text).toHaveLength(1_000_000);
  });
});
