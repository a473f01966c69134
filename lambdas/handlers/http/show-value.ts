import { revealHiddenCharacters } from '../../core/reveal-hidden-characters.js';
import { escapeHtml } from './escape-html.js';

/**
 * One value an approver reads, as it cannot lie: hidden and bidi characters drawn as markers
 * (styled so they stand out), escaped, and isolated so its characters cannot reorder the text
 * around it.
 */
export function showValue(value: unknown): string {
  const escaped = escapeHtml(revealHiddenCharacters(String(value ?? '')));
  return `<bdi>${escaped.replace(MARKER, '<span class="hidden-character">$&</span>')}</bdi>`;
}

const MARKER = /⟨U\+[0-9A-F]{4,6}⟩/g;
