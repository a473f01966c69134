import { describe, expect, it } from 'vitest';
import {
  CARD_CONTEXT_MAX_CHARACTERS,
  captureCardContext,
  readCardContext,
} from '../../../lambdas/core/approvals/card-context.js';
import { viewWaitingCard } from '../../../lambdas/core/approvals/card-reader.js';
import { boundPreviewChanges } from '../../../lambdas/core/previews/bound-preview-changes.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import { APPROVER, createHarness, OWNER, person, startPausedRun } from '../runs/use-case-harness.js';

describe('a card’s context', () => {
  it('keeps the request, the proposing turn’s own text and the owner’s name, each bounded', () => {
    // Prepare
    const long = 'x'.repeat(CARD_CONTEXT_MAX_CHARACTERS + 10);

    // Act
    const context = captureCardContext({
      request: long,
      transcript: [
        { role: 'user', content: [{ type: 'text', text: 'skills… then the request' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'An earlier turn.' }] },
        {
          role: 'user',
          content: [{ type: 'tool_result', callId: 'c1', content: 'page 12', isError: false }],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: ' I will shorten the description \u202E because it is too long. ' },
            { type: 'tool_call', callId: 'c2', name: 'update_page_metadata', arguments: {} },
          ],
        },
      ],
      ownerName: 'Eda Editor',
    });

    // Assess
    expect(context.request?.totalCharacters).toBe(CARD_CONTEXT_MAX_CHARACTERS + 10);
    expect(Array.from(context.request?.text ?? '')).toHaveLength(CARD_CONTEXT_MAX_CHARACTERS);
    expect(context.request?.text.endsWith('…')).toBe(true);
    expect(context.reasoning).toEqual({
      text: 'I will shorten the description \u202E because it is too long.',
      totalCharacters: 56,
    });
    expect(context.ownerName).toBe('Eda Editor');
  });

  it('reads a malformed stored context as none, and leaves out what a run did not record', () => {
    expect(readCardContext({ request: { text: 1 } })).toBeUndefined();
    expect(captureCardContext({ request: undefined, transcript: [], ownerName: undefined })).toEqual({});
  });

  it('shows the request to the owner, an admin and an approver who reads the previews, and withholds it from one who does not', async () => {
    // Prepare
    const harness = createHarness();
    const { runId } = await startPausedRun(harness);
    const blind = person('pat', { grants: ['agent_approve'], pageAccess: [] });
    const contextOf = async (viewer: typeof OWNER) => {
      const reading = await viewWaitingCard(harness.dependencies, viewer, runId);
      return reading.kind === 'viewed' ? reading.view.context : undefined;
    };

    // Act
    const asApprover = await contextOf(APPROVER);
    const asOwner = await contextOf(OWNER);
    const asBlind = await contextOf(blind);

    // Assess
    expect(asApprover).toEqual({
      request: { text: "Set the title of page 12 to 'Spring sale'", totalCharacters: 41 },
    });
    expect(asOwner).toEqual(asApprover);
    expect(asBlind).toEqual({ withheld: TEXTS.contextWithheld });
  });
});

describe('a preview’s text changes', () => {
  it('keeps ten text changes that change something, each side cut to its bound', () => {
    // Prepare
    const many = Array.from({ length: 12 }, (_unused, index) => ({
      field: `f${index}`,
      before: 'a',
      after: 'b',
    }));

    // Act
    const bounded = boundPreviewChanges([
      { field: 'same', before: 'x', after: 'x' },
      'not a change',
      { field: 'long', before: 'o'.repeat(9_000), after: 'n' },
      ...many,
    ]);

    // Assess
    expect(bounded).toHaveLength(10);
    expect(bounded[0]?.field).toBe('long');
    expect(Array.from(bounded[0]?.before ?? '')).toHaveLength(8_000);
    expect(bounded.map((change) => change.field)).not.toContain('same');
    expect(boundPreviewChanges('nothing')).toEqual([]);
  });
});
