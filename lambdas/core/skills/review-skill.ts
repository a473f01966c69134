import * as z from 'zod/mini';
import { CountersignError } from '../errors.js';
import type { Clock } from '../ports.js';
import { TEXTS } from '../texts.js';
import { auditEntriesFor } from './ingest-skills.js';
import { nextSkillVersion, type SkillRecord, type SkillRepository } from './skill-record.js';

export const enableSkillRequestSchema = z.strictObject({
  /** The body checksum the reviewer read: a body that changed since is not enabled. */
  bodyChecksum: z.string().check(z.regex(/^[0-9a-f]{64}$/, 'the lower-case hex sha256 shown with the skill')),
});
export type EnableSkillRequest = z.infer<typeof enableSkillRequestSchema>;

interface ReviewDependencies {
  skills: SkillRepository;
  clock: Clock;
}

/**
 * Enables a skill after review. The request names the checksum that was reviewed, so a body
 * that changed between reading and clicking is refused (409) instead of being enabled unread.
 * An orphaned skill cannot be enabled: there is nothing upstream to keep it current.
 *
 * @example
 * await enableSkill(dependencies, 'admin', skillId, { bodyChecksum: skill.bodyChecksum });
 */
export async function enableSkill(
  dependencies: ReviewDependencies,
  actor: string,
  skillId: string,
  request: EnableSkillRequest,
): Promise<SkillRecord> {
  const skill = await requireSkill(dependencies.skills, skillId);
  if (skill.orphaned) {
    throw new CountersignError(
      'conflict',
      `The skill "${skill.name}" is orphaned (gone upstream) and cannot be enabled.`,
    );
  }
  if (skill.bodyChecksum !== request.bodyChecksum) {
    throw new CountersignError(
      'conflict',
      `The skill "${skill.name}" changed since it was reviewed (its checksum is not the one given); review it again.`,
    );
  }
  if (skill.enabled) return skill;
  return recordReview(dependencies, actor, skill, 'enabled', (now) => ({
    enabled: true,
    reviewedBy: actor,
    reviewedAt: now,
    reviewedChecksum: skill.bodyChecksum,
  }));
}

/** Disables a skill: it is no longer injected anywhere, though it stays attached. */
export async function disableSkill(
  dependencies: ReviewDependencies,
  actor: string,
  skillId: string,
): Promise<SkillRecord> {
  const skill = await requireSkill(dependencies.skills, skillId);
  if (!skill.enabled) return skill;
  return recordReview(dependencies, actor, skill, 'disabled', () => ({ enabled: false }));
}

/** Writes a review's change as the skill's next version, with its audit entry. */
async function recordReview(
  dependencies: ReviewDependencies,
  actor: string,
  skill: SkillRecord,
  action: 'enabled' | 'disabled',
  changesAt: (now: string) => Partial<SkillRecord>,
): Promise<SkillRecord> {
  const now = dependencies.clock.now().toISOString();
  const record = nextSkillVersion(skill, changesAt(now), now);
  await saveOrConflict(
    dependencies.skills,
    record,
    skill.version,
    auditEntriesFor(record, actor, action, now),
  );
  return record;
}

export async function requireSkill(skills: SkillRepository, skillId: string): Promise<SkillRecord> {
  const skill = /^skl-[0-9a-f]{24}$/.test(skillId) ? await skills.getSkill(skillId) : undefined;
  if (!skill) throw new CountersignError('not-found', TEXTS.skillNotFound(skillId));
  return skill;
}

export async function saveOrConflict(
  skills: SkillRepository,
  record: SkillRecord,
  expectedVersion: number,
  entries: Parameters<SkillRepository['saveSkill']>[2],
): Promise<void> {
  const outcome = await skills.saveSkill(record, expectedVersion, entries);
  if (outcome.kind === 'condition-failed') {
    throw new CountersignError(
      'conflict',
      `The skill "${record.name}" changed meanwhile; reload it and try again.`,
    );
  }
}
