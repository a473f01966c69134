import * as z from 'zod/mini';
import {
  type GitHubIngest,
  GitHubSkillSource,
  gitHubIngestSchema,
} from '../../adapters/skills/github-skill-source.js';
import { skillUploadSchema, UploadSkillSource } from '../../adapters/skills/upload-skill-source.js';
import { CountersignError } from '../../core/errors.js';
import type { RunDependencies } from '../../core/runs/run-dependencies.js';
import {
  attachSkills,
  attachSkillsRequestSchema,
  refuseSkillIdChanges,
} from '../../core/skills/attach-skills.js';
import { ingestSkills } from '../../core/skills/ingest-skills.js';
import {
  disableSkill,
  enableSkill,
  enableSkillRequestSchema,
  requireSkill,
} from '../../core/skills/review-skill.js';
import { type SkillRepository, summariseSkill } from '../../core/skills/skill-record.js';
import type { SkillSource } from '../../core/skills/skill-source.js';
import type { HttpRequest, HttpResponse } from '../http/http-route.js';
import { adminListQuerySchema, parseInput } from './request-parsing.js';

/** The longest task or configuration id (`identifier` in core/configurations.ts). */
const MAX_ATTACHMENT_TARGET_ID_LENGTH = 100;

/** POST /admin/skills/ingest: an upload or a GitHub source, strict at every depth. */
export const ingestRequestSchema = z.discriminatedUnion('source', [skillUploadSchema, gitHubIngestSchema]);

/** What the skills routes use (the admin Lambda's part of the table, clock, logger and metrics). */
export type SkillsRouteDependencies = Pick<
  RunDependencies,
  'skills' | 'configurations' | 'clock' | 'logger' | 'metrics'
>;

export interface SkillsRouteOptions {
  /** @default - GitHub's public API behind `GITHUB_ALLOWED_HOSTS` */
  readonly createGitHubSource?: (request: GitHubIngest) => SkillSource;
}

/**
 * The skills part of the admin API (the caller has checked the `admin` grant):
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
export async function routeSkills(
  dependencies: SkillsRouteDependencies,
  request: HttpRequest,
  segments: readonly string[],
  options: SkillsRouteOptions = {},
): Promise<HttpResponse> {
  const skills = requireSkillStore(dependencies.skills);
  const method = request.method.toUpperCase();
  const actor = request.principal.userId;
  const context = { ...dependencies, skills };
  const [first, second, third, ...rest] = segments;
  if (method === 'GET' && first === undefined) {
    const query = parseInput(adminListQuerySchema, request.query, 'query');
    const page = await skills.listSkillsPage(query);
    // Pages follow the skill id; within a page, skills read in source and folder order.
    const items = page.items.map(summariseSkill);
    items.sort((left, right) =>
      (left.source + left.identifier).localeCompare(right.source + right.identifier),
    );
    return {
      statusCode: 200,
      json: { items, ...(page.cursor === undefined ? {} : { cursor: page.cursor }) },
    };
  }
  if (method === 'POST' && first === 'ingest' && second === undefined) {
    const body = parseInput(ingestRequestSchema, request.body, 'body');
    const source =
      body.source === 'upload'
        ? new UploadSkillSource(body)
        : (options.createGitHubSource ?? ((github: GitHubIngest) => new GitHubSkillSource(github)))(body);
    const summary = await ingestSkills(context, actor, await source.readSnapshot());
    return { statusCode: 200, json: summary };
  }
  if (
    method === 'PUT' &&
    first === 'attachments' &&
    (second === 'tasks' || second === 'configurations') &&
    third &&
    rest.length === 0
  ) {
    const kind = second === 'tasks' ? 'task' : 'configuration';
    // No task or configuration id is longer; a longer one would reach DynamoDB as a key it refuses (a 500).
    if (third.length > MAX_ATTACHMENT_TARGET_ID_LENGTH) {
      throw new CountersignError('not-found', `No ${kind} with this id.`);
    }
    const body = parseInput(attachSkillsRequestSchema, request.body, 'body');
    return { statusCode: 200, json: await attachSkills(context, actor, { kind, id: third }, body) };
  }
  if (first !== undefined && first !== 'ingest' && first !== 'attachments' && third === undefined) {
    if (method === 'GET' && second === undefined) {
      const skill = await requireSkill(skills, first);
      return { statusCode: 200, json: { skill, audit: await skills.listAudit(skill.skillId) } };
    }
    if (method === 'POST' && second === 'enable') {
      const body = parseInput(enableSkillRequestSchema, request.body, 'body');
      return { statusCode: 200, json: summariseSkill(await enableSkill(context, actor, first, body)) };
    }
    if (method === 'POST' && second === 'disable') {
      return { statusCode: 200, json: summariseSkill(await disableSkill(context, actor, first)) };
    }
  }
  throw new CountersignError('not-found', 'No such skills resource.');
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
