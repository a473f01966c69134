import { generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { refusalOf } from '../support/api-answers.js';
import { apiClientWithToken, useTestRuntime } from '../support/local-runtime.js';
import { signTokenWithRuntimeKey, statusOf, waitingRun } from './approvers-support.js';

describe('approver decisions and the inbox over HTTP: every status code', () => {
  const runtime = useTestRuntime();

  describe('401: tokens the local issuer did not sign as valid, over the real HTTP server', () => {
    async function inboxWith(token: string | undefined) {
      return apiClientWithToken(runtime.url, token).listInbox();
    }

    it('accepts a token signed with the runtime key for the right audience (the control)', async () => {
      // Prepare
      const token = await signTokenWithRuntimeKey(runtime, { sub: 'approver', groups: ['agent_approve'] });

      // Act
      const response = await inboxWith(token);

      // Assess
      expect(response.status).toBe(200);
    });

    it.each([
      ['no token', async () => undefined],
      [
        'a forged token (payload changed, signature kept)',
        async (valid: string) => {
          const [header, , signature] = valid.split('.');
          const payload = Buffer.from(
            JSON.stringify({ sub: 'admin', aud: 'countersign', exp: 9_999_999_999 }),
          ).toString('base64url');
          return `${header}.${payload}.${signature}`;
        },
      ],
      [
        'a token signed by another key',
        async () => {
          const { privateKey } = await generateKeyPair('ES256');
          return new SignJWT({ groups: ['admin'] })
            .setProtectedHeader({ alg: 'ES256' })
            .setSubject('admin')
            .setIssuer('http://127.0.0.1/countersign-local')
            .setAudience('countersign')
            .setExpirationTime('1h')
            .sign(privateKey);
        },
      ],
      [
        'an expired token',
        async () => {
          const now = Math.floor(Date.now() / 1000);
          return signTokenWithRuntimeKey(runtime, {
            sub: 'approver',
            issuedAt: now - 7200,
            expiresAt: now - 60,
          });
        },
      ],
      [
        'a wrong-audience token',
        async () => signTokenWithRuntimeKey(runtime, { sub: 'approver', aud: 'another-app' }),
      ],
      [
        'an alg: none token',
        async () => {
          const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
          const payload = Buffer.from(
            JSON.stringify({
              sub: 'admin',
              iss: 'http://127.0.0.1/countersign-local',
              aud: 'countersign',
              exp: Math.floor(Date.now() / 1000) + 3600,
            }),
          ).toString('base64url');
          return `${header}.${payload}.`;
        },
      ],
    ])('answers 401 for %s', async (_name, makeToken) => {
      // Prepare
      const token = await makeToken(runtime.tokens.approver ?? '');
      const { runId, digest } = await waitingRun(runtime, "Set the keywords of page 12 to 'auth'");

      // Act
      const inbox = await inboxWith(token);
      const decision = await apiClientWithToken(runtime.url, token).decideRun({
        path: { id: runId },
        body: { digest, decision: 'approve' },
      });

      // Assess
      expect(inbox.status).toBe(401);
      expect(refusalOf(inbox).error.code).toBe('unauthenticated');
      expect(decision.status).toBe(401);
      expect(await statusOf(runtime, runId)).toBe('waiting');
    });
  });
});
