import { lstat, readdir, readFile, realpath } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { CountersignError } from '../../core/errors.js';
import type { SkillSnapshot, SkillSource } from '../../core/skills/skill-source.js';
import { collectSkillFolders, MAX_FILES_PER_SOURCE } from './skill-folders.js';

const MAX_DEPTH = 16;

export interface FolderSkillSourceProps {
  /** The folder whose subfolders are skills (each with a SKILL.md). */
  readonly root: string;
  /** Names the source: `folder:<label>`. */
  readonly label: string;
}

/**
 * Skills from a local folder (the CLI, tests, this offline machine). Each subfolder with a
 * SKILL.md is a skill. A symbolic link whose target lies outside the folder refuses the whole
 * folder (a path escaping its folder); links inside it are listed, never followed.
 *
 * @example
 * const snapshot = await new FolderSkillSource({ root: './skills', label: 'team' }).readSnapshot();
 */
export class FolderSkillSource implements SkillSource {
  public constructor(private readonly props: FolderSkillSourceProps) {}

  public async readSnapshot(): Promise<SkillSnapshot> {
    const root = await realpath(this.props.root).catch(() => {
      throw new CountersignError('bad-request', `folder: "${this.props.root}" is not a readable folder.`, {
        field: 'folder',
      });
    });
    const paths: string[] = [];
    await walk(root, root, 0, paths);
    const folders = await collectSkillFolders(
      paths,
      (path) => readFile(join(root, ...path.split('/'))),
      'folder',
    );
    return { source: `folder:${this.props.label}`, scope: '', folders };
  }
}

async function walk(root: string, directory: string, depth: number, paths: string[]): Promise<void> {
  if (depth > MAX_DEPTH) {
    throw new CountersignError('bad-request', `folder: nested deeper than ${MAX_DEPTH} levels.`, {
      field: 'folder',
    });
  }
  const entries = await readdir(directory, { withFileTypes: true });
  for (const entry of entries.sort((left, right) => left.name.localeCompare(right.name))) {
    if (entry.name.startsWith('.')) continue;
    const full = join(directory, entry.name);
    const relativePath = relative(root, full).split(sep).join('/');
    const stats = await lstat(full);
    if (stats.isSymbolicLink()) {
      const target = await realpath(full).catch(() => undefined);
      if (target === undefined || (target !== root && !target.startsWith(`${root}${sep}`))) {
        throw new CountersignError(
          'bad-request',
          `folder: "${relativePath}" is a link that escapes its folder; nothing was ingested.`,
          { field: 'folder' },
        );
      }
      paths.push(relativePath);
    } else if (stats.isDirectory()) {
      await walk(root, full, depth + 1, paths);
    } else if (stats.isFile()) {
      paths.push(relativePath);
    }
    if (paths.length > MAX_FILES_PER_SOURCE) {
      throw new CountersignError('bad-request', `folder: more than ${MAX_FILES_PER_SOURCE} files.`, {
        field: 'folder',
      });
    }
  }
}
