import { describe, expect, it } from 'vitest';
import { isCountersignError } from '../../../lambdas/core/errors.js';
import type {
  EmbeddingRequest,
  Message,
  ModelProvider,
  ModelRequest,
  PromptMessage,
  SpeechRequest,
  VisionRequest,
} from '../../../lambdas/core/model.js';
import { composeSkills } from '../../../lambdas/core/skills/compose-skills.js';
import {
  callModelOperation,
  injectIntoPrompt,
  injectIntoTranscript,
} from '../../../lambdas/core/skills/inject-skills.js';
import { buildSkill } from './skill-builders.js';

const BLOCK = composeSkills({ configurationSkills: [buildSkill('house-style')], taskSkills: [] }).block;

/** A provider with every operation, remembering each request it was given. */
function recordingProvider() {
  const received: Array<{ operation: string; request: unknown }> = [];
  const provider: ModelProvider = {
    name: 'recording',
    converse: async (request: ModelRequest) => {
      received.push({ operation: 'converse', request });
      return { content: [{ type: 'text', text: 'ok' }], stopReason: 'end_turn' };
    },
    complete: async (request) => {
      received.push({ operation: 'complete', request });
      return { text: 'ok' };
    },
    translate: async (request) => {
      received.push({ operation: 'translate', request });
      return { text: 'ok' };
    },
    embed: async (request) => {
      received.push({ operation: 'embed', request });
      return { vectors: [[0.1]] };
    },
    vision: async (request) => {
      received.push({ operation: 'vision', request });
      return { text: 'a cat' };
    },
    speech: async (request) => {
      received.push({ operation: 'speech', request });
      return { audio: 'AAAA' };
    },
  };
  return { provider, received };
}

describe('skill injection (seed 003)', () => {
  it('prepends the block to a plain prompt', () => {
    // Act
    const injection = injectIntoPrompt('Summarise page 12.', BLOCK);

    // Assess
    expect(injection).toEqual({ value: `${BLOCK}Summarise page 12.`, injected: true });
  });

  it('prepends the block to the first user message of a message list only', () => {
    // Prepare
    const prompt: PromptMessage[] = [
      { role: 'user', content: 'First question.' },
      { role: 'assistant', content: 'An answer.' },
      { role: 'user', content: 'Second question.' },
    ];

    // Act
    const { value } = injectIntoPrompt(prompt, BLOCK);

    // Assess
    expect(value).toEqual([
      { role: 'user', content: `${BLOCK}First question.` },
      { role: 'assistant', content: 'An answer.' },
      { role: 'user', content: 'Second question.' },
    ]);
    expect(prompt[0]?.content).toBe('First question.');
  });

  it('prepends the block to the leading text part of multimodal content, leaving the image alone', () => {
    // Prepare
    const image = { type: 'image' as const, mediaType: 'image/png', data: 'iVBORw0KGgo=' };
    const textFirst: PromptMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'Describe.' }, image] },
    ];
    const imageFirst: PromptMessage[] = [
      { role: 'user', content: [image, { type: 'text', text: 'Describe.' }] },
    ];

    // Act
    const fromText = injectIntoPrompt(textFirst, BLOCK).value as PromptMessage[];
    const fromImage = injectIntoPrompt(imageFirst, BLOCK).value as PromptMessage[];

    // Assess
    expect(fromText).toEqual([
      { role: 'user', content: [{ type: 'text', text: `${BLOCK}Describe.` }, image] },
    ]);
    expect(fromImage).toHaveLength(1);
    expect(fromImage[0]?.role).toBe('user');
    expect(fromImage[0]?.content).toEqual([
      { type: 'text', text: BLOCK.trimEnd() },
      image,
      { type: 'text', text: 'Describe.' },
    ]);
  });

  it('never puts the block in the system role, even when a system message comes first', () => {
    // Prepare
    const prompt: PromptMessage[] = [
      { role: 'system', content: 'You are careful.' },
      { role: 'user', content: 'Question.' },
    ];

    // Act
    const { value } = injectIntoPrompt(prompt, BLOCK);

    // Assess
    expect((value as PromptMessage[])[0]).toEqual({ role: 'system', content: 'You are careful.' });
    expect((value as PromptMessage[])[1]?.content).toBe(`${BLOCK}Question.`);
  });

  it('adds no message to fill a missing user turn: it warns and injects nothing', () => {
    // Prepare
    const systemOnly: PromptMessage[] = [{ role: 'system', content: 'You are careful.' }];
    const assistantOnly: Message[] = [{ role: 'assistant', content: [{ type: 'text', text: 'Hello.' }] }];

    // Act
    const prompt = injectIntoPrompt(systemOnly, BLOCK);
    const transcript = injectIntoTranscript(assistantOnly, BLOCK);

    // Assess
    expect(prompt).toEqual({ value: systemOnly, injected: false, warning: 'no-user-message' });
    expect(transcript).toEqual({ value: assistantOnly, injected: false, warning: 'no-user-message' });
  });

  it('prepends the block to the first user message of a run transcript, not to later ones', () => {
    // Prepare
    const transcript: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'Set the title.' }] },
      { role: 'assistant', content: [{ type: 'tool_call', callId: 'c1', name: 'get_page', arguments: {} }] },
      { role: 'user', content: [{ type: 'tool_result', callId: 'c1', content: 'page', isError: false }] },
    ];

    // Act
    const { value } = injectIntoTranscript(transcript, BLOCK);

    // Assess
    expect(value[0]).toEqual({ role: 'user', content: [{ type: 'text', text: `${BLOCK}Set the title.` }] });
    expect(value.slice(1)).toEqual(transcript.slice(1));
  });

  it('injects into completion, translation and task execution, and leaves their system prompt alone', async () => {
    // Prepare
    const { provider, received } = recordingProvider();

    // Act
    await callModelOperation(
      provider,
      'complete',
      { model: 'm', system: 'Sys.', prompt: 'Complete.' },
      BLOCK,
    );
    await callModelOperation(
      provider,
      'translate',
      { model: 'm', prompt: 'Hallo Welt', targetLanguage: 'en' },
      BLOCK,
    );
    await callModelOperation(
      provider,
      'converse',
      {
        model: 'm',
        system: 'Sys.',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Run.' }] }],
        tools: [],
      },
      BLOCK,
    );

    // Assess
    expect(received.map((entry) => entry.operation)).toEqual(['complete', 'translate', 'converse']);
    expect(received[0]?.request).toEqual({ model: 'm', system: 'Sys.', prompt: `${BLOCK}Complete.` });
    expect(received[1]?.request).toMatchObject({ prompt: `${BLOCK}Hallo Welt` });
    expect(received[2]?.request).toMatchObject({
      system: 'Sys.',
      messages: [{ role: 'user', content: [{ type: 'text', text: `${BLOCK}Run.` }] }],
    });
  });

  it('never touches the inputs of embeddings, vision or speech', async () => {
    // Prepare
    const { provider, received } = recordingProvider();
    const embedding: EmbeddingRequest = { model: 'embed-1', inputs: ['page twelve', 'spring sale'] };
    const vision: VisionRequest = {
      model: 'vision-1',
      prompt: 'What is shown?',
      images: [{ mediaType: 'image/png', data: 'AAAA' }],
    };
    const speech: SpeechRequest = { model: 'tts-1', input: { kind: 'text', text: 'Hello.' } };
    const before = structuredClone({ embedding, vision, speech });

    // Act
    await callModelOperation(provider, 'embed', embedding, BLOCK);
    await callModelOperation(provider, 'vision', vision, BLOCK);
    await callModelOperation(provider, 'speech', speech, BLOCK);

    // Assess: the very same objects, unchanged, and no trace of the block
    expect(received[0]?.request).toBe(embedding);
    expect(received[1]?.request).toBe(vision);
    expect(received[2]?.request).toBe(speech);
    expect({ embedding, vision, speech }).toEqual(before);
    expect(JSON.stringify(received)).not.toContain('Task guidelines');
  });

  it('refuses an operation the provider does not offer with an error that names both', async () => {
    // Prepare
    const provider: ModelProvider = {
      name: 'bedrock',
      converse: async () => ({ content: [], stopReason: 'end_turn' }),
    };

    // Act
    const refusal = await callModelOperation(provider, 'embed', { model: 'x', inputs: ['a'] }, BLOCK).catch(
      (error) => error,
    );

    // Assess
    expect(isCountersignError(refusal, 'configuration')).toBe(true);
    expect((refusal as Error).message).toBe(
      'Model provider "bedrock" does not support the "embed" operation; choose a provider that does.',
    );
  });
});
