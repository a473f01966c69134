import * as z from 'zod/mini';
import type { ConfigurationRepository } from '../configurations.js';
import { CountersignError } from '../errors.js';
import type { Clock } from '../ports.js';
import { auditEntriesFor } from './ingest-skills.js';
import { requireSkill } from './review-skill.js';
import { isSkillUsable, nextSkillVersion, type SkillRecord, type SkillRepository } from './skill-record.js';

export const attachSkillsRequestSchema = z.strictObject({
  skillIds: z.array(z.string().check(z.minLength(1), z.maxLength(300))).check(z.maxLength(100)),
});
export type AttachSkillsRequest = z.infer<typeof attachSkillsRequestSchema>;

export type AttachmentTarget = { kind: 'task' | 'configuration'; id: string };

interface AttachDependencies {
  skills: SkillRepository;
  configurations: ConfigurationRepository;
  clock: Clock;
}

/**
 * Sets the skills attached to a task or a configuration, in the order given (the order they
 * are composed in). Every newly attached skill must be enabled and not orphaned; skills that
 * stay attached are kept even if they were disabled since (the composer skips them). Each
 * attach and detach is appended to the skill's audit.
 *
 * @example
 * await attachSkills(dependencies, 'admin', { kind: 'task', id: 'page-metadata' }, { skillIds: [skill.skillId] });
 */
export async function attachSkills(
  dependencies: AttachDependencies,
  actor: string,
  target: AttachmentTarget,
  request: AttachSkillsRequest,
): Promise<{ target: AttachmentTarget; skillIds: string[] }> {
  const { configurations } = dependencies;
  const task = target.kind === 'task' ? await configurations.getTask(target.id) : undefined;
  const configuration =
    target.kind === 'configuration' ? await configurations.getConfiguration(target.id) : undefined;
  const current = task ?? configuration;
  if (!current) throw new CountersignError('not-found', `No ${target.kind} "${target.id.slice(0, 100)}".`);
  const next = request.skillIds;
  next.forEach((skillId, index) => {
    if (next.indexOf(skillId) !== index) {
      throw new CountersignError('bad-request', `skillIds[${index}]: "${skillId}" is listed twice.`, {
        field: `skillIds[${index}]`,
      });
    }
  });
  const previous = current.skillIds;
  const added: SkillRecord[] = [];
  for (const [index, skillId] of next.entries()) {
    if (previous.includes(skillId)) continue;
    const skill = await requireSkill(dependencies.skills, skillId).catch(() => {
      throw new CountersignError('bad-request', `skillIds[${index}]: no skill "${skillId.slice(0, 100)}".`, {
        field: `skillIds[${index}]`,
      });
    });
    if (!isSkillUsable(skill)) {
      throw new CountersignError(
        'bad-request',
        `skillIds[${index}]: the skill "${skill.name}" is ${skill.orphaned ? 'orphaned' : 'disabled'}; only enabled, non-orphaned skills can be attached.`,
        { field: `skillIds[${index}]` },
      );
    }
    added.push(skill);
  }
  const removed = previous.filter((skillId) => !next.includes(skillId));
  if (task) await configurations.putTask({ ...task, skillIds: next });
  if (configuration) await configurations.putConfiguration({ ...configuration, skillIds: next });

  const label = `${target.kind}:${target.id}`;
  for (const skill of added) await appendAttachment(dependencies, actor, skill.skillId, 'attached', label);
  for (const skillId of removed) await appendAttachment(dependencies, actor, skillId, 'detached', label);
  return { target, skillIds: next };
}

/** Appends attach/detach to the skill's audit, re-reading on a concurrent change. */
async function appendAttachment(
  dependencies: AttachDependencies,
  actor: string,
  skillId: string,
  action: 'attached' | 'detached',
  target: string,
): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const skill = await dependencies.skills.getSkill(skillId);
    if (!skill) return;
    const now = dependencies.clock.now().toISOString();
    const record = nextSkillVersion(skill, {}, now);
    const [entry] = auditEntriesFor(record, actor, action, now);
    const outcome = await dependencies.skills.saveSkill(record, skill.version, [
      { ...(entry as NonNullable<typeof entry>), target },
    ]);
    if (outcome.kind === 'written') return;
  }
  throw new CountersignError(
    'conflict',
    'A skill changed repeatedly while its attachment was recorded; try again.',
  );
}

/**
 * For the generic admin PUT of tasks and configurations: skill attachments change only
 * through `attachSkills`, which checks and audits them.
 */
export function refuseSkillIdChanges(
  previous: readonly string[] | undefined,
  next: readonly string[],
  path: string,
): void {
  const before = previous ?? [];
  const same = before.length === next.length && before.every((skillId, index) => next[index] === skillId);
  if (!same) {
    throw new CountersignError(
      'bad-request',
      `body.skillIds: attach skills with PUT /admin/skills/attachments/${path}; that checks each skill is enabled and records it.`,
      { field: 'body.skillIds' },
    );
  }
}
