import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decodeJwt, importJWK, SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import {
  LOCAL_JWT_AUDIENCE,
  LOCAL_JWT_ISSUER,
  LOCAL_JWT_KEY_FILE_NAME,
  LocalJwtIssuer,
} from '../../lambdas/local/local-jwt-issuer.js';

const temporaryDirectories: string[] = [];

async function createKeysDirectory(): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), 'countersign-keys-'));
  temporaryDirectories.push(directory);
  return directory;
}

/** Signs with the issuer's own stored private key, so only the claims under test are wrong. */
async function signWithStoredKey(keysDirectory: string, build: (jwt: SignJWT) => SignJWT): Promise<string> {
  const jwk = JSON.parse(await readFile(path.join(keysDirectory, LOCAL_JWT_KEY_FILE_NAME), 'utf8'));
  const key = await importJWK(jwk, 'ES256');
  return build(new SignJWT({ name: 'Ana' }).setProtectedHeader({ alg: 'ES256' }).setSubject('ana')).sign(key);
}

afterEach(async () => {
  await Promise.all(temporaryDirectories.splice(0).map((directory) => rm(directory, { recursive: true })));
});

describe('LocalJwtIssuer', () => {
  it('stores its key owner-only and reuses it across instances', async () => {
    // Prepare
    const keysDirectory = await createKeysDirectory();
    const first = await LocalJwtIssuer.open({ keysDirectory });
    const token = await first.issue(
      { sub: 'ana', name: 'Ana', groups: ['approvers'] },
      { expiresInSeconds: 600 },
    );

    // Act
    const second = await LocalJwtIssuer.open({ keysDirectory });
    const outcome = await second.verify(token);
    const keyFile = await stat(path.join(keysDirectory, LOCAL_JWT_KEY_FILE_NAME));

    // Assess
    expect(keyFile.mode & 0o777).toBe(0o600);
    expect(outcome.kind).toBe('verified');
    expect(second.jwks()).toEqual(first.jwks());
  });

  it('issues the claims the API expects, groups under both names', async () => {
    // Prepare
    const issuer = await LocalJwtIssuer.open({ keysDirectory: await createKeysDirectory() });

    // Act
    const token = await issuer.issue(
      { sub: 'ben', name: 'Ben', groups: ['agent_run', 'agent_approve'] },
      { expiresInSeconds: 900 },
    );
    const claims = decodeJwt(token);

    // Assess
    expect(claims).toMatchObject({
      sub: 'ben',
      name: 'Ben',
      groups: ['agent_run', 'agent_approve'],
      'cognito:groups': ['agent_run', 'agent_approve'],
      iss: LOCAL_JWT_ISSUER,
      aud: LOCAL_JWT_AUDIENCE,
    });
    expect(Number(claims.exp) - Number(claims.iat)).toBe(900);
    expect(issuer.jwks().keys[0]).not.toHaveProperty('d');
  });

  it('refuses a token signed by another instance key', async () => {
    // Prepare
    const mine = await LocalJwtIssuer.open({ keysDirectory: await createKeysDirectory() });
    const theirs = await LocalJwtIssuer.open({ keysDirectory: await createKeysDirectory() });
    const token = await theirs.issue(
      { sub: 'eve', name: 'Eve', groups: ['admin'] },
      { expiresInSeconds: 600 },
    );

    // Act
    const outcome = await mine.verify(token);

    // Assess
    expect(outcome).toEqual({ kind: 'refused', reason: 'bad-signature' });
  });

  it('tells apart the reasons it refuses a token for', async () => {
    // Prepare
    const keysDirectory = await createKeysDirectory();
    const issuer = await LocalJwtIssuer.open({ keysDirectory });
    const anHourAgo = new Date(Date.now() - 3_600_000);
    const pastIssuer = await LocalJwtIssuer.open({ keysDirectory, clock: { now: () => anHourAgo } });
    const valid = await issuer.issue({ sub: 'ana', name: 'Ana', groups: [] }, { expiresInSeconds: 600 });
    const [header, payload] = valid.split('.');
    const noneHeader = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const tamperedPayload = Buffer.from(
      JSON.stringify({ ...decodeJwt(valid), groups: ['admin'], 'cognito:groups': ['admin'] }),
    ).toString('base64url');
    const tokens = {
      algNone: `${noneHeader}.${payload}.`,
      forged: `${header}.${tamperedPayload}.${valid.split('.')[2]}`,
      expired: await pastIssuer.issue({ sub: 'ana', name: 'Ana', groups: [] }, { expiresInSeconds: 60 }),
      wrongAudience: await signWithStoredKey(keysDirectory, (jwt) =>
        jwt.setIssuer(LOCAL_JWT_ISSUER).setAudience('someone-else').setExpirationTime('10m'),
      ),
      wrongIssuer: await signWithStoredKey(keysDirectory, (jwt) =>
        jwt.setIssuer('https://evil.example').setAudience(LOCAL_JWT_AUDIENCE).setExpirationTime('10m'),
      ),
      noExpiry: await signWithStoredKey(keysDirectory, (jwt) =>
        jwt.setIssuer(LOCAL_JWT_ISSUER).setAudience(LOCAL_JWT_AUDIENCE),
      ),
      garbage: 'not-a-jwt',
    };

    // Act
    const reasons: Record<string, unknown> = {};
    for (const [name, token] of Object.entries(tokens)) {
      const outcome = await issuer.verify(token);
      reasons[name] = outcome.kind === 'refused' ? outcome.reason : 'verified';
    }

    // Assess
    expect(reasons).toEqual({
      algNone: 'algorithm-not-allowed',
      forged: 'bad-signature',
      expired: 'expired',
      wrongAudience: 'wrong-audience',
      wrongIssuer: 'wrong-issuer',
      noExpiry: 'invalid-claims',
      garbage: 'malformed',
    });
  });
});
