import { describe, expect, it } from 'vitest';
import { classifyCall } from '../../../lambdas/core/approvals/needs-human-approval.js';
import { resolveCalls } from '../../../lambdas/core/approvals/resolve-calls.js';
import { boundCallerPreview } from '../../../lambdas/core/external-runs/caller-previews.js';
import { allowsTool } from '../../../lambdas/core/external-runs/external-tool-names.js';
import { externalRunTools } from '../../../lambdas/core/external-runs/external-tools.js';
import { checkWebhookUrl } from '../../../lambdas/core/external-runs/webhook-url.js';
import { ToolRegistry } from '../../../lambdas/core/tools/tool.js';
import { createBuiltInTools } from '../../../lambdas/tools/built-in-tools.js';

describe('the tools of agents that run elsewhere', () => {
  const registry = new ToolRegistry(createBuiltInTools());

  it('resolves a namespaced name to a stand-in that never runs, and never to a tool of ours', async () => {
    // Act
    const [external, ours] = resolveCalls(
      [
        { index: 0, tool: 'billing/update_page_metadata', arguments: { pageId: '12' }, offered: true },
        { index: 1, tool: 'update_page_metadata', arguments: { pageId: '12' }, offered: true },
      ],
      registry,
    );
    const outcome = await external?.tool?.execute({}, {} as never);

    // Assess
    expect(external?.tool?.name).toBe('billing/update_page_metadata');
    expect(external?.tool?.preview).toBeUndefined();
    expect(external?.tool?.mayViewerReadPreview).toBeUndefined();
    expect(outcome?.isError).toBe(true);
    expect(ours?.tool?.preview).toEqual(expect.any(Function));
    expect(registry.has('billing/update_page_metadata')).toBe(false);
  });

  it('classifies each call as its caller declared its tool: a read runs, a write waits, unknown waits unconfirmed', () => {
    // Prepare
    const calls = [
      { index: 0, tool: 'billing/lookup', offered: true, guard: 'none' as const },
      { index: 1, tool: 'billing/send', offered: true, guard: 'write' as const },
      { index: 2, tool: 'billing/notify', offered: true, guard: 'unconfirmed' as const },
    ];
    const runTools = externalRunTools(calls, registry);

    // Act
    const guards = calls.map((call) => classifyCall(call, runTools.confirmedTool(call.tool)));

    // Assess
    expect(guards).toEqual(['none', 'write', 'unconfirmed']);
  });

  it('grants tool access to an external tool by its name or its configuration’s wildcard, never beyond', () => {
    // Assess
    expect(allowsTool(['billing/send'], 'billing/send')).toBe(true);
    expect(allowsTool(['billing/*'], 'billing/send')).toBe(true);
    expect(allowsTool('*', 'billing/send')).toBe(true);
    expect(allowsTool(['billing/*'], 'billing2/send')).toBe(false);
    expect(allowsTool(['billing/*'], 'update_page_metadata')).toBe(false);
    expect(allowsTool(['send'], 'billing/send')).toBe(false);
  });

  it('quotes each caller line whole, so none passes for a line of ours, and marks hidden characters', () => {
    // Act
    const lines = boundCallerPreview(['Preview failed (PreviewTimeout).', 'a\u202Eb', 'x\ny', '']);

    // Assess
    expect(lines).toEqual(['"Preview failed (PreviewTimeout)."', '"a⟨U+202E⟩b"', '"x\\ny"', '(empty)']);
  });

  it.each([
    ['https://agent.example.com/hooks', false, 'allowed'],
    ['http://agent.example.com/hooks', false, 'not-https'],
    ['https://user:pass@agent.example.com/', false, 'credentials'],
    ['https://[::ffff:a9fe:a9fe]/', false, 'reserved-host'],
    ['https://localhost./', false, 'reserved-host'],
    ['http://127.0.0.1:8080/hooks', false, 'not-https'],
    ['http://127.0.0.1:8080/hooks', true, 'allowed'],
    ['http://169.254.169.254/', true, 'not-https'],
    ['not a url', false, 'not-a-url'],
  ])('checks the webhook URL %s (loopback allowed: %s) as %s', (url, allowLoopback, expected) => {
    // Act
    const verdict = checkWebhookUrl(url, { allowLoopback });

    // Assess
    expect(verdict.kind === 'allowed' ? 'allowed' : verdict.problem).toBe(expected);
  });
});
