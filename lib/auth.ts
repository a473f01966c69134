import { Duration, RemovalPolicy, Token } from 'aws-cdk-lib';
import type { IHttpRouteAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer, HttpUserPoolAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import {
  AccountRecovery,
  FeaturePlan,
  Mfa,
  StandardThreatProtectionMode,
  UserPool,
  type UserPoolClient,
} from 'aws-cdk-lib/aws-cognito';
import { Construct, type IConstruct } from 'constructs';
import type { InboxSignIn } from '../lambdas/contract/inbox-sign-in.js';
import {
  CountersignManagedLogin,
  type InboxSignInProps,
  resolveExternalInboxSignIn,
  validateCognitoInboxSignIn,
} from './inbox-sign-in.js';
import { invalidProp } from './validation-error.js';

/**
 * The Cognito groups the construct creates. They carry the grant names of countersign on
 * purpose: unless `identityGroupGrants` says otherwise, a signed-in user without a user record
 * gets the grants these groups name (lib/identity-group-grants.ts), and no page or tool access.
 */
export const COUNTERSIGN_USER_GROUPS = ['agent_run', 'agent_approve', 'admin'] as const;

/** An OpenID Connect identity provider that issues the tokens the HTTP API accepts. */
export interface ExternalIdentityProvider {
  /**
   * The issuer URL, exactly as the tokens' `iss` claim says it (`https://...`, no query or
   * fragment). API Gateway fetches `<issuer>/.well-known/openid-configuration` to find the keys.
   */
  readonly issuerUrl: string;
  /** The audiences a token must name (`aud`, or `client_id` for access tokens); at least one. */
  readonly audience: readonly string[];
}

/** Properties of {@link CountersignAuth}. */
export interface CountersignAuthProps {
  /**
   * Verify tokens of this identity provider instead of a user pool the construct creates.
   *
   * @default - a Cognito user pool with groups `agent_run`, `agent_approve` and `admin`, and one app client
   */
  readonly externalIdentityProvider?: ExternalIdentityProvider;
  /**
   * What happens to the user pool when it leaves the stack.
   *
   * @default - RemovalPolicy.RETAIN: users and their MFA devices outlive the stack.
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Cognito's threat protection (compromised credentials, adaptive authentication) in full
   * function mode, which needs the Plus feature plan, billed per monthly active user. Without
   * it the pool is on the Essentials plan (cdk-nag's AwsSolutions-COG8 then reports it).
   *
   * @default true
   */
  readonly threatProtection?: boolean;
  /** The inbox page's URL, ending in `/`: where sign-in returns (the page's callback and sign-out URL). */
  readonly inboxUrl: string;
  /**
   * How approvers sign in to the inbox page.
   *
   * @default - Cognito managed login on a prefix domain, with an app client for the page
   */
  readonly inboxSignIn?: InboxSignInProps;
}

// API Gateway's JWT authorizer accepts at most 50 audiences.
const MAXIMUM_AUDIENCES = 50;

/**
 * Authentication of the HTTP API: API Gateway's native JWT authorizer, checking issuer,
 * audience, signature and expiry before any Lambda runs. By default the tokens come from a
 * Cognito user pool created here (self sign-up off, strong passwords, TOTP MFA required, the
 * Plus feature plan with threat protection enforced); with `externalIdentityProvider` they
 * come from the team's own OIDC provider and no user pool is created.
 *
 * @example
 * const auth = new CountersignAuth(this, 'Auth', {
 *   externalIdentityProvider: { issuerUrl: 'https://login.example.com', audience: ['countersign'] },
 * });
 * new CountersignApi(this, 'Api', { functions, authorizer: auth.authorizer, ... });
 */
export class CountersignAuth extends Construct {
  /** The JWT authorizer every route but `GET /` uses. */
  public readonly authorizer: IHttpRouteAuthorizer;
  /** The issuer tokens must come from. */
  public readonly issuerUrl: string;
  /** The user pool, when the construct created one. */
  public readonly userPool?: UserPool;
  /** The app client API users get a token with from the AWS CLI, when the construct created the user pool. */
  public readonly userPoolClient?: UserPoolClient;
  /** The inbox page's managed login (domain and app client), when the construct created the user pool. */
  public readonly managedLogin?: CountersignManagedLogin;
  /** What the inbox page signs in with; absent with an external provider whose page client is not given. */
  public readonly inboxSignIn?: InboxSignIn;

  public constructor(scope: Construct, id: string, props: CountersignAuthProps) {
    super(scope, id);
    const external = props.externalIdentityProvider;
    if (external !== undefined) {
      validateExternalIdentityProvider(this, external);
      this.issuerUrl = external.issuerUrl;
      this.authorizer = new HttpJwtAuthorizer('JwtAuthorizer', external.issuerUrl, {
        jwtAudience: [...external.audience],
      });
      this.inboxSignIn = resolveExternalInboxSignIn(
        this,
        external.issuerUrl,
        props.inboxSignIn ?? {},
        props.inboxUrl,
      );
      return;
    }
    validateCognitoInboxSignIn(this, props.inboxSignIn ?? {});

    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    // Approvers release writes: sign-in is as strong as Cognito offers without a custom flow.
    this.userPool = new UserPool(this, 'UserPool', {
      selfSignUpEnabled: false,
      signInAliases: { email: true, username: true },
      passwordPolicy: {
        minLength: 12,
        requireLowercase: true,
        requireUppercase: true,
        requireDigits: true,
        requireSymbols: true,
        tempPasswordValidity: Duration.days(3),
      },
      mfa: Mfa.REQUIRED,
      mfaSecondFactor: { otp: true, sms: false },
      accountRecovery: AccountRecovery.EMAIL_ONLY,
      ...(props.threatProtection === false
        ? { featurePlan: FeaturePlan.ESSENTIALS }
        : {
            featurePlan: FeaturePlan.PLUS,
            standardThreatProtectionMode: StandardThreatProtectionMode.FULL_FUNCTION,
          }),
      deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
      removalPolicy,
    });
    for (const groupName of COUNTERSIGN_USER_GROUPS) {
      this.userPool.addGroup(`Group-${groupName}`, {
        groupName,
        description: `countersign grant ${groupName}`,
      });
    }
    const tokenValidity = { id: Duration.hours(1), access: Duration.hours(1), refresh: Duration.hours(12) };
    this.userPoolClient = this.userPool.addClient('InboxClient', {
      generateSecret: false,
      // SRP for apps; USER_PASSWORD_AUTH so an API user can get a token with the AWS CLI (then TOTP).
      authFlows: { userSrp: true, userPassword: true },
      preventUserExistenceErrors: true,
      enableTokenRevocation: true,
      idTokenValidity: tokenValidity.id,
      accessTokenValidity: tokenValidity.access,
      refreshTokenValidity: tokenValidity.refresh,
      disableOAuth: true,
    });
    // The page signs in on managed login with its own client (code flow and PKCE, nothing else).
    this.managedLogin = new CountersignManagedLogin(this, 'InboxSignIn', {
      userPool: this.userPool,
      inboxUrl: props.inboxUrl,
      signIn: props.inboxSignIn ?? {},
      tokenValidity,
    });
    this.inboxSignIn = this.managedLogin.settings;
    this.issuerUrl = this.userPool.userPoolProviderUrl;
    this.authorizer = new HttpUserPoolAuthorizer('UserPoolAuthorizer', this.userPool, {
      userPoolClients: [this.userPoolClient, this.managedLogin.client],
    });
  }
}

/** Refuses an external identity provider API Gateway could not use, quoting the bad value. */
export function validateExternalIdentityProvider(
  scope: IConstruct,
  provider: ExternalIdentityProvider,
): void {
  const { issuerUrl, audience } = provider;
  if (!Token.isUnresolved(issuerUrl)) {
    let url: URL | undefined;
    try {
      url = new URL(issuerUrl);
    } catch {
      url = undefined;
    }
    if (url?.protocol !== 'https:' || url.search !== '' || url.hash !== '') {
      throw invalidProp(
        scope,
        `externalIdentityProvider.issuerUrl ${JSON.stringify(issuerUrl)} is not an https issuer URL; use the exact "iss" of your tokens, e.g. 'https://login.example.com/realms/team'.`,
      );
    }
  }
  if (!Array.isArray(audience) || audience.length === 0 || audience.length > MAXIMUM_AUDIENCES) {
    throw invalidProp(
      scope,
      `externalIdentityProvider.audience ${JSON.stringify(audience)} must list between 1 and ${MAXIMUM_AUDIENCES} audiences, e.g. ['countersign'] or your app client id.`,
    );
  }
  for (const entry of audience) {
    if (typeof entry !== 'string' || (!Token.isUnresolved(entry) && entry.trim() === '')) {
      throw invalidProp(
        scope,
        `externalIdentityProvider.audience contains ${JSON.stringify(entry)}; each audience must be a non-empty string.`,
      );
    }
  }
}
