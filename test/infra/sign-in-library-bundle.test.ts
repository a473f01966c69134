import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSideModules, createEsbuildOptions } from '../../lib/functions.js';
import { resolveProjectPath } from '../../lib/project-path.js';

const TOOLS_MODULE = resolveProjectPath('lambdas/tools/no-team-tools.ts');

// Runs in the child: one invocation of the bundle's handler per event, the answers as JSON.
const INVOKE = `
const { handler } = await import(process.argv[1]);
const answers = [];
for (const event of JSON.parse(process.argv[2])) answers.push(await handler(event));
process.stdout.write('\\nANSWER ' + JSON.stringify(answers));
`;

function get(path: string, routeKey: string) {
  return {
    version: '2.0',
    rawPath: path,
    routeKey,
    headers: {},
    requestContext: { http: { method: 'GET', path }, requestId: 'bundle-test' },
  };
}

describe('the inbox bundle as it deploys, and the sign-in library beside it', () => {
  let directory: string;

  beforeAll(async () => {
    const cache = resolveProjectPath('node_modules/.cache');
    await mkdir(cache, { recursive: true });
    directory = await realpath(await mkdtemp(join(cache, 'countersign-sign-in-bundle-')));
  });

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('ships oauth4webapi beside the bundle, for the browser, serves those bytes and pins them in the page', async () => {
    // Prepare: the inbox bundle with the deployed settings, and its side modules
    const outfile = join(directory, 'index.mjs');
    const { metafile } = await build({
      ...createEsbuildOptions(resolveProjectPath('lambdas/handlers/api-inbox.ts'), TOOLS_MODULE),
      outfile,
      metafile: true,
    });
    const built = await buildSideModules(directory, await readFile(outfile, 'utf8'), TOOLS_MODULE);
    const library = join(directory, 'node_modules/oauth4webapi/index.mjs');

    // Act: a cold container answers the library and the page
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        INVOKE,
        pathToFileURL(outfile).href,
        JSON.stringify([get('/assets/oauth-client.js', 'GET /assets/oauth-client.js'), get('/', 'GET /')]),
      ],
      {
        env: {
          PATH: process.env.PATH ?? '',
          AWS_REGION: 'us-east-1',
          COUNTERSIGN_TABLE_NAME: 'countersign',
          COUNTERSIGN_SEALING_KEY_ARN: 'arn:aws:kms:us-east-1:111122223333:key/0',
          COUNTERSIGN_OVERFLOW_BUCKET: 'overflow',
          COUNTERSIGN_OVERFLOW_KEY_ARN: 'arn:aws:kms:us-east-1:111122223333:key/1',
          COUNTERSIGN_INBOX_SIGN_IN: JSON.stringify({
            issuer: 'https://cognito-idp.us-east-1.amazonaws.com/us-east-1_abc',
            clientId: 'page-client',
            scopes: ['openid'],
            redirectUri: 'https://api.example.com/',
            connectOrigins: ['https://cognito-idp.us-east-1.amazonaws.com', 'https://login.example.com'],
          }),
          POWERTOOLS_LOG_LEVEL: 'ERROR',
        },
      },
    );
    const [served, page] = JSON.parse(
      stdout
        .split('\n')
        .at(-1)
        ?.replace(/^ANSWER /, '') ?? '[]',
    ) as Array<{
      statusCode: number;
      headers: Record<string, string>;
      body: string;
    }>;
    const shipped = await readFile(library, 'utf8');
    const integrity = `sha384-${createHash('sha384').update(shipped).digest('base64')}`;

    // Assess: beside the bundle, not inside it, and built for the browser (an ES module)
    expect(built).toContain(library);
    expect(Object.keys(metafile.inputs).filter((input) => input.includes('oauth4webapi'))).toEqual([]);
    expect(shipped).toMatch(/export\s*\{/);
    // ...served as those bytes, as a script
    expect(served?.statusCode).toBe(200);
    expect(served?.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(served?.body).toBe(shipped);
    // ...and the page's import map and policy pin exactly them, and let it reach the sign-in origins
    expect(page?.body).toContain(`"integrity":{"/assets/oauth-client.js":"${integrity}"}`);
    expect(page?.headers['content-security-policy']).toContain(`'${integrity}'`);
    expect(page?.headers['content-security-policy']).toContain(
      "connect-src 'self' https://cognito-idp.us-east-1.amazonaws.com https://login.example.com;",
    );
    expect(page?.body).toContain('"clientId":"page-client"');
  }, 120_000);
});
