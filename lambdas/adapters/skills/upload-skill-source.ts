import { CountersignError } from '../../core/errors.js';
import type { SkillUpload } from '../../core/skills/skill-ingest-requests.js';
import { normaliseSourcePath, type SkillSnapshot, type SkillSource } from '../../core/skills/skill-source.js';
import { collectSkillFolders, SKILL_FILE_NAME } from './skill-folders.js';

/**
 * Skills from an upload (the admin API; the CLI uploads a local folder this way). Only
 * SKILL.md files carry content; other files are listed by path, which marks their skill partial.
 *
 * @example
 * new UploadSkillSource({ source: 'upload', label: 'team', files: [{ path: 'pdf/SKILL.md', content: '---\n…' }] })
 */
export class UploadSkillSource implements SkillSource {
  public constructor(private readonly upload: SkillUpload) {}

  public async readSnapshot(): Promise<SkillSnapshot> {
    const contents = new Map<string, Uint8Array>();
    this.upload.files.forEach((file, index) => {
      const bytes =
        file.contentBase64 !== undefined
          ? Buffer.from(file.contentBase64, 'base64')
          : file.content !== undefined
            ? Buffer.from(file.content, 'utf8')
            : undefined;
      if (bytes !== undefined) contents.set(file.path, bytes);
      else if (file.path.endsWith(SKILL_FILE_NAME)) {
        throw new CountersignError('bad-request', `files[${index}]: a SKILL.md needs its content.`, {
          field: `files[${index}]`,
        });
      }
    });
    const folders = await collectSkillFolders(
      this.upload.files.map((file) => file.path),
      async (path) => contents.get(path) ?? new Uint8Array(),
      'files',
    );
    const scope = this.upload.scope === undefined ? '' : normaliseSourcePath(this.upload.scope, 'scope');
    return { source: `upload:${this.upload.label}`, scope, folders };
  }
}
