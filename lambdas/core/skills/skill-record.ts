import * as z from 'zod/mini';
import { sha256Hex } from '../canonical-json.js';
import type { ConditionalOutcome, PageRequest } from '../ports.js';

/**
 * A reviewed SKILL.md (docs/skills.md): third-party prose that may end up in prompts of a system
 * holding keys and write rights. Persisted shapes carry a schema version; version 1 keeps an
 * immutable fixture in `test/fixtures/skills/`.
 */
export const SKILL_RECORD_SCHEMA_VERSION = 1;

/** Agent Skills: at most 64 characters of lowercase letters, digits and hyphens. */
export const SKILL_NAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
export const SKILL_NAME_MAX_CHARACTERS = 64;
/** Agent Skills: the description is at most 1,024 characters. */
export const SKILL_DESCRIPTION_MAX_CHARACTERS = 1024;
/** A body larger than this is refused at ingest (a DynamoDB item holds 400 KB, audit included). */
export const SKILL_BODY_MAX_BYTES = 64 * 1024;
/** `github:owner/repo`, `folder:<label>`, `upload:<label>`. */
export const SKILL_SOURCE_PATTERN = /^(?:github|folder|upload):[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$/;
/** A skill folder's path inside its source: relative, forward slashes, no `.` or `..` segments. */
export const SKILL_IDENTIFIER_PATTERN =
  /^(?:[A-Za-z0-9_][A-Za-z0-9._-]{0,99})(?:\/[A-Za-z0-9_][A-Za-z0-9._-]{0,99}){0,15}$/;

const sha256 = z.string().check(z.regex(/^[0-9a-f]{64}$/, 'a lower-case hex sha256'));

export const skillRecordSchema = z.object({
  schemaVersion: z.literal(SKILL_RECORD_SCHEMA_VERSION),
  skillId: z.string().check(z.regex(/^skl-[0-9a-f]{24}$/)),
  source: z.string().check(z.regex(SKILL_SOURCE_PATTERN)),
  identifier: z.string().check(z.maxLength(2000)),
  name: z.string().check(z.regex(SKILL_NAME_PATTERN)),
  description: z.string().check(z.minLength(1), z.maxLength(SKILL_DESCRIPTION_MAX_CHARACTERS)),
  body: z.string(),
  /** sha256 of the body's UTF-8 bytes, taken at ingest and re-verified at every composition. */
  bodyChecksum: z.string(),
  /** New and changed skills are disabled until a person reviews them. */
  enabled: z.boolean(),
  /** Gone upstream: kept (never deleted) and never injected or attached. */
  orphaned: z.boolean(),
  /** The folder held assets or scripts that were not ingested; references to them are stripped. */
  partial: z.boolean(),
  /** The commit the GitHub source was pinned to when this body was read. */
  pinnedCommit: z.optional(z.string().check(z.regex(/^[0-9a-f]{40}$/))),
  reviewedBy: z.optional(z.string()),
  reviewedAt: z.optional(z.string()),
  /** The body checksum the reviewer enabled; a different body is never enabled by that review. */
  reviewedChecksum: z.optional(sha256),
  ingestedAt: z.string(),
  updatedAt: z.string(),
  /** Optimistic concurrency: every saved change increments it. */
  version: z.number().check(z.int(), z.positive()),
});
export type SkillRecord = z.infer<typeof skillRecordSchema>;

export const SKILL_AUDIT_ACTIONS = [
  'ingested',
  'changed',
  'orphaned',
  'restored',
  'enabled',
  'disabled',
  'attached',
  'detached',
] as const;
export type SkillAuditAction = (typeof SKILL_AUDIT_ACTIONS)[number];

/** One change to a skill, appended and never rewritten. */
export const skillAuditEntrySchema = z.object({
  /** The record version this change produced. */
  version: z.number().check(z.int(), z.positive()),
  at: z.string(),
  actor: z.string(),
  action: z.enum(SKILL_AUDIT_ACTIONS),
  bodyChecksum: z.string(),
  previousChecksum: z.optional(z.string()),
  pinnedCommit: z.optional(z.string()),
  /** `task:<id>` or `configuration:<id>` for attach and detach. */
  target: z.optional(z.string()),
});
export type SkillAuditEntry = z.infer<typeof skillAuditEntrySchema>;

/** The record without its body, for listings. */
export type SkillSummary = Omit<SkillRecord, 'body'> & { bodyBytes: number };

/**
 * The stable id of a skill: derived from (source, identifier), the pair the composer dedupes
 * on, so a re-ingest finds the same record.
 *
 * @example
 * skillIdFor('github:acme/skills', 'skills/pdf') // 'skl-…' (24 hex digits)
 */
export function skillIdFor(source: string, identifier: string): string {
  return `skl-${sha256Hex(`${source}\n${identifier}`).slice(0, 24)}`;
}

export function summariseSkill(record: SkillRecord): SkillSummary {
  const { body, ...rest } = record;
  return { ...rest, bodyBytes: Buffer.byteLength(body, 'utf8') };
}

/**
 * `skill` with `changes` as its next version, changed at `now`: every change bumps the version
 * `saveSkill` checks, so two concurrent changes cannot both be written.
 *
 * @example
 * const disabled = nextSkillVersion(skill, { enabled: false }, now); // disabled.version === skill.version + 1
 */
export function nextSkillVersion(
  skill: SkillRecord,
  changes: Partial<SkillRecord>,
  now: string,
): SkillRecord {
  return { ...skill, ...changes, updatedAt: now, version: skill.version + 1 };
}

/** A skill may be attached (and injected) only when enabled and not orphaned. */
export function isSkillUsable(record: Pick<SkillRecord, 'enabled' | 'orphaned'>): boolean {
  return record.enabled && !record.orphaned;
}

/**
 * Port: skill records and their append-only audit (DynamoDB deployed, dynalite locally).
 * `saveSkill` writes the record and appends the entries in one conditional write, so a change
 * is never stored without its audit; it fails with `condition-failed` when the stored version
 * is not `expectedVersion` (`undefined`: the record must not exist yet).
 */
export interface SkillRepository {
  getSkill(skillId: string): Promise<SkillRecord | undefined>;
  /** The records that exist, in the order of `skillIds`; unknown ids are left out. */
  getSkills(skillIds: readonly string[]): Promise<SkillRecord[]>;
  listSkills(): Promise<SkillRecord[]>;
  /** One page in skill id order, with an opaque cursor (a forged one is a 400). */
  listSkillsPage(options: PageRequest): Promise<{ items: SkillRecord[]; cursor?: string }>;
  saveSkill(
    record: SkillRecord,
    expectedVersion: number | undefined,
    audit: readonly SkillAuditEntry[],
  ): Promise<ConditionalOutcome>;
  listAudit(skillId: string): Promise<SkillAuditEntry[]>;
}
