import { diffWords } from 'diff';
import { revealHiddenCharacters } from '../reveal-hidden-characters.js';
import type { PreviewTextChange } from '../tools/tool.js';
import type { TextDiff } from './text-diff.js';

type DiffPart = TextDiff['parts'][number];

/** A change is diffed when a side is longer than a preview line shows of it (the 120 characters of docs/previews.md). */
export const DIFF_FROM_CHARACTERS = 120;
/** Unchanged words kept on each side of a change; a longer unchanged run keeps its count only. */
const CONTEXT_WORDS = 8;
/** At most this many characters of text are kept; the rest of the difference is `cut`. */
export const DIFF_MAX_CHARACTERS = 1_500;
/**
 * What one diff may cost (the `diff` library's own bounds): past them, it is `tooDifferent`. The
 * edit bound decides, the same on every machine (more words changed than a card can show in
 * DIFF_MAX_CHARACTERS is no diff worth reading); the timeout only stops a pathological input.
 */
const DIFF_LIMITS = { maxEditLength: 1_000, timeout: 500 };

/**
 * The word-level diffs of a preview's long text changes, computed once when the run pauses
 * (inside the preview's time budget) and sealed with the card, so showing a card costs no diff.
 *
 * @example
 * diffTextChanges([{ field: 'description', before: longOld, after: longNew }])[0]?.parts
 * // [{ kind: 'same', text: 'Our ' }, { kind: 'removed', text: 'spring' }, { kind: 'added', text: 'summer' }, …]
 */
export function diffTextChanges(changes: readonly PreviewTextChange[]): TextDiff[] {
  return changes
    .filter(
      (change) => change.before.length > DIFF_FROM_CHARACTERS || change.after.length > DIFF_FROM_CHARACTERS,
    )
    .map(diffTextChange);
}

function diffTextChange(change: PreviewTextChange): TextDiff {
  const field = revealHiddenCharacters(change.field);
  const changes = diffWords(
    revealHiddenCharacters(change.before),
    revealHiddenCharacters(change.after),
    DIFF_LIMITS,
  );
  if (changes === undefined) return { field, parts: [], tooDifferent: true };
  let budget = DIFF_MAX_CHARACTERS;
  const parts: DiffPart[] = [];
  for (const [position, change] of changes.entries()) {
    if (budget <= 0) return { field, parts, cut: true };
    const kind: 'same' | 'removed' | 'added' = change.added ? 'added' : change.removed ? 'removed' : 'same';
    const kept: DiffPart[] =
      kind === 'same'
        ? elideUnchanged(change.value, position, changes.length)
        : [{ kind, text: change.value }];
    for (const part of kept) {
      if (part.kind === 'elided') {
        parts.push(part);
        continue;
      }
      const text =
        Array.from(part.text).length > budget
          ? `${Array.from(part.text).slice(0, budget).join('')}…`
          : part.text;
      budget -= Array.from(text).length;
      parts.push({ kind: part.kind, text });
    }
  }
  return budget <= 0 ? { field, parts, cut: true } : { field, parts };
}

/** An unchanged run, its middle left out when it is longer than the context a change needs. */
function elideUnchanged(value: string, position: number, total: number): DiffPart[] {
  // Each token a word with the whitespace after it; whitespace before the first word on its own.
  const tokens = value.match(/^\s+|\S+\s*/g) ?? [];
  const leading = tokens[0]?.trim() === '' ? (tokens.shift() ?? '') : '';
  const keepBefore = position === 0 ? 0 : CONTEXT_WORDS;
  const keepAfter = position === total - 1 ? 0 : CONTEXT_WORDS;
  if (tokens.length <= keepBefore + keepAfter) return [{ kind: 'same', text: value }];
  const head = `${leading}${tokens.slice(0, keepBefore).join('')}`;
  const tail = keepAfter === 0 ? '' : tokens.slice(tokens.length - keepAfter).join('');
  return [
    ...(head === '' ? [] : [{ kind: 'same' as const, text: head }]),
    { kind: 'elided', words: tokens.length - keepBefore - keepAfter },
    ...(tail === '' ? [] : [{ kind: 'same' as const, text: tail }]),
  ];
}
