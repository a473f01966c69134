import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOidcTokenVerifier } from '../../../lambdas/handlers/http/verify-oidc-token.js';

const AUDIENCE = 'countersign-inbox-client';

describe('the function URL token verifier and expiry', () => {
  let server: Server;
  let issuer = '';
  let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'key-1', alg: 'RS256', use: 'sig' };
    server = createServer((request, response) => {
      response.setHeader('content-type', 'application/json');
      if (request.url === '/pool/.well-known/openid-configuration') {
        response.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks.json` }));
      } else if (request.url === '/pool/jwks.json') {
        response.end(JSON.stringify({ keys: [jwk] }));
      } else {
        response.statusCode = 404;
        response.end('{}');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pool`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function unsigned(): SignJWT {
    return new SignJWT({ sub: 'editor' })
      .setProtectedHeader({ alg: 'RS256', kid: 'key-1' })
      .setIssuer(issuer)
      .setAudience(AUDIENCE)
      .setIssuedAt();
  }

  it('accepts a token with an expiry in the future (the control)', async () => {
    // Prepare
    const verify = createOidcTokenVerifier({ issuerUrl: issuer, audience: [AUDIENCE] });
    const token = await unsigned().setExpirationTime('10m').sign(privateKey);

    // Act
    const claims = await verify(token);

    // Assess
    expect(claims?.sub).toBe('editor');
  });

  it('refuses a token without an expiry, which would otherwise never expire', async () => {
    // Prepare
    const verify = createOidcTokenVerifier({ issuerUrl: issuer, audience: [AUDIENCE] });
    const token = await unsigned().sign(privateKey);

    // Act
    const claims = await verify(token);

    // Assess
    expect(claims).toBeUndefined();
  });
});
