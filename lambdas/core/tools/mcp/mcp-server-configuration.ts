import * as z from 'zod/mini';

/** A server name is the prefix of its tools' names (`<server>__<tool>`): no "_", so the split is unambiguous. */
export const MCP_SERVER_NAME_PATTERN = /^[a-zA-Z][a-zA-Z0-9-]{0,29}$/;
/** Between a server's name and its tool's name in the name the model sees. */
export const MCP_TOOL_SEPARATOR = '__';
/** The convention for a tool's preview: a read-only companion named `<tool>__preview`. */
export const MCP_PREVIEW_SUFFIX = '__preview';

// Strict like the rest of a configuration: a misspelt `approversMayReadPreview` is a 400,
// never a silently closed (or open) read gate.
export const mcpServerSchema = z.strictObject({
  /** Prefix of its tools' names; unique within the configuration. */
  name: z
    .string()
    .check(z.regex(MCP_SERVER_NAME_PATTERN, 'use a letter, then letters, digits or "-", at most 30')),
  /** The server's streamable HTTP endpoint. */
  url: z.string().check(
    z.maxLength(2000),
    z.refine((value) => /^https?:\/\/[^\s]+$/.test(value) && URL.canParse(value), 'must be an http(s) URL'),
  ),
  /**
   * The bearer token's secret: a Secrets Manager name or ARN when deployed; locally the
   * environment variable `COUNTERSIGN_MCP_SECRET_<ID>` (the id upper-cased, other characters "_").
   */
  authSecret: z.optional(z.string().check(z.minLength(1), z.maxLength(2048))),
  /** Each call to the server (connect, list, call, preview) ends with an error after this long. */
  timeoutMs: z._default(z.number().check(z.int(), z.gte(100), z.lte(60_000)), 10_000),
  /** Whether approvers may read this server's previews. The server cannot check a viewer's rights. */
  approversMayReadPreviews: z._default(z.boolean(), false),
});
export type McpServerConfiguration = z.infer<typeof mcpServerSchema>;

export const mcpServersSchema = z.array(mcpServerSchema).check(
  z.maxLength(10),
  z.refine(
    (servers) => new Set(servers.map((server) => server.name.toLowerCase())).size === servers.length,
    'server names must be unique',
  ),
);

/** The environment variable a local runtime reads a server's secret from. */
export function localSecretVariable(secretId: string): string {
  return `COUNTERSIGN_MCP_SECRET_${secretId.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}
