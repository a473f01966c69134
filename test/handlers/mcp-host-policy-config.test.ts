import { afterEach, describe, expect, it } from 'vitest';
import { localMcpHostPolicy, readEnvironment } from '../../lambdas/handlers/config.js';

const BASE_ENVIRONMENT = {
  COUNTERSIGN_TABLE_NAME: 'table',
  COUNTERSIGN_SEALING_KEY_ARN: 'arn:aws:kms:us-east-1:123456789012:key/sealing',
  COUNTERSIGN_OVERFLOW_BUCKET: 'bucket',
  COUNTERSIGN_OVERFLOW_KEY_ARN: 'arn:aws:kms:us-east-1:123456789012:key/overflow',
};

describe('COUNTERSIGN_MCP_ALLOWED_HOSTS', () => {
  const before = process.env.COUNTERSIGN_MCP_ALLOWED_HOSTS;
  afterEach(() => {
    if (before === undefined) delete process.env.COUNTERSIGN_MCP_ALLOWED_HOSTS;
    else process.env.COUNTERSIGN_MCP_ALLOWED_HOSTS = before;
  });

  it('reads as no host when unset or empty (a deployment reaches no MCP server)', () => {
    // Act
    const unset = readEnvironment(BASE_ENVIRONMENT).COUNTERSIGN_MCP_ALLOWED_HOSTS;
    const empty = readEnvironment({
      ...BASE_ENVIRONMENT,
      COUNTERSIGN_MCP_ALLOWED_HOSTS: '',
    }).COUNTERSIGN_MCP_ALLOWED_HOSTS;

    // Assess
    expect(unset).toEqual([]);
    expect(empty).toEqual([]);
  });

  it('normalises each comma-separated entry', () => {
    // Act
    const hosts = readEnvironment({
      ...BASE_ENVIRONMENT,
      COUNTERSIGN_MCP_ALLOWED_HOSTS: ' MCP.Example.com:443 , mcp.internal.example.com:8443',
    }).COUNTERSIGN_MCP_ALLOWED_HOSTS;

    // Assess
    expect(hosts).toEqual(['mcp.example.com', 'mcp.internal.example.com:8443']);
  });

  it('fails the cold start naming the variable and the entry for a metadata address', () => {
    // Act
    const read = () =>
      readEnvironment({
        ...BASE_ENVIRONMENT,
        COUNTERSIGN_MCP_ALLOWED_HOSTS: 'mcp.example.com,169.254.169.254',
      });

    // Assess
    expect(read).toThrow(/COUNTERSIGN_MCP_ALLOWED_HOSTS.*"169\.254\.169\.254" is a loopback, link-local/);
  });

  it('allows loopback locally, and the listed hosts, and stops npm start on a bad entry', () => {
    // Prepare
    process.env.COUNTERSIGN_MCP_ALLOWED_HOSTS = 'mcp.example.com';

    // Act
    const policy = localMcpHostPolicy();
    process.env.COUNTERSIGN_MCP_ALLOWED_HOSTS = 'https://mcp.example.com';
    const bad = () => localMcpHostPolicy();

    // Assess
    expect(policy).toEqual({ allowedHosts: ['mcp.example.com'], allowLoopback: true });
    expect(bad).toThrow(
      /COUNTERSIGN_MCP_ALLOWED_HOSTS.*"https:\/\/mcp\.example\.com" is not host or host:port/,
    );
  });
});
