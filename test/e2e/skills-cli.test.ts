import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSkillsCli } from '../../bin/skills.js';
import { MAX_BODY_BYTES } from '../../lambdas/handlers/http/http-api.js';
import { bodyOf } from '../support/api-answers.js';
import { useTestRuntime } from '../support/local-runtime.js';
import { createValidatingFetch } from '../support/openapi-response-validator.js';

/** A SKILL.md of about `bytes` bytes. */
function skillFile(name: string, bytes: number): string {
  const line = `- ${name}: keep page titles short, concrete and in sentence case.\n`;
  const body = line.repeat(Math.ceil(bytes / line.length));
  return `---\nname: ${name}\ndescription: Guidance ${name}. Use when writing page metadata.\n---\n# ${name}\n\n${body}`;
}

async function writeSkills(root: string, skills: Record<string, number>): Promise<void> {
  for (const [name, bytes] of Object.entries(skills)) {
    await mkdir(join(root, name), { recursive: true });
    await writeFile(join(root, name, 'SKILL.md'), skillFile(name, bytes));
  }
}

describe('npm run skills (bin/skills.ts): newcomer paths', () => {
  const runtime = useTestRuntime();
  let workspace = '';
  const output = { out: [] as string[], error: [] as string[] };
  const cli = (args: string[], environment: Record<string, string | undefined> = {}) => {
    output.out = [];
    output.error = [];
    return runSkillsCli(args, {
      environment: { COUNTERSIGN_URL: runtime.url, COUNTERSIGN_TOKEN: runtime.tokens.admin, ...environment },
      // The CLI's answers are checked against the committed OpenAPI document too.
      fetch: createValidatingFetch(),
      print: (line) => output.out.push(line),
      printError: (line) => output.error.push(line),
    });
  };

  beforeAll(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'countersign-skills-cli-'));
  });
  afterAll(async () => {
    await rm(workspace, { recursive: true, force: true });
  });

  it('prints help on stdout and exits 0 for --help, even without a token', async () => {
    // Act
    const code = await cli(['--help'], { COUNTERSIGN_TOKEN: undefined });

    // Assess
    expect(code).toBe(0);
    expect(output.out.join('\n')).toMatch(/^Usage: npm run skills/);
    expect(output.error).toEqual([]);
  });

  it('still answers a mistake with usage on stderr and exit 2', async () => {
    const code = await cli(['frobnicate']);
    expect(code).toBe(2);
    expect(output.error.join('\n')).toContain('Unknown command "frobnicate"');
    expect(output.out).toEqual([]);
  });

  it.each([
    [['list', '--folderr', 'skills'], "'--folderr'"],
    [['enable', 'skill-1', '--checksum'], "'--checksum <value>' argument missing"],
    [['list', '--help=yes'], "'--help'"],
  ])('refuses %j with usage on stderr and exit 2, naming the option', async (args, named) => {
    // Act: node:util parseArgs, strict: a misspelt option is not silently ignored
    const code = await cli(args);

    // Assess
    expect(code).toBe(2);
    expect(output.error[0]).toContain(named);
    expect(output.error.join('\n')).toContain('Usage: npm run skills');
    expect(output.out).toEqual([]);
  });

  it('names the URL it could not reach', async () => {
    // Prepare: a port that was free a moment ago, so nothing listens on it
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });

    // Act
    const code = await cli(['list', '--url', `http://127.0.0.1:${port}`]);

    // Assess
    expect(code).toBe(1);
    expect(output.error.join('\n')).toContain(`Could not reach http://127.0.0.1:${port}/admin/skills`);
  });

  it('ingests a folder of three 25 KB skills, larger than one request, one skill per request', async () => {
    // Prepare
    const root = join(workspace, 'large');
    await writeSkills(root, { alpha: 25_000, beta: 25_000, gamma: 25_000 });

    // Act
    const code = await cli(['ingest', '--folder', root, '--label', 'large']);
    const list = await runtime.client('admin').listSkills();

    // Assess
    expect(code).toBe(0);
    expect(JSON.parse(output.out.join('\n')).created).toHaveLength(3);
    const large = bodyOf(list).items.filter((item: { source: string }) => item.source === 'upload:large');
    expect(large.map((item: { name: string; orphaned: boolean }) => [item.name, item.orphaned])).toEqual([
      ['alpha', false],
      ['beta', false],
      ['gamma', false],
    ]);
  });

  it('names the one skill too large for a request and ingests nothing', async () => {
    // Prepare
    const root = join(workspace, 'too-large');
    await writeSkills(root, { small: 2_000, huge: MAX_BODY_BYTES + 1_000 });

    // Act
    const code = await cli(['ingest', '--folder', root, '--label', 'too-large']);
    const list = await runtime.client('admin').listSkills();

    // Assess
    expect(code).toBe(1);
    expect(output.error.join('\n')).toContain('The skill "huge" is too large to upload');
    expect(output.error.join('\n')).not.toContain('"small"');
    expect(
      bodyOf(list).items.filter((item: { source: string }) => item.source === 'upload:too-large'),
    ).toEqual([]);
  });

  it('lists every skill across the pages of the admin list', async () => {
    // Prepare: more skills than one page holds
    const files = Array.from({ length: 120 }, (_, index) => {
      const name = `many-${String(index).padStart(3, '0')}`;
      return {
        path: `${name}/SKILL.md`,
        content: `---\nname: ${name}\ndescription: Skill ${name}.\n---\n# ${name}\n`,
      };
    });
    const ingest = await runtime
      .client('admin')
      .ingestSkills({ body: { source: 'upload', label: 'many', files } });

    // Act
    const code = await cli(['list']);

    // Assess
    expect(ingest.status).toBe(200);
    expect(code).toBe(0);
    const listed = JSON.parse(output.out.join('\n')).items as Array<{ source: string }>;
    expect(listed.filter((item) => item.source === 'upload:many')).toHaveLength(120);
  });
});
