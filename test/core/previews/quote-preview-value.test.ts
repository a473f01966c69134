import { describe, expect, it } from 'vitest';
import { boundPreviewLines } from '../../../lambdas/core/previews/bound-preview-lines.js';
import {
  PREVIEW_VALUE_MAX_CHARACTERS,
  quotePreviewValue,
} from '../../../lambdas/core/previews/quote-preview-value.js';

/** The values a preview line of the form `field: <value> → <value>` shows, read back as JSON. */
function readValues(line: string): unknown[] | undefined {
  const match = /^[a-z]+: ("(?:[^"\\]|\\.)*") → ("(?:[^"\\]|\\.)*")$/.exec(line);
  return match ? [JSON.parse(match[1] as string), JSON.parse(match[2] as string)] : undefined;
}

describe('quotePreviewValue', () => {
  it.each([
    ['a quote and an arrow', 'Spring" → "Winter'],
    ['a line break and a fake field', 'sale\nkeywords: "a" → "b"'],
    ['a carriage return and a backslash', 'C:\\path\r\nauthor: "Eve"'],
    ['control characters', 'tab\there\u0000\u001b[31m'],
  ])('keeps a value with %s one quoted value that reads back exactly', (_case, value) => {
    // Act
    const line = boundPreviewLines([
      `title: ${quotePreviewValue('Offers')} → ${quotePreviewValue(value)}`,
    ])[0];

    // Assess
    expect(line).toBeDefined();
    expect(readValues(line as string)).toEqual(['Offers', value]);
  });

  it('cuts the value before quoting it, and writes the empty value as (empty)', () => {
    // Act
    const long = quotePreviewValue(`"${'x'.repeat(200)}`);
    const empty = quotePreviewValue('');

    // Assess
    expect(long).toBe(`"\\"${'x'.repeat(PREVIEW_VALUE_MAX_CHARACTERS - 2)}…"`);
    expect(empty).toBe('(empty)');
  });
});
