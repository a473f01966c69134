import * as z from 'zod/mini';

/** A URL origin (`https://host[:port]`), as a Content-Security-Policy source names it. */
const originSchema = z.string().check(z.regex(/^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$/i));
const urlSchema = z.string().check(z.url());

/**
 * How the inbox page signs an approver in: OAuth 2.0 authorization code with PKCE against an
 * OpenID Connect issuer (Cognito's managed login by default). The construct writes it as
 * COUNTERSIGN_INBOX_SIGN_IN (JSON) for the inbox function; `npm start` builds it for the local
 * sign-in provider. The page discovers the endpoints from `<issuer>/.well-known/openid-configuration`.
 */
export const inboxSignInSchema = z.strictObject({
  /** The issuer, exactly as its tokens' `iss` (Cognito: `https://cognito-idp.<region>.amazonaws.com/<pool id>`). */
  issuer: urlSchema,
  /** The page's app client: a public client (no secret) allowed the code flow. */
  clientId: z.string().check(z.minLength(1), z.maxLength(256)),
  /** Scopes asked for; `openid` first, so the answer carries an ID token naming who signed in. */
  scopes: z
    .array(z.string().check(z.regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/)))
    .check(z.minLength(1), z.maxLength(25)),
  /** The page's own URL, registered as the client's callback URL (exactly). */
  redirectUri: urlSchema,
  /**
   * Where signing out ends the provider's own session, then returns to the page (Cognito:
   * `https://<domain>/logout?client_id=…&logout_uri=…`). Absent: the page only forgets its tokens.
   */
  signOutUrl: z.optional(urlSchema),
  /** The origins the page's script may call for sign-in (discovery, token, revocation): its CSP `connect-src`. */
  connectOrigins: z.array(originSchema).check(z.minLength(1), z.maxLength(10)),
});
export type InboxSignIn = z.infer<typeof inboxSignInSchema>;

/** The scopes the page asks for unless told otherwise: who signed in, and their e-mail and name. */
export const INBOX_SIGN_IN_SCOPES = ['openid', 'email', 'profile'] as const;
