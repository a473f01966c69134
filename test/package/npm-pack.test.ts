import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHANNEL_HANDLER_NAMES } from '../../lib/handler-names.js';
import { resolveProjectPath } from '../../lib/project-path.js';
import { createChainDependencies, readSampleReceipt, recordSampleChain } from '../support/receipt-chains.js';

/*
 * A team's first five minutes, for real: `npm pack` (which builds the JavaScript, the
 * declarations, the prebuilt handlers and the API reference), the tarball installed into a
 * scratch CDK app in a temp folder, and that app synthesized as a team would write it. The
 * peer dependencies come from this repository's install (symlinked), zod from npm's cache.
 */

const TOOL_NAME = 'close_scratch_ticket';
const APP_SOURCE = `import { App, Stack } from 'aws-cdk-lib';
import { Countersign } from 'countersign';

const [outdir, toolsModule] = process.argv.slice(2);
const app = new App({ outdir });
const stack = new Stack(app, 'ScratchApp');
new Countersign(stack, 'Approvals', toolsModule ? { toolsModule } : {});
app.synth();
`;
const TOOLS_SOURCE = `import { defineTool, type Tool, z } from 'countersign/tools';

export const teamTools: Tool[] = [
  defineTool({
    name: '${TOOL_NAME}',
    description: 'Closes a ticket of the scratch app.',
    effect: 'write',
    input: z.object({ ticketId: z.string() }),
    execute: async ({ ticketId }) => ({ content: \`Closed \${ticketId}.\`, isError: false }),
  }),
];
`;

interface Synthesized {
  template: { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };
  assetDirectories: string[];
}

describe('the npm package', () => {
  let workDirectory: string;
  let appDirectory: string;
  let tarball: string;
  /** What `npm install <tarball>` printed on stderr in the scratch app (its warnings). */
  let installWarnings: string;

  /** Runs the scratch app on the Node running the tests, with nothing of this repository on PATH. */
  function synthesize(name: string, toolsModule?: string): Synthesized {
    const outdir = join(workDirectory, name);
    const path = (process.env.PATH ?? '')
      .split(delimiter)
      .filter((entry) => !entry.includes('node_modules'))
      .join(delimiter);
    execFileSync(process.execPath, ['app.mjs', outdir, ...(toolsModule ? [toolsModule] : [])], {
      cwd: appDirectory,
      // CDK_DOCKER names a command that does not exist: any Docker bundling would fail.
      env: { PATH: path, HOME: process.env.HOME ?? '', CDK_DOCKER: 'countersign-test-no-docker' },
      stdio: 'pipe',
    });
    return {
      template: JSON.parse(readFileSync(join(outdir, 'ScratchApp.template.json'), 'utf8')),
      assetDirectories: readdirSync(outdir)
        .filter((entry) => entry.startsWith('asset.'))
        .map((entry) => join(outdir, entry)),
    };
  }

  /** `npx countersign <args>` in the scratch app, on the Node running the tests, outside this repository. */
  function runPackageCommand(args: string[]): { status: number | null; stdout: string; stderr: string } {
    const path = [
      dirname(process.execPath),
      ...(process.env.PATH ?? '').split(delimiter).filter((entry) => !entry.includes('node_modules')),
    ].join(delimiter);
    const run = spawnSync('npx', ['--no-install', 'countersign', ...args], {
      cwd: appDirectory,
      env: { PATH: path, HOME: process.env.HOME ?? '' },
      encoding: 'utf8',
    });
    return { status: run.status, stdout: run.stdout, stderr: run.stderr };
  }

  function stateMachineDefinition(synthesized: Synthesized): string {
    const [stateMachine] = Object.values(synthesized.template.Resources).filter(
      (resource) => resource.Type === 'AWS::StepFunctions::StateMachine',
    );
    return JSON.stringify(stateMachine?.Properties.DefinitionString);
  }

  beforeAll(() => {
    workDirectory = mkdtempSync(join(tmpdir(), 'countersign-pack-'));
    const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', workDirectory], {
      cwd: resolveProjectPath(''),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    tarball = join(workDirectory, packed.trim().split('\n').at(-1) ?? '');

    appDirectory = join(workDirectory, 'app');
    mkdirSync(appDirectory);
    writeFileSync(
      join(appDirectory, 'package.json'),
      JSON.stringify({ name: 'scratch-app', private: true, type: 'module' }),
    );
    writeFileSync(join(appDirectory, 'app.mjs'), APP_SOURCE);
    writeFileSync(join(appDirectory, 'tools.ts'), TOOLS_SOURCE);
    // Peer dependencies are the app's to install: here, links to this repository's copies.
    // spawnSync keeps stderr on success: the install's warnings are part of what a team sees.
    const installed = spawnSync(
      'npm',
      [
        'install',
        tarball,
        '--prefer-offline',
        '--legacy-peer-deps',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
      ],
      { cwd: appDirectory, encoding: 'utf8' },
    );
    if (installed.status !== 0) throw new Error(`npm install of the tarball failed: ${installed.stderr}`);
    installWarnings = installed.stderr;
    for (const peer of ['aws-cdk-lib', 'constructs']) {
      symlinkSync(
        resolveProjectPath(`node_modules/${peer}`),
        join(appDirectory, 'node_modules', peer),
        'dir',
      );
    }
  }, 600_000);

  afterAll(() => {
    if (workDirectory) rmSync(workDirectory, { recursive: true, force: true });
  });

  it('is under 12 MB, licensed Apache-2.0 with its LICENSE, and says where it comes from', () => {
    // Act
    const size = statSync(tarball).size;
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n');
    const manifest = JSON.parse(
      execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }),
    ) as {
      license?: string;
      repository?: { url?: string };
      keywords?: string[];
      engines?: { node?: string };
    };
    const license = execFileSync('tar', ['-xzOf', tarball, 'package/LICENSE'], { encoding: 'utf8' });

    // Assess
    // A budget against shipping what should not ship (fixtures, node_modules, maps): 30 prebuilt,
    // self-contained handler bundles and the CLI with the MCP gateway are 10.6 MB (was 7.5 MB).
    expect(size).toBeLessThan(12 * 1024 * 1024);
    expect(files).toContain('package/LICENSE');
    expect(license).toContain('Apache License');
    expect(license).toContain('Version 2.0, January 2004');
    expect(manifest.license).toBe('Apache-2.0');
    expect(manifest.repository?.url).toMatch(/^git\+https:\/\/.+\.git$/);
    expect(manifest.keywords).toEqual(expect.arrayContaining(['aws-cdk', 'construct', 'human-in-the-loop']));
    expect(manifest.engines?.node).toBe('>=22');
  });

  it('installs into an app on Node 22 or later without an engine or deprecation warning', () => {
    // Assess: this test runs on the pinned Node 24 (npm scripts), a supported engine
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(22);
    expect(installWarnings).not.toMatch(/EBADENGINE|deprecated/i);
  });

  it('ships the build, the prebuilt handlers and the API reference, and no tests or sources', () => {
    // Act
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n');

    // Assess
    expect(files).toContain('package/dist/lib/index.js');
    expect(files).toContain('package/dist/lib/index.d.ts');
    expect(files).toContain('package/dist/lambdas/tools/authoring.d.ts');
    expect(files).toContain('package/dist/assets/handlers/manifest.json');
    expect(files).toContain('package/dist/assets/handlers/model-turn/index.mjs');
    expect(files).toContain('package/dist/assets/handlers/model-turn/team-tools.mjs');
    expect(files).toContain('package/dist/cli/countersign.mjs');
    expect(files).toContain('package/docs/receipts.md');
    expect(files).toContain('package/CHANGELOG.md');
    expect(files).toContain('package/docs/api/interfaces/countersign.CountersignProps.html');
    expect(files.filter((file) => file.startsWith('package/test/'))).toEqual([]);
    expect(files.filter((file) => /\.ts$/.test(file) && !file.endsWith('.d.ts'))).toEqual([]);
  });

  it('verifies a receipt offline with `npx countersign verify`, and names the check a tampered one fails', async () => {
    // Prepare: a receipt signed as countersign signs it, and the key's public half
    const dependencies = await createChainDependencies();
    await recordSampleChain(dependencies, 'run-packed', 'reject');
    const receipt = await readSampleReceipt(dependencies.chain, 'run-packed');
    const tampered = structuredClone(receipt);
    (tampered.entries[2] as { decidedAt: string }).decidedAt = '2026-03-01T09:00:00.000Z';
    writeFileSync(join(appDirectory, 'receipt.json'), JSON.stringify(receipt));
    writeFileSync(join(appDirectory, 'tampered.json'), JSON.stringify(tampered));
    writeFileSync(join(appDirectory, 'key.pem'), dependencies.pem);

    // Act
    const verified = runPackageCommand([
      'verify',
      'receipt.json',
      '--public-key',
      'key.pem',
      '--run',
      'run-packed',
    ]);
    const refused = runPackageCommand(['verify', 'tampered.json', '--public-key', 'key.pem']);

    // Assess
    expect(verified).toMatchObject({
      status: 0,
      stdout: expect.stringContaining('VERIFIED: the receipt of run run-packed'),
    });
    expect(refused).toMatchObject({
      status: 1,
      stderr: expect.stringContaining('the signature check failed at entry 2'),
    });
  });

  it('exports the agent adapters as subpaths, each loading no SDK but its own (none is installed here)', () => {
    // Prepare: the scratch app installed no SDK, as a team that uses none of them
    const script = `
      const results = {};
      for (const path of ['countersign/agents', 'countersign/agents/openai', 'countersign/agents/ai-sdk', 'countersign/agents/langgraph']) {
        try { results[path] = Object.keys(await import(path)).sort(); } catch (error) { results[path] = error.code + ' ' + error.message; }
      }
      console.log(JSON.stringify(results));`;

    // Act
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: appDirectory,
      encoding: 'utf8',
    });
    const results = JSON.parse(run.stdout) as Record<string, string[] | string>;

    // Assess
    expect(results['countersign/agents']).toEqual(
      expect.arrayContaining(['clientCredentialsTokens', 'createApiClient', 'createCountersignApprovals']),
    );
    expect(results['countersign/agents/openai']).toEqual(['countersignInterruptions']);
    expect(results['countersign/agents/ai-sdk']).toEqual(['countersignToolApprovals']);
    expect(results['countersign/agents/langgraph']).toMatch(
      /^ERR_MODULE_NOT_FOUND .*'@langchain\/langgraph'/,
    );
  });

  it('documents every prop of the construct, with its default, in the API reference', () => {
    // Prepare
    const extracted = join(workDirectory, 'extracted');
    mkdirSync(extracted);
    execFileSync('tar', ['-xzf', tarball, '-C', extracted]);

    // Act
    const page = readFileSync(
      join(extracted, 'package/docs/api/interfaces/countersign.CountersignProps.html'),
      'utf8',
    );

    // Assess
    for (const prop of [
      'approvalTimeout',
      'toolsModule',
      'runbookUrl',
      'dashboard',
      'threatProtection',
      'memorySize',
    ]) {
      expect(page, prop).toContain(`id="${prop.toLowerCase()}"`);
    }
    // Every prop is a member section with its TSDoc, and each says its default (STYLE: @default).
    const members = page.split('class="tsd-panel tsd-member"').length - 1;
    expect(members).toBeGreaterThanOrEqual(18);
    expect(page.split('class="tsd-tag-default"').length - 1).toBe(members);
    expect(page).toContain('How long a run waits for a human decision');
  });

  it('documents our API only: the re-exported zod is a link to its own reference, not a copy', () => {
    // Act
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n');
    const toolsPage = execFileSync(
      'tar',
      ['-xzOf', tarball, 'package/docs/api/modules/countersign_tools.html'],
      {
        encoding: 'utf8',
      },
    );

    // Assess
    const apiPages = files.filter((file) => file.startsWith('package/docs/api/'));
    expect(apiPages.filter((file) => /countersign_tools\.z[./]/.test(file))).toEqual([]);
    expect(apiPages.length).toBeLessThan(200);
    expect(toolsPage).toContain('href="https://zod.dev/api"');
  });

  it('lists every prop of CountersignProps in the README’s props table, and no other', () => {
    // Prepare: the props as TypeDoc documented the declared interface, and the README's table
    const page = execFileSync(
      'tar',
      ['-xzOf', tarball, 'package/docs/api/interfaces/countersign.CountersignProps.html'],
      { encoding: 'utf8' },
    );
    const readme = readFileSync(resolveProjectPath('README.md'), 'utf8');

    // Act
    const declared = [...page.matchAll(/<h3 class="tsd-anchor-link" id="[^"]+">.*?<span>(.*?)<\/span>/g)]
      .map((match) => (match[1] ?? '').replaceAll('<wbr/>', ''))
      .sort();
    const table = readme.slice(readme.indexOf('| prop | default | what |'));
    const rows = table.slice(0, table.indexOf('\n\n'));
    // A nested row (`policyFloor.fourEyes`) documents its top-level prop.
    const listed = [
      ...new Set([...rows.matchAll(/^\| `([A-Za-z]+)[.`]/gm)].map((match) => match[1] ?? '')),
    ].sort();

    // Assess
    expect(declared.length).toBeGreaterThanOrEqual(25);
    expect(declared).toContain('inboxShards');
    expect(listed).toEqual(declared);
  });

  it('synthesizes without a toolsModule from the prebuilt handlers, with no esbuild and no Docker', () => {
    // Prepare
    const requireFromApp = createRequire(join(appDirectory, 'app.mjs'));

    // Act
    const synthesized = synthesize('cdk.out.prebuilt');

    // Assess
    expect(() => requireFromApp.resolve('esbuild')).toThrow();
    expect(stateMachineDefinition(synthesized)).toContain('lambda:invoke.waitForTaskToken');
    const handlerAssets = synthesized.assetDirectories.filter((directory) =>
      existsSync(join(directory, 'index.mjs')),
    );
    expect(handlerAssets.length).toBeGreaterThanOrEqual(14);
    for (const directory of handlerAssets) {
      const teamTools = join(directory, 'team-tools.mjs');
      if (existsSync(teamTools)) expect(readFileSync(teamTools, 'utf8')).not.toContain(TOOL_NAME);
    }
  }, 180_000); // a whole CDK app synthesized in a child process: minutes on a loaded machine

  it('refuses a toolsModule at synth, naming the prop and the construct path, while esbuild is missing', () => {
    // Act
    let stderr = '';
    try {
      synthesize('cdk.out.no-esbuild', 'tools.ts');
    } catch (error) {
      stderr = String((error as { stderr?: Buffer }).stderr);
    }

    // Assess
    expect(stderr).toContain('ScratchApp/Approvals: toolsModule "tools.ts" must be bundled at synth');
    expect(stderr).toContain('npm install --save-dev esbuild');
  });

  it('synthesizes with a one-tool toolsModule, bundling only the team tools with the app’s esbuild', async () => {
    // Prepare: the team installs esbuild (an optional peer dependency), here linked from this repository.
    symlinkSync(
      resolveProjectPath('node_modules/esbuild'),
      join(appDirectory, 'node_modules', 'esbuild'),
      'dir',
    );

    // Act
    const synthesized = synthesize('cdk.out.tools', 'tools.ts');

    // Assess
    expect(stateMachineDefinition(synthesized)).toContain('lambda:invoke.waitForTaskToken');
    const withTeamTools = synthesized.assetDirectories.filter((directory) =>
      existsSync(join(directory, 'team-tools.mjs')),
    );
    const manifest = JSON.parse(
      readFileSync(join(appDirectory, 'node_modules/countersign/dist/assets/handlers/manifest.json'), 'utf8'),
    ) as { handlers: Record<string, { importsTeamTools: boolean }> };
    // The app switches no channel on: the channels' prebuilt handlers are not deployed.
    const readingTools = Object.entries(manifest.handlers).filter(
      ([name, handler]) =>
        handler.importsTeamTools && !(CHANNEL_HANDLER_NAMES as readonly string[]).includes(name),
    );
    expect(readingTools.length).toBeGreaterThanOrEqual(3);
    expect(readingTools.length).toBeLessThan(Object.keys(manifest.handlers).length);
    expect(withTeamTools.length).toBe(readingTools.length);
    for (const directory of withTeamTools) {
      const loaded = (await import(pathToFileURL(join(directory, 'team-tools.mjs')).href)) as {
        teamTools: Array<{ name: string; effect: string }>;
      };
      expect(loaded.teamTools.map((tool) => [tool.name, tool.effect])).toEqual([[TOOL_NAME, 'write']]);
    }
  }, 180_000); // a whole CDK app synthesized in a child process: minutes on a loaded machine
});
