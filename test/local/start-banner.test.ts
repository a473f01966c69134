import { describe, expect, it } from 'vitest';
import { DEMO_USERS } from '../../lambdas/local/demo-data.js';
import { composeStartBanner, tokenVariableOf } from '../../lambdas/local/start-banner.js';

describe('the npm start banner', () => {
  it('exports each token under a COUNTERSIGN_ name and uses those names in its curl lines', () => {
    // Prepare
    const tokens = Object.fromEntries(DEMO_USERS.map((user) => [user.userId, `token-of-${user.userId}`]));

    // Act
    const banner = composeStartBanner({ url: 'http://127.0.0.1:8787', users: DEMO_USERS, tokens });

    // Assess
    const exported = [...banner.matchAll(/export (\S+)=(\S+)/g)].map((match) => [match[1], match[2]]);
    expect(exported).toEqual([
      ['COUNTERSIGN_EDITOR_TOKEN', 'token-of-editor'],
      ['COUNTERSIGN_APPROVER_TOKEN', 'token-of-approver'],
      ['COUNTERSIGN_REVIEWER_TOKEN', 'token-of-reviewer'],
      ['COUNTERSIGN_OPS_APPROVER_TOKEN', 'token-of-ops-approver'],
      ['COUNTERSIGN_ADMIN_TOKEN', 'token-of-admin'],
    ]);
    // $EDITOR belongs to the shell (git runs it); the banner must never set or use it.
    expect(banner).not.toMatch(/\$EDITOR\b|export EDITOR=/);
    const usedVariables = new Set([...banner.matchAll(/Bearer \$(\w+)/g)].map((match) => match[1]));
    expect([...usedVariables].sort()).toEqual(['COUNTERSIGN_APPROVER_TOKEN', 'COUNTERSIGN_EDITOR_TOKEN']);
  });

  it('shows how the demo agent gets its token and submits a turn, only when given its client', () => {
    // Prepare
    const machine = {
      tokenUrl: 'http://127.0.0.1:9000/oauth2/token',
      clientId: 'demo-agent',
      clientSecret: 's3cret',
    };

    // Act
    const without = composeStartBanner({ url: 'http://127.0.0.1:8787', users: DEMO_USERS, tokens: {} });
    const banner = composeStartBanner({
      url: 'http://127.0.0.1:8787',
      users: DEMO_USERS,
      tokens: {},
      machine,
    });

    // Assess
    expect(without).not.toContain('external-runs');
    expect(banner).toContain(
      'curl -s -u demo-agent:s3cret -d grant_type=client_credentials http://127.0.0.1:9000/oauth2/token',
    );
    const submitted = /-d '(\{"configurationId":"demo-external".*\})'/.exec(banner)?.[1];
    expect(JSON.parse(submitted ?? 'null')).toMatchObject({
      configurationId: 'demo-external',
      clientKey: 'try-1',
    });
    expect(banner).toContain('http://127.0.0.1:8787/external-runs/<runId>?wait=25');
  });

  it('derives a shell-safe name from any user id', () => {
    expect(tokenVariableOf('ops-approver')).toBe('COUNTERSIGN_OPS_APPROVER_TOKEN');
    expect(tokenVariableOf('a.b c')).toBe('COUNTERSIGN_A_B_C_TOKEN');
  });
});
