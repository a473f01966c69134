import { describe, expect, it } from 'vitest';
import { isCountersignError } from '../../../lambdas/core/errors.js';
import {
  assertMcpServerAllowed,
  checkMcpServerUrl,
  type McpHostPolicy,
  NO_MCP_HOSTS,
  normalizeMcpAllowedHost,
  refuseDisallowedMcpServers,
} from '../../../lambdas/core/tools/mcp/mcp-host-policy.js';

const deployed: McpHostPolicy = {
  allowedHosts: ['mcp.tickets.example.com', 'mcp.internal.example.com:8443'],
  allowLoopback: false,
};
const local: McpHostPolicy = { ...deployed, allowLoopback: true };

describe('the MCP host check', () => {
  it.each([
    ['https://mcp.tickets.example.com/mcp'],
    ['https://MCP.Tickets.Example.COM/mcp'],
    ['https://mcp.tickets.example.com:443/mcp'],
    ['https://mcp.internal.example.com:8443/mcp'],
  ])('allows %s when deployed (exact host, any case, the default port as none)', (url) => {
    // Act
    const verdict = checkMcpServerUrl(url, deployed);

    // Assess
    expect(verdict).toEqual({ kind: 'allowed' });
  });

  it.each([
    ['http://mcp.tickets.example.com/mcp', 'mcp.tickets.example.com', 'not-https'],
    ['https://mcp.tickets.example.com:8443/mcp', 'mcp.tickets.example.com:8443', 'host-not-listed'],
    ['https://mcp.internal.example.com/mcp', 'mcp.internal.example.com', 'host-not-listed'],
    ['https://tickets.example.com/mcp', 'tickets.example.com', 'host-not-listed'],
    [
      'https://mcp.tickets.example.com.evil.example/mcp',
      'mcp.tickets.example.com.evil.example',
      'host-not-listed',
    ],
    ['https://169.254.169.254/latest/meta-data/', '169.254.169.254', 'host-not-listed'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254', 'not-https'],
    ['https://2852039166/', '169.254.169.254', 'host-not-listed'],
    ['https://[::1]/mcp', '[::1]', 'host-not-listed'],
    ['http://[::1]:9001/mcp', '[::1]:9001', 'not-https'],
    ['http://127.0.0.1:9001/2018-06-01/runtime/invocation/next', '127.0.0.1:9001', 'not-https'],
    ['https://localhost/mcp', 'localhost', 'host-not-listed'],
    ['https://user:pass@mcp.tickets.example.com/mcp', 'mcp.tickets.example.com', 'credentials'],
  ])('refuses %s when deployed', (url, host, problem) => {
    // Act
    const verdict = checkMcpServerUrl(url, deployed);

    // Assess
    expect(verdict).toEqual({ kind: 'not-allowed', host, problem });
  });

  it.each([
    ['http://127.0.0.1:4123/mcp'],
    ['http://localhost:4123/mcp'],
    ['http://[::1]:4123/mcp'],
    ['https://127.0.0.2/mcp'],
    ['http://0x7f.1:4123/mcp'],
    ['http://localhost.:4123/mcp'],
    ['https://mcp.tickets.example.com/mcp'],
  ])('allows %s locally (loopback over http, listed hosts over https)', (url) => {
    // Act
    const verdict = checkMcpServerUrl(url, local);

    // Assess
    expect(verdict).toEqual({ kind: 'allowed' });
  });

  it.each([
    ['http://mcp.tickets.example.com/mcp', 'not-https'],
    ['http://169.254.169.254/latest/meta-data/', 'not-https'],
    ['https://10.0.0.5/mcp', 'host-not-listed'],
  ])('still refuses %s locally', (url, problem) => {
    // Act
    const verdict = checkMcpServerUrl(url, local);

    // Assess
    expect(verdict).toMatchObject({ kind: 'not-allowed', problem });
  });

  it('reaches nothing with no policy (the default)', () => {
    // Act
    const verdicts = ['https://mcp.tickets.example.com/mcp', 'http://127.0.0.1:80/'].map(
      (url) => checkMcpServerUrl(url, NO_MCP_HOSTS).kind,
    );

    // Assess
    expect(verdicts).toEqual(['not-allowed', 'not-allowed']);
  });

  it('throws McpHostNotAllowed naming the server, not the host, at connect time', () => {
    // Act
    const thrown = (() => {
      try {
        assertMcpServerAllowed({ name: 'tickets', url: 'https://169.254.169.254/' }, deployed);
      } catch (error) {
        return error;
      }
      return undefined;
    })();

    // Assess
    expect(thrown).toBeInstanceOf(Error);
    expect((thrown as Error).name).toBe('McpHostNotAllowed');
    expect((thrown as Error).message).toMatch(/^MCP server tickets: host not allowed/);
    expect((thrown as Error).message).not.toContain('169.254');
  });
});

describe('refusing a configuration at PUT', () => {
  it('answers 400 naming the second server field and its host', () => {
    // Act
    const thrown = (() => {
      try {
        refuseDisallowedMcpServers(
          {
            mcpServers: [
              { url: 'https://mcp.tickets.example.com/mcp' },
              { url: 'https://metadata.internal:8080/mcp' },
            ],
          },
          deployed,
        );
      } catch (error) {
        return error;
      }
      return undefined;
    })();

    // Assess
    expect(isCountersignError(thrown, 'bad-request')).toBe(true);
    expect(thrown).toMatchObject({ field: 'body.mcpServers.1.url' });
    expect((thrown as Error).message).toBe(
      `body.mcpServers.1.url: the host "metadata.internal:8080" is not allowed: it is not on the deployment's allowed MCP hosts (mcpAllowedHosts).`,
    );
  });

  it('accepts a configuration without MCP servers whatever the policy', () => {
    // Act
    const refuse = () => refuseDisallowedMcpServers({}, NO_MCP_HOSTS);

    // Assess
    expect(refuse).not.toThrow();
  });
});

describe('an allowed-hosts entry', () => {
  it.each([
    ['MCP.Example.com', 'mcp.example.com'],
    ['mcp.example.com:443', 'mcp.example.com'],
    ['mcp.example.com:8443', 'mcp.example.com:8443'],
    ['10.0.0.5:8080', '10.0.0.5:8080'],
    ['[2001:DB8::0:5]', '[2001:db8::5]'],
    ['[::ffff:10.0.0.5]', '[::ffff:a00:5]'],
  ])('normalises %s to %s', (entry, host) => {
    // Act
    const normalized = normalizeMcpAllowedHost(entry);

    // Assess
    expect(normalized).toEqual({ kind: 'valid', host });
  });

  it.each([
    ['https://mcp.example.com'],
    ['*.example.com'],
    ['mcp.example.com/mcp'],
    ['user@mcp.example.com'],
    ['169.254.169.254'],
    ['169.254.170.2'],
    ['2852039166'],
    ['[::ffff:169.254.169.254]'],
    ['[fd00:ec2::254]'],
    ['[fe80::1]'],
    ['127.0.0.1:9001'],
    ['localhost'],
    ['[::1]'],
    ['0.0.0.0'],
    [''],
    // Issue #20 item 7: each of these was accepted.
    ['localhost.'],
    ['LOCALHOST..:8443'],
    ['[::169.254.169.254]'],
    ['[64:ff9b::a9fe:a9fe]'],
    ['[64:ff9b:1:a9fe:a9:fea9:fe00::]'],
    ['[::ffff:0:169.254.169.254]'],
    ['[2002:a9fe:a9fe::1]'],
    ['[2001:0:4136:e378:8000:63bf:5601:5601]'],
    ['[fd00:ec2::23]'],
    ['mcp.example.com.'],
    ['mcp..example.com'],
  ])('refuses %s', (entry) => {
    // Act
    const normalized = normalizeMcpAllowedHost(entry);

    // Assess
    expect(normalized.kind).toBe('invalid');
  });
});
