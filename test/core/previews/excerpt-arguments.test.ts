import { describe, expect, it } from 'vitest';
import {
  type ArgumentPath,
  CARD_ARGUMENT_DEPTH,
  CARD_ARGUMENT_VALUE_CHARACTERS,
  CARD_CALL_ARGUMENT_CHARACTERS,
  excerptArguments,
} from '../../../lambdas/core/previews/excerpt-arguments.js';

/** The value at `path`, read the way a client would follow a cut's path. */
function valueAt(value: unknown, path: ArgumentPath): unknown {
  return path.reduce<unknown>((current, key) => (current as Record<string | number, unknown>)[key], value);
}

/** What a cut card adds at most beyond the budget: the last value that crossed it and its cut marks. */
const BUDGET_SLACK = 2_500;

describe('excerptArguments (what a card carries of a call)', () => {
  it('keeps arguments that fit exactly as they are, the same object, with no excerpt', () => {
    // Prepare
    const args = {
      pageId: '12',
      description: 'd'.repeat(CARD_ARGUMENT_VALUE_CHARACTERS),
      tags: [1, true, null],
    };

    // Act
    const shown = excerptArguments(args);

    // Assess
    expect(shown).toEqual({ kind: 'exact', arguments: args });
    expect(shown.arguments).toBe(args);
  });

  it('cuts a long string to its first characters and states its full size and the whole size', () => {
    // Prepare
    const description = `${'a'.repeat(CARD_ARGUMENT_VALUE_CHARACTERS)}${'b'.repeat(10_345)}`;
    const args = { pageId: '12', description };

    // Act
    const shown = excerptArguments(args);

    // Assess
    expect(shown.kind).toBe('excerpt');
    if (shown.kind !== 'excerpt') return;
    expect(shown.arguments).toEqual({
      pageId: '12',
      description: 'a'.repeat(CARD_ARGUMENT_VALUE_CHARACTERS),
    });
    expect(shown.excerpt).toEqual({
      cuts: [
        {
          kind: 'text',
          path: ['description'],
          shownCharacters: CARD_ARGUMENT_VALUE_CHARACTERS,
          totalCharacters: CARD_ARGUMENT_VALUE_CHARACTERS + 10_345,
        },
      ],
      totalCharacters: JSON.stringify(args).length,
    });
  });

  it('counts characters as code points and never splits a surrogate pair', () => {
    // Prepare: 1,999 letters, then emoji, so the cut falls on an emoji.
    const text = `${'x'.repeat(CARD_ARGUMENT_VALUE_CHARACTERS - 1)}${'😀'.repeat(100)}`;

    // Act
    const shown = excerptArguments({ text });

    // Assess
    if (shown.kind !== 'excerpt') throw new Error('expected an excerpt');
    const shownText = (shown.arguments as { text: string }).text;
    expect(shownText).toBe(`${'x'.repeat(CARD_ARGUMENT_VALUE_CHARACTERS - 1)}😀`);
    expect(shown.excerpt.cuts[0]).toMatchObject({
      shownCharacters: CARD_ARGUMENT_VALUE_CHARACTERS,
      totalCharacters: CARD_ARGUMENT_VALUE_CHARACTERS + 99,
    });
    expect(JSON.stringify(shown.arguments)).not.toMatch(/\\ud[89a-f]/i);
  });

  it('keeps a call within its budget however its arguments are shaped, and every cut points at what it cut', () => {
    // Prepare: near the 200 KB turn limit in four shapes.
    const shapes: Record<string, unknown> = {
      'many long fields': Object.fromEntries(
        Array.from({ length: 40 }, (_, index) => [`field${index}`, 'v'.repeat(4_900)]),
      ),
      'a long list of short strings': { keywords: Array.from({ length: 20_000 }, (_, index) => `k${index}`) },
      'many keys': Object.fromEntries(Array.from({ length: 20_000 }, (_, index) => [`k${index}`, index])),
      'deep nesting': JSON.parse(`${'['.repeat(1_000)}"deep"${']'.repeat(1_000)}`),
      'quotes that double in JSON': { text: '"'.repeat(100_000) },
    };

    for (const [name, args] of Object.entries(shapes)) {
      // Act
      const shown = excerptArguments(args);

      // Assess
      expect(shown.kind, name).toBe('excerpt');
      if (shown.kind !== 'excerpt') continue;
      expect(JSON.stringify(shown).length, name).toBeLessThanOrEqual(
        CARD_CALL_ARGUMENT_CHARACTERS + BUDGET_SLACK,
      );
      expect(shown.excerpt.totalCharacters, name).toBe(JSON.stringify(args).length);
      for (const cut of shown.excerpt.cuts) {
        expect(cut.path.length, name).toBeLessThanOrEqual(CARD_ARGUMENT_DEPTH);
        const whole = valueAt(args, cut.path);
        const part = valueAt(shown.arguments, cut.path);
        if (cut.kind === 'text') {
          expect(typeof whole === 'string' && typeof part === 'string' && whole.startsWith(part), name).toBe(
            true,
          );
          expect(Array.from(part as string).length, name).toBe(cut.shownCharacters);
          expect(Array.from(whole as string).length, name).toBe(cut.totalCharacters);
        } else {
          expect(Object.keys(part as object).length, name).toBe(cut.shownEntries);
          expect(Object.keys(whole as object).length, name).toBe(cut.totalEntries);
        }
      }
    }
  });

  it('shows entries in order and as they are, up to where it cuts', () => {
    // Prepare
    const keywords = Array.from({ length: 5_000 }, (_, index) => `keyword-${index}`);

    // Act
    const shown = excerptArguments({ pageId: '12', keywords });

    // Assess
    if (shown.kind !== 'excerpt') throw new Error('expected an excerpt');
    const shownKeywords = (shown.arguments as { keywords: string[] }).keywords;
    const last = shownKeywords.length - 1;
    expect(shownKeywords.length).toBeGreaterThan(100);
    // Every entry as it is, but the one where the budget ran out, which shows its start and says so.
    expect(shownKeywords.slice(0, last)).toEqual(keywords.slice(0, last));
    expect(keywords[last]?.startsWith(shownKeywords[last] ?? '?')).toBe(true);
    expect(shown.excerpt.cuts).toEqual([
      ...(shownKeywords[last] === keywords[last]
        ? []
        : [
            {
              kind: 'text',
              path: ['keywords', last],
              shownCharacters: shownKeywords[last]?.length,
              totalCharacters: keywords[last]?.length,
            },
          ]),
      { kind: 'entries', path: ['keywords'], shownEntries: shownKeywords.length, totalEntries: 5_000 },
    ]);
  });

  it('ends an object at a key too long for a card, saying how many entries it left out', () => {
    // Prepare
    const args = { pageId: '12', ['k'.repeat(5_000)]: 'value', after: 1 };

    // Act
    const shown = excerptArguments(args);

    // Assess
    expect(shown).toEqual({
      kind: 'excerpt',
      arguments: { pageId: '12' },
      excerpt: {
        cuts: [{ kind: 'entries', path: [], shownEntries: 1, totalEntries: 3 }],
        totalCharacters: JSON.stringify(args).length,
      },
    });
  });
});
