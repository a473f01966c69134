import { describe, expect, it } from 'vitest';
import { isCountersignError } from '../../../lambdas/core/errors.js';
import type { Message } from '../../../lambdas/core/model.js';
import { composeSkills, splitSkillBlock } from '../../../lambdas/core/skills/compose-skills.js';
import { estimateTextTokens, tokenizerMarginFor } from '../../../lambdas/core/skills/estimate-tokens.js';
import { fitContextWindow } from '../../../lambdas/core/skills/fit-context-window.js';
import { buildSkill } from './skill-builders.js';

const block = composeSkills({
  configurationSkills: [buildSkill('style', 'Keep titles short.\n'.repeat(40))],
  taskSkills: [],
}).block;
const words = (count: number) => Array.from({ length: count }, (_, index) => `word${index}`).join(' ');

/** The first message (skills and request), then `turns` tool rounds of about 1,000 tokens each. */
function transcript(turns: number): Message[] {
  const messages: Message[] = [
    { role: 'user', content: [{ type: 'text', text: `${block}Update page 12.` }] },
  ];
  for (let turn = 1; turn <= turns; turn += 1) {
    messages.push({
      role: 'assistant',
      content: [
        { type: 'tool_call', callId: `c${turn}`, name: 'get_page', arguments: { pageId: `${turn}` } },
      ],
    });
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', callId: `c${turn}`, content: words(500), isError: false }],
    });
  }
  return messages;
}

describe('the token estimator', () => {
  it('counts with the encoding shipped in gpt-tokenizer, plus a margin for models that tokenize differently', () => {
    // Act
    const openAi = estimateTextTokens('Hello world, this is a test.', 'gpt-4o');
    const claude = estimateTextTokens('Hello world, this is a test.', 'anthropic.claude-sonnet');

    // Assess
    expect(tokenizerMarginFor('gpt-4o')).toBe(1.1);
    expect(tokenizerMarginFor('anthropic.claude-sonnet')).toBe(1.35);
    expect(openAi).toBe(Math.ceil(8 * 1.1));
    expect(claude).toBe(Math.ceil(8 * 1.35));
  });

  it('counts special-token strings in untrusted text as text instead of throwing', () => {
    // Act and assess
    expect(estimateTextTokens('<|endoftext|> <|im_start|>', 'gpt-4o')).toBeGreaterThan(2);
  });
});

describe('fitContextWindow', () => {
  it('sends everything when it fits, skills block included in the count', () => {
    // Act
    const send = fitContextWindow({
      model: 'claude',
      messages: transcript(2),
      tools: [],
      maxTokens: 1000,
      contextWindowTokens: 100_000,
    });

    // Assess
    expect(send.trimmedMessages).toBe(0);
    expect(send.messages).toHaveLength(5);
    expect(send.estimatedTokens).toBeGreaterThan(estimateTextTokens(block, 'claude'));
  });

  it('trims the oldest turns first, keeps the first user message and the latest turn, and never splits a tool call from its result', () => {
    // Prepare
    const messages = transcript(6);

    // Act
    const send = fitContextWindow({
      model: 'claude',
      messages,
      tools: [],
      maxTokens: 500,
      contextWindowTokens: 4500,
    });

    // Assess
    expect(send.trimmedMessages).toBeGreaterThan(0);
    expect(send.trimmedMessages % 2).toBe(0);
    expect(send.messages[0]).toBe(messages[0]);
    expect(send.messages.at(-1)).toBe(messages.at(-1));
    expect(send.skillBlockDropped).toBe(false);
    const calls = send.messages.flatMap((message) =>
      message.content.filter((part) => part.type === 'tool_call').map((part) => part.callId),
    );
    const results = send.messages.flatMap((message) =>
      message.content.filter((part) => part.type === 'tool_result').map((part) => part.callId),
    );
    expect(calls).toEqual(results);
    expect(send.messages.map((message) => message.role)).toEqual(
      send.messages.map((_, index) => (index % 2 === 0 ? 'user' : 'assistant')),
    );
    expect(send.estimatedTokens).toBeLessThanOrEqual(send.budgetTokens);
  });

  it('takes the skills block out only as a last resort, and says so', () => {
    // Prepare: the block alone is larger than what is left after the latest turn
    const blockTokens = estimateTextTokens(block, 'claude');

    // Act
    const send = fitContextWindow({
      model: 'claude',
      messages: transcript(3),
      tools: [],
      maxTokens: 100,
      contextWindowTokens: 1400 + blockTokens / 2,
    });

    // Assess
    expect(send.skillBlockDropped).toBe(true);
    const first = send.messages[0]?.content[0];
    expect(first?.type === 'text' && first.text).toBe('Update page 12.');
    expect(first?.type === 'text' && splitSkillBlock(first.text)).toBe(undefined);
  });

  it('fails the turn with a clear error when even the first message and the latest turn do not fit', () => {
    // Act
    const error = (() => {
      try {
        return fitContextWindow({
          model: 'claude',
          messages: transcript(2),
          tools: [],
          maxTokens: 100,
          contextWindowTokens: 300,
        });
      } catch (thrown) {
        return thrown;
      }
    })();

    // Assess
    expect(isCountersignError(error, 'model-failed')).toBe(true);
    expect((error as Error).message).toMatch(/no longer fits the model's context window/);
  });
});
