import { CountersignError } from '../../core/errors.js';
import {
  MAX_SKILLS_PER_SNAPSHOT,
  normaliseSourcePath,
  type SkillFolder,
} from '../../core/skills/skill-source.js';

export const SKILL_FILE_NAME = 'SKILL.md';
/** How many files one source may list; a larger tree is refused rather than half-read. */
export const MAX_FILES_PER_SOURCE = 5000;

/**
 * Groups a source's file paths into skill folders: every folder with a `SKILL.md` is a skill,
 * its other files (not those of a nested skill) are what makes it partial. Paths are checked
 * first: one that escapes its folder refuses the whole source.
 */
export async function collectSkillFolders(
  paths: readonly string[],
  readSkillFile: (path: string) => Promise<Uint8Array>,
  field: string,
): Promise<SkillFolder[]> {
  if (paths.length > MAX_FILES_PER_SOURCE) {
    throw new CountersignError('bad-request', `${field}: more than ${MAX_FILES_PER_SOURCE} files.`, {
      field,
    });
  }
  const normalised = paths.map((path, index) => normaliseSourcePath(path, `${field}[${index}]`));
  const skillFolders = normalised
    .filter((path) => path === SKILL_FILE_NAME || path.endsWith(`/${SKILL_FILE_NAME}`))
    .map((path) => path.slice(0, -SKILL_FILE_NAME.length).replace(/\/$/, ''));
  if (skillFolders.includes('')) {
    throw new CountersignError(
      'bad-request',
      `${field}: a SKILL.md sits at the top of the source; put each skill in its own folder.`,
      { field },
    );
  }
  if (skillFolders.length > MAX_SKILLS_PER_SNAPSHOT) {
    throw new CountersignError('bad-request', `${field}: more than ${MAX_SKILLS_PER_SNAPSHOT} skills.`, {
      field,
    });
  }
  const owner = (path: string): string | undefined =>
    skillFolders
      .filter((folder) => path.startsWith(`${folder}/`))
      .sort((left, right) => right.length - left.length)[0];
  const folders: SkillFolder[] = [];
  for (const folder of [...skillFolders].sort()) {
    const otherFiles = normalised
      .filter((path) => path !== `${folder}/${SKILL_FILE_NAME}` && owner(path) === folder)
      .map((path) => path.slice(folder.length + 1))
      .sort();
    folders.push({
      identifier: folder,
      skillFile: await readSkillFile(`${folder}/${SKILL_FILE_NAME}`),
      otherFiles,
    });
  }
  return folders;
}
