import * as z from 'zod/mini';
import { CountersignError } from '../errors.js';
import type { Clock, Logger, Metrics } from '../ports.js';
import { type ParsedSkillFile, parseSkillFile } from './parse-skill-file.js';
import {
  nextSkillVersion,
  SKILL_IDENTIFIER_PATTERN,
  SKILL_RECORD_SCHEMA_VERSION,
  SKILL_SOURCE_PATTERN,
  type SkillAuditEntry,
  type SkillRecord,
  type SkillRepository,
  skillIdFor,
} from './skill-record.js';
import { MAX_SKILLS_PER_SNAPSHOT, normaliseSourcePath, type SkillSnapshot } from './skill-source.js';

export interface IngestDependencies {
  skills: SkillRepository;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
}

/** What an ingest did, by skill id: the core's shape, which the API's response schema is. */
export const ingestSummarySchema = z.object({
  source: z.string(),
  scope: z.string(),
  pinnedCommit: z.optional(z.string()),
  created: z.array(z.string()),
  changed: z.array(z.string()),
  unchanged: z.array(z.string()),
  orphaned: z.array(z.string()),
  restored: z.array(z.string()),
});
export type IngestSummary = z.infer<typeof ingestSummarySchema>;

interface ParsedFolder {
  identifier: string;
  partial: boolean;
  file: ParsedSkillFile;
}

/**
 * Stores a source's skills (docs/skills.md, ingest half): new skills arrive disabled; a changed body
 * (or name, description or partial flag) disables the skill again and clears its review; a
 * skill gone from the source within the snapshot's scope becomes orphaned, never deleted.
 * Every SKILL.md is read and checked before anything is written, so bad input stores nothing.
 *
 * @example
 * const summary = await ingestSkills(dependencies, 'admin', await new FolderSkillSource({ root, label: 'team' }).readSnapshot());
 */
export async function ingestSkills(
  dependencies: IngestDependencies,
  actor: string,
  snapshot: SkillSnapshot,
): Promise<IngestSummary> {
  const parsed = parseSnapshot(snapshot);
  const scope = snapshot.scope;
  const now = dependencies.clock.now().toISOString();
  const existing = (await dependencies.skills.listSkills()).filter(
    (record) => record.source === snapshot.source && isInScope(record.identifier, scope),
  );
  const existingById = new Map(existing.map((record) => [record.skillId, record]));
  const summary: IngestSummary = {
    source: snapshot.source,
    scope,
    ...(snapshot.pinnedCommit ? { pinnedCommit: snapshot.pinnedCommit } : {}),
    created: [],
    changed: [],
    unchanged: [],
    orphaned: [],
    restored: [],
  };
  const seen = new Set<string>();
  for (const folder of parsed) {
    const skillId = skillIdFor(snapshot.source, folder.identifier);
    seen.add(skillId);
    const previous = existingById.get(skillId);
    const content = {
      name: folder.file.name,
      description: folder.file.description,
      body: folder.file.body,
      bodyChecksum: folder.file.bodyChecksum,
      partial: folder.partial,
    };
    if (previous === undefined) {
      const record: SkillRecord = {
        schemaVersion: SKILL_RECORD_SCHEMA_VERSION,
        skillId,
        source: snapshot.source,
        identifier: folder.identifier,
        ...content,
        enabled: false,
        orphaned: false,
        ...(snapshot.pinnedCommit ? { pinnedCommit: snapshot.pinnedCommit } : {}),
        ingestedAt: now,
        updatedAt: now,
        version: 1,
      };
      await save(dependencies, record, undefined, audit(record, actor, 'ingested', now));
      summary.created.push(skillId);
      continue;
    }
    const contentChanged =
      previous.bodyChecksum !== content.bodyChecksum ||
      previous.name !== content.name ||
      previous.description !== content.description ||
      previous.partial !== content.partial;
    if (contentChanged) {
      const {
        reviewedBy: _by,
        reviewedAt: _at,
        reviewedChecksum: _checksum,
        pinnedCommit: _pin,
        ...kept
      } = previous;
      const record = nextSkillVersion(
        kept,
        {
          ...content,
          enabled: false,
          orphaned: false,
          ...(snapshot.pinnedCommit ? { pinnedCommit: snapshot.pinnedCommit } : {}),
        },
        now,
      );
      const entry = { ...audit(record, actor, 'changed', now)[0], previousChecksum: previous.bodyChecksum };
      await save(dependencies, record, previous.version, [entry as SkillAuditEntry]);
      summary.changed.push(skillId);
      dependencies.logger.warn('skill changed upstream and was disabled until reviewed again', {
        skillId,
        source: snapshot.source,
      });
    } else if (previous.orphaned) {
      const record = nextSkillVersion(previous, { orphaned: false }, now);
      await save(dependencies, record, previous.version, audit(record, actor, 'restored', now));
      summary.restored.push(skillId);
    } else {
      summary.unchanged.push(skillId);
    }
  }
  for (const previous of existing) {
    if (seen.has(previous.skillId) || previous.orphaned) continue;
    const record = nextSkillVersion(previous, { orphaned: true }, now);
    await save(dependencies, record, previous.version, audit(record, actor, 'orphaned', now));
    summary.orphaned.push(previous.skillId);
  }
  dependencies.metrics.count('SkillsIngested', summary.created.length + summary.changed.length);
  dependencies.logger.info('skills ingested', {
    source: snapshot.source,
    scope,
    created: summary.created.length,
    changed: summary.changed.length,
    unchanged: summary.unchanged.length,
    orphaned: summary.orphaned.length,
    restored: summary.restored.length,
  });
  return summary;
}

/** Checks the whole snapshot before anything is stored. */
function parseSnapshot(snapshot: SkillSnapshot): ParsedFolder[] {
  if (!SKILL_SOURCE_PATTERN.test(snapshot.source)) {
    throw new CountersignError(
      'bad-request',
      `source: ${JSON.stringify(snapshot.source.slice(0, 100))} is not a valid skill source.`,
      {
        field: 'source',
      },
    );
  }
  if (snapshot.scope !== '') normaliseSourcePath(snapshot.scope, 'path');
  if (snapshot.folders.length > MAX_SKILLS_PER_SNAPSHOT) {
    throw new CountersignError(
      'bad-request',
      `skills: ${snapshot.folders.length} skill folders; at most ${MAX_SKILLS_PER_SNAPSHOT} are ingested at once.`,
      { field: 'skills' },
    );
  }
  const identifiers = new Set<string>();
  return snapshot.folders.map((folder) => {
    const identifier = normaliseSourcePath(folder.identifier, 'skills');
    if (!SKILL_IDENTIFIER_PATTERN.test(identifier) || !isInScope(identifier, snapshot.scope)) {
      throw new CountersignError(
        'bad-request',
        `skills: the folder ${JSON.stringify(identifier.slice(0, 200))} is not a valid skill folder path inside ${JSON.stringify(snapshot.scope)}.`,
        { field: 'skills' },
      );
    }
    if (identifiers.has(identifier)) {
      throw new CountersignError('bad-request', `skills: the folder "${identifier}" appears twice.`, {
        field: 'skills',
      });
    }
    identifiers.add(identifier);
    folder.otherFiles.forEach((path, index) => {
      normaliseSourcePath(path, `skills.${identifier}.files[${index}]`);
    });
    return {
      identifier,
      partial: folder.otherFiles.length > 0,
      file: parseSkillFile(folder.skillFile, identifier),
    };
  });
}

function isInScope(identifier: string, scope: string): boolean {
  return scope === '' || identifier === scope || identifier.startsWith(`${scope}/`);
}

function audit(
  record: SkillRecord,
  actor: string,
  action: SkillAuditEntry['action'],
  at: string,
): SkillAuditEntry[] {
  return [
    {
      version: record.version,
      at,
      actor,
      action,
      bodyChecksum: record.bodyChecksum,
      ...(record.pinnedCommit ? { pinnedCommit: record.pinnedCommit } : {}),
    },
  ];
}

async function save(
  dependencies: IngestDependencies,
  record: SkillRecord,
  expectedVersion: number | undefined,
  entries: SkillAuditEntry[],
): Promise<void> {
  const outcome = await dependencies.skills.saveSkill(record, expectedVersion, entries);
  if (outcome.kind === 'condition-failed') {
    throw new CountersignError(
      'conflict',
      `The skill "${record.identifier}" changed while it was being ingested; run the ingest again.`,
    );
  }
}

export { audit as auditEntriesFor };
