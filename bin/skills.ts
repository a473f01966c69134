// npm run skills -- <command>: ingest, review and attach skills through the admin API.
import { basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FolderSkillSource } from '../lambdas/adapters/skills/folder-skill-source.js';

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
         --token <admin bearer token> (or COUNTERSIGN_TOKEN)`;

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
  if (command === undefined || command === 'help' || options.help !== undefined) return usage();
  if (!token) return usage('An admin bearer token is needed: --token or COUNTERSIGN_TOKEN.');
  const call = async (method: string, path: string, body?: unknown): Promise<number> => {
    const response = await (io.fetch ?? fetch)(`${url}/admin/skills${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.ok) {
      io.print(text === '' ? '' : JSON.stringify(JSON.parse(text), null, 2));
      return 0;
    }
    let message = `HTTP ${response.status}`;
    try {
      message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
    } catch {
      // not JSON: the status says enough
    }
    io.printError(`Refused (${response.status}): ${message}`);
    return 1;
  };
  switch (command) {
    case 'ingest': {
      if (options.folder !== undefined) {
        const root = resolve(options.folder);
        const label = (options.label ?? basename(root))
          .replace(/[^A-Za-z0-9._-]/g, '-')
          .replace(/^[^A-Za-z0-9]+/, '');
        const snapshot = await new FolderSkillSource({ root, label }).readSnapshot();
        const files = snapshot.folders.flatMap((folder) => [
          { path: `${folder.identifier}/SKILL.md`, ...encodeContent(folder.skillFile) },
          ...folder.otherFiles.map((path) => ({ path: `${folder.identifier}/${path}` })),
        ]);
        return call('POST', '/ingest', { source: 'upload', label: label || 'folder', files });
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
    case 'list':
      return call('GET', '');
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
