import type { UserProfile } from '../core/identity.js';

/**
 * The shell variable a demo user's token is exported as. Prefixed, because a bare `EDITOR`
 * would replace the shell's `$EDITOR`, and git would then run the token as its editor.
 */
export function tokenVariableOf(userId: string): string {
  return `COUNTERSIGN_${userId.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_TOKEN`;
}

const ROLES: Record<string, string> = {
  editor: 'starts runs (agent_run) on pages 12 and 14',
  approver: 'approves (agent_approve), rights on the demo pages: sees previews',
  reviewer: 'a second approver: with approver, releases demo-two-approvers runs',
  'ops-approver': 'approves (agent_approve), no page rights: previews withheld',
  admin: 'administers everything (admin)',
};

/** What `npm start` prints once the local runtime listens: the URL, the demo users and their tokens. */
export function composeStartBanner(input: {
  url: string;
  /** The local sign-in provider the page signs in at. */
  issuerUrl?: string;
  users: readonly Pick<UserProfile, 'userId' | 'displayName'>[];
  tokens: Readonly<Record<string, string>>;
  /** The demo agent that runs elsewhere: the token endpoint and its client (docs/external-agents.md). */
  machine?: { tokenUrl: string; clientId: string; clientSecret: string };
}): string {
  const { url, users, tokens, machine } = input;
  const editor = `$${tokenVariableOf('editor')}`;
  const approver = `$${tokenVariableOf('approver')}`;
  return [
    '',
    `countersign is running at ${url}`,
    `Inbox page: ${url}/  (Sign in, then choose a demo user; a card's own address is ${url}/inbox/runs/<runId>)`,
    ...(input.issuerUrl
      ? [`Sign-in provider (OpenID Connect, code flow with PKCE): ${input.issuerUrl}`]
      : []),
    '',
    'Demo users (tokens valid 12 hours, sent as "Authorization: Bearer <token>"):',
    ...users.map(
      (user) => `  ${user.userId.padEnd(13)} ${user.displayName.padEnd(15)} ${ROLES[user.userId] ?? ''}`,
    ),
    '',
    'Their tokens for the API (and the page\'s "bearer token" fallback), ready to paste into a shell:',
    ...users.map((user) => `  export ${tokenVariableOf(user.userId)}=${tokens[user.userId] ?? ''}`),
    '',
    'Then try:',
    `  curl -s -X POST ${url}/runs -H "Authorization: Bearer ${editor}" -H 'content-type: application/json' \\`,
    `    -d '{"taskId":"page-metadata","input":"Set the description of page 12 to '"'"'Spring sale'"'"'"}'`,
    `  curl -s ${url}/inbox -H "Authorization: Bearer ${approver}"`,
    `  curl -s -X POST ${url}/runs/<runId>/decision -H "Authorization: Bearer ${approver}" \\`,
    `    -H 'content-type: application/json' -d '{"digest":"<digest from the card>","decision":"approve"}'`,
    `  curl -s -X POST ${url}/runs/<runId>/cancel -H "Authorization: Bearer ${editor}" \\`,
    `    -H 'content-type: application/json' -d '{"reason":"changed my mind"}'`,
    ...(machine === undefined
      ? []
      : [
          '',
          'The demo agent that runs elsewhere (docs/external-agents.md): a token by the client-credentials grant,',
          `  curl -s -u ${machine.clientId}:${machine.clientSecret} -d grant_type=client_credentials ${machine.tokenUrl}`,
          '  then submit its turn for approval:',
          `  curl -s -X POST ${url}/external-runs -H "Authorization: Bearer <access_token>" -H 'content-type: application/json' \\`,
          `    -d '{"configurationId":"demo-external","clientKey":"try-1","tools":[{"name":"send_invoice","effect":"write"}],"calls":[{"tool":"send_invoice","arguments":{"customer":"ACME"}}]}'`,
          `  curl -s "${url}/external-runs/<runId>?wait=25" -H "Authorization: Bearer <access_token>"`,
        ]),
    '',
    'Press Ctrl+C to stop. Waiting runs survive a restart.',
  ].join('\n');
}
