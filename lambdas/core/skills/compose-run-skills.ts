import type { Configuration, Task } from '../configurations.js';
import type { Logger, Metrics } from '../ports.js';
import { composeSkills, type SkillComposition } from './compose-skills.js';
import type { SkillRecord, SkillRepository } from './skill-record.js';

export interface RunSkillsDependencies {
  /** Absent: attached skills cannot be read, so none is injected (and that is warned). */
  skills?: SkillRepository;
  logger: Logger;
  metrics: Metrics;
  settings: { skillsMaxBytes?: number | string };
}

/**
 * Reads the skills attached to a run's configuration and task (or, for a completion or
 * translation, to its configuration alone: `logFields` then names it) and composes their block.
 * The reading is here; the composition stays a pure function of the records read. Every
 * warning goes to the log and the metrics. `undefined` when nothing is attached.
 */
export async function composeRunSkills(
  dependencies: RunSkillsDependencies,
  context:
    | { runId: string; configuration: Configuration; task?: Task }
    | { logFields: Record<string, unknown>; configuration: Configuration },
): Promise<SkillComposition | undefined> {
  const configurationIds = context.configuration.skillIds;
  const taskIds = 'task' in context ? (context.task?.skillIds ?? []) : [];
  const fields = 'runId' in context ? { runId: context.runId } : context.logFields;
  if (configurationIds.length === 0 && taskIds.length === 0) return undefined;
  if (!dependencies.skills) {
    dependencies.logger.warn(
      'skills are attached but no skill store is configured; none was injected',
      fields,
    );
    return undefined;
  }
  const records = await dependencies.skills.getSkills([...new Set([...configurationIds, ...taskIds])]);
  const byId = new Map(records.map((record) => [record.skillId, record]));
  const pick = (ids: readonly string[]): SkillRecord[] => {
    const found: SkillRecord[] = [];
    for (const skillId of ids) {
      const record = byId.get(skillId);
      if (record) found.push(record);
      else dependencies.logger.warn('attached skill does not exist; skipped', { ...fields, skillId });
    }
    return found;
  };
  const composition = composeSkills({
    configurationSkills: pick(configurationIds),
    taskSkills: pick(taskIds),
    maxBytes: dependencies.settings.skillsMaxBytes,
  });
  reportSkillComposition(composition, dependencies, fields);
  return composition;
}

/**
 * Logs each composition warning (never a body) and counts `SkillsDropped` (over budget) and
 * `SkillChecksumMismatches`.
 */
export function reportSkillComposition(
  composition: SkillComposition,
  dependencies: { logger: Logger; metrics: Metrics },
  fields: Record<string, unknown> = {},
): void {
  for (const warning of composition.warnings) {
    dependencies.logger.warn(warning.message, {
      ...fields,
      code: warning.code,
      skillId: warning.skill.skillId,
      skillName: warning.skill.name,
      source: warning.skill.source,
      identifier: warning.skill.identifier,
      origin: warning.skill.origin,
    });
    if (warning.code === 'skill-over-budget') dependencies.metrics.count('SkillsDropped');
    if (warning.code === 'skill-checksum-mismatch') dependencies.metrics.count('SkillChecksumMismatches');
  }
  dependencies.logger.info('skills composed', {
    ...fields,
    included: composition.included.map((skill) => `${skill.skillId}@${skill.bodyChecksum.slice(0, 12)}`),
    dropped: composition.dropped.length,
    blockBytes: composition.blockBytes,
    maxBytes: composition.maxBytes,
  });
}
