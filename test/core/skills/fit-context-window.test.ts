import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { isCountersignError } from '../../../lambdas/core/errors.js';
import type { Message, ModelProvider } from '../../../lambdas/core/model.js';
import { chooseTokenEstimator } from '../../../lambdas/core/skills/choose-token-estimator.js';
import { composeSkills, splitSkillBlock } from '../../../lambdas/core/skills/compose-skills.js';
import {
  loadCl100kEstimator,
  messageText,
  tokenizerMarginFor,
} from '../../../lambdas/core/skills/estimate-tokens.js';
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
  it('counts with the encoding shipped in gpt-tokenizer, plus a margin for models that tokenize differently', async () => {
    // Act
    const openAi = (await loadCl100kEstimator('gpt-4o')).countText('Hello world, this is a test.');
    const claude = (await loadCl100kEstimator('anthropic.claude-sonnet')).countText(
      'Hello world, this is a test.',
    );

    // Assess
    expect(tokenizerMarginFor('gpt-4o')).toBe(1.1);
    expect(tokenizerMarginFor('anthropic.claude-sonnet')).toBe(1.35);
    expect(openAi).toBe(Math.ceil(8 * 1.1));
    expect(claude).toBe(Math.ceil(8 * 1.35));
  });

  it('counts special-token strings in untrusted text as text instead of throwing', async () => {
    // Act and assess
    expect((await loadCl100kEstimator('gpt-4o')).countText('<|endoftext|> <|im_start|>')).toBeGreaterThan(2);
  });

  it('counts prose and JSON as the whole text would be counted, though it counts in pieces', async () => {
    // Prepare
    const estimator = await loadCl100kEstimator('gpt-4o');
    const { countTokens } = await import('gpt-tokenizer/encoding/cl100k_base');
    const texts = [
      words(3_000),
      JSON.stringify(Array.from({ length: 500 }, (_, id) => ({ id, title: `Page ${id}`, body: words(8) }))),
    ];

    // Act and assess
    for (const text of texts) expect(estimator.countText(text)).toBe(Math.ceil(countTokens(text) * 1.1));
  });

  // Issue #20 item 3: BPE costs the square of a run without a break, so a run input of 100,000
  // letters held the model turn (and `npm start`'s one process) for half a minute.
  it.each([
    ['letters', 'x'.repeat(100_000)],
    ['punctuation', '!'.repeat(100_000)],
    ['astral characters', '\u{1D54F}'.repeat(50_000)],
  ])('counts a run input of 100,000 %s without stalling', async (_shape, text) => {
    // Prepare
    const estimator = await loadCl100kEstimator('gpt-4o');

    // Act: inside a vm call, whose deadline can interrupt a synchronous count (a test timeout
    // cannot); a deadline far above the milliseconds it takes, not a speed claim.
    const tokens = runInNewContext(
      'countText(text)',
      { countText: estimator.countText, text },
      { timeout: 20_000 },
    );

    // Assess: no more than one token per UTF-8 byte, margin included.
    expect(tokens).toBeGreaterThan(0);
    expect(tokens).toBeLessThanOrEqual(Math.ceil(Buffer.byteLength(text) * 1.1));
  });
});

describe('fitContextWindow', () => {
  it('sends everything when it fits, skills block included in the count', async () => {
    // Act
    const send = await fitContextWindow({
      model: 'claude',
      messages: transcript(2),
      tools: [],
      maxTokens: 1000,
      contextWindowTokens: 100_000,
    });

    // Assess
    expect(send.trimmedMessages).toBe(0);
    expect(send.messages).toHaveLength(5);
    expect(send.estimatedTokens).toBeGreaterThan((await loadCl100kEstimator('claude')).countText(block));
  });

  it('trims the oldest turns first, keeps the first user message and the latest turn, and never splits a tool call from its result', async () => {
    // Prepare
    const messages = transcript(6);

    // Act
    const send = await fitContextWindow({
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

  it('takes the skills block out only as a last resort, and says so', async () => {
    // Prepare: the block alone is larger than what is left after the latest turn
    const blockTokens = (await loadCl100kEstimator('claude')).countText(block);

    // Act
    const send = await fitContextWindow({
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

  it('fails the turn with a clear error when even the first message and the latest turn do not fit', async () => {
    // Act
    const error = await (async () => {
      try {
        return await fitContextWindow({
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

describe('the estimator per provider', () => {
  const request = (messages: Message[]) => ({ model: 'anthropic.claude-sonnet', messages, tools: [] });
  const providerWith = (countInputTokens?: () => Promise<number>): ModelProvider => ({
    name: 'test',
    converse: async () => ({ content: [], stopReason: 'end_turn' }),
    ...(countInputTokens ? { countInputTokens } : {}),
  });

  it('asks for no estimator at all while the byte bound fits', async () => {
    // Prepare
    let asked = 0;

    // Act
    const send = await fitContextWindow({
      ...request(transcript(2)),
      maxTokens: 1000,
      contextWindowTokens: 1_000_000,
      loadEstimator: async () => {
        asked += 1;
        return loadCl100kEstimator('claude');
      },
    });

    // Assess
    expect(asked).toBe(0);
    expect(send.basis).toBe('byte-bound');
  });

  it("uses the provider's own count of the whole send when it has one, shared out by bytes", async () => {
    // Prepare: the provider says the send is 1,000 tokens
    const messages = transcript(6);

    // Act
    const estimator = await chooseTokenEstimator(
      providerWith(async () => 1000),
      request(messages),
    )();
    const send = await fitContextWindow({
      ...request(messages),
      maxTokens: 100,
      contextWindowTokens: 1400,
      loadEstimator: async () => estimator,
    });

    // Assess: cl100k times 1.35 would have trimmed this send; the provider's count does not
    expect(estimator.basis).toBe('provider');
    const total = messages.reduce((sum, message) => sum + estimator.countText(messageText(message)), 0);
    expect(total).toBeGreaterThanOrEqual(1000);
    expect(total).toBeLessThanOrEqual(1060);
    expect(send.trimmedMessages).toBe(0);
    expect(send.basis).toBe('provider');
  });

  it("falls back to the byte bound when the provider's count fails, and to cl100k without one", async () => {
    // Act
    const failing = await chooseTokenEstimator(
      providerWith(async () => {
        throw new Error('ValidationException: model does not support CountTokens');
      }),
      request(transcript(1)),
    )();
    const without = await chooseTokenEstimator(providerWith(), request(transcript(1)))();

    // Assess
    expect(failing.basis).toBe('byte-bound');
    expect(failing.countText('abcd')).toBe(Math.ceil(4 * 1.35));
    expect(without.basis).toBe('cl100k');
  });
});
