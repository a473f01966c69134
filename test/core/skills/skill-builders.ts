import { sha256Hex } from '../../../lambdas/core/canonical-json.js';
import type { Logger, Metrics } from '../../../lambdas/core/ports.js';
import type { ComposableSkill } from '../../../lambdas/core/skills/compose-skills.js';
import { skillIdFor } from '../../../lambdas/core/skills/skill-record.js';

/** An enabled, intact skill with a valid checksum, unless `overrides` says otherwise. */
export function buildSkill(
  name: string,
  body = `# ${name}\n\nGuideline of ${name}.\n`,
  overrides: Partial<ComposableSkill> = {},
): ComposableSkill {
  const source = overrides.source ?? 'upload:team';
  const identifier = overrides.identifier ?? name;
  return {
    skillId: skillIdFor(source, identifier),
    source,
    identifier,
    name,
    body,
    bodyChecksum: sha256Hex(body),
    enabled: true,
    orphaned: false,
    partial: false,
    ...overrides,
  };
}

/** A logger and metrics that remember what they were told, for asserting warnings. */
export function captureObservations() {
  const lines: Array<{ level: string; message: string; fields: Record<string, unknown> }> = [];
  const counts: Array<{ name: string; value: number }> = [];
  const record =
    (level: string) =>
    (message: string, fields: Record<string, unknown> = {}) => {
      lines.push({ level, message, fields });
    };
  const logger: Logger = {
    debug: record('debug'),
    info: record('info'),
    warn: record('warn'),
    error: record('error'),
  };
  const metrics: Metrics = {
    count: (name, value = 1) => {
      counts.push({ name, value });
    },
    observe: () => {},
  };
  const total = (name: string) =>
    counts.filter((count) => count.name === name).reduce((sum, count) => sum + count.value, 0);
  return {
    lines,
    counts,
    logger,
    metrics,
    total,
    warnings: () => lines.filter((line) => line.level === 'warn'),
  };
}
