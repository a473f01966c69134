import { createHash } from 'node:crypto';
import { CountersignError } from '../../core/errors.js';
import { type GitHubIngest, gitHubIngestSchema } from '../../core/skills/skill-ingest-requests.js';
import { SKILL_BODY_MAX_BYTES } from '../../core/skills/skill-record.js';
import { normaliseSourcePath, type SkillSnapshot, type SkillSource } from '../../core/skills/skill-source.js';
import { callOutbound, type OutboundRefusalReason } from '../outbound/outbound-fetch.js';
import { collectSkillFolders, SKILL_FILE_NAME } from './skill-folders.js';

/** The hosts an ingest may talk to. Only GitHub's REST API: trees and blobs come from it too. */
export const GITHUB_ALLOWED_HOSTS: readonly string[] = ['api.github.com'];
const GITHUB_API_BASE_URL = 'https://api.github.com';
const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** A SKILL.md is its body plus frontmatter; a blob far larger is refused before decoding. */
const MAX_SKILL_FILE_BYTES = SKILL_BODY_MAX_BYTES + 16 * 1024;

export interface GitHubSkillSourceProps extends GitHubIngest {
  /** @default 'https://api.github.com' (tests point it at a local server) */
  readonly apiBaseUrl?: string;
  /** `host[:port]` values requests and redirects may reach. @default GITHUB_ALLOWED_HOSTS */
  readonly allowedHosts?: readonly string[];
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** @default 10000 */
  readonly timeoutMs?: number;
}

type TreeEntry = { path: string; type: string; sha: string; size?: number };

/**
 * Skills from a GitHub repository over GitHub's HTTPS REST API (docs/skills.md): the ref is
 * resolved to a commit SHA first, and the tree and every blob are read at that commit, so one
 * ingest sees one consistent state (`pinnedCommit`). Only allow-listed hosts are contacted,
 * over the base URL's scheme, through the outbound policy (lambdas/adapters/outbound/): a
 * redirect to another origin refuses the ingest, and a slow or bloated answer is a refusal
 * that says so. Each blob is
 * checked against its git object id. A truncated tree is refused, because skills missing
 * from it would wrongly be orphaned.
 *
 * @example
 * const source = new GitHubSkillSource({ source: 'github', owner: 'acme', repo: 'skills', ref: 'main', path: 'skills' });
 * const summary = await ingestSkills(dependencies, actor, await source.readSnapshot());
 */
export class GitHubSkillSource implements SkillSource {
  private readonly base: URL;
  private readonly allowedHosts: ReadonlySet<string>;
  private readonly fetch: typeof fetch;
  private readonly timeoutMs: number;
  private readonly scope: string;

  public constructor(private readonly props: GitHubSkillSourceProps) {
    gitHubIngestSchema.parse({
      source: 'github',
      owner: props.owner,
      repo: props.repo,
      ref: props.ref,
      path: props.path,
    });
    this.base = new URL(props.apiBaseUrl ?? GITHUB_API_BASE_URL);
    this.allowedHosts = new Set(props.allowedHosts ?? GITHUB_ALLOWED_HOSTS);
    this.fetch = props.fetch ?? globalThis.fetch;
    this.timeoutMs = props.timeoutMs ?? 10_000;
    // The lookbehind keeps the match linear: a run of slashes is tried from its first one only.
    this.scope = props.path === '' ? '' : normaliseSourcePath(props.path.replace(/(?<!\/)\/+$/, ''), 'path');
  }

  public async readSnapshot(): Promise<SkillSnapshot> {
    const repository = `/repos/${encodeURIComponent(this.props.owner)}/${encodeURIComponent(this.props.repo)}`;
    const commit = (await this.getJson(`${repository}/commits/${encodeURIComponent(this.props.ref)}`)) as {
      sha?: unknown;
    };
    if (typeof commit.sha !== 'string' || !/^[0-9a-f]{40}$/.test(commit.sha)) {
      throw this.refusal('GitHub did not resolve the ref to a commit SHA.');
    }
    const pinnedCommit = commit.sha;
    const tree = (await this.getJson(`${repository}/git/trees/${pinnedCommit}?recursive=1`)) as {
      tree?: unknown;
      truncated?: unknown;
    };
    if (tree.truncated === true) {
      throw this.refusal('the repository tree is too large for one listing; ingest a narrower path.');
    }
    const entries = (Array.isArray(tree.tree) ? tree.tree : []).filter(
      (entry): entry is TreeEntry =>
        typeof entry?.path === 'string' && entry.type === 'blob' && typeof entry.sha === 'string',
    );
    const inScope = entries.filter((entry) => this.scope === '' || entry.path.startsWith(`${this.scope}/`));
    const byPath = new Map(inScope.map((entry) => [entry.path, entry]));
    const folders = await collectSkillFolders(
      inScope.map((entry) => entry.path),
      async (path) => this.readBlob(repository, byPath.get(path) as TreeEntry),
      'path',
    );
    return {
      source: `github:${this.props.owner}/${this.props.repo}`,
      scope: this.scope,
      pinnedCommit,
      folders,
    };
  }

  private async readBlob(repository: string, entry: TreeEntry): Promise<Uint8Array> {
    if (!/^[0-9a-f]{40}$/.test(entry.sha))
      throw this.refusal(`GitHub listed "${entry.path}" with an invalid object id.`);
    if ((entry.size ?? 0) > MAX_SKILL_FILE_BYTES) {
      throw this.refusal(
        `${entry.path}: ${entry.size} bytes; a ${SKILL_FILE_NAME} may have at most ${MAX_SKILL_FILE_BYTES}.`,
      );
    }
    const blob = (await this.getJson(`${repository}/git/blobs/${entry.sha}`)) as {
      content?: unknown;
      encoding?: unknown;
    };
    if (typeof blob.content !== 'string' || blob.encoding !== 'base64') {
      throw this.refusal(`GitHub returned "${entry.path}" in an unexpected shape.`);
    }
    const bytes = Buffer.from(blob.content.replace(/\s+/g, ''), 'base64');
    if (bytes.byteLength > MAX_SKILL_FILE_BYTES) {
      throw this.refusal(
        `${entry.path}: ${bytes.byteLength} bytes; a ${SKILL_FILE_NAME} may have at most ${MAX_SKILL_FILE_BYTES}.`,
      );
    }
    const objectId = createHash('sha1').update(`blob ${bytes.byteLength}\0`).update(bytes).digest('hex');
    if (objectId !== entry.sha)
      throw this.refusal(`GitHub returned "${entry.path}" with content that does not match its object id.`);
    return bytes;
  }

  /**
   * GET a JSON document through the outbound policy: redirects followed only within the origin
   * (and the allow-list), the body bounded while it streams, one timeout for the request and
   * its body. Every way it can fail is a refusal of this ingest that says which.
   */
  private async getJson(pathAndQuery: string): Promise<unknown> {
    const url = new URL(`${this.base.pathname.replace(/\/$/, '')}${pathAndQuery}`, this.base);
    this.assertAllowed(url);
    const answer = await callOutbound(
      {
        url,
        headers: {
          accept: 'application/vnd.github+json',
          'x-github-api-version': '2022-11-28',
          'user-agent': 'countersign-skills',
        },
        signal: AbortSignal.timeout(this.timeoutMs),
      },
      {
        redirects: 'same-origin',
        maxResponseBytes: MAX_RESPONSE_BYTES,
        allowsUrl: (target) => this.isAllowed(target),
      },
      { fetch: this.fetch },
    );
    if (answer.kind === 'refused') throw this.refusal(this.formatRefusal(answer));
    if (answer.status >= 300 && answer.status < 400) {
      throw this.refusal('GitHub answered with a redirect that was not followed.');
    }
    if (answer.status === 404) {
      throw this.refusal('the repository, ref or path was not found (or is not public).');
    }
    if (answer.status < 200 || answer.status > 299) {
      throw this.refusal(
        `GitHub answered ${answer.status}${answer.status === 403 || answer.status === 429 ? ' (rate limit or access refused)' : ''}.`,
      );
    }
    try {
      return JSON.parse(new TextDecoder().decode(answer.body));
    } catch {
      throw this.refusal('GitHub answered with something that is not JSON.');
    }
  }

  private formatRefusal(answer: { reason: OutboundRefusalReason; target?: string }): string {
    switch (answer.reason) {
      case 'redirect-refused':
      case 'url-refused':
        return `GitHub answered with a redirect to "${answer.target ?? 'elsewhere'}", which is not followed: only redirects within ${this.base.origin} on the allow-list are; nothing was ingested.`;
      case 'too-large':
        return 'GitHub answered with a document that is too large.';
      case 'timed-out':
      case 'cancelled':
        return `GitHub did not answer within ${Number((this.timeoutMs / 1000).toFixed(1))} s; nothing was ingested.`;
      default:
        return 'GitHub could not be reached.';
    }
  }

  private isAllowed(url: URL): boolean {
    return (
      url.protocol === this.base.protocol && this.allowedHosts.has(url.host) && !url.username && !url.password
    );
  }

  private assertAllowed(url: URL): void {
    if (!this.isAllowed(url)) throw this.refusal(`"${url.host}" is not on the allow-list of GitHub hosts.`);
  }

  private refusal(problem: string): CountersignError {
    return new CountersignError(
      'bad-request',
      `GitHub ${this.props.owner}/${this.props.repo}@${this.props.ref}: ${problem}`,
      { field: 'source' },
    );
  }
}
