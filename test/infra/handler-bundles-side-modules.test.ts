import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { buildSideModules } from '../../lib/functions.js';
import { MCP_TEST_TOKEN, startMcpTestServer } from '../support/mcp-test-server.js';
import { bundle, HANDLERS_DIRECTORY, TOOLS_MODULE, useBundleDirectory } from './handler-bundles-support.js';

describe('the Lambda handler bundles', () => {
  const bundles = useBundleDirectory();

  it("ship model-turn's tokenizer beside its bundle, where the lazy import resolves, and not inside it", async () => {
    // Prepare
    const modelTurn = await bundle(
      join(HANDLERS_DIRECTORY, 'model-turn.ts'),
      bundles.directory,
      'model-turn',
    );
    const bundleText = await readFile(join(bundles.directory, 'model-turn.mjs'), 'utf8');

    // Act
    const built = await buildSideModules(bundles.directory, bundleText, TOOLS_MODULE);
    const probe = join(bundles.directory, 'probe-tokenizer.mjs');
    await writeFile(
      probe,
      "const { countTokens } = await import('gpt-tokenizer/encoding/cl100k_base');\n" +
        "process.stdout.write(JSON.stringify({ where: import.meta.resolve('gpt-tokenizer/encoding/cl100k_base'), tokens: countTokens('hello world') }));\n",
    );
    const { stdout } = await promisify(execFile)(process.execPath, [probe]);

    // Assess
    const inputs = Object.keys(modelTurn.inputs).filter((input) => input.includes('gpt-tokenizer/'));
    const bundled = Object.values(modelTurn.outputs).flatMap((output) =>
      Object.keys(output.inputs).filter((input) => input.includes('gpt-tokenizer/')),
    );
    expect(inputs).toEqual([]);
    expect(bundled).toEqual([]);
    expect(built).toEqual([
      join(bundles.directory, 'node_modules/gpt-tokenizer/encoding/cl100k_base.mjs'),
      join(bundles.directory, 'node_modules/@aws-crypto/client-node/index.mjs'),
      join(bundles.directory, 'node_modules/@modelcontextprotocol/sdk/client/index.mjs'),
      join(bundles.directory, 'node_modules/@modelcontextprotocol/sdk/client/streamableHttp.mjs'),
      join(bundles.directory, 'node_modules/@aws-sdk/client-s3/index.mjs'),
    ]);
    expect(JSON.parse(stdout)).toEqual({
      where: pathToFileURL(join(bundles.directory, 'node_modules/gpt-tokenizer/encoding/cl100k_base.mjs'))
        .href,
      tokens: 2,
    });
    expect(
      await buildSideModules(bundles.directory, 'export const handler = () => 1;', TOOLS_MODULE),
    ).toEqual([]);
  });

  it('ship the MCP SDK beside execute-tools, not inside it, and talk to an MCP server from there', async () => {
    // Prepare
    const executeTools = await bundle(
      join(HANDLERS_DIRECTORY, 'execute-tools.ts'),
      bundles.directory,
      'execute-tools',
    );
    const bundleText = await readFile(join(bundles.directory, 'execute-tools.mjs'), 'utf8');
    const server = await startMcpTestServer();

    try {
      // Act
      const built = await buildSideModules(bundles.directory, bundleText, TOOLS_MODULE);
      const probe = join(bundles.directory, 'probe-mcp.mjs');
      await writeFile(
        probe,
        "const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');\n" +
          "const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');\n" +
          "const client = new Client({ name: 'probe', version: '1' });\n" +
          `await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2]), { requestInit: { headers: { authorization: 'Bearer ${MCP_TEST_TOKEN}' } } }));\n` +
          "const result = await client.callTool({ name: 'lookup', arguments: { ticket: 'T-7' } });\n" +
          'await client.close();\n' +
          "process.stdout.write(JSON.stringify({ where: import.meta.resolve('@modelcontextprotocol/sdk/client/index.js'), result: result.content }));\n",
      );
      const { stdout } = await promisify(execFile)(process.execPath, [probe, server.url]);

      // Assess
      const bundled = Object.values(executeTools.outputs).flatMap((output) =>
        Object.keys(output.inputs).filter((input) => input.includes('@modelcontextprotocol/')),
      );
      expect(bundled).toEqual([]);
      expect(built).toContain(
        join(bundles.directory, 'node_modules/@modelcontextprotocol/sdk/client/index.mjs'),
      );
      expect(JSON.parse(stdout)).toEqual({
        where: pathToFileURL(
          join(bundles.directory, 'node_modules/@modelcontextprotocol/sdk/client/index.mjs'),
        ).href,
        result: [{ type: 'text', text: 'Ticket T-7: open, assigned to Ana.' }],
      });
    } finally {
      await server.stop();
    }
  });

  it('ship the S3 client beside every bundle, load it only when state overflows, and store and read an object with it', async () => {
    // Prepare: prepare's bundle in a folder whose S3 side module throws when evaluated.
    const isolated = await mkdtemp(join(bundles.directory, 's3-side-module-'));
    const prepare = await bundle(join(HANDLERS_DIRECTORY, 'prepare.ts'), isolated, 'prepare');
    const bundleText = await readFile(join(isolated, 'prepare.mjs'), 'utf8');
    const built = await buildSideModules(isolated, bundleText, TOOLS_MODULE);
    const sideModule = join(isolated, 'node_modules/@aws-sdk/client-s3/index.mjs');
    const realSideModule = await readFile(sideModule, 'utf8');
    await writeFile(sideModule, "throw new Error('the S3 client was loaded at init');\n");
    const objects = new Map<string, Buffer>();
    const s3 = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const key = new URL(request.url ?? '/', 'http://s3').pathname;
        if (request.method === 'PUT') objects.set(key, Buffer.concat(chunks));
        const body = request.method === 'GET' ? objects.get(key) : undefined;
        response.writeHead(request.method === 'GET' && !body ? 404 : 200, { etag: '"e"' });
        response.end(body);
      });
    });
    await new Promise<void>((resolve) => s3.listen(0, '127.0.0.1', resolve));

    try {
      // Act: a cold start, then the side module as the overflow store uses it.
      const { stdout: loaded } = await promisify(execFile)(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          'const { handler } = await import(process.argv[1]); process.stdout.write(typeof handler);',
          pathToFileURL(join(isolated, 'prepare.mjs')).href,
        ],
        { env: { PATH: process.env.PATH ?? '', AWS_REGION: 'us-east-1' } },
      );
      await writeFile(sideModule, realSideModule);
      const probe = join(isolated, 'probe-s3.mjs');
      await writeFile(
        probe,
        "const { S3Client, PutObjectCommand, GetObjectCommand } = await import('@aws-sdk/client-s3');\n" +
          "const client = new S3Client({ region: 'us-east-1', endpoint: process.argv[2], forcePathStyle: true, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });\n" +
          "await client.send(new PutObjectCommand({ Bucket: 'overflow', Key: 'runs/r1/state', Body: new Uint8Array([1, 2, 3]) }));\n" +
          "const read = await client.send(new GetObjectCommand({ Bucket: 'overflow', Key: 'runs/r1/state' }));\n" +
          "process.stdout.write(JSON.stringify({ where: import.meta.resolve('@aws-sdk/client-s3'), bytes: [...(await read.Body.transformToByteArray())] }));\n",
      );
      const address = s3.address() as AddressInfo;
      const { stdout } = await promisify(execFile)(process.execPath, [
        probe,
        `http://127.0.0.1:${address.port}`,
      ]);

      // Assess
      const bundled = Object.values(prepare.outputs).flatMap((output) =>
        Object.keys(output.inputs).filter((input) => input.includes('@aws-sdk/client-s3/')),
      );
      expect(bundled).toEqual([]);
      expect(built).toEqual([sideModule]);
      expect(loaded).toBe('function');
      expect(JSON.parse(stdout)).toEqual({ where: pathToFileURL(sideModule).href, bytes: [1, 2, 3] });
    } finally {
      await new Promise((resolve) => s3.close(resolve));
    }
  });
});
