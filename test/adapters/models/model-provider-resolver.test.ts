import { describe, expect, it } from 'vitest';
import { createModelProviderResolver } from '../../../lambdas/adapters/models/model-provider-resolver.js';
import { ScriptedModel } from '../../../lambdas/adapters/models/scripted-model.js';
import { CountersignError } from '../../../lambdas/core/errors.js';
import type { ModelProvider } from '../../../lambdas/core/model.js';

const bedrock: ModelProvider = {
  name: 'bedrock',
  converse: async () => ({ content: [], stopReason: 'end_turn' }),
};

describe('createModelProviderResolver', () => {
  it('resolves each configured provider by its configuration name', () => {
    // Prepare
    const scripted = new ScriptedModel();
    const resolver = createModelProviderResolver({ bedrock, scripted });

    // Act
    const resolved = [resolver.resolve('bedrock'), resolver.resolve('scripted')];

    // Assess
    expect(resolved).toEqual([bedrock, scripted]);
  });

  it('refuses a known provider that is not configured, naming it', () => {
    // Prepare
    const resolver = createModelProviderResolver({ bedrock });

    // Act
    const attempt = () => resolver.resolve('openai-compatible');

    // Assess
    expect(attempt).toThrow(CountersignError);
    expect(attempt).toThrow('Model provider "openai-compatible" is not configured in this deployment');
  });

  it('refuses an unknown provider name as a configuration error naming it', () => {
    // Prepare
    const resolver = createModelProviderResolver({ bedrock });

    // Act
    const failure = (() => {
      try {
        resolver.resolve('gemini');
      } catch (error) {
        return error;
      }
    })();

    // Assess
    expect(failure).toMatchObject({
      code: 'configuration',
      message: 'Model provider "gemini" is unknown: use one of bedrock, openai-compatible, scripted.',
    });
  });
});
