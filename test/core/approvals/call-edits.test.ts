import * as z from 'zod/mini';
import '../../../lambdas/core/schema-messages.js';
import { describe, expect, it } from 'vitest';
import { listArgumentChanges } from '../../../lambdas/core/approvals/argument-changes.js';
import { isCallEditable, resolveCallEdits } from '../../../lambdas/core/approvals/call-edits.js';
import { createExternalToolStandIn } from '../../../lambdas/core/external-runs/external-tools.js';
import { editedCallOutcome, refusedCallOutcome } from '../../../lambdas/core/runs/call-outcomes.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import { defineTool, type Tool } from '../../../lambdas/core/tools/tool.js';

const setTitle = defineTool({
  name: 'set_title',
  description: 'Sets a title.',
  effect: 'write',
  editable: true,
  input: z.strictObject({ pageId: z.string(), title: z.string().check(z.maxLength(60)) }),
  execute: async () => ({ content: 'ok', isError: false }),
}) as Tool;
const lockedTool = { ...setTitle, name: 'locked', editable: undefined } as Tool;

const CALLS = [
  { index: 0, tool: 'set_title', arguments: { pageId: '12', title: 'Sale' }, registeredTool: setTitle },
  { index: 1, tool: 'locked', arguments: { pageId: '14', title: 'X' }, registeredTool: lockedTool },
  { index: 2, tool: 'gone', arguments: {}, registeredTool: undefined },
];

describe('editing a call’s arguments', () => {
  it('accepts arguments its tool’s schema accepts, and keeps what the model proposed', () => {
    // Act
    const resolved = resolveCallEdits({
      calls: CALLS,
      edits: [{ index: 0, arguments: { pageId: '12', title: 'Spring sale' } }],
    });

    // Assess
    expect(resolved).toEqual({
      kind: 'resolved',
      edits: [
        {
          index: 0,
          tool: 'set_title',
          arguments: { pageId: '12', title: 'Spring sale' },
          originalArguments: { pageId: '12', title: 'Sale' },
        },
      ],
    });
  });

  it.each([
    ['a call not on the card', { index: 9, arguments: {} }, 'body.edits.0.index'],
    [
      'a tool that does not allow edits',
      { index: 1, arguments: { pageId: '14', title: 'Y' } },
      'body.edits.0.index',
    ],
    ['a tool no longer registered', { index: 2, arguments: { a: 1 } }, 'body.edits.0.index'],
    [
      'arguments the schema refuses',
      { index: 0, arguments: { pageId: '12', title: 'x'.repeat(61) } },
      'body.edits.0.arguments.title',
    ],
    [
      'an unknown key',
      { index: 0, arguments: { pageId: '12', title: 'a', extra: 1 } },
      'body.edits.0.arguments.extra',
    ],
    ['no change at all', { index: 0, arguments: { title: 'Sale', pageId: '12' } }, 'body.edits.0.arguments'],
    ['arguments nested past a turn’s depth', { index: 0, arguments: nested(130) }, 'body.edits.0.arguments'],
  ])('refuses %s, naming the field', (_label, edit, field) => {
    // Act
    const resolved = resolveCallEdits({ calls: CALLS, edits: [edit] });

    // Assess
    expect(resolved).toMatchObject({ kind: 'refused', field });
    expect(resolved.kind === 'refused' && resolved.message.length).toBeGreaterThan(0);
  });

  it('names the tool that does not allow edits', () => {
    const resolved = resolveCallEdits({ calls: CALLS, edits: [{ index: 1, arguments: { pageId: '14' } }] });
    expect(resolved).toMatchObject({ message: TEXTS.callNotEditable('locked') });
  });

  it('edits an external call its caller declared editable as any JSON object, and no other', () => {
    // Prepare: the registry's stand-in of an external tool reads any object of arguments
    const standIn = createExternalToolStandIn('billing/send_invoice') as Tool;
    const external = (editable: boolean | undefined) => [
      { index: 0, tool: 'billing/send_invoice', arguments: { amount: 1 }, editable, registeredTool: standIn },
    ];

    // Act
    const edit = (editable: boolean | undefined, value: unknown) =>
      resolveCallEdits({ calls: external(editable), edits: [{ index: 0, arguments: value }] });

    // Assess
    expect(edit(true, { amount: 2 })).toMatchObject({
      kind: 'resolved',
      edits: [{ arguments: { amount: 2 } }],
    });
    expect(edit(true, [2])).toMatchObject({ kind: 'refused', field: 'body.edits.0.arguments' });
    expect(edit(undefined, { amount: 2 })).toEqual({
      kind: 'refused',
      field: 'body.edits.0.index',
      message: TEXTS.externalCallNotEditable('send_invoice'),
    });
    // A tool of ours is editable by its own say only, whatever a call carries.
    expect(isCallEditable({ tool: 'locked', editable: true }, lockedTool)).toBe(false);
  });
});

describe('the diff of an edit against the model’s proposal', () => {
  it('lists what changed, was added or removed, by path', () => {
    // Act
    const diff = listArgumentChanges(
      { pageId: '12', title: 'Sale', keywords: ['a', 'b'], meta: { lang: 'en' } },
      { pageId: '12', title: 'Spring sale', keywords: ['a'], meta: { lang: 'de', draft: true } },
    );

    // Assess
    expect(diff).toEqual({
      changes: [
        { kind: 'removed', path: ['keywords', 1], before: 'b' },
        { kind: 'added', path: ['meta', 'draft'], after: true },
        { kind: 'changed', path: ['meta', 'lang'], before: 'en', after: 'de' },
        { kind: 'changed', path: ['title'], before: 'Sale', after: 'Spring sale' },
      ],
      more: 0,
    });
  });

  it('lists at most 50 changes and counts the rest', () => {
    // Act
    const diff = listArgumentChanges(
      Object.fromEntries(Array.from({ length: 80 }, (_unused, key) => [`k${key}`, key])),
      Object.fromEntries(Array.from({ length: 80 }, (_unused, key) => [`k${key}`, key + 1])),
    );

    // Assess
    expect(diff.changes).toHaveLength(50);
    expect(diff.more).toBe(30);
  });

  it('counts rather than lists what would take the changes past 8,000 characters', () => {
    // Act: a 64 KB rewrite of one value, beside a small change listed after it
    const diff = listArgumentChanges(
      { body: 'a'.repeat(65_536), title: 'Sale' },
      { body: 'b'.repeat(65_536), title: 'Spring sale' },
    );

    // Assess: the card stays small and still says a change was left out
    expect(diff.changes).toEqual([
      { kind: 'changed', path: ['title'], before: 'Sale', after: 'Spring sale' },
    ]);
    expect(diff.more).toBe(1);
    expect(JSON.stringify(diff).length).toBeLessThan(8_000);
  });
});

describe('what the model reads of a decided call', () => {
  it('says a refused call was denied, with the reason only when reasons are revealed', () => {
    expect(refusedCallOutcome('set_title', 'wrong page', true).content).toBe(
      `${TEXTS.toolDenied('set_title')} Reason given: wrong page`,
    );
    expect(refusedCallOutcome('set_title', 'wrong page', false)).toEqual({
      content: TEXTS.toolDenied('set_title'),
      isError: true,
    });
  });

  it('says a call ran with an approver’s edit, and with what, before what the tool answered', () => {
    const outcome = editedCallOutcome(
      { content: 'Title set.', isError: false },
      { editedBy: 'ana', arguments: { title: 'Spring', pageId: '12' } },
    );
    expect(outcome).toEqual({
      content: `${TEXTS.callEditedNote('ana', '{"pageId":"12","title":"Spring"}')}\nTitle set.`,
      isError: false,
    });
  });
});

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < depth; level += 1) value = { inner: value };
  return value;
}
