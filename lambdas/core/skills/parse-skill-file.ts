import { sha256Hex } from '../canonical-json.js';
import { CountersignError } from '../errors.js';
import {
  SKILL_BODY_MAX_BYTES,
  SKILL_DESCRIPTION_MAX_CHARACTERS,
  SKILL_NAME_MAX_CHARACTERS,
  SKILL_NAME_PATTERN,
} from './skill-record.js';

/** What a SKILL.md holds once read: the frontmatter fields countersign uses, and the body. */
export interface ParsedSkillFile {
  name: string;
  description: string;
  body: string;
  bodyChecksum: string;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Reads a SKILL.md (Agent Skills format: YAML frontmatter between `---` lines, then the
 * markdown body). Refuses, with a message naming `where` and the problem, a file that is not
 * UTF-8, has no frontmatter, an invalid name or description, or an oversize body. Only the
 * subset of YAML that frontmatter uses is read: top-level `key: value` pairs, quoted values
 * and `|`/`>` block scalars; other keys (license, metadata, ...) are ignored.
 *
 * @example
 * parseSkillFile(new TextEncoder().encode('---\nname: pdf\ndescription: Reads PDFs.\n---\n# PDF\n'), 'skills/pdf')
 * // { name: 'pdf', description: 'Reads PDFs.', body: '# PDF\n', bodyChecksum: '…' }
 */
export function parseSkillFile(bytes: Uint8Array, where: string): ParsedSkillFile {
  const refuse = (problem: string): never => {
    throw new CountersignError('bad-request', `${where}/SKILL.md: ${problem}`, { field: 'skills' });
  };
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return refuse('is not valid UTF-8 text.');
  }
  if (text.includes('\u0000')) refuse('contains a NUL character.');
  const lines = text.split(/\r?\n/);
  if (lines[0]?.trim() !== '---') refuse('has no YAML frontmatter (the file must start with a "---" line).');
  const closing = lines.findIndex((line, index) => index > 0 && /^(?:---|\.\.\.)\s*$/.test(line));
  if (closing < 0) refuse('has no end to its YAML frontmatter (a closing "---" line).');
  const fields = readFrontmatter(lines.slice(1, closing), refuse);
  const name = fields.get('name');
  const description = fields.get('description');
  if (name === undefined || name === '') refuse('the frontmatter has no "name".');
  if (description === undefined || description.trim() === '') refuse('the frontmatter has no "description".');
  const checkedName = name as string;
  if (Array.from(checkedName).length > SKILL_NAME_MAX_CHARACTERS || !SKILL_NAME_PATTERN.test(checkedName)) {
    refuse(
      `the name ${JSON.stringify(checkedName.slice(0, 80))} is invalid: use at most ${SKILL_NAME_MAX_CHARACTERS} lowercase letters, digits and hyphens, not starting or ending with a hyphen.`,
    );
  }
  const checkedDescription = (description as string).trim();
  const descriptionLength = Array.from(checkedDescription).length;
  if (descriptionLength > SKILL_DESCRIPTION_MAX_CHARACTERS) {
    refuse(
      `the description has ${descriptionLength} characters; at most ${SKILL_DESCRIPTION_MAX_CHARACTERS} are allowed.`,
    );
  }
  const body = lines
    .slice(closing + 1)
    .join('\n')
    .replace(/^\n+/, '');
  const bodyBytes = Buffer.byteLength(body, 'utf8');
  if (bodyBytes > SKILL_BODY_MAX_BYTES)
    refuse(`the body has ${bodyBytes} bytes; at most ${SKILL_BODY_MAX_BYTES} are allowed.`);
  if (body.trim() === '') refuse('the body is empty.');
  return { name: checkedName, description: checkedDescription, body, bodyChecksum: sha256Hex(body) };
}

function readFrontmatter(lines: readonly string[], refuse: (problem: string) => never): Map<string, string> {
  const fields = new Map<string, string>();
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index] ?? '';
    if (line.trim() === '' || line.trimStart().startsWith('#') || /^\s/.test(line)) continue;
    const match = /^([A-Za-z0-9_-]+)\s*:(?:\s(.*))?$/.exec(line);
    if (match === null) refuse(`the frontmatter line ${index + 2} is not "key: value".`);
    const key = (match as RegExpExecArray)[1] as string;
    const raw = ((match as RegExpExecArray)[2] ?? '').trim();
    if (fields.has(key)) refuse(`the frontmatter repeats "${key}".`);
    if (/^[|>][+-]?$/.test(raw)) {
      const block: string[] = [];
      while (index + 1 < lines.length && (/^\s/.test(lines[index + 1] ?? '') || lines[index + 1] === '')) {
        index += 1;
        block.push((lines[index] ?? '').trim());
      }
      fields.set(key, raw.startsWith('>') ? block.join(' ').trim() : block.join('\n').trim());
      continue;
    }
    fields.set(key, readScalar(raw, key, refuse));
  }
  return fields;
}

function readScalar(raw: string, key: string, refuse: (problem: string) => never): string {
  if (raw.startsWith('"')) {
    try {
      const value: unknown = JSON.parse(raw);
      if (typeof value === 'string') return value;
    } catch {
      // falls through to the refusal
    }
    return refuse(`the value of "${key}" is not a valid double-quoted string.`);
  }
  if (raw.startsWith("'")) {
    if (!/^'(?:[^']|'')*'$/.test(raw)) refuse(`the value of "${key}" is not a valid single-quoted string.`);
    return raw.slice(1, -1).replaceAll("''", "'");
  }
  // A comment starts at the first `#` after whitespace (found without backtracking).
  const comment = raw.search(/\s#/);
  return comment === -1 ? raw : raw.slice(0, comment).trimEnd();
}
