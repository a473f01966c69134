import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as z from 'zod/mini';
import { slackRoutesSchema } from '../core/channels/slack-routes.js';
import { formatSchemaIssues } from '../core/schema-messages.js';
import type { Tool } from '../core/tools/tool.js';
import type { LocalChannelOptions } from './local-channels.js';

/** The environment variables `npm start` reads beside the port and the data folder. */
export const LOCAL_START_VARIABLES = {
  toolsModule: 'COUNTERSIGN_TOOLS_MODULE',
  approvalTimeout: 'COUNTERSIGN_APPROVAL_TIMEOUT',
  slackSigningSecret: 'COUNTERSIGN_SLACK_SIGNING_SECRET',
  slackBotToken: 'COUNTERSIGN_SLACK_BOT_TOKEN',
  slackRoutes: 'COUNTERSIGN_SLACK_ROUTES',
  slackApiUrl: 'COUNTERSIGN_SLACK_API_URL',
  emailFromAddress: 'COUNTERSIGN_EMAIL_FROM_ADDRESS',
  sesEndpoint: 'COUNTERSIGN_SES_ENDPOINT',
} as const;

/** A setting of `npm start` that cannot be used; its message names the variable and the fix. */
export class LocalStartSettingError extends Error {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'LocalStartSettingError';
  }
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400 };

/**
 * Reads `COUNTERSIGN_APPROVAL_TIMEOUT`: whole seconds (`3600`) or a number with one unit
 * (`90s`, `30m`, `12h`, `3d`). The range is the construct's to check, so that the local mode
 * refuses exactly what a deployment would.
 *
 * @example
 * parseApprovalTimeout('3d') // 259200
 */
export function parseApprovalTimeout(text: string): number {
  const match = /^(\d{1,9})([smhd]?)$/.exec(text.trim());
  const amount = match?.[1];
  if (match === null || amount === undefined) {
    throw new LocalStartSettingError(
      `${LOCAL_START_VARIABLES.approvalTimeout} must be whole seconds or a number with s, m, h or d (e.g. 3600 or 3d), not "${text}".`,
    );
  }
  return Number(amount) * (UNIT_SECONDS[match[2] || 's'] ?? 1);
}

/**
 * Loads a team's tools module the way the construct's `toolsModule` would: it must export
 * `teamTools`, an array of tools. A path is taken relative to `baseDirectory`.
 *
 * @example
 * const tools = await loadTeamToolsModule('tools/team-tools.ts', process.cwd());
 */
export async function loadTeamToolsModule(modulePath: string, baseDirectory: string): Promise<Tool[]> {
  const variable = LOCAL_START_VARIABLES.toolsModule;
  const absolute = isAbsolute(modulePath) ? modulePath : resolve(baseDirectory, modulePath);
  if (!existsSync(absolute)) {
    throw new LocalStartSettingError(`${variable} names "${modulePath}", which does not exist.`);
  }
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (error) {
    // The team's own file on their own machine: its error text is what they need to fix it.
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    throw new LocalStartSettingError(`${variable}: "${modulePath}" could not be loaded (${reason}).`, {
      cause: error,
    });
  }
  const teamTools = loaded.teamTools;
  if (!Array.isArray(teamTools)) {
    throw new LocalStartSettingError(
      `${variable}: "${modulePath}" exports no \`teamTools\` array; export \`const teamTools: Tool[] = [...]\`.`,
    );
  }
  const notTools = teamTools.filter(
    (tool: unknown) =>
      typeof tool !== 'object' ||
      tool === null ||
      typeof (tool as Partial<Tool>).name !== 'string' ||
      typeof (tool as Partial<Tool>).execute !== 'function',
  );
  if (notTools.length > 0) {
    throw new LocalStartSettingError(
      `${variable}: "${modulePath}" exports \`teamTools\` with ${notTools.length} entries that are not tools (each needs a name and execute).`,
    );
  }
  return teamTools as Tool[];
}

/**
 * The channels `npm start` switches on, as the construct's `channels` props do deployed: Slack
 * with its signing secret, bot token and routes (JSON, as `channels.slack.routes`), optionally
 * another Web API URL; email with the From address, optionally a local SES endpoint. A channel half
 * configured is refused, naming what it lacks.
 *
 * @example
 * parseLocalChannels({ COUNTERSIGN_EMAIL_FROM_ADDRESS: 'countersign@example.com' }); // { email: { fromAddress: ... } }
 */
export function parseLocalChannels(environment: Record<string, string | undefined>): LocalChannelOptions {
  const variables = LOCAL_START_VARIABLES;
  const value = (name: string) => (environment[name] === '' ? undefined : environment[name]);
  const slackNames = [variables.slackSigningSecret, variables.slackBotToken, variables.slackRoutes];
  const slackGiven = slackNames.filter((name) => value(name) !== undefined);
  if (slackGiven.length > 0 && slackGiven.length < slackNames.length) {
    throw new LocalStartSettingError(
      `The Slack channel needs ${slackNames.join(', ')}; set all three or none.`,
    );
  }
  const channels: { -readonly [Key in keyof LocalChannelOptions]: LocalChannelOptions[Key] } = {};
  if (slackGiven.length === slackNames.length) {
    channels.slack = {
      signingSecret: value(variables.slackSigningSecret) ?? '',
      botToken: value(variables.slackBotToken) ?? '',
      routes: parseJsonSetting(variables.slackRoutes, value(variables.slackRoutes) ?? '', slackRoutesSchema),
      ...(value(variables.slackApiUrl) === undefined ? {} : { apiUrl: value(variables.slackApiUrl) }),
    };
  }
  const fromAddress = value(variables.emailFromAddress);
  if (fromAddress !== undefined) {
    if (!z.string().check(z.email()).safeParse(fromAddress).success) {
      throw new LocalStartSettingError(
        `${variables.emailFromAddress} must be an email address, not "${fromAddress}".`,
      );
    }
    const sesEndpoint = value(variables.sesEndpoint);
    channels.email = { fromAddress, ...(sesEndpoint === undefined ? {} : { sesEndpoint }) };
  }
  return channels;
}

function parseJsonSetting<Output>(variable: string, text: string, schema: z.ZodMiniType<Output>): Output {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new LocalStartSettingError(`${variable} is not JSON.`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    throw new LocalStartSettingError(`${variable}: ${formatSchemaIssues(parsed.error.issues.slice(0, 1))}.`);
  }
  return parsed.data;
}
