import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { EXTERNAL_RUNS_SCOPE } from '../contract/route-definition.js';
import { CountersignError } from '../core/errors.js';
import type { WebhookSecrets } from '../core/external-runs/webhook-delivery.js';
import { type Clock, systemClock } from '../core/ports.js';
import {
  type BearerTokenVerifier,
  LOCAL_JWT_ALGORITHM,
  LOCAL_JWT_ISSUER,
  type LocalJwtIssuer,
  type TokenVerification,
} from './local-jwt-issuer.js';
import { PRIVATE_FILE_MODE } from './private-file-modes.js';

/** The file (inside the keys directory) holding the local machine clients and their secrets. */
export const LOCAL_MACHINE_CLIENTS_FILE_NAME = 'machine-clients.json';
/** The machine client `npm start` creates: the demo agent of docs/external-agents.md. */
export const DEMO_MACHINE_CLIENT_ID = 'demo-agent';

/**
 * A machine client of local mode, as a Cognito app client with the client-credentials grant is
 * deployed: its id, its secret (the token endpoint's password) and its webhook signing secret.
 */
export interface LocalMachineClient {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly webhookSecret: string;
}

/**
 * The machine clients of local mode, kept (mode 0600) beside the JWT signing key so they survive
 * a restart: they authenticate at the token endpoint (`local-client-credentials.ts`), their
 * tokens are verified here for the `machine` routes as API Gateway's machine authorizer does
 * deployed (issuer, signature, expiry, a known client, the scope, and no `aud`: a person's token
 * is refused), and their webhook secrets sign NotifyCaller's deliveries.
 *
 * @example
 * const clients = await LocalMachineClients.open({ keysDirectory, issuer });
 * const token = await clients.issueToken(DEMO_MACHINE_CLIENT_ID);
 */
export class LocalMachineClients implements BearerTokenVerifier, WebhookSecrets {
  private constructor(
    private readonly clients: readonly LocalMachineClient[],
    private readonly issuer: LocalJwtIssuer,
    private readonly clock: Clock,
  ) {}

  /** Loads the clients from `keysDirectory`, creating the demo client on first start. */
  public static async open(options: {
    keysDirectory: string;
    issuer: LocalJwtIssuer;
    clock?: Clock;
  }): Promise<LocalMachineClients> {
    const file = path.join(options.keysDirectory, LOCAL_MACHINE_CLIENTS_FILE_NAME);
    const clients = (await readClients(file)) ?? (await createClients(file));
    return new LocalMachineClients(clients, options.issuer, options.clock ?? systemClock);
  }

  /** The clients, with their secrets (the start banner prints the demo client's). */
  public list(): readonly LocalMachineClient[] {
    return this.clients;
  }

  /** The client whose id and secret these are, compared in constant time; `undefined` otherwise. */
  public authenticate(clientId: string, clientSecret: string): LocalMachineClient | undefined {
    const given = digest(clientSecret);
    const client = this.clients.find((candidate) => candidate.clientId === clientId);
    if (!client) return undefined;
    return timingSafeEqual(digest(client.clientSecret), given) ? client : undefined;
  }

  /** An access token for a client (an hour, as Cognito's default), with the external-runs scope. */
  public async issueToken(clientId: string, expiresInSeconds = 3600): Promise<string> {
    if (!this.clients.some((client) => client.clientId === clientId)) {
      throw new CountersignError('configuration', `No local machine client "${clientId}".`);
    }
    return this.issuer.issueMachineToken({ clientId, scope: EXTERNAL_RUNS_SCOPE, expiresInSeconds });
  }

  public async verify(token: string): Promise<TokenVerification> {
    try {
      const { payload } = await jwtVerify(token, createLocalJWKSet(this.issuer.jwks()), {
        issuer: LOCAL_JWT_ISSUER,
        algorithms: [LOCAL_JWT_ALGORITHM],
        requiredClaims: ['sub', 'exp', 'client_id', 'scope'],
        currentDate: this.clock.now(),
      });
      const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ') : [];
      const known = this.clients.some((client) => client.clientId === payload.client_id);
      // A person's token names the API as its audience; a machine's names none (as Cognito's).
      if (payload.aud !== undefined || !known || payload.sub !== payload.client_id) {
        return { kind: 'refused', reason: 'invalid-claims' };
      }
      if (!scopes.includes(EXTERNAL_RUNS_SCOPE)) return { kind: 'refused', reason: 'invalid-claims' };
      return { kind: 'verified', claims: { ...payload, sub: String(payload.sub) } };
    } catch {
      return { kind: 'refused', reason: 'malformed' };
    }
  }

  public async secretOf(clientId: string): Promise<string | undefined> {
    return this.clients.find((client) => client.clientId === clientId)?.webhookSecret;
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

async function readClients(file: string): Promise<LocalMachineClient[] | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const parsed: unknown = JSON.parse(text);
  const clients = (parsed as { clients?: unknown }).clients;
  if (!Array.isArray(clients) || !clients.every(isClient)) {
    throw new CountersignError(
      'configuration',
      `${file} does not hold local machine clients; delete it to create the demo client again.`,
    );
  }
  return clients;
}

async function createClients(file: string): Promise<LocalMachineClient[]> {
  const clients = [
    {
      clientId: DEMO_MACHINE_CLIENT_ID,
      clientSecret: randomBytes(32).toString('base64url'),
      webhookSecret: `whsec_${randomBytes(32).toString('base64url')}`,
    },
  ];
  try {
    // `wx`: two processes starting at once must not overwrite each other's secrets.
    await writeFile(file, `${JSON.stringify({ clients })}\n`, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
    return clients;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const stored = await readClients(file);
    if (!stored) throw error;
    return stored;
  }
}

function isClient(value: unknown): value is LocalMachineClient {
  const client = value as Record<string, unknown> | null;
  return (
    typeof client === 'object' &&
    client !== null &&
    typeof client.clientId === 'string' &&
    typeof client.clientSecret === 'string' &&
    typeof client.webhookSecret === 'string'
  );
}
