import { describe, expect, it } from 'vitest';
import type { Message } from '../../../lambdas/core/model.js';
import { composeSkills } from '../../../lambdas/core/skills/compose-skills.js';
import { injectIntoTranscript } from '../../../lambdas/core/skills/inject-skills.js';
import { buildSkill } from './skill-builders.js';

const BLOCK = composeSkills({ configurationSkills: [buildSkill('house-style')], taskSkills: [] }).block;

// Completion and translation inject through the same function: test/core/generation/.
describe('skill injection (seed 003)', () => {
  it('adds no message to fill a missing user turn: it warns and injects nothing', () => {
    // Prepare
    const assistantOnly: Message[] = [{ role: 'assistant', content: [{ type: 'text', text: 'Hello.' }] }];

    // Act
    const transcript = injectIntoTranscript(assistantOnly, BLOCK);

    // Assess
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
});
