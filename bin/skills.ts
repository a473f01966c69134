// npm run skills -- <command>: ingest, review and attach skills through the admin API.
import { basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { FolderSkillSource } from '../lambdas/adapters/skills/folder-skill-source.js';
import { type ApiRequest, createApiClient } from '../lambdas/contract/api-client.js';
import type { ErrorBody } from '../lambdas/contract/common-schemas.js';
import { MAX_BODY_BYTES } from '../lambdas/handlers/http/http-api.js';

const USAGE = `Usage: npm run skills -- <command> [options]

  ingest --folder <path> [--label <label>]       upload a folder of skills (each subfolder a SKILL.md)
  ingest --github <owner/repo> --ref <ref> [--path <path>]
                                                 ingest from GitHub, pinned to the ref's commit
  list                                           every skill, with its checksum and state
  show <skillId>                                 one skill, its body and its audit
  enable <skillId> --checksum <sha256>           enable after review (the checksum you reviewed)
  disable <skillId>
  attach --task <id> | --configuration <id> [<skillId> ...]
                                                 set the attached skills, in order (none: detach all)

Options: --url <base URL> (or COUNTERSIGN_URL; default http://127.0.0.1:8787)
         --token <admin bearer token> (or COUNTERSIGN_TOKEN)
         --help  this text

A folder larger than one request (${MAX_BODY_BYTES / 1024} KiB) is ingested one skill per request.`;

type UploadFile = { path: string; content?: string; contentBase64?: string };
type IngestBody = ApiRequest<'ingestSkills'>['body'];
type ApiAnswer = { ok: boolean; status: number; body: unknown };
type Answer = { kind: 'ok'; json: unknown } | { kind: 'failed' };

export interface SkillsCliIo {
  readonly fetch?: typeof fetch;
  readonly environment: Record<string, string | undefined>;
  readonly print: (line: string) => void;
  readonly printError: (line: string) => void;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Runs one CLI command against the admin API and returns the exit code (0 done, 1 refused,
 * 2 usage). The API does every check; the CLI only shapes requests and prints answers.
 *
 * @example
 * await runSkillsCli(['ingest', '--folder', './skills'], { environment: process.env, print: console.log, printError: console.error });
 */
export async function runSkillsCli(args: readonly string[], io: SkillsCliIo): Promise<number> {
  const parsed = parseArguments(args);
  const usage = (problem?: string): number => {
    if (problem) io.printError(problem);
    io.printError(USAGE);
    return 2;
  };
  if (parsed.kind === 'refused') return usage(parsed.problem);
  const { positional, options } = parsed;
  const [command, ...rest] = positional;
  const url = (options.url ?? io.environment.COUNTERSIGN_URL ?? 'http://127.0.0.1:8787').replace(/\/$/, '');
  const token = options.token ?? io.environment.COUNTERSIGN_TOKEN;
  // Asked for, help is the answer (stdout, exit 0); printed because of a mistake, it is an error.
  if (command === 'help' || options.help === true) {
    io.print(USAGE);
    return 0;
  }
  if (command === undefined) return usage();
  if (!token) return usage('An admin bearer token is needed: --token or COUNTERSIGN_TOKEN.');
  const api = createApiClient({ baseUrl: url, token, ...(io.fetch ? { fetch: io.fetch } : {}) });
  // Every request is a typed operation of the API; only the network failure and the refusal are said here.
  const send = async (operation: () => Promise<ApiAnswer>): Promise<Answer> => {
    let answer: ApiAnswer;
    try {
      answer = await operation();
    } catch (error) {
      io.printError(
        `Could not reach ${url}/admin/skills: ${formatNetworkError(error)}. Is the server running there?`,
      );
      return { kind: 'failed' };
    }
    if (answer.ok) return { kind: 'ok', json: answer.body };
    const message =
      (answer.body as Partial<ErrorBody> | undefined)?.error?.message ?? `HTTP ${answer.status}`;
    io.printError(`Refused (${answer.status}): ${message}`);
    return { kind: 'failed' };
  };
  const call = async (operation: () => Promise<ApiAnswer>): Promise<number> => {
    const answer = await send(operation);
    if (answer.kind === 'failed') return 1;
    io.print(answer.json === undefined ? '' : JSON.stringify(answer.json, null, 2));
    return 0;
  };
  const ingest = (body: IngestBody) => send(() => api.ingestSkills({ body }));
  switch (command) {
    case 'ingest': {
      if (options.folder !== undefined) {
        const root = resolve(options.folder);
        const label = (options.label ?? basename(root))
          .replace(/[^A-Za-z0-9._-]/g, '-')
          .replace(/^[^A-Za-z0-9]+/, '');
        const snapshot = await new FolderSkillSource({ root, label }).readSnapshot();
        const skills = snapshot.folders.map((folder) => ({
          identifier: folder.identifier,
          files: [
            { path: `${folder.identifier}/SKILL.md`, ...encodeContent(folder.skillFile) },
            ...folder.otherFiles.map((path) => ({ path: `${folder.identifier}/${path}` })),
          ] as UploadFile[],
        }));
        const whole: IngestBody = {
          source: 'upload',
          label: label || 'folder',
          files: skills.flatMap((skill) => skill.files),
        };
        if (requestBytes(whole) <= MAX_BODY_BYTES) return call(() => api.ingestSkills({ body: whole }));
        return ingestSkillBySkill(label || 'folder', skills, ingest, io);
      }
      if (options.github !== undefined) {
        const [owner, repo, ...extra] = options.github.split('/');
        if (!owner || !repo || extra.length > 0) return usage('--github takes owner/repo.');
        if (!options.ref) return usage('--ref is required with --github.');
        const ref = options.ref;
        return call(() =>
          api.ingestSkills({ body: { source: 'github', owner, repo, ref, path: options.path ?? '' } }),
        );
      }
      return usage('ingest needs --folder or --github.');
    }
    case 'list': {
      // The admin list is paged; the CLI follows the cursor and prints every skill.
      const items: unknown[] = [];
      let cursor: string | undefined;
      do {
        const query = cursor === undefined ? {} : { cursor };
        const answer = await send(() => api.listSkills({ query }));
        if (answer.kind === 'failed') return 1;
        const page = (answer.json ?? {}) as { items?: unknown[]; cursor?: string };
        items.push(...(page.items ?? []));
        cursor = page.cursor;
      } while (cursor !== undefined);
      io.print(JSON.stringify({ items }, null, 2));
      return 0;
    }
    case 'show':
      return rest[0]
        ? call(() => api.getSkill({ path: { skillId: rest[0] as string } }))
        : usage('show needs a skill id.');
    case 'enable': {
      const [skillId] = rest;
      const { checksum } = options;
      if (!skillId || !checksum) return usage('enable needs a skill id and --checksum.');
      return call(() => api.enableSkill({ path: { skillId }, body: { bodyChecksum: checksum } }));
    }
    case 'disable':
      return rest[0]
        ? call(() => api.disableSkill({ path: { skillId: rest[0] as string } }))
        : usage('disable needs a skill id.');
    case 'attach': {
      const target =
        options.task !== undefined
          ? ({ owner: 'tasks', id: options.task } as const)
          : options.configuration !== undefined
            ? ({ owner: 'configurations', id: options.configuration } as const)
            : undefined;
      if (!target) return usage('attach needs --task or --configuration.');
      return call(() => api.attachSkills({ path: target, body: { skillIds: rest } }));
    }
    default:
      return usage(`Unknown command "${command}".`);
  }
}

/**
 * A folder too large for one request goes one skill per request, each scoped to its own folder
 * so that it leaves the label's other skills alone. Every request is sized before the first is
 * sent: a skill that does not fit alone is named, and nothing is stored.
 */
async function ingestSkillBySkill(
  label: string,
  skills: ReadonlyArray<{ identifier: string; files: UploadFile[] }>,
  ingest: (body: IngestBody) => Promise<Answer>,
  io: SkillsCliIo,
): Promise<number> {
  const requests = skills.map((skill) => ({
    identifier: skill.identifier,
    body: { source: 'upload', label, scope: skill.identifier, files: skill.files } satisfies IngestBody,
  }));
  const tooLarge = requests.filter((request) => requestBytes(request.body) > MAX_BODY_BYTES);
  if (tooLarge.length > 0) {
    for (const request of tooLarge) {
      io.printError(
        `The skill "${request.identifier}" is too large to upload: ${requestBytes(request.body)} bytes in its request, the API accepts ${MAX_BODY_BYTES}. Nothing was ingested.`,
      );
    }
    return 1;
  }
  io.printError(`The folder is larger than one request: ingesting its ${requests.length} skills one by one.`);
  const summaries: Array<Record<string, unknown>> = [];
  for (const request of requests) {
    const answer = await ingest(request.body);
    if (answer.kind === 'failed') {
      io.printError(`Stopped at the skill "${request.identifier}"; the skills before it were ingested.`);
      return 1;
    }
    summaries.push((answer.json ?? {}) as Record<string, unknown>);
  }
  const merged: Record<string, unknown> = { source: summaries[0]?.source };
  for (const field of ['created', 'changed', 'unchanged', 'orphaned', 'restored']) {
    merged[field] = summaries.flatMap((summary) => (Array.isArray(summary[field]) ? summary[field] : []));
  }
  io.print(JSON.stringify(merged, null, 2));
  // A split upload names one folder per request, so a skill deleted from the folder is not seen.
  io.printError('Skills removed from the folder are not orphaned by a split ingest; disable them by id.');
  return 0;
}

function requestBytes(body: unknown): number {
  return Buffer.byteLength(JSON.stringify(body), 'utf8');
}

/** The reason a request never got an answer (connection refused, unknown host), without a stack. */
function formatNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** Text when the bytes are UTF-8, else base64, so the API can refuse them with its own message. */
function encodeContent(bytes: Uint8Array): { content: string } | { contentBase64: string } {
  try {
    return { content: strictUtf8.decode(bytes) };
  } catch {
    return { contentBase64: Buffer.from(bytes).toString('base64') };
  }
}

const OPTIONS = {
  folder: { type: 'string' },
  label: { type: 'string' },
  github: { type: 'string' },
  ref: { type: 'string' },
  path: { type: 'string' },
  checksum: { type: 'string' },
  task: { type: 'string' },
  configuration: { type: 'string' },
  url: { type: 'string' },
  token: { type: 'string' },
  help: { type: 'boolean' },
} as const;

/** Node's own parser, strict: an unknown option or one missing its value is a usage error. */
function parseArguments(args: readonly string[]) {
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
    });
    return { kind: 'parsed', positional: positionals, options: values } as const;
  } catch (error) {
    return { kind: 'refused', problem: error instanceof Error ? error.message : String(error) } as const;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  runSkillsCli(process.argv.slice(2), {
    environment: process.env,
    print: (line) => console.log(line),
    printError: (line) => console.error(line),
  })
    .then((code) => process.exit(code))
    .catch((error: unknown) => {
      console.error(error instanceof Error ? error.message : String(error));
      process.exit(1);
    });
}
