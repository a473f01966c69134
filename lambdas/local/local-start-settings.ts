import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Tool } from '../core/tools/tool.js';

/** The environment variables `npm start` reads beside the port and the data folder. */
export const LOCAL_START_VARIABLES = {
  toolsModule: 'COUNTERSIGN_TOOLS_MODULE',
  approvalTimeout: 'COUNTERSIGN_APPROVAL_TIMEOUT',
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
