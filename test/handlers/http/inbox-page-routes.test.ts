import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../../lambdas/contract/routes.js';
import { renderInboxPage } from '../../../lambdas/handlers/http/inbox-page-shell.js';

describe("the inbox page's script reaches the API through the route manifest", () => {
  const page = renderInboxPage({ libraryIntegrity: 'sha384-test' }).html;
  const script = /<script type="module">([\s\S]*?)<\/script>/.exec(page)?.[1] ?? '';
  const table = /const routes = (\{.*\});/.exec(script)?.[1];

  it('carries the routes it calls, as the manifest has them', () => {
    // Act
    const routes = JSON.parse(table ?? '{}') as Record<string, { method: string; path: string }>;

    // Assess
    expect(Object.keys(routes).sort()).toEqual([
      'decideRun',
      'getCall',
      'getCardPage',
      'getRun',
      'getRunAudit',
      'listInbox',
      'listMyDecisions',
      'listMyRuns',
    ]);
    for (const [operationId, route] of Object.entries(routes)) {
      const manifest = ROUTES.find((candidate) => candidate.operationId === operationId);
      expect(route, operationId).toEqual({ method: manifest?.method, path: manifest?.path });
    }
  });

  it('writes no path or method of its own, and fetches in one place', () => {
    // Act
    const rest = script.replace(table ?? '', '');

    // Assess
    expect(rest).not.toMatch(/['"`]\/(inbox|runs)\b/);
    expect(rest).not.toMatch(/\/decision|\/calls\//);
    expect(rest).not.toMatch(/method: ['"](GET|POST)/);
    expect(rest.match(/\bfetch\(/g)).toHaveLength(1);
  });
});
