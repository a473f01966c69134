import { Aws, type Duration, Fn, Token } from 'aws-cdk-lib';
import type { ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import {
  CfnManagedLoginBranding,
  ManagedLoginVersion,
  OAuthScope,
  type UserPool,
  type UserPoolClient,
  UserPoolClientIdentityProvider,
  type UserPoolDomain,
} from 'aws-cdk-lib/aws-cognito';
import { Construct, type IConstruct } from 'constructs';
import { INBOX_SIGN_IN_SCOPES, type InboxSignIn } from '../lambdas/contract/inbox-sign-in.js';
import { invalidProp } from './validation-error.js';

/** How approvers sign in to the inbox page (the authorization code flow with PKCE). */
export interface InboxSignInProps {
  /**
   * The prefix of the Cognito managed login domain, `<prefix>.auth.<region>.amazoncognito.com`:
   * lower-case letters, digits and hyphens, unique in the region, without `aws`, `amazon` or `cognito`.
   * Not with `externalIdentityProvider` or `customDomain`.
   *
   * @default - `countersign-<the stack's unique id>`
   */
  readonly domainPrefix?: string;
  /**
   * Managed login on your own domain instead of a prefix, with its ACM certificate (in us-east-1,
   * as Cognito requires). Not with `externalIdentityProvider` or `domainPrefix`.
   *
   * @default - a Cognito prefix domain
   */
  readonly customDomain?: { readonly domainName: string; readonly certificate: ICertificate };
  /**
   * The scopes the page asks for; `openid` must be one (the page reads who signed in from the ID token).
   *
   * @default ['openid', 'email', 'profile']
   */
  readonly scopes?: readonly string[];
  /**
   * With `externalIdentityProvider`: the page's app client at your provider, a public client
   * (no secret) allowed the authorization code flow with PKCE, whose redirect URI is the inbox
   * page's URL. Its tokens must be accepted by `externalIdentityProvider.audience`.
   *
   * @default - none: the page offers a pasted token only
   */
  readonly clientId?: string;
  /**
   * With `externalIdentityProvider`: where signing out ends your provider's session and returns
   * to the page (its end-session URL with the parameters it needs).
   *
   * @default - signing out forgets the page's tokens only
   */
  readonly signOutUrl?: string;
  /**
   * With `externalIdentityProvider`: the origins of its token and revocation endpoints when they
   * are not the issuer's (the page's policy lets its script call only these).
   *
   * @default - the issuer's origin only
   */
  readonly endpointOrigins?: readonly string[];
}

/** Properties of {@link CountersignManagedLogin}. */
export interface CountersignManagedLoginProps {
  readonly userPool: UserPool;
  /** The inbox page's URL, ending in `/`: the app client's callback and sign-out URL. */
  readonly inboxUrl: string;
  readonly signIn: InboxSignInProps;
  readonly tokenValidity: { readonly access: Duration; readonly id: Duration; readonly refresh: Duration };
}

/**
 * Cognito's managed login for the inbox page: the user pool's domain (a prefix, or a custom
 * domain), an app client for the page (public, authorization code flow only, callback and
 * sign-out URL the page's own, token revocation on) with Cognito's default branding, and the
 * settings the page signs in with.
 *
 * @example
 * const login = new CountersignManagedLogin(this, 'InboxSignIn', { userPool, inboxUrl: api.url, signIn: {}, tokenValidity });
 * handler.addEnvironment('COUNTERSIGN_INBOX_SIGN_IN', Stack.of(this).toJsonString(login.settings));
 */
export class CountersignManagedLogin extends Construct {
  public readonly domain: UserPoolDomain;
  /** The page's app client. */
  public readonly client: UserPoolClient;
  /** What the page signs in with (tokens of this stack inside). */
  public readonly settings: InboxSignIn;

  public constructor(scope: Construct, id: string, props: CountersignManagedLoginProps) {
    super(scope, id);
    const scopes = resolveScopes(this, props.signIn.scopes);
    const domainPrefix = props.signIn.domainPrefix;
    if (domainPrefix !== undefined) validateDomainPrefix(this, domainPrefix);
    if (domainPrefix !== undefined && props.signIn.customDomain !== undefined) {
      throw invalidProp(this, 'inboxSignIn: give domainPrefix or customDomain, not both.');
    }
    this.domain = props.userPool.addDomain('Domain', {
      ...(props.signIn.customDomain
        ? { customDomain: props.signIn.customDomain }
        : { cognitoDomain: { domainPrefix: domainPrefix ?? defaultDomainPrefix() } }),
      managedLoginVersion: ManagedLoginVersion.NEWER_MANAGED_LOGIN,
    });
    this.client = props.userPool.addClient('PageClient', {
      generateSecret: false,
      // Sign-in happens on managed login; refresh tokens are always allowed.
      authFlows: { userSrp: true },
      oAuth: {
        flows: { authorizationCodeGrant: true },
        scopes: scopes.map((name) => OAuthScope.custom(name)),
        callbackUrls: [props.inboxUrl],
        logoutUrls: [props.inboxUrl],
      },
      supportedIdentityProviders: [UserPoolClientIdentityProvider.COGNITO],
      preventUserExistenceErrors: true,
      enableTokenRevocation: true,
      accessTokenValidity: props.tokenValidity.access,
      idTokenValidity: props.tokenValidity.id,
      refreshTokenValidity: props.tokenValidity.refresh,
    });
    // Managed login (not the classic hosted UI) shows a client only with a branding style.
    new CfnManagedLoginBranding(this, 'Branding', {
      userPoolId: props.userPool.userPoolId,
      clientId: this.client.userPoolClientId,
      useCognitoProvidedValues: true,
    });
    const loginUrl = this.domain.baseUrl();
    this.settings = {
      issuer: props.userPool.userPoolProviderUrl,
      clientId: this.client.userPoolClientId,
      scopes,
      redirectUri: props.inboxUrl,
      // Cognito's own sign-out: it ends the managed login session, then returns to the page.
      signOutUrl: `${loginUrl}/logout?client_id=${this.client.userPoolClientId}&logout_uri=${props.inboxUrl}`,
      connectOrigins: [`https://cognito-idp.${Aws.REGION}.${Aws.URL_SUFFIX}`, loginUrl],
    };
  }
}

/**
 * The page's settings for a team's own OpenID Connect provider, when they registered the page's
 * client there (`inboxSignIn.clientId`); without it, the page offers a pasted token only.
 */
export function resolveExternalInboxSignIn(
  scope: IConstruct,
  issuerUrl: string,
  signIn: InboxSignInProps,
  inboxUrl: string,
): InboxSignIn | undefined {
  if (signIn.domainPrefix !== undefined || signIn.customDomain !== undefined) {
    throw invalidProp(
      scope,
      "inboxSignIn.domainPrefix and customDomain configure the construct's Cognito user pool; with externalIdentityProvider, give inboxSignIn.clientId instead.",
    );
  }
  if (signIn.clientId === undefined) return undefined;
  const issuerOrigin = Token.isUnresolved(issuerUrl) ? issuerUrl : new URL(issuerUrl).origin;
  return {
    issuer: issuerUrl,
    clientId: signIn.clientId,
    scopes: resolveScopes(scope, signIn.scopes),
    redirectUri: inboxUrl,
    ...(signIn.signOutUrl === undefined ? {} : { signOutUrl: signIn.signOutUrl }),
    connectOrigins: [issuerOrigin, ...(signIn.endpointOrigins ?? [])],
  };
}

/** The page's URL: the `inboxUrl` prop (an https URL ending in `/`), else the API's stage URL. */
export function resolveInboxUrl(scope: IConstruct, inboxUrl: string | undefined, apiUrl: string): string {
  if (inboxUrl === undefined) return apiUrl;
  if (!Token.isUnresolved(inboxUrl)) {
    let url: URL | undefined;
    try {
      url = new URL(inboxUrl);
    } catch {
      url = undefined;
    }
    if (url?.protocol !== 'https:' || !inboxUrl.endsWith('/') || url.search !== '' || url.hash !== '') {
      throw invalidProp(
        scope,
        `inboxUrl ${JSON.stringify(inboxUrl)} is not the page's https URL ending in "/", e.g. 'https://approvals.example.com/'.`,
      );
    }
  }
  return inboxUrl;
}

/** Refuses the Cognito-only options without the construct's pool, and the external-only ones with it. */
export function validateCognitoInboxSignIn(scope: IConstruct, signIn: InboxSignInProps): void {
  for (const name of ['clientId', 'signOutUrl', 'endpointOrigins'] as const) {
    if (signIn[name] !== undefined) {
      throw invalidProp(
        scope,
        `inboxSignIn.${name} is for an externalIdentityProvider; the construct's user pool makes the page's app client itself.`,
      );
    }
  }
}

const SCOPE_PATTERN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

function resolveScopes(scope: IConstruct, scopes: readonly string[] | undefined): string[] {
  const resolved = [...(scopes ?? INBOX_SIGN_IN_SCOPES)];
  if (!resolved.includes('openid') || resolved.some((name) => !SCOPE_PATTERN.test(name))) {
    throw invalidProp(
      scope,
      `inboxSignIn.scopes ${JSON.stringify(scopes)} must include "openid" and name scopes without spaces, e.g. ['openid', 'email', 'profile'].`,
    );
  }
  return resolved;
}

const DOMAIN_PREFIX_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

function validateDomainPrefix(scope: IConstruct, prefix: string): void {
  if (Token.isUnresolved(prefix)) return;
  if (!DOMAIN_PREFIX_PATTERN.test(prefix) || /aws|amazon|cognito/.test(prefix)) {
    throw invalidProp(
      scope,
      `inboxSignIn.domainPrefix ${JSON.stringify(prefix)} is not a Cognito domain prefix; use lower-case letters, digits and hyphens (at most 63), without "aws", "amazon" or "cognito".`,
    );
  }
}

/** `countersign-<stack UUID>`: unique per stack, in every account and region, and names no account. */
function defaultDomainPrefix(): string {
  return `countersign-${Fn.select(2, Fn.split('/', Aws.STACK_ID))}`;
}
