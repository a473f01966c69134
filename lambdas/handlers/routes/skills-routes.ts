import { GitHubSkillSource } from '../../adapters/skills/github-skill-source.js';
import { UploadSkillSource } from '../../adapters/skills/upload-skill-source.js';
import { CountersignError } from '../../core/errors.js';
import type { RunDependencies } from '../../core/run-dependencies.js';
import { attachSkills, refuseSkillIdChanges } from '../../core/skills/attach-skills.js';
import { ingestSkills } from '../../core/skills/ingest-skills.js';
import { disableSkill, enableSkill, requireSkill } from '../../core/skills/review-skill.js';
import type { GitHubIngest } from '../../core/skills/skill-ingest-requests.js';
import { type SkillRepository, summariseSkill } from '../../core/skills/skill-record.js';
import type { SkillSource } from '../../core/skills/skill-source.js';
import type { RouteImplementations } from '../http/http-api.js';

/** What the skills routes use (the admin Lambda's part of the table, clock, logger and metrics). */
export type SkillsRouteDependencies = Pick<
  RunDependencies,
  'skills' | 'configurations' | 'clock' | 'logger' | 'metrics'
> & {
  /** @default - GitHub's public API behind `GITHUB_ALLOWED_HOSTS` */
  readonly createGitHubSource?: (request: GitHubIngest) => SkillSource;
};

type SkillsOperation =
  | 'listSkills'
  | 'getSkill'
  | 'ingestSkills'
  | 'enableSkill'
  | 'disableSkill'
  | 'attachSkills';

/**
 * The skills part of the admin API (the admin API has checked the `admin` grant):
 *
 * | method and path | what |
 * |---|---|
 * | `GET /admin/skills` | the skills without bodies, paged (`?limit=&cursor=`) |
 * | `GET /admin/skills/{skillId}` | the skill with its body, and its audit |
 * | `POST /admin/skills/ingest` | `{source: 'upload', label, files}` or `{source: 'github', owner, repo, ref, path}` |
 * | `POST /admin/skills/{skillId}/enable` | `{bodyChecksum}`: the checksum that was reviewed |
 * | `POST /admin/skills/{skillId}/disable` | |
 * | `PUT /admin/skills/attachments/{tasks\|configurations}/{id}` | `{skillIds}`: the attached skills, in order |
 */
export function createSkillsRoutes(
  dependencies: SkillsRouteDependencies,
): Pick<RouteImplementations<'api-admin'>, SkillsOperation> {
  const context = () => ({ ...dependencies, skills: requireSkillStore(dependencies.skills) });
  return {
    listSkills: {
      handle: async (request) => {
        const page = await context().skills.listSkillsPage(request.query);
        // Pages follow the skill id; within a page, skills read in source and folder order.
        const items = page.items.map(summariseSkill);
        items.sort((left, right) =>
          (left.source + left.identifier).localeCompare(right.source + right.identifier),
        );
        return {
          statusCode: 200,
          json: { items, ...(page.cursor === undefined ? {} : { cursor: page.cursor }) },
        };
      },
    },
    getSkill: {
      handle: async (request) => {
        const { skills } = context();
        const skill = await requireSkill(skills, request.path.skillId);
        return { statusCode: 200, json: { skill, audit: await skills.listAudit(skill.skillId) } };
      },
    },
    ingestSkills: {
      handle: async (request) => {
        const body = request.body;
        const source =
          body.source === 'upload'
            ? new UploadSkillSource(body)
            : (dependencies.createGitHubSource ?? ((github: GitHubIngest) => new GitHubSkillSource(github)))(
                body,
              );
        const summary = await ingestSkills(context(), request.principal.userId, await source.readSnapshot());
        return { statusCode: 200, json: summary };
      },
    },
    enableSkill: {
      handle: async (request) => {
        const skill = await enableSkill(
          context(),
          request.principal.userId,
          request.path.skillId,
          request.body,
        );
        return { statusCode: 200, json: summariseSkill(skill) };
      },
    },
    disableSkill: {
      handle: async (request) => {
        const skill = await disableSkill(context(), request.principal.userId, request.path.skillId);
        return { statusCode: 200, json: summariseSkill(skill) };
      },
    },
    attachSkills: {
      handle: async (request) => {
        const { owner, id } = request.path;
        const kind = owner === 'tasks' ? 'task' : 'configuration';
        return {
          statusCode: 200,
          json: await attachSkills(context(), request.principal.userId, { kind, id }, request.body),
        };
      },
    },
  };
}

function requireSkillStore(skills: SkillRepository | undefined): SkillRepository {
  if (!skills) throw new CountersignError('configuration', 'Skills are not configured in this deployment.');
  return skills;
}

/**
 * The generic admin PUT of a task or configuration keeps its `skillIds` as stored: skills are
 * attached through `PUT /admin/skills/attachments/…`, which checks each one and audits it.
 */
export async function refuseUnreviewedSkillIds(
  dependencies: Pick<RunDependencies, 'configurations'>,
  collection: 'configurations' | 'tasks',
  item: Record<string, unknown>,
): Promise<void> {
  const stored =
    collection === 'tasks'
      ? await dependencies.configurations.getTask(String(item.taskId))
      : await dependencies.configurations.getConfiguration(String(item.configurationId));
  const next = Array.isArray(item.skillIds) ? (item.skillIds as string[]) : [];
  refuseSkillIdChanges(
    stored?.skillIds,
    next,
    `${collection}/${String(item.taskId ?? item.configurationId)}`,
  );
}
