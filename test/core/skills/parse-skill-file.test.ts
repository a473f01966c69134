import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../lambdas/core/canonical-json.js';
import { CountersignError } from '../../../lambdas/core/errors.js';
import { parseSkillFile } from '../../../lambdas/core/skills/parse-skill-file.js';
import { skillRecordSchema } from '../../../lambdas/core/skills/skill-record.js';
import { normaliseSourcePath } from '../../../lambdas/core/skills/skill-source.js';
import recordVersion1 from '../../fixtures/skills/skill-record-v1.json' with { type: 'json' };

const encode = (text: string) => new TextEncoder().encode(text);
const refusal = (run: () => unknown): CountersignError => {
  try {
    run();
  } catch (error) {
    if (error instanceof CountersignError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
};

describe('parseSkillFile', () => {
  it('reads name, description and body, and checksums the body', () => {
    // Act
    const parsed = parseSkillFile(
      encode(
        '---\nname: page-style\ndescription: "House style: titles."\nlicense: MIT\nmetadata:\n  author: x\n---\n\n# Style\n',
      ),
      'skills/page-style',
    );

    // Assess
    expect(parsed).toEqual({
      name: 'page-style',
      description: 'House style: titles.',
      body: '# Style\n',
      bodyChecksum: sha256Hex('# Style\n'),
    });
  });

  it('reads a folded description block', () => {
    // Act
    const parsed = parseSkillFile(encode('---\nname: a\ndescription: >\n  One\n  two.\n---\nBody\n'), 'a');

    // Assess
    expect(parsed.description).toBe('One two.');
  });

  it.each([
    ['no frontmatter', '# Just markdown\n', 'has no YAML frontmatter'],
    ['an unclosed frontmatter', '---\nname: a\ndescription: b\n', 'has no end to its YAML frontmatter'],
    ['no name', '---\ndescription: b\n---\nBody\n', 'has no "name"'],
    ['no description', '---\nname: a\n---\nBody\n', 'has no "description"'],
    [
      'an upper-case name',
      '---\nname: Page-Style\ndescription: b\n---\nBody\n',
      'is invalid: use at most 64 lowercase letters',
    ],
    ['a name with a space', '---\nname: page style\ndescription: b\n---\nBody\n', 'is invalid'],
    ['a name of 65 characters', `---\nname: ${'a'.repeat(65)}\ndescription: b\n---\nBody\n`, 'is invalid'],
    [
      'a description over 1,024 characters',
      `---\nname: a\ndescription: ${'d'.repeat(1025)}\n---\nBody\n`,
      'the description has 1025 characters; at most 1024',
    ],
    ['a repeated key', '---\nname: a\nname: b\ndescription: c\n---\nBody\n', 'repeats "name"'],
    [
      'an oversize body',
      `---\nname: a\ndescription: b\n---\n${'x'.repeat(64 * 1024 + 1)}`,
      'the body has 65537 bytes; at most 65536',
    ],
    ['an empty body', '---\nname: a\ndescription: b\n---\n\n', 'the body is empty'],
  ])('refuses a SKILL.md with %s, naming the file', (_case, text, message) => {
    // Act
    const error = refusal(() => parseSkillFile(encode(text), 'skills/x'));

    // Assess
    expect(error.code).toBe('bad-request');
    expect(error.message).toContain('skills/x/SKILL.md: ');
    expect(error.message).toContain(message);
  });

  it('accepts a name of exactly 64 characters and a description of exactly 1,024', () => {
    // Act
    const parsed = parseSkillFile(
      encode(`---\nname: ${'a'.repeat(64)}\ndescription: ${'d'.repeat(1024)}\n---\nBody\n`),
      'x',
    );

    // Assess
    expect(parsed.name).toHaveLength(64);
  });

  it('refuses a body that is not UTF-8', () => {
    // Prepare
    const bytes = new Uint8Array([...encode('---\nname: a\ndescription: b\n---\n'), 0xc3, 0x28, 0xff]);

    // Act
    const error = refusal(() => parseSkillFile(bytes, 'skills/latin'));

    // Assess
    expect(error.message).toBe('skills/latin/SKILL.md: is not valid UTF-8 text.');
  });
});

describe('normaliseSourcePath', () => {
  it.each(['../escape/SKILL.md', 'a/../../b', '/etc/passwd', 'a\\b', 'C:/x', 'a//b', './a', 'a/\u0000'])(
    'refuses %j as a path escaping its folder',
    (path) => {
      // Act
      const error = refusal(() => normaliseSourcePath(path, 'files[0].path'));

      // Assess
      expect(error.message).toContain('escapes its folder');
      expect(error.field).toBe('files[0].path');
    },
  );
});

describe('skill record schema', () => {
  it('still reads the version 1 fixture', () => {
    // Act
    const parsed = skillRecordSchema.safeParse(recordVersion1);

    // Assess
    expect(parsed.success).toBe(true);
  });
});
