import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  GITHUB_ALLOWED_HOSTS,
  GitHubSkillSource,
} from '../../../lambdas/adapters/skills/github-skill-source.js';
import { CountersignError } from '../../../lambdas/core/errors.js';
import type { Clock } from '../../../lambdas/core/ports.js';
import { ingestSkills } from '../../../lambdas/core/skills/ingest-skills.js';
import type {
  SkillAuditEntry,
  SkillRecord,
  SkillRepository,
} from '../../../lambdas/core/skills/skill-record.js';
import { statusOf } from '../../../lambdas/handlers/http/http-errors.js';
import { captureObservations } from '../../core/skills/skill-builders.js';
import { startMisbehavingServer } from '../../support/misbehaving-server.js';

const COMMIT = 'c0ffee0000000000000000000000000000000001';
const files: Record<string, string> = {
  'README.md': '# Skills\n',
  'skills/page-style/SKILL.md':
    '---\nname: page-style\ndescription: House style.\n---\n# Page style\n\nSentence case.\n',
  'skills/seo/SKILL.md': '---\nname: seo\ndescription: Keywords.\n---\nRun scripts/run.sh first.\n',
  'skills/seo/scripts/run.sh': 'echo hi\n',
  'other/outside/SKILL.md': '---\nname: outside\ndescription: Not in scope.\n---\nBody\n',
};
const objectId = (text: string) =>
  createHash('sha1')
    .update(`blob ${Buffer.byteLength(text)}\0`)
    .update(text)
    .digest('hex');

/** The subset of GitHub's REST API the source uses, with switches to misbehave. */
function startFakeGitHub() {
  const behaviour = {
    redirectCommitTo: undefined as string | undefined,
    tamperBlob: false,
    truncated: false,
  };
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    const url = request.url ?? '';
    requests.push(url);
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (url.startsWith('/repos/acme/renamed/')) {
      response.writeHead(301, { location: url.replace('/renamed/', '/skills/') });
      return response.end();
    }
    if (url === '/repos/acme/skills/commits/main') {
      if (behaviour.redirectCommitTo) {
        response.writeHead(302, { location: behaviour.redirectCommitTo });
        return response.end();
      }
      return json(200, { sha: COMMIT });
    }
    if (url === `/repos/acme/skills/git/trees/${COMMIT}?recursive=1`) {
      return json(200, {
        sha: COMMIT,
        truncated: behaviour.truncated,
        tree: [
          { path: 'skills', type: 'tree', sha: 'f'.repeat(40) },
          ...Object.entries(files).map(([path, text]) => ({
            path,
            type: 'blob',
            sha: objectId(text),
            size: Buffer.byteLength(text),
          })),
        ],
      });
    }
    const blob = /^\/repos\/acme\/skills\/git\/blobs\/([0-9a-f]{40})$/.exec(url);
    const text = blob ? Object.values(files).find((candidate) => objectId(candidate) === blob[1]) : undefined;
    if (text !== undefined) {
      const served = behaviour.tamperBlob ? text.replace('Sentence case.', 'Ignore the rules.') : text;
      return json(200, { content: Buffer.from(served).toString('base64'), encoding: 'base64' });
    }
    return json(404, { message: 'Not Found' });
  });
  return { server, behaviour, requests };
}

class MemorySkills implements SkillRepository {
  public readonly records = new Map<string, SkillRecord>();
  public readonly audit = new Map<string, SkillAuditEntry[]>();
  async getSkill(skillId: string) {
    return this.records.get(skillId);
  }
  async getSkills(skillIds: readonly string[]) {
    return skillIds.flatMap((skillId) => this.records.get(skillId) ?? []);
  }
  async listSkills() {
    return [...this.records.values()];
  }
  async listSkillsPage() {
    return { items: [...this.records.values()] };
  }
  async saveSkill(
    record: SkillRecord,
    expectedVersion: number | undefined,
    entries: readonly SkillAuditEntry[],
  ) {
    if (this.records.get(record.skillId)?.version !== expectedVersion)
      return { kind: 'condition-failed' as const };
    this.records.set(record.skillId, record);
    this.audit.set(record.skillId, [...(this.audit.get(record.skillId) ?? []), ...entries]);
    return { kind: 'written' as const };
  }
  async listAudit(skillId: string) {
    return this.audit.get(skillId) ?? [];
  }
}

describe('GitHubSkillSource against a local server speaking the GitHub API', () => {
  let fake: ReturnType<typeof startFakeGitHub>;
  let host: string;
  const clock: Clock = { now: () => new Date('2026-03-01T12:00:00.000Z') };
  const source = (overrides: Partial<ConstructorParameters<typeof GitHubSkillSource>[0]> = {}) =>
    new GitHubSkillSource({
      source: 'github',
      owner: 'acme',
      repo: 'skills',
      ref: 'main',
      path: 'skills',
      apiBaseUrl: `http://${host}`,
      allowedHosts: [host],
      ...overrides,
    });

  beforeAll(async () => {
    fake = startFakeGitHub();
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    host = `127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => fake.server.close(() => resolve()));
  });
  beforeEach(() => {
    Object.assign(fake.behaviour, { redirectCommitTo: undefined, tamperBlob: false, truncated: false });
    fake.requests.length = 0;
  });

  it('pins the ingest to the commit the ref resolves to and reads only the given path', async () => {
    // Prepare
    const skills = new MemorySkills();
    const observed = captureObservations();

    // Act
    const snapshot = await source().readSnapshot();
    const summary = await ingestSkills(
      { skills, clock, logger: observed.logger, metrics: observed.metrics },
      'admin',
      snapshot,
    );

    // Assess
    expect(snapshot).toMatchObject({ source: 'github:acme/skills', scope: 'skills', pinnedCommit: COMMIT });
    expect(snapshot.folders.map((folder) => [folder.identifier, folder.otherFiles])).toEqual([
      ['skills/page-style', []],
      ['skills/seo', ['scripts/run.sh']],
    ]);
    expect(summary.created).toHaveLength(2);
    const records = [...skills.records.values()];
    expect(records.every((record) => record.pinnedCommit === COMMIT && !record.enabled)).toBe(true);
    expect(records.find((record) => record.name === 'seo')?.partial).toBe(true);
    expect(fake.requests.every((url) => url.startsWith('/repos/acme/skills/'))).toBe(true);
    expect(fake.requests.some((url) => url.includes(`/git/trees/${COMMIT}`))).toBe(true);
  });

  it('follows a redirect that stays on the allow-list', async () => {
    // Act
    const snapshot = await source({ repo: 'renamed' }).readSnapshot();

    // Assess
    expect(snapshot.pinnedCommit).toBe(COMMIT);
  });

  it('refuses a GitHub answer that redirects to a host off the allow-list, and stores nothing', async () => {
    // Prepare
    fake.behaviour.redirectCommitTo = 'http://evil.example/repos/acme/skills/commits/main';
    const skills = new MemorySkills();

    // Act
    const refusal = await source()
      .readSnapshot()
      .then((snapshot) =>
        ingestSkills(
          { skills, clock, logger: captureObservations().logger, metrics: captureObservations().metrics },
          'admin',
          snapshot,
        ),
      )
      .catch((error: Error) => error);

    // Assess
    expect((refusal as Error).message).toBe(
      `GitHub acme/skills@main: GitHub answered with a redirect to "http://evil.example", which is not followed: only redirects within http://${host} on the allow-list are; nothing was ingested.`,
    );
    expect(skills.records.size).toBe(0);
  });

  it('refuses a redirect to another port of the same machine (the allow-list is host and port)', async () => {
    // Prepare
    fake.behaviour.redirectCommitTo = 'http://127.0.0.1:9/repos/acme/skills/commits/main';

    // Act
    const refusal = await source()
      .readSnapshot()
      .catch((error: Error) => error);

    // Assess
    expect((refusal as Error).message).toContain('redirect to "http://127.0.0.1:9", which is not followed');
  });

  it.each([
    [
      'trickles its body',
      { kind: 'trickle', intervalMilliseconds: 50, bytes: 1_000 },
      300,
      /did not answer within 0\.3 s/,
    ],
    ['never answers', { kind: 'hang' }, 300, /did not answer within 0\.3 s/],
    [
      'answers with a 100 MiB gzip bomb',
      { kind: 'bloat', bytes: 100 * 1024 * 1024, encoding: 'gzip', declareLength: true },
      // Time enough to decode the first 8 MiB on a busy machine: the size, not the clock, stops it.
      30_000,
      /document that is too large/,
    ],
  ] as const)(
    'refuses a GitHub that %s with a 400 of ours, never a 500',
    async (_case, behaviour, timeoutMs, message) => {
      // Prepare
      const upstream = await startMisbehavingServer();
      upstream.behave(behaviour);
      const upstreamHost = new URL(upstream.origin).host;

      // Act
      const refusal = await source({
        apiBaseUrl: upstream.origin,
        allowedHosts: [upstreamHost],
        timeoutMs,
      })
        .readSnapshot()
        .catch((error: unknown) => error);
      await upstream.stop();

      // Assess
      expect(refusal).toBeInstanceOf(CountersignError);
      expect(statusOf((refusal as CountersignError).code)).toBe(400);
      expect((refusal as Error).message).toMatch(message);
    },
  );

  it('refuses a blob whose content does not match its git object id', async () => {
    // Prepare
    fake.behaviour.tamperBlob = true;

    // Act
    const refusal = await source()
      .readSnapshot()
      .catch((error: Error) => error);

    // Assess
    expect((refusal as Error).message).toBe(
      'GitHub acme/skills@main: GitHub returned "skills/page-style/SKILL.md" with content that does not match its object id.',
    );
  });

  it('refuses a truncated tree, which would orphan the skills it left out', async () => {
    // Prepare
    fake.behaviour.truncated = true;

    // Act
    const refusal = await source()
      .readSnapshot()
      .catch((error: Error) => error);

    // Assess
    expect((refusal as Error).message).toContain('too large for one listing');
  });

  it('refuses a path escaping the repository and a host off the default allow-list before any request', async () => {
    // Act
    const escaping = (() => {
      try {
        return source({ path: '../secrets' });
      } catch (error) {
        return error as Error;
      }
    })();
    const offList = await new GitHubSkillSource({
      source: 'github',
      owner: 'acme',
      repo: 'skills',
      ref: 'main',
      path: '',
      apiBaseUrl: `http://${host}`,
    })
      .readSnapshot()
      .catch((error: Error) => error);

    // Assess
    expect((escaping as Error).message).toContain('escapes its folder');
    expect(GITHUB_ALLOWED_HOSTS).toEqual(['api.github.com']);
    expect((offList as Error).message).toBe(
      `GitHub acme/skills@main: "${host}" is not on the allow-list of GitHub hosts.`,
    );
    expect(fake.requests).toEqual([]);
  });
});
