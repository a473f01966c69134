import * as z from 'zod/mini';

/**
 * The two kinds of POST /admin/skills/ingest request: an upload, or a GitHub repository to read.
 * The contract states them; the skill sources that serve each take them as they are.
 */

/** POST /admin/skills/ingest with `source: 'upload'`: the SKILL.md texts, and the other files' paths. */
export const skillUploadSchema = z.strictObject({
  source: z.literal('upload'),
  label: z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'letters, digits, ".", "_" or "-"')),
  files: z
    .array(
      z.strictObject({
        path: z.string().check(z.minLength(1), z.maxLength(1000)),
        /** UTF-8 text of a SKILL.md. */
        content: z.optional(z.string()),
        /** Raw bytes of a SKILL.md that is not (or may not be) UTF-8: refused with a clear message. */
        contentBase64: z.optional(z.string()),
      }),
    )
    .check(z.minLength(1), z.maxLength(5000)),
  /**
   * The one skill folder this upload covers (the CLI splits a folder larger than a request this
   * way): skills of the label outside it are left as they are, not orphaned.
   */
  scope: z.optional(z.string().check(z.minLength(1), z.maxLength(1000))),
});
export type SkillUpload = z.infer<typeof skillUploadSchema>;

/** POST /admin/skills/ingest with `source: 'github'`: a folder of a repository at a ref. */
export const gitHubIngestSchema = z.strictObject({
  source: z.literal('github'),
  owner: z
    .string()
    .check(z.regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/, 'a GitHub user or organisation name')),
  repo: z.string().check(
    z.regex(/^[A-Za-z0-9._-]{1,100}$/, 'a GitHub repository name'),
    z.refine((repo: string) => repo !== '.' && repo !== '..', 'a GitHub repository name'),
  ),
  ref: z.string().check(
    z.regex(/^[A-Za-z0-9._][A-Za-z0-9._/-]{0,199}$/, 'a branch, tag or commit SHA'),
    z.refine(
      (ref: string) => !ref.includes('..') && !ref.includes('//') && !ref.endsWith('/'),
      'a branch, tag or commit SHA',
    ),
  ),
  /** The folder inside the repository to ingest; `''` is the whole repository. */
  path: z._default(z.string().check(z.maxLength(1000)), ''),
});
export type GitHubIngest = z.infer<typeof gitHubIngestSchema>;
