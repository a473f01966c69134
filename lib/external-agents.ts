import { Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import type { IHttpRouteAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer, HttpUserPoolAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import {
  type CfnUserPoolClient,
  OAuthScope,
  ResourceServerScope,
  type UserPool,
  type UserPoolClient,
  type UserPoolDomain,
} from 'aws-cdk-lib/aws-cognito';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct, type IConstruct } from 'constructs';
import type { EnvironmentVariableName } from '../lambdas/contract/environment.js';
import { EXTERNAL_RUNS_SCOPE } from '../lambdas/contract/route-definition.js';
import { invalidProp } from './validation-error.js';

/** One machine client of the agents that run elsewhere (docs/external-agents.md). */
export interface ExternalAgentClientProps {
  /** Its name: the app client's name, and the ids of what the construct creates for it (letters, digits, `-`). */
  readonly name: string;
  /**
   * With `externalIdentityProvider`: the client's id as its access tokens carry it (`client_id`,
   * and `sub`, as the client-credentials grant issues them). Required then; with the construct's
   * user pool the construct creates the client and this must be left out.
   *
   * @default - the app client the construct creates
   */
  readonly clientId?: string;
  /**
   * The secret its webhooks are signed with (HMAC-SHA256; docs/external-agents.md). The agent
   * reads it too, to check each delivery.
   *
   * @default - a secret generated for it in Secrets Manager
   */
  readonly webhookSecret?: ISecret;
}

/**
 * Agents that run elsewhere: machine clients that submit turns to the approval API
 * (`POST /external-runs`), authenticated by the OAuth client-credentials grant with the scope
 * `countersign/external-runs`, and only on those routes.
 */
export interface ExternalAgentsProps {
  /** The machine clients, one per agent (at most 50). */
  readonly clients: readonly ExternalAgentClientProps[];
}

/** The resource server of the approval API, and its one scope (`countersign/external-runs`). */
const [RESOURCE_SERVER, SCOPE_NAME] = EXTERNAL_RUNS_SCOPE.split('/') as [string, string];
// API Gateway's JWT authorizer accepts at most 50 audiences.
const MAXIMUM_CLIENTS = 50;
const CLIENT_NAME = /^[A-Za-z0-9][A-Za-z0-9-]{0,62}$/;

/** Properties of {@link CountersignExternalAgents}. */
export interface CountersignExternalAgentsProps {
  readonly agents: ExternalAgentsProps;
  /** The construct's user pool; absent with an external identity provider. */
  readonly userPool?: UserPool;
  /**
   * The user pool's domain (the inbox page's managed login), whose `/oauth2/token` the agents get
   * their tokens from: a user pool has one domain, so the agents share the page's.
   */
  readonly domain?: UserPoolDomain;
  /** The issuer of the external identity provider, when there is one. */
  readonly externalIssuerUrl?: string;
  /** The audiences the API's authorizer accepts for people: no machine client may be one. */
  readonly personAudience: readonly string[];
}

/**
 * The machine side of the API's authentication (docs/external-agents.md): with the construct's
 * user pool, a resource server with the scope `countersign/external-runs`, the pool's one Cognito
 * domain (the inbox page's, its token endpoint), one app client per agent that may use the client-credentials grant with that
 * scope and nothing else; with an external provider, its clients by id. Either way a JWT
 * authorizer that trusts those clients only (`machine` routes add the scope), and a webhook
 * signing secret per client that only NotifyCaller may read.
 *
 * @example
 * const agents = new CountersignExternalAgents(this, 'ExternalAgents', { agents: props.externalAgents, userPool, personAudience });
 * api.addRoutes({ ..., authorizer: agents.authorizer, authorizationScopes: [EXTERNAL_RUNS_SCOPE] });
 */
export class CountersignExternalAgents extends Construct {
  /** The authorizer of the `machine` routes: the agents' clients only. */
  public readonly authorizer: IHttpRouteAuthorizer;
  /** The app clients the construct created, by name (with its user pool). */
  public readonly clients: Readonly<Record<string, UserPoolClient>>;
  /** The Cognito domain of the token endpoint (with its user pool). */
  public readonly domain?: UserPoolDomain;
  /** Each client's webhook signing secret, by name. */
  public readonly webhookSecrets: Readonly<Record<string, ISecret>>;
  private readonly clientIds: ReadonlyArray<{ name: string; clientId: string }>;

  public constructor(scope: Construct, id: string, props: CountersignExternalAgentsProps) {
    super(scope, id);
    validateExternalAgents(this, props);
    const { agents, userPool } = props;
    const secrets: Record<string, ISecret> = {};
    for (const client of agents.clients) {
      secrets[client.name] =
        client.webhookSecret ??
        new Secret(this, `${client.name}WebhookSecret`, {
          description: `countersign: signs the webhooks of the ${client.name} agent (docs/external-agents.md)`,
          generateSecretString: { passwordLength: 48, excludePunctuation: true },
        });
    }
    this.webhookSecrets = secrets;

    if (userPool === undefined) {
      this.clients = {};
      this.clientIds = agents.clients.map((client) => ({
        name: client.name,
        clientId: client.clientId ?? '',
      }));
      this.authorizer = new HttpJwtAuthorizer('MachineJwtAuthorizer', props.externalIssuerUrl ?? '', {
        jwtAudience: this.clientIds.map((client) => client.clientId),
      });
    } else {
      const scopeDefinition = new ResourceServerScope({
        scopeName: SCOPE_NAME,
        scopeDescription: 'Submit turns for approval and read their answers',
      });
      const resourceServer = userPool.addResourceServer('ApprovalApi', {
        identifier: RESOURCE_SERVER,
        scopes: [scopeDefinition],
      });
      this.domain = props.domain;
      const created: Record<string, UserPoolClient> = {};
      for (const client of agents.clients) {
        const appClient = userPool.addClient(`${client.name}Client`, {
          userPoolClientName: client.name,
          generateSecret: true,
          authFlows: {},
          oAuth: {
            flows: { clientCredentials: true },
            scopes: [OAuthScope.resourceServer(resourceServer, scopeDefinition)],
          },
          accessTokenValidity: Duration.hours(1),
          enableTokenRevocation: true,
          preventUserExistenceErrors: true,
        });
        // The client-credentials grant with the one scope, and no way for a person to sign in: with
        // no ExplicitAuthFlows Cognito would allow SRP and custom auth, so name the one it requires.
        (appClient.node.defaultChild as CfnUserPoolClient).explicitAuthFlows = ['ALLOW_REFRESH_TOKEN_AUTH'];
        created[client.name] = appClient;
      }
      this.clients = created;
      this.clientIds = agents.clients.map((client) => ({
        name: client.name,
        clientId: created[client.name]?.userPoolClientId ?? '',
      }));
      this.authorizer = new HttpUserPoolAuthorizer('MachineAuthorizer', userPool, {
        userPoolClients: Object.values(created),
      });
    }
    for (const secret of Object.values(secrets)) {
      if (secret instanceof Secret) {
        Validations.of(secret).acknowledge({
          id: 'AwsSolutions-SMG4',
          reason:
            'A webhook signing secret is shared with the agent that checks the signatures: it is rotated by the team together with that agent (docs/external-agents.md, "Rotating a webhook secret"), not by a rotation Lambda that could not tell the agent.',
        });
      }
    }
  }

  /**
   * Lets `notifyCaller` read each client's webhook secret (and nothing else of Secrets Manager),
   * and tells it which secret is whose (`COUNTERSIGN_WEBHOOK_SECRETS`: client id and ARN).
   */
  public grantWebhookSigning(
    notifyCaller: IFunction & { addEnvironment(key: string, value: string): unknown },
  ): void {
    const entries = this.clientIds.map((client) => {
      const secret = this.webhookSecrets[client.name];
      secret?.grantRead(notifyCaller);
      return { clientId: client.clientId, secretArn: secret?.secretArn ?? '' };
    });
    notifyCaller.addEnvironment(
      'COUNTERSIGN_WEBHOOK_SECRETS' satisfies EnvironmentVariableName,
      Stack.of(this).toJsonString(entries),
    );
  }
}

/** Refuses props the authorizer or Cognito could not take, quoting the bad value. */
function validateExternalAgents(scope: IConstruct, props: CountersignExternalAgentsProps): void {
  const { clients } = props.agents;
  if (!Array.isArray(clients) || clients.length === 0 || clients.length > MAXIMUM_CLIENTS) {
    throw invalidProp(
      scope,
      `externalAgents.clients must list between 1 and ${MAXIMUM_CLIENTS} clients, e.g. [{ name: 'billing-agent' }].`,
    );
  }
  const names = new Set<string>();
  for (const client of clients) {
    if (!CLIENT_NAME.test(client.name) || names.has(client.name)) {
      throw invalidProp(
        scope,
        `externalAgents.clients name ${JSON.stringify(client.name)} must be unique: a letter or digit, then letters, digits or "-", at most 63.`,
      );
    }
    names.add(client.name);
    const external = props.userPool === undefined;
    if (
      external &&
      (client.clientId === undefined ||
        (!Token.isUnresolved(client.clientId) && client.clientId.trim() === ''))
    ) {
      throw invalidProp(
        scope,
        `externalAgents.clients "${client.name}" needs its clientId with externalIdentityProvider: the client_id its access tokens carry.`,
      );
    }
    if (!external && client.clientId !== undefined) {
      throw invalidProp(
        scope,
        `externalAgents.clients "${client.name}" has a clientId, but the construct creates the client in its own user pool; leave clientId out.`,
      );
    }
    if (client.clientId !== undefined && props.personAudience.includes(client.clientId)) {
      throw invalidProp(
        scope,
        `externalAgents.clients "${client.name}": clientId ${JSON.stringify(client.clientId)} is also an audience of externalIdentityProvider, so its tokens would reach the routes of people; give the machine client an id of its own.`,
      );
    }
  }
}
