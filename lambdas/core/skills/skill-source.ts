import { CountersignError } from '../errors.js';

/** One skill folder as a source delivers it: its SKILL.md bytes and the names of its other files. */
export interface SkillFolder {
  /** The folder's path inside the source (`skills/pdf`), the identifier of the skill. */
  readonly identifier: string;
  readonly skillFile: Uint8Array;
  /** Paths (relative to the folder) of assets and scripts that are not ingested. */
  readonly otherFiles: readonly string[];
}

/**
 * Everything one source holds under one scope, read at one moment (a GitHub commit, a
 * folder, an upload). Skills of the source within `scope` that are missing here are gone
 * upstream.
 */
export interface SkillSnapshot {
  /** `github:owner/repo`, `folder:<label>` or `upload:<label>`. */
  readonly source: string;
  /** The identifier prefix this snapshot covers (`''`: the whole source). */
  readonly scope: string;
  /** For GitHub: the commit SHA the ref resolved to; every file was read at it. */
  readonly pinnedCommit?: string;
  readonly folders: readonly SkillFolder[];
}

/** Port: where skills come from (GitHub over HTTPS, a local folder, an upload). */
export interface SkillSource {
  readSnapshot(): Promise<SkillSnapshot>;
}

/** How many skill folders one snapshot may hold. */
export const MAX_SKILLS_PER_SNAPSHOT = 500;

/**
 * A relative path inside a skill source, normalised to forward slashes; refuses a path that
 * is absolute, has `.`/`..` or empty segments, backslashes or control characters: such a path
 * escapes (or pretends to escape) its folder.
 *
 * @example
 * normaliseSourcePath('skills/pdf/SKILL.md', 'files[0].path') // 'skills/pdf/SKILL.md'
 * normaliseSourcePath('../etc/passwd', 'files[0].path')        // throws bad-request
 */
export function normaliseSourcePath(path: string, field: string): string {
  const refuse = (): never => {
    throw new CountersignError(
      'bad-request',
      `${field}: the path ${JSON.stringify(path.slice(0, 200))} escapes its folder or is not a plain relative path.`,
      { field },
    );
  };
  if (typeof path !== 'string' || path.length === 0 || path.length > 1000) refuse();
  if (path.startsWith('/') || path.includes('\\') || /^[A-Za-z]:/.test(path)) refuse();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(path)) refuse();
  const segments = path.split('/');
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) refuse();
  return segments.join('/');
}
