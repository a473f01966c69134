import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../../lambdas/adapters/models/scripted-model.js';
import type { Message, ModelRequest, ToolSpecification } from '../../../lambdas/core/model.js';

const allTools: ToolSpecification[] = ['get_page', 'list_pages', 'search_pages', 'update_page_metadata'].map(
  (name) => ({ name, description: name, inputSchema: { type: 'object' } }),
);

function ask(text: string, options: { tools?: ToolSpecification[]; before?: Message[] } = {}): ModelRequest {
  return {
    model: 'scripted',
    tools: options.tools ?? allTools,
    messages: [...(options.before ?? []), { role: 'user', content: [{ type: 'text', text }] }],
  };
}

const model = new ScriptedModel();

describe('ScriptedModel instructions', () => {
  it.each([
    ["Set the description of page 12 to 'Spring sale'", { pageId: '12', description: 'Spring sale' }],
    ['set the description of page 12 to "Spring sale"', { pageId: '12', description: 'Spring sale' }],
    ["Set the title of page '12' to 'Spring'", { pageId: '12', title: 'Spring' }],
    ['Set the keywords of page "home-en" to "spring, sale"', { pageId: 'home-en', keywords: 'spring, sale' }],
    ["Please set the og title of page 12 to 'Spring'", { pageId: '12', ogTitle: 'Spring' }],
    ["Set the description of page 12 to ''", { pageId: '12', description: '' }],
    ["On page 7, set the author to 'Ana'", { pageId: '7', author: 'Ana' }],
    ['Set the description of page 12 to "It\'s spring"', { pageId: '12', description: "It's spring" }],
  ])('turns %s into one update_page_metadata call', async (instruction, expected) => {
    // Act
    const reply = await model.converse(ask(instruction));

    // Assess
    expect(reply.stopReason).toBe('tool_use');
    expect(reply.content).toEqual([
      { type: 'tool_call', callId: 'call-1-0', name: 'update_page_metadata', arguments: expected },
    ]);
  });

  it('proposes "call <tool> with <JSON object>" as given, only for an offered tool and an object', async () => {
    // Prepare
    const tools = [...allTools, { name: 'close_ticket', description: 'x', inputSchema: { type: 'object' } }];

    // Act
    const reply = await model.converse(ask('Call close_ticket with {"ticketId":"T-7"}', { tools }));
    const notOffered = await model.converse(ask('Call close_ticket with {"ticketId":"T-7"}'));
    const notAnObject = await model.converse(ask('Call close_ticket with ["T-7"]', { tools }));

    // Assess
    expect(reply.content).toEqual([
      { type: 'tool_call', callId: 'call-1-0', name: 'close_ticket', arguments: { ticketId: 'T-7' } },
    ]);
    expect(notOffered.stopReason).not.toBe('tool_use');
    expect(notAnObject.stopReason).not.toBe('tool_use');
  });

  it('joins several and-joined set clauses on the same page into one call with all fields in order', async () => {
    // Act
    const reply = await model.converse(
      ask(
        "Set the title of page 12 to 'Spring', the keywords to 'spring' and set the description of page 12 to 'Spring sale'",
      ),
    );

    // Assess
    expect(reply.content).toEqual([
      {
        type: 'tool_call',
        callId: 'call-1-0',
        name: 'update_page_metadata',
        arguments: { pageId: '12', title: 'Spring', keywords: 'spring', description: 'Spring sale' },
      },
    ]);
    expect(Object.keys((reply.content[0] as { arguments: object }).arguments)).toEqual([
      'pageId',
      'title',
      'keywords',
      'description',
    ]);
  });

  it('proposes one call per page when the clauses name different pages', async () => {
    // Act
    const reply = await model.converse(
      ask("Set the title of page 12 to 'A' and the title of page 13 to 'B'"),
    );

    // Assess
    expect(reply.content).toEqual([
      {
        type: 'tool_call',
        callId: 'call-1-0',
        name: 'update_page_metadata',
        arguments: { pageId: '12', title: 'A' },
      },
      {
        type: 'tool_call',
        callId: 'call-1-1',
        name: 'update_page_metadata',
        arguments: { pageId: '13', title: 'B' },
      },
    ]);
  });

  it.each([
    ['What is on page 12?', 'get_page', { pageId: '12' }],
    ["What's on page '12'?", 'get_page', { pageId: '12' }],
    ['Show page 12', 'get_page', { pageId: '12' }],
    ['List the pages', 'list_pages', {}],
    ['Which pages are there?', 'list_pages', {}],
    ['Search pages for spring', 'search_pages', { query: 'spring' }],
    ["Search the pages for 'spring sale'.", 'search_pages', { query: 'spring sale' }],
    ['Find all pages about "spring" ?! ', 'search_pages', { query: 'spring' }],
    ["Find pages mentioning 'a' or 'b'", 'search_pages', { query: "'a' or 'b'" }],
  ])('answers the read question %s with %s', async (instruction, tool, args) => {
    // Act
    const reply = await model.converse(ask(instruction));

    // Assess
    expect(reply.stopReason).toBe('tool_use');
    expect(reply.content).toEqual([{ type: 'tool_call', callId: 'call-1-0', name: tool, arguments: args }]);
  });

  // Issue #20: `find pages for x` and 2,000 spaces froze the loop for seconds (the old pattern
  // backtracked cubically). Each shape is as long as a run input may be; none may stall.
  it.each([
    ['trailing spaces before a line feed', `find pages for x${' '.repeat(99_980)}\nN`],
    ['unclosed quotes', `set the title of page 1 to '${"x'".repeat(49_980)}`],
    ['repeated clause openings', 'set the title of page 12 to '.repeat(3_500)],
    ['a direct call that never closes', `call x with {${'}'.repeat(99_980)} x`],
  ])('answers a run input of %s without stalling', async (_shape, instruction) => {
    // Act: converse parses before its first await, so the whole parse runs inside the vm call,
    // whose deadline can interrupt a backtracking match (a test timeout cannot). A deadline far
    // above the milliseconds it takes, not a speed claim.
    const reply = await runInNewContext(
      'converse(request)',
      { converse: (request: ModelRequest) => model.converse(request), request: ask(instruction) },
      { timeout: 20_000 },
    );

    // Assess
    expect(['tool_use', 'end_turn']).toContain(reply.stopReason);
  });

  it.each(['Hello there', 'Set the description to something nice', "Set the description to 'x'"])(
    'answers %s with a final text and no call',
    async (instruction) => {
      // Act
      const reply = await model.converse(ask(instruction));

      // Assess
      expect(reply.stopReason).toBe('end_turn');
      expect(reply.content).toEqual([
        { type: 'text', text: expect.stringContaining('I can set page metadata') },
      ]);
    },
  );

  it('says so in a final text when the tool it needs is not offered', async () => {
    // Act
    const reply = await model.converse(
      ask("Set the description of page 12 to 'Spring sale'", {
        tools: allTools.filter((tool) => tool.name === 'get_page'),
      }),
    );

    // Assess
    expect(reply.stopReason).toBe('end_turn');
    expect(reply.content).toEqual([
      {
        type: 'text',
        text: 'I cannot do that here: the tool "update_page_metadata" is not offered to me in this run.',
      },
    ]);
  });

  it('numbers call ids by turn, so a later instruction gets new ids', async () => {
    // Prepare: one finished exchange before the new instruction.
    const before: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Hi' }] },
    ];

    // Act
    const reply = await model.converse(ask('List the pages', { before }));

    // Assess
    expect(reply.content).toEqual([
      { type: 'tool_call', callId: 'call-2-0', name: 'list_pages', arguments: {} },
    ]);
  });

  it('gives the same reply to the same conversation', async () => {
    // Act
    const first = await model.converse(ask("Set the title of page 12 to 'A'"));
    const second = await model.converse(ask("Set the title of page 12 to 'A'"));

    // Assess
    expect(second).toEqual(first);
    expect(first.usage?.inputTokens).toBeGreaterThan(0);
  });
});

describe('ScriptedModel after tool results', () => {
  const instruction: Message = {
    role: 'user',
    content: [{ type: 'text', text: "Set the description of page 12 to 'Spring sale'" }],
  };
  const proposal: Message = {
    role: 'assistant',
    content: [
      {
        type: 'tool_call',
        callId: 'call-1-0',
        name: 'update_page_metadata',
        arguments: { pageId: '12', description: 'Spring sale' },
      },
    ],
  };

  function withResult(content: string, isError: boolean, extraText?: string): ModelRequest {
    return {
      model: 'scripted',
      tools: allTools,
      messages: [
        instruction,
        proposal,
        {
          role: 'user',
          content: [
            { type: 'tool_result', callId: 'call-1-0', content, isError },
            ...(extraText === undefined ? [] : [{ type: 'text' as const, text: extraText }]),
          ],
        },
      ],
    };
  }

  it('summarises a success as done, with the result text', async () => {
    // Act
    const reply = await model.converse(withResult('Updated page 12 (en): description.', false));

    // Assess
    expect(reply).toMatchObject({
      stopReason: 'end_turn',
      content: [
        { type: 'text', text: 'Done: update_page_metadata succeeded.\nUpdated page 12 (en): description.' },
      ],
    });
  });

  it('says a denied call was not applied and quotes the denial', async () => {
    // Act
    const reply = await model.converse(
      withResult('Error: tool "update_page_metadata" was denied by the operator.', true),
    );

    // Assess
    expect(reply.stopReason).toBe('end_turn');
    expect(reply.content).toEqual([
      {
        type: 'text',
        text: 'Not applied: update_page_metadata failed with "Error: tool "update_page_metadata" was denied by the operator."',
      },
    ]);
  });

  it('treats text beside the tool results as commentary, not a new instruction', async () => {
    // Act: a rejection reason arrives in the same message as the result.
    const reply = await model.converse(withResult('Error: denied.', true, 'Reason: List the pages'));

    // Assess
    expect(reply.stopReason).toBe('end_turn');
    expect(reply.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('Not applied') });
  });

  it('reads a new instruction after an earlier finished exchange', async () => {
    // Prepare
    const earlier = withResult('Updated page 12 (en): description.', false).messages;
    const request: ModelRequest = {
      model: 'scripted',
      tools: allTools,
      messages: [
        ...earlier,
        { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
        { role: 'user', content: [{ type: 'text', text: 'What is on page 12?' }] },
      ],
    };

    // Act
    const reply = await model.converse(request);

    // Assess
    expect(reply.content).toEqual([
      { type: 'tool_call', callId: 'call-3-0', name: 'get_page', arguments: { pageId: '12' } },
    ]);
  });
});
