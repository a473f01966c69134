// npm run skills -- <command>: ingest, review and attach skills through the admin API.
import { basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FolderSkillSource } from '../lambdas/adapters/skills/folder-skill-source.js';
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
  const { positional, options } = parseArguments(args);
  const [command, ...rest] = positional;
  const url = (options.url ?? io.environment.COUNTERSIGN_URL ?? 'http://127.0.0.1:8787').replace(/\/$/, '');
  const token = options.token ?? io.environment.COUNTERSIGN_TOKEN;
  const usage = (problem?: string): number => {
    if (problem) io.printError(problem);
    io.printError(USAGE);
    return 2;
  };
  // Asked for, help is the answer (stdout, exit 0); printed because of a mistake, it is an error.
  if (command === 'help' || options.help !== undefined) {
    io.print(USAGE);
    return 0;
  }
  if (command === undefined) return usage();
  if (!token) return usage('An admin bearer token is needed: --token or COUNTERSIGN_TOKEN.');
  type Answer = { kind: 'ok'; json: unknown } | { kind: 'failed' };
  const send = async (method: string, path: string, body?: unknown): Promise<Answer> => {
    const target = `${url}/admin/skills${path}`;
    let response: Response;
    try {
      response = await (io.fetch ?? fetch)(target, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      io.printError(
        `Could not reach ${target}: ${describeNetworkError(error)}. Is the server running there?`,
      );
      return { kind: 'failed' };
    }
    const text = await response.text();
    if (response.ok) return { kind: 'ok', json: text === '' ? undefined : JSON.parse(text) };
    let message = `HTTP ${response.status}`;
    try {
      message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
    } catch {
      // not JSON: the status says enough
    }
    io.printError(`Refused (${response.status}): ${message}`);
    return { kind: 'failed' };
  };
  const call = async (method: string, path: string, body?: unknown): Promise<number> => {
    const answer = await send(method, path, body);
    if (answer.kind === 'failed') return 1;
    io.print(answer.json === undefined ? '' : JSON.stringify(answer.json, null, 2));
    return 0;
  };
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
        const whole = {
          source: 'upload',
          label: label || 'folder',
          files: skills.flatMap((skill) => skill.files),
        };
        if (requestBytes(whole) <= MAX_BODY_BYTES) return call('POST', '/ingest', whole);
        return ingestSkillBySkill(whole.label, skills, send, io);
      }
      if (options.github !== undefined) {
        const [owner, repo, ...extra] = options.github.split('/');
        if (!owner || !repo || extra.length > 0) return usage('--github takes owner/repo.');
        if (!options.ref) return usage('--ref is required with --github.');
        return call('POST', '/ingest', {
          source: 'github',
          owner,
          repo,
          ref: options.ref,
          path: options.path ?? '',
        });
      }
      return usage('ingest needs --folder or --github.');
    }
    case 'list': {
      // The admin list is paged; the CLI follows the cursor and prints every skill.
      const items: unknown[] = [];
      let cursor: string | undefined;
      do {
        const answer = await send('GET', cursor === undefined ? '' : `?cursor=${encodeURIComponent(cursor)}`);
        if (answer.kind === 'failed') return 1;
        const page = (answer.json ?? {}) as { items?: unknown[]; cursor?: string };
        items.push(...(page.items ?? []));
        cursor = page.cursor;
      } while (cursor !== undefined);
      io.print(JSON.stringify({ items }, null, 2));
      return 0;
    }
    case 'show':
      return rest[0] ? call('GET', `/${encodeURIComponent(rest[0])}`) : usage('show needs a skill id.');
    case 'enable':
      if (!rest[0] || !options.checksum) return usage('enable needs a skill id and --checksum.');
      return call('POST', `/${encodeURIComponent(rest[0])}/enable`, { bodyChecksum: options.checksum });
    case 'disable':
      return rest[0]
        ? call('POST', `/${encodeURIComponent(rest[0])}/disable`)
        : usage('disable needs a skill id.');
    case 'attach': {
      const target =
        options.task !== undefined
          ? `tasks/${encodeURIComponent(options.task)}`
          : options.configuration !== undefined
            ? `configurations/${encodeURIComponent(options.configuration)}`
            : undefined;
      if (!target) return usage('attach needs --task or --configuration.');
      return call('PUT', `/attachments/${target}`, { skillIds: rest });
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
  send: (
    method: string,
    path: string,
    body?: unknown,
  ) => Promise<{ kind: 'ok'; json: unknown } | { kind: 'failed' }>,
  io: SkillsCliIo,
): Promise<number> {
  const requests = skills.map((skill) => ({
    identifier: skill.identifier,
    body: { source: 'upload', label, scope: skill.identifier, files: skill.files },
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
    const answer = await send('POST', '/ingest', request.body);
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
function describeNetworkError(error: unknown): string {
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

function parseArguments(args: readonly string[]): { positional: string[]; options: Record<string, string> } {
  const positional: string[] = [];
  const options: Record<string, string> = {};
  for (let index = 0; index < args.length; index += 1) {
    const argument = args[index] ?? '';
    if (argument.startsWith('--')) {
      const [name, inline] = argument.slice(2).split(/=(.*)/s);
      const next = args[index + 1];
      if (inline !== undefined) options[name ?? ''] = inline;
      else if (next !== undefined && !next.startsWith('--')) {
        options[name ?? ''] = next;
        index += 1;
      } else options[name ?? ''] = '';
    } else positional.push(argument);
  }
  return { positional, options };
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
