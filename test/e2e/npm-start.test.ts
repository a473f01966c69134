import { afterAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../lambdas/contract/api-client.js';
import { type NpmStartProcess, startNpmStart } from '../support/npm-start-process.js';
import { createValidatingFetch } from '../support/openapi-response-validator.js';

describe('npm start (bin/local.ts)', () => {
  let started: NpmStartProcess | undefined;

  afterAll(async () => {
    await started?.stop();
  });

  it('serves on 127.0.0.1, prints the URL and a working token per demo user, and stops cleanly', async () => {
    // Act: start it and wait for the banner
    started = await startNpmStart();
    const { url } = started;
    const output = started.output();
    const token = (name: string) => started?.token(name.replace(/^COUNTERSIGN_|_TOKEN$/g, ''));

    // Assess
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const name of ['EDITOR', 'APPROVER', 'OPS_APPROVER', 'ADMIN'])
      expect(token(`COUNTERSIGN_${name}_TOKEN`)).toMatch(/^eyJ/);
    // A bare EDITOR would replace the shell's $EDITOR (git would run the token as its editor).
    expect(output).not.toMatch(/export (EDITOR|APPROVER|OPS_APPROVER|ADMIN)=/);
    const clientOf = (name: string) =>
      createApiClient({ baseUrl: url ?? '', token: token(name) ?? '', fetch: createValidatingFetch() });
    const inbox = await clientOf('COUNTERSIGN_APPROVER_TOKEN').listInbox();
    expect(inbox.status).toBe(200);
    const refused = await clientOf('COUNTERSIGN_EDITOR_TOKEN').listInbox();
    expect(refused.status).toBe(403);
    const { child } = started;
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
