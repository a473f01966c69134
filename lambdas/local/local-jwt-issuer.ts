import { randomUUID } from 'node:crypto';
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  type JWTPayload,
  errors as joseErrors,
  jwtVerify,
  SignJWT,
} from 'jose';
import { CountersignError } from '../core/errors.js';
import { type Clock, systemClock } from '../core/ports.js';

/**
 * The `iss` of local tokens when no issuer URL is given. `npm start` gives the local sign-in
 * provider's URL instead (lambdas/local/local-oidc-provider.ts), where its discovery document is.
 */
export const LOCAL_JWT_ISSUER = 'http://127.0.0.1/countersign-local';
/** The `aud` of every local token. */
export const LOCAL_JWT_AUDIENCE = 'countersign';
/** The one algorithm local tokens are signed and verified with. */
export const LOCAL_JWT_ALGORITHM = 'ES256';
/** File (inside the keys directory) holding the private signing key as a JWK. */
export const LOCAL_JWT_KEY_FILE_NAME = 'jwt-signing-key.json';

/** A WebCrypto key as jose imports it (the DOM `CryptoKey` type is not in this project's libs). */
type SigningKey = Exclude<Awaited<ReturnType<typeof importJWK>>, Uint8Array>;

/** Why a bearer token was refused. Internal: clients only ever see one generic message. */
export type TokenRefusalReason =
  | 'malformed'
  | 'algorithm-not-allowed'
  | 'bad-signature'
  | 'wrong-issuer'
  | 'wrong-audience'
  | 'expired'
  | 'not-yet-valid'
  | 'invalid-claims';

export type TokenVerification =
  | { kind: 'verified'; claims: JWTPayload & { sub: string } }
  | { kind: 'refused'; reason: TokenRefusalReason };

/** What the local HTTP server needs to authenticate a bearer token, like an API Gateway JWT authorizer. */
export interface BearerTokenVerifier {
  verify(token: string): Promise<TokenVerification>;
}

/** Who a token is issued to. `groups` lands in both `groups` and `cognito:groups`, as Cognito names it. */
export interface LocalTokenSubject {
  sub: string;
  name: string;
  groups: string[];
}

export interface LocalJwtIssuerOptions {
  /** Directory the signing key is stored in (created by `LocalDataDirectory`). */
  readonly keysDirectory: string;
  /**
   * Time source for `iat`/`exp` and for verification.
   * @default - the system clock
   */
  readonly clock?: Clock;
  /**
   * The `iss` of the tokens it issues and accepts: an OpenID Connect issuer serves its discovery
   * document below this URL.
   * @default LOCAL_JWT_ISSUER
   */
  readonly issuerUrl?: string;
}

/** What an ID token adds for the app that signed the user in (OpenID Connect Core, section 2). */
export interface IdTokenAudience {
  /** The client the user signed in to: the token's `aud`. */
  readonly clientId: string;
  /** The `nonce` of the authorization request, echoed so the client can bind the token to it. */
  readonly nonce?: string;
}

/**
 * The identity provider of local embedded mode: signs ES256 JWTs for demo users and verifies
 * them the way the deployed HTTP API's JWT authorizer verifies Cognito tokens (issuer,
 * audience, signature, expiry, one allowed algorithm). The key pair is created on first
 * start and reused afterwards, so tokens survive a restart.
 *
 * @example
 * const issuer = await LocalJwtIssuer.open({ keysDirectory: dataDirectory.keysDirectory });
 * const token = await issuer.issue({ sub: 'ana', name: 'Ana', groups: ['approvers'] }, { expiresInSeconds: 3600 });
 * const outcome = await issuer.verify(token); // { kind: 'verified', claims: { sub: 'ana', ... } }
 */
export class LocalJwtIssuer implements BearerTokenVerifier {
  private readonly privateKey: SigningKey;
  private readonly publicKey: SigningKey;
  private readonly publicJwk: JWK;
  private readonly keyId: string;
  private readonly clock: Clock;
  /** The `iss` of every token it issues and the only one it accepts. */
  public readonly issuerUrl: string;

  private constructor(keys: {
    privateKey: SigningKey;
    publicKey: SigningKey;
    publicJwk: JWK;
    keyId: string;
    clock: Clock;
    issuerUrl: string;
  }) {
    this.privateKey = keys.privateKey;
    this.publicKey = keys.publicKey;
    this.publicJwk = keys.publicJwk;
    this.keyId = keys.keyId;
    this.clock = keys.clock;
    this.issuerUrl = keys.issuerUrl;
  }

  /** Loads the signing key from `keysDirectory`, creating it (mode 0600) on first start. */
  public static async open(options: LocalJwtIssuerOptions): Promise<LocalJwtIssuer> {
    const keyFile = path.join(options.keysDirectory, LOCAL_JWT_KEY_FILE_NAME);
    const privateJwk = (await readStoredKey(keyFile)) ?? (await createStoredKey(keyFile));
    const { d: _privateScalar, ...publicParts } = privateJwk;
    const keyId = await calculateJwkThumbprint(publicParts);
    const privateKey = await importJWK(privateJwk, LOCAL_JWT_ALGORITHM);
    const publicKey = await importJWK(publicParts, LOCAL_JWT_ALGORITHM);
    if (privateKey instanceof Uint8Array || publicKey instanceof Uint8Array) {
      throw new CountersignError('configuration', `The key in ${keyFile} is not an EC P-256 key.`);
    }
    return new LocalJwtIssuer({
      privateKey,
      publicKey,
      publicJwk: { ...publicParts, kid: keyId, alg: LOCAL_JWT_ALGORITHM, use: 'sig' },
      keyId,
      clock: options.clock ?? systemClock,
      issuerUrl: options.issuerUrl ?? LOCAL_JWT_ISSUER,
    });
  }

  /**
   * Signs the bearer token the API accepts (an access token: `aud` is the API's audience) for a
   * demo user; `clientId` names the app it was issued to, as Cognito's `client_id` does.
   */
  public async issue(
    subject: LocalTokenSubject,
    options: { expiresInSeconds: number; clientId?: string },
  ): Promise<string> {
    return this.sign(
      subject,
      options.clientId === undefined ? {} : { client_id: options.clientId, token_use: 'access' },
      LOCAL_JWT_AUDIENCE,
      options.expiresInSeconds,
    );
  }

  /** Signs an OpenID Connect ID token: who signed in, for the app (`aud`) they signed in to. */
  public async issueIdToken(
    subject: LocalTokenSubject,
    options: IdTokenAudience & { expiresInSeconds: number },
  ): Promise<string> {
    const claims = { token_use: 'id', ...(options.nonce === undefined ? {} : { nonce: options.nonce }) };
    return this.sign(subject, claims, options.clientId, options.expiresInSeconds);
  }

  private async sign(
    subject: LocalTokenSubject,
    claims: Record<string, string>,
    audience: string,
    expiresInSeconds: number,
  ): Promise<string> {
    if (!Number.isInteger(expiresInSeconds) || expiresInSeconds <= 0) {
      throw new CountersignError(
        'configuration',
        `expiresInSeconds must be a positive integer, got ${String(expiresInSeconds)}.`,
      );
    }
    const issuedAt = Math.floor(this.clock.now().getTime() / 1000);
    return new SignJWT({
      name: subject.name,
      groups: subject.groups,
      'cognito:groups': subject.groups,
      ...claims,
    })
      .setProtectedHeader({ alg: LOCAL_JWT_ALGORITHM, kid: this.keyId, typ: 'JWT' })
      .setSubject(subject.sub)
      .setIssuer(this.issuerUrl)
      .setAudience(audience)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + expiresInSeconds)
      .setJti(randomUUID())
      .sign(this.privateKey);
  }

  /**
   * Signs a machine client's access token, as Cognito's client-credentials grant issues one:
   * `sub` and `client_id` are the client, `scope` what it was granted, no `aud` (so no route that
   * takes a person's token accepts it). lambdas/local/local-machine-clients.ts verifies it.
   */
  public async issueMachineToken(client: {
    clientId: string;
    scope: string;
    expiresInSeconds: number;
  }): Promise<string> {
    const issuedAt = Math.floor(this.clock.now().getTime() / 1000);
    return new SignJWT({ client_id: client.clientId, scope: client.scope, token_use: 'access' })
      .setProtectedHeader({ alg: LOCAL_JWT_ALGORITHM, kid: this.keyId, typ: 'JWT' })
      .setSubject(client.clientId)
      .setIssuer(LOCAL_JWT_ISSUER)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + client.expiresInSeconds)
      .setJti(randomUUID())
      .sign(this.privateKey);
  }

  /** Verifies a compact JWT; never throws for a bad token, it answers why it refused. */
  public async verify(token: string): Promise<TokenVerification> {
    try {
      const { payload } = await jwtVerify(token, this.publicKey, {
        issuer: this.issuerUrl,
        audience: LOCAL_JWT_AUDIENCE,
        algorithms: [LOCAL_JWT_ALGORITHM],
        requiredClaims: ['sub', 'exp'],
        currentDate: this.clock.now(),
      });
      if (typeof payload.sub !== 'string' || payload.sub.length === 0) {
        return { kind: 'refused', reason: 'invalid-claims' };
      }
      return { kind: 'verified', claims: { ...payload, sub: payload.sub } };
    } catch (error) {
      return { kind: 'refused', reason: classifyVerificationError(error) };
    }
  }

  /** The public key set, for documentation and for clients that want to verify tokens themselves. */
  public jwks(): { keys: JWK[] } {
    return { keys: [{ ...this.publicJwk }] };
  }
}

function classifyVerificationError(error: unknown): TokenRefusalReason {
  if (error instanceof joseErrors.JWTExpired) return 'expired';
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'algorithm-not-allowed';
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'bad-signature';
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return 'wrong-issuer';
    if (error.claim === 'aud') return 'wrong-audience';
    if (error.claim === 'nbf') return 'not-yet-valid';
    return 'invalid-claims';
  }
  return 'malformed';
}

async function readStoredKey(keyFile: string): Promise<JWK | undefined> {
  let text: string;
  try {
    text = await readFile(keyFile, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  await restrictToOwner(keyFile);
  const parsed: unknown = JSON.parse(text);
  if (!isPrivateEcJwk(parsed)) {
    throw new CountersignError(
      'configuration',
      `${keyFile} does not hold an EC P-256 private JWK; delete it to create a new key (issued tokens become invalid).`,
    );
  }
  return parsed;
}

async function createStoredKey(keyFile: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair(LOCAL_JWT_ALGORITHM, { extractable: true });
  const privateJwk = await exportJWK(privateKey);
  try {
    // `wx`: two processes starting at once must not overwrite each other's key.
    await writeFile(keyFile, `${JSON.stringify(privateJwk)}\n`, { mode: 0o600, flag: 'wx' });
    return privateJwk;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const stored = await readStoredKey(keyFile);
    if (!stored) throw error;
    return stored;
  }
}

/** A key file someone copied with looser permissions is tightened back to owner-only. */
async function restrictToOwner(keyFile: string): Promise<void> {
  if (process.platform === 'win32') return;
  const { mode } = await stat(keyFile);
  if ((mode & 0o077) !== 0) await chmod(keyFile, 0o600);
}

function isPrivateEcJwk(value: unknown): value is JWK {
  if (typeof value !== 'object' || value === null) return false;
  const jwk = value as Record<string, unknown>;
  return (
    jwk.kty === 'EC' &&
    jwk.crv === 'P-256' &&
    typeof jwk.x === 'string' &&
    typeof jwk.y === 'string' &&
    typeof jwk.d === 'string'
  );
}
