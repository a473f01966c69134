import { sha256Hex } from '../lambdas/core/canonical-json.js';
import {
  type ComposableSkill,
  composeSkills,
  type SkillComposition,
} from '../lambdas/core/skills/compose-skills.js';
import { skillIdFor } from '../lambdas/core/skills/skill-record.js';

export interface SkillBenchmarkOptions {
  /** @default 200 */
  readonly skills?: number;
  /** @default 24000 */
  readonly bodyBytes?: number;
  /** @default 24000 (the default context budget of skills) */
  readonly maxBytes?: number;
}

/**
 * A deterministic skill set for the benchmark: half attached to the configuration, half to
 * the task, each body `bodyBytes` of ASCII prose with a valid checksum.
 */
export function buildBenchmarkSkillSet(options: SkillBenchmarkOptions = {}): {
  configurationSkills: ComposableSkill[];
  taskSkills: ComposableSkill[];
} {
  const count = options.skills ?? 200;
  const bodyBytes = options.bodyBytes ?? 24_000;
  const skills = Array.from({ length: count }, (_, index): ComposableSkill => {
    const line = `Guideline ${index}: keep titles short, descriptions factual, and keywords relevant. `;
    const body = line.repeat(Math.ceil(bodyBytes / line.length)).slice(0, bodyBytes);
    const identifier = `skills/bench-${index}`;
    return {
      skillId: skillIdFor('upload:bench', identifier),
      source: 'upload:bench',
      identifier,
      name: `bench-${index}`,
      body,
      bodyChecksum: sha256Hex(body),
      enabled: true,
      orphaned: false,
      partial: index % 2 === 1,
    };
  });
  const half = Math.ceil(count / 2);
  return { configurationSkills: skills.slice(0, half), taskSkills: skills.slice(half) };
}

/**
 * For `npm run bench`: composes 200 skills of 24 KB each (by default) and says how long it
 * took. The set is built before the clock starts; the time covers checksum verification,
 * partial stripping, fencing and the budget.
 *
 * @example
 * const { milliseconds, composition } = benchmarkComposeSkills();
 * console.log(`${milliseconds.toFixed(1)} ms, ${composition.included.length} included`);
 */
export function benchmarkComposeSkills(options: SkillBenchmarkOptions = {}): {
  milliseconds: number;
  composition: SkillComposition;
} {
  const set = buildBenchmarkSkillSet(options);
  const started = performance.now();
  const composition = composeSkills({ ...set, maxBytes: options.maxBytes ?? 24_000 });
  return { milliseconds: performance.now() - started, composition };
}
