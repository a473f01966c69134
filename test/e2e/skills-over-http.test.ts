import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSkillsCli } from '../../bin/skills.js';
import { unsealJson } from '../../lambdas/core/sealed-json.js';
import { SKILLS_BLOCK_HEADER, splitSkillBlock } from '../../lambdas/core/skills/compose-skills.js';
import { estimateToolsTokens, loadCl100kEstimator } from '../../lambdas/core/skills/estimate-tokens.js';
import { skillIdFor } from '../../lambdas/core/skills/skill-record.js';
import { specifyAllowedTools } from '../../lambdas/core/tools/tool-specification.js';
import { bodyOf, refusalOf } from '../support/api-answers.js';
import {
  removeTestData,
  startRunAndSettle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';
import { createValidatingFetch } from '../support/openapi-response-validator.js';

const FIXTURE = new URL('../fixtures/skills/folder/', import.meta.url).pathname;
const PAGE_STYLE = skillIdFor('upload:team', 'page-style');
const SEO = skillIdFor('upload:team', 'seo-keywords');
const RELEASE_NOTES = skillIdFor('upload:team', 'release-notes');

type StoredState = {
  system?: string;
  transcript: Array<{ role: string; content: Array<{ type: string; text?: string }> }>;
};

describe('skills over HTTP in local mode: ingest with the CLI, review, attach, inject', () => {
  let runtime: TestRuntime;
  let folder: string;
  const printed: string[] = [];
  const cli = (...args: string[]) =>
    runSkillsCli(args, {
      environment: { COUNTERSIGN_URL: runtime.url, COUNTERSIGN_TOKEN: runtime.tokens.admin },
      // The CLI's answers are checked against the committed OpenAPI document too.
      fetch: createValidatingFetch(),
      print: (line) => printed.push(line),
      printError: (line) => printed.push(line),
    });
  const firstUserText = async (runId: string): Promise<{ text: string; state: StoredState }> => {
    const stored = await runtime.dependencies.runs.getRun(runId);
    const state = (await unsealJson(
      runtime.dependencies.sealer,
      'run-state',
      runId,
      stored?.sealedState ?? new Uint8Array(),
    )) as StoredState;
    return { text: state.transcript[0]?.content[0]?.text ?? '', state };
  };

  beforeAll(async () => {
    runtime = await startTestRuntime();
    folder = await mkdtemp(join(tmpdir(), 'countersign-cli-skills-'));
    await cp(FIXTURE, join(folder, 'team'), { recursive: true });
  });
  afterAll(async () => {
    await runtime.stop();
    await removeTestData(runtime);
    await rm(folder, { recursive: true, force: true });
  });

  it('ingests a folder through the CLI; the new skills arrive disabled and cannot be attached yet', async () => {
    // Act
    const code = await cli('ingest', '--folder', join(folder, 'team'));
    const attach = await runtime
      .client('admin')
      .attachSkills({ path: { owner: 'tasks', id: 'page-metadata' }, body: { skillIds: [SEO] } });

    // Assess
    expect(code).toBe(0);
    expect(JSON.parse(printed.at(-1) ?? '{}').created).toHaveLength(3);
    const list = await runtime.client('admin').listSkills();
    expect(
      bodyOf(list).items.map((item: { name: string; enabled: boolean }) => [item.name, item.enabled]),
    ).toEqual([
      ['page-style', false],
      ['release-notes', false],
      ['seo-keywords', false],
    ]);
    expect(bodyOf(list).items[0]).not.toHaveProperty('body');
    expect(attach.status).toBe(400);
    expect(refusalOf(attach).error.message).toBe(
      'skillIds[0]: the skill "seo-keywords" is disabled; only enabled, non-orphaned skills can be attached.',
    );
  });

  it('is for admins only', async () => {
    // Act
    const response = await runtime.client('editor').listSkills();

    // Assess
    expect(response.status).toBe(403);
  });

  it('enables a skill only with the checksum that was reviewed, and records who reviewed it', async () => {
    // Prepare
    const shown = await runtime.client('admin').getSkill({ path: { skillId: PAGE_STYLE } });

    // Act
    const stale = await runtime
      .client('admin')
      .enableSkill({ path: { skillId: PAGE_STYLE }, body: { bodyChecksum: '0'.repeat(64) } });
    const codes = [
      await cli('enable', PAGE_STYLE, '--checksum', bodyOf(shown).skill.bodyChecksum),
      await cli(
        'enable',
        SEO,
        '--checksum',
        bodyOf(await runtime.client('admin').getSkill({ path: { skillId: SEO } })).skill.bodyChecksum,
      ),
    ];

    // Assess
    expect(stale.status).toBe(409);
    expect(codes).toEqual([0, 0]);
    const after = await runtime.client('admin').getSkill({ path: { skillId: PAGE_STYLE } });
    expect(bodyOf(after).skill).toMatchObject({
      enabled: true,
      reviewedBy: 'admin',
      reviewedChecksum: bodyOf(shown).skill.bodyChecksum,
    });
    expect(bodyOf(after).audit.map((entry: { action: string }) => entry.action)).toEqual([
      'ingested',
      'enabled',
    ]);
  });

  it('attaches only through the attach route: the generic PUT of a task may not change its skills', async () => {
    // Prepare
    const task = bodyOf(await runtime.client('admin').getTask({ path: { id: 'page-metadata' } }));

    // Act
    const sneaky = await runtime
      .client('admin')
      .putTask({ path: { id: 'page-metadata' }, body: { ...task, skillIds: [RELEASE_NOTES] } });
    const codes = [
      await cli('attach', '--configuration', 'demo-scripted', PAGE_STYLE),
      await cli('attach', '--task', 'page-metadata', SEO, PAGE_STYLE),
    ];

    // Assess
    expect(sneaky.status).toBe(400);
    expect(refusalOf(sneaky).error.message).toContain(
      'attach skills with PUT /admin/skills/attachments/tasks/page-metadata',
    );
    expect(codes).toEqual([0, 0]);
    const audit = bodyOf(await runtime.client('admin').getSkill({ path: { skillId: SEO } })).audit;
    expect(audit.at(-1)).toMatchObject({ action: 'attached', target: 'task:page-metadata', actor: 'admin' });
  });

  it('injects configuration then task skills into the first user message of the sealed run state, never the system prompt', async () => {
    // Act
    const { runId, view } = await startRunAndSettle(
      runtime,
      "Set the description of page 12 to 'Spring sale'",
    );
    const { text, state } = await firstUserText(runId);

    // Assess: the run still works, and the block leads the first user message
    expect(view.status).toBe('waiting');
    expect(text.startsWith(`${SKILLS_BLOCK_HEADER}\n`)).toBe(true);
    const split = splitSkillBlock(text);
    expect(split?.rest).toContain("Set the description of page 12 to 'Spring sale'");
    const block = split?.block ?? '';
    expect(block.indexOf('name="page-style"')).toBeLessThan(block.indexOf('name="seo-keywords"'));
    expect(block.match(/name="page-style"/g)).toHaveLength(1);
    expect(block).not.toContain('scripts/check.py');
    expect(state.system ?? '').not.toContain(SKILLS_BLOCK_HEADER);
    expect(
      state.transcript.slice(1).some((message) => JSON.stringify(message).includes(SKILLS_BLOCK_HEADER)),
    ).toBe(false);
    const composed = runtime.logLines
      .map((line) => JSON.parse(line))
      .find((line) => line.message === 'skills composed' && line.runId === runId);
    expect(composed.included).toHaveLength(2);
    expect(runtime.logLines.join('\n')).not.toContain('Titles are sentence case');
  });

  it('drops task skills over the byte budget and logs a warning for each', async () => {
    // Prepare: room for the configuration skill only
    const settings = runtime.dependencies.settings;
    const previous = settings.skillsMaxBytes;
    settings.skillsMaxBytes = 1000;

    // Act
    const { runId } = await startRunAndSettle(runtime, 'List the pages');
    settings.skillsMaxBytes = previous;

    // Assess
    const warnings = runtime.logLines
      .map((line) => JSON.parse(line))
      .filter((line) => String(line.level).toLowerCase() === 'warn' && line.runId === runId);
    expect(warnings).toEqual([
      expect.objectContaining({ code: 'skill-over-budget', skillName: 'seo-keywords', origin: 'task' }),
    ]);
    const { text } = await firstUserText(runId);
    expect(Buffer.byteLength(splitSkillBlock(text)?.block ?? '', 'utf8')).toBeLessThanOrEqual(1000);
  });

  it('bounds the model send by the context window, leaving the skills block out loudly when nothing else fits', async () => {
    // Prepare: a window with room for the tools, the reply and the bare request, not the block
    const configuration = await runtime.dependencies.configurations.getConfiguration('demo-scripted');
    const tools = specifyAllowedTools(runtime.dependencies.tools, configuration?.allowedTools ?? []);
    const settings = runtime.dependencies.settings;
    settings.contextWindowTokens =
      (configuration?.options.maxTokens ?? 0) +
      estimateToolsTokens(tools, await loadCl100kEstimator('scripted-v1')) +
      80;

    // Act
    const { runId, view } = await startRunAndSettle(runtime, 'Hello there');
    delete settings.contextWindowTokens;

    // Assess: the run answered, the sealed state still holds the block, and the log says it was left out
    expect(view.status).toBe('completed');
    expect((await firstUserText(runId)).text.startsWith(SKILLS_BLOCK_HEADER)).toBe(true);
    const warnings = runtime.logLines
      .map((line) => JSON.parse(line))
      .filter((line) => String(line.level).toLowerCase() === 'warn' && line.runId === runId);
    expect(warnings.map((line) => line.message)).toEqual([
      'skills block left out of this send: the context window is too small for it',
    ]);
  });

  it('orphans a skill removed from its folder and keeps it out of new runs', async () => {
    // Prepare
    await rm(join(folder, 'team', 'seo-keywords'), { recursive: true });

    // Act
    const code = await cli('ingest', '--folder', join(folder, 'team'));
    const { runId } = await startRunAndSettle(runtime, 'List the pages');

    // Assess
    expect(code).toBe(0);
    expect(bodyOf(await runtime.client('admin').getSkill({ path: { skillId: SEO } })).skill.orphaned).toBe(
      true,
    );
    const { text } = await firstUserText(runId);
    expect(text).toContain('name="page-style"');
    expect(text).not.toContain('name="seo-keywords"');
  });

  it('refuses a bad upload with a clear message and stores nothing', async () => {
    // Prepare
    const before = bodyOf(await runtime.client('admin').listSkills()).items;

    // Act
    const response = await runtime.client('admin').ingestSkills({
      body: {
        source: 'upload',
        label: 'team',
        files: [{ path: 'page-style/SKILL.md', content: '# no frontmatter\n' }],
      },
    });

    // Assess
    expect(response.status).toBe(400);
    expect(refusalOf(response).error.message).toBe(
      'page-style/SKILL.md: has no YAML frontmatter (the file must start with a "---" line).',
    );
    expect(bodyOf(await runtime.client('admin').listSkills()).items).toEqual(before);
  });

  it('escapes the output of a skill-influenced run where the inbox page renders it', async () => {
    // Act
    const { view } = await startRunAndSettle(
      runtime,
      `Set the description of page 12 to '<img src=x onerror=alert(1)>'`,
    );
    const page = await runtime.client('approver').listInbox({ headers: { accept: 'text/html' } });

    // Assess
    expect(view.status).toBe('waiting');
    expect(page.status).toBe(200);
    expect(page.text).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(page.text).not.toContain('<img src=x');
  });
});
