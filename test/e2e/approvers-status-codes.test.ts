import { generateKeyPair, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf, openedCard, type RequestBody, refusalOf } from '../support/api-answers.js';
import {
  apiClientWithToken,
  type ResponseJson,
  settle,
  startRunAndSettle,
  useTestRuntime,
} from '../support/local-runtime.js';
import { createUser, decide, decideWithAnyBody, signTokenWithRuntimeKey } from './approvers-support.js';

const STALE = 'The pending action changed since you viewed it — please re-review.';

describe('approver decisions and the inbox over HTTP: every status code', () => {
  const runtime = useTestRuntime();

  async function waitingRun(input: string, options: { as?: string; configurationId?: string } = {}) {
    const { runId, view } = await startRunAndSettle(runtime, input, options);
    expect(view.status).toBe('waiting');
    return { runId, digest: view.digest as string, turn: view.turn as number };
  }

  async function statusOf(runId: string): Promise<string> {
    return bodyOf(await runtime.client('admin').getRun({ path: { id: runId } })).status;
  }

  describe('401: tokens the local issuer did not sign as valid, over the real HTTP server', () => {
    async function inboxWith(token: string | undefined) {
      return apiClientWithToken(runtime.url, token).listInbox();
    }

    it('accepts a token signed with the runtime key for the right audience (the control)', async () => {
      // Prepare
      const token = await signTokenWithRuntimeKey(runtime, { sub: 'approver', groups: ['agent_approve'] });

      // Act
      const response = await inboxWith(token);

      // Assess
      expect(response.status).toBe(200);
    });

    it.each([
      ['no token', async () => undefined],
      [
        'a forged token (payload changed, signature kept)',
        async (valid: string) => {
          const [header, , signature] = valid.split('.');
          const payload = Buffer.from(
            JSON.stringify({ sub: 'admin', aud: 'countersign', exp: 9_999_999_999 }),
          ).toString('base64url');
          return `${header}.${payload}.${signature}`;
        },
      ],
      [
        'a token signed by another key',
        async () => {
          const { privateKey } = await generateKeyPair('ES256');
          return new SignJWT({ groups: ['admin'] })
            .setProtectedHeader({ alg: 'ES256' })
            .setSubject('admin')
            .setIssuer('http://127.0.0.1/countersign-local')
            .setAudience('countersign')
            .setExpirationTime('1h')
            .sign(privateKey);
        },
      ],
      [
        'an expired token',
        async () => {
          const now = Math.floor(Date.now() / 1000);
          return signTokenWithRuntimeKey(runtime, {
            sub: 'approver',
            issuedAt: now - 7200,
            expiresAt: now - 60,
          });
        },
      ],
      [
        'a wrong-audience token',
        async () => signTokenWithRuntimeKey(runtime, { sub: 'approver', aud: 'another-app' }),
      ],
      [
        'an alg: none token',
        async () => {
          const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
          const payload = Buffer.from(
            JSON.stringify({
              sub: 'admin',
              iss: 'http://127.0.0.1/countersign-local',
              aud: 'countersign',
              exp: Math.floor(Date.now() / 1000) + 3600,
            }),
          ).toString('base64url');
          return `${header}.${payload}.`;
        },
      ],
    ])('answers 401 for %s', async (_name, makeToken) => {
      // Prepare
      const token = await makeToken(runtime.tokens.approver ?? '');
      const { runId, digest } = await waitingRun("Set the keywords of page 12 to 'auth'");

      // Act
      const inbox = await inboxWith(token);
      const decision = await apiClientWithToken(runtime.url, token).decideRun({
        path: { id: runId },
        body: { digest, decision: 'approve' },
      });

      // Assess
      expect(inbox.status).toBe(401);
      expect(refusalOf(inbox).error.code).toBe('unauthenticated');
      expect(decision.status).toBe(401);
      expect(await statusOf(runId)).toBe('waiting');
    });
  });

  describe('400 and 413: malformed and oversized decisions name the problem', () => {
    it.each([
      ['an unknown decision', 'body.decision', { digest: 'x', decision: 'maybe' }],
      ['no decision', 'body.decision', { digest: 'x' }],
      ['a digest that is not a string', 'body.digest', { digest: 42, decision: 'approve' }],
      ['an oversized digest', 'body.digest', { digest: 'd'.repeat(201), decision: 'approve' }],
      ['an oversized reason', 'body.reason', { digest: 'x', decision: 'reject', reason: 'r'.repeat(2001) }],
      ['an unknown field', 'body.approvedBy', { digest: 'x', decision: 'approve', approvedBy: 'me' }],
      ['a JSON array', 'body', []],
    ])('answers 400 for %s, naming %s', async (_name, field, body) => {
      // Prepare
      const { runId } = await waitingRun("Set the author of page 12 to 'bad input'");

      // Act
      const response = await decideWithAnyBody(runtime, runId, body);

      // Assess
      expect(response.status).toBe(400);
      expect(response.json.error.code).toBe('bad-request');
      expect(response.json.error.field).toBe(field);
      expect(response.json.error.message.startsWith(`${field}:`)).toBe(true);
      expect(await statusOf(runId)).toBe('waiting');
    });

    it('answers 400 for a body that is not JSON', async () => {
      // Prepare
      const { runId } = await waitingRun("Set the author of page 12 to 'not json'");

      // Act
      const response = await decideWithAnyBody(runtime, runId, '{"digest": ');

      // Assess
      expect(response.status).toBe(400);
      expect(response.json.error.message).toBe('body: not valid JSON.');
    });

    it('answers 413 for a decision body over 64 KiB, and the run keeps waiting', async () => {
      // Prepare
      const { runId, digest } = await waitingRun("Set the author of page 12 to 'too large'");

      // Act
      const response = await decide(runtime, runId, {
        digest,
        decision: 'reject',
        reason: 'r'.repeat(70_000),
      });

      // Assess
      expect(response.status).toBe(413);
      expect(refusalOf(response).error.code).toBe('payload-too-large');
      expect(refusalOf(response).error.message).toBe('body: larger than 65536 bytes.');
      expect(await statusOf(runId)).toBe('waiting');
    });
  });

  describe('403: the grant, then each gate of the decision', () => {
    it('refuses a decision from a user without agent_approve, naming the grant', async () => {
      // Prepare
      const { runId, digest } = await waitingRun("Set the keywords of page 12 to 'grant'");

      // Act
      const response = await decide(runtime, runId, { digest, decision: 'approve' }, 'editor');

      // Assess
      expect(response.status).toBe(403);
      expect(refusalOf(response).error.message).toBe(TEXTS.grantRefused('agent_approve'));
      expect(await statusOf(runId)).toBe('waiting');
    });

    it('refuses approval from an approver without authority over the tool, but lets them reject', async () => {
      // Prepare
      const token = await createUser(runtime, {
        userId: 'approver-without-tools',
        displayName: 'No Tools',
        grants: ['agent_approve'],
        pageAccess: '*',
        languageAccess: '*',
        toolAccess: [],
      });
      const { runId, digest, turn } = await waitingRun("Set the keywords of page 12 to 'tool gate'");

      // Act
      const approval = await apiClientWithToken(runtime.url, token).decideRun({
        path: { id: runId },
        body: { digest, decision: 'approve' },
      });
      const statusAfterRefusal = await statusOf(runId);
      const recordAfterRefusal = await runtime.dependencies.runs.getDecision(runId, turn);
      const rejection = await apiClientWithToken(runtime.url, token).decideRun({
        path: { id: runId },
        body: { digest, decision: 'reject' },
      });

      // Assess
      expect(approval.status).toBe(403);
      expect(refusalOf(approval).error.message).toBe(TEXTS.gateToolRefused('update_page_metadata'));
      expect(refusalOf(approval).error.message).toMatch(/^Decision gate refused/);
      expect(statusAfterRefusal).toBe('waiting');
      expect(recordAfterRefusal).toBeUndefined();
      expect(rejection.status).toBe(200);
      expect((await settle(runtime, runId, 'admin', turn)).status).toBe('completed');
    });

    it('refuses self-approval under the demo-four-eyes configuration, and another approver may approve', async () => {
      // Prepare: the admin holds every grant, so only four-eyes can refuse them.
      const { runId, digest, turn } = await waitingRun("Set the keywords of page 12 to 'four eyes'", {
        as: 'admin',
        configurationId: 'demo-four-eyes',
      });

      // Act
      const selfApproval = await decide(runtime, runId, { digest, decision: 'approve' }, 'admin');
      const statusAfterRefusal = await statusOf(runId);
      const otherApproval = await decide(runtime, runId, { digest, decision: 'approve' }, 'approver');

      // Assess
      expect(selfApproval.status).toBe(403);
      expect(refusalOf(selfApproval).error.message).toBe(TEXTS.gateFourEyes);
      expect(statusAfterRefusal).toBe('waiting');
      expect(otherApproval.status).toBe(200);
      expect((await settle(runtime, runId, 'admin', turn)).status).toBe('completed');
    });

    it('gives a signed-in user without a user record the grants of their groups and no tool authority', async () => {
      // Prepare
      const token = await signTokenWithRuntimeKey(runtime, { sub: 'group-only', groups: ['agent_approve'] });
      const { runId, digest } = await waitingRun("Set the keywords of page 12 to 'groups'");

      // Act
      const inbox = await apiClientWithToken(runtime.url, token).listInbox({ query: { limit: 100 } });
      const approval = await apiClientWithToken(runtime.url, token).decideRun({
        path: { id: runId },
        body: { digest, decision: 'approve' },
      });

      // Assess
      const card = openedCard(bodyOf(inbox).cards.find((candidate) => candidate.runId === runId));
      expect(inbox.status).toBe(200);
      expect(card.pendingTools[0]?.preview.status).toBe('withheld');
      expect(approval.status).toBe(403);
      expect(refusalOf(approval).error.message).toBe(TEXTS.gateToolRefused('update_page_metadata'));
    });
  });

  describe('404: unknown runs and runs the viewer may not see get the same answer', () => {
    it('answers a decision on an unknown run, a malformed id and a run that never paused alike', async () => {
      // Prepare
      const { runId: readOnlyRun, view } = await startRunAndSettle(runtime, 'What is on page 12?');
      expect(view.status).toBe('completed');

      // Act
      const unknown = await decide(runtime, 'a8c5a3f0-0000-4000-8000-000000000000', {
        digest: 'x',
        decision: 'approve',
      });
      const malformed = await decide(runtime, 'not_a*run', { digest: 'x', decision: 'approve' });
      const neverPaused = await decide(runtime, readOnlyRun, { digest: 'x', decision: 'approve' });

      // Assess
      for (const response of [unknown, malformed, neverPaused]) {
        expect(response.status).toBe(404);
        expect(response.body).toEqual({ error: { code: 'not-found', message: TEXTS.runNotFound } });
      }
    });

    it("answers GET /runs/{id} and its audit of someone else's run exactly like an unknown run, unless the viewer could decide it", async () => {
      // Prepare: a signed-in user who may start runs but approves nothing
      const { runId } = await waitingRun("Set the keywords of page 12 to 'not yours'");
      const stranger = apiClientWithToken(
        runtime.url,
        await signTokenWithRuntimeKey(runtime, { sub: 'stranger', groups: ['agent_run'] }),
      );
      const unknownId = 'a8c5a3f0-0000-4000-8000-000000000001';

      // Act
      const notVisible = await stranger.getRun({ path: { id: runId } });
      const unknown = await stranger.getRun({ path: { id: unknownId } });
      const auditNotVisible = await stranger.getRunAudit({ path: { id: runId } });
      const auditUnknown = await stranger.getRunAudit({ path: { id: unknownId } });
      const asApprover = await runtime.client('approver').getRun({ path: { id: runId } });

      // Assess
      expect(notVisible.status).toBe(404);
      expect(unknown.status).toBe(404);
      expect(notVisible.text).toBe(unknown.text);
      expect(auditNotVisible.status).toBe(404);
      expect(auditNotVisible.text).toBe(auditUnknown.text);
      // The card went to every approver: an approver who could decide it reads the run.
      expect(asApprover.status).toBe(200);
    });
  });

  describe('409: the reviewed turn and the decision already made', () => {
    it('refuses a stale digest and a missing digest with the re-review message, and the run keeps waiting', async () => {
      // Prepare
      const { runId, digest, turn } = await waitingRun("Set the keywords of page 12 to 'stale'");
      const staleDigest = `${digest.slice(0, -4)}0000`;

      // Act
      const stale = await decide(runtime, runId, { digest: staleDigest, decision: 'approve' });
      const missing = await decide(runtime, runId, { decision: 'approve' });
      const emptyDigest = await decide(runtime, runId, { digest: '', decision: 'reject' });

      // Assess
      for (const response of [stale, missing, emptyDigest]) {
        expect(response.status).toBe(409);
        expect(refusalOf(response).error.message).toBe(STALE);
      }
      expect(await statusOf(runId)).toBe('waiting');
      expect(await runtime.dependencies.runs.getDecision(runId, turn)).toBeUndefined();
    });

    it('answers reject after approve with 409, and the same approval again with the same 200', async () => {
      // Prepare
      const { runId, digest, turn } = await waitingRun("Set the keywords of page 12 to 'approved once'");
      const first = await decide(runtime, runId, { digest, decision: 'approve' });
      await settle(runtime, runId, 'admin', turn);

      // Act
      const reject = await decide(runtime, runId, { digest, decision: 'reject' });
      const again = await decide(runtime, runId, { digest, decision: 'approve' });

      // Assess
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ kind: 'decided', runId, turn, decision: 'approve', repeated: false });
      expect(reject.status).toBe(409);
      expect(refusalOf(reject).error.message).toBe(TEXTS.alreadyDecided);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ ...first.body, repeated: true });
    });

    it('answers approve after reject with 409, and the same rejection again with the same 200', async () => {
      // Prepare
      const { runId, digest, turn } = await waitingRun("Set the keywords of page 12 to 'rejected once'");
      const first = await decide(runtime, runId, { digest, decision: 'reject', reason: 'No.' });

      // Act
      const approve = await decide(runtime, runId, { digest, decision: 'approve' });
      const again = await decide(runtime, runId, { digest, decision: 'reject', reason: 'No.' });

      // Assess
      expect(first.status).toBe(200);
      expect(approve.status).toBe(409);
      expect(refusalOf(approve).error.message).toBe(TEXTS.alreadyDecided);
      expect(again.status).toBe(200);
      expect(bodyOf(again, 200).repeated).toBe(true);
      expect(bodyOf(again, 200).decision).toBe('reject');
      expect((await settle(runtime, runId, 'admin', turn)).status).toBe('completed');
    });
  });

  describe('rejection: what the model is told', () => {
    it('passes the reason on only where the configuration allows it', async () => {
      // Prepare
      const revealing = await waitingRun("Set the keywords of page 12 to 'reveal'");
      const fourEyes = await waitingRun("Set the keywords of page 12 to 'hide'", {
        as: 'admin',
        configurationId: 'demo-four-eyes',
      });

      // Act
      await decide(runtime, revealing.runId, {
        digest: revealing.digest,
        decision: 'reject',
        reason: 'Reason-for-the-model',
      });
      await decide(runtime, fourEyes.runId, {
        digest: fourEyes.digest,
        decision: 'reject',
        reason: 'Reason-kept-from-the-model',
      });
      const revealed = await settle(runtime, revealing.runId, 'admin', revealing.turn);
      const hidden = await settle(runtime, fourEyes.runId, 'admin', fourEyes.turn);

      // Assess
      const denial = TEXTS.toolDenied('update_page_metadata');
      expect(revealed.transcript.finalAnswer).toContain(denial);
      expect(revealed.transcript.finalAnswer).toContain('Reason-for-the-model');
      expect(hidden.transcript.finalAnswer).toContain(denial);
      expect(hidden.transcript.finalAnswer).not.toContain('Reason-kept-from-the-model');
    });
  });

  describe("each demo user's view of the inbox", () => {
    let runId: string;

    beforeAll(async () => {
      await runtime.dependencies.pages.updateMetadata('12', { description: 'Visible old value' }, 'test');
      ({ runId } = await waitingRun("Set the description of page 12 to 'Visible new value'"));
    });

    async function cardFor(
      as: string,
    ): Promise<{ status: number; card: ResponseJson; cards: ResponseJson[] }> {
      const response = await runtime.client(as).listInbox({ query: { limit: 100 } });
      const cards = response.ok ? (response.body?.cards ?? []) : [];
      return {
        status: response.status,
        cards,
        card: cards.find((candidate: ResponseJson) => candidate.runId === runId),
      };
    }

    it('refuses the editor (no agent_approve) with 403', async () => {
      // Act
      const response = await runtime.client('editor').listInbox();

      // Assess
      expect(response.status).toBe(403);
      expect(refusalOf(response).error.message).toBe(TEXTS.grantRefused('agent_approve'));
    });

    it('shows the approver the card with the preview of what the write replaces', async () => {
      // Act
      const { status, card } = await cardFor('approver');

      // Assess
      expect(status).toBe(200);
      expect(card).toMatchObject({ runId, owner: 'editor', label: 'Update page metadata' });
      expect(card.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(card.pendingTools[0]).toMatchObject({
        index: 0,
        tool: 'update_page_metadata',
        arguments: { pageId: '12', description: 'Visible new value' },
        registered: true,
        preview: { status: 'shown', caveat: TEXTS.previewCaveat },
      });
      expect(card.pendingTools[0].preview.lines.join('\n')).toContain('Visible old value');
    });

    it('shows the operations approver the card with the preview withheld', async () => {
      // Act
      const { status, card } = await cardFor('ops-approver');

      // Assess
      expect(status).toBe(200);
      expect(card.pendingTools[0].arguments).toEqual({ pageId: '12', description: 'Visible new value' });
      expect(card.pendingTools[0].preview).toEqual({ status: 'withheld', message: TEXTS.previewWithheld });
      expect(JSON.stringify(card)).not.toContain('Visible old value');
    });

    it('shows the admin every waiting card with its preview', async () => {
      // Act
      const admin = await cardFor('admin');
      const approver = await cardFor('approver');

      // Assess
      expect(admin.status).toBe(200);
      expect(admin.card.pendingTools[0].preview.status).toBe('shown');
      expect(admin.cards.map((card: ResponseJson) => card.runId).sort()).toEqual(
        approver.cards.map((card: ResponseJson) => card.runId).sort(),
      );
      for (const card of admin.cards) {
        for (const tool of card.pendingTools) expect(tool.preview.status).not.toBe('withheld');
      }
    });

    it('pages newest first with an opaque cursor, and refuses a bad limit with 400', async () => {
      // Act
      const first = await runtime.client('approver').listInbox({ query: { limit: 1 } });
      const second = await runtime
        .client('approver')
        .listInbox({ query: { limit: 1, cursor: bodyOf(first).cursor } });
      // raw: a limit the query schema refuses, on purpose
      const badLimit = await runtime.sendRaw('GET', '/inbox?limit=0', { as: 'approver' });

      // Assess
      expect(bodyOf(first).cards).toHaveLength(1);
      expect(bodyOf(first).cards[0]?.runId).toBe(runId);
      expect(bodyOf(second).cards).toHaveLength(1);
      expect(
        openedCard(bodyOf(second).cards[0]).pausedAt <= openedCard(bodyOf(first).cards[0]).pausedAt,
      ).toBe(true);
      expect(badLimit.status).toBe(400);
      expect(badLimit.json.error.field).toBe('query.limit');
    });
  });

  describe('the admin API: grants, page, language and tool access as data', () => {
    const user: RequestBody<'putUser'> = {
      userId: 'late-approver',
      displayName: 'Late Approver',
      grants: ['agent_run'],
      pageAccess: ['12'],
      languageAccess: ['en'],
      toolAccess: ['update_page_metadata'],
    };

    it('changes what a user may do by writing their record', async () => {
      // Prepare
      const token = await createUser(runtime, user as never);
      const before = await apiClientWithToken(runtime.url, token).listInbox();

      // Act
      const granted = await runtime.client('admin').putUser({
        path: { id: 'late-approver' },
        body: { ...user, grants: ['agent_run', 'agent_approve'] },
      });
      const read = await runtime.client('admin').getUser({ path: { id: 'late-approver' } });
      const after = await apiClientWithToken(runtime.url, token).listInbox();

      // Assess
      expect(before.status).toBe(403);
      expect(granted.status).toBe(200);
      expect(read.body).toEqual({ ...user, grants: ['agent_run', 'agent_approve'] });
      expect(after.status).toBe(200);
    });

    it('stores pages with their language', async () => {
      // Act
      const written = await runtime
        .client('admin')
        .putPage({ path: { id: '30' }, body: { pageId: '30', language: 'fr', title: 'Printemps' } });
      const read = await runtime.client('admin').getPage({ path: { id: '30' } });
      // raw: a page without its required language, on purpose
      const withoutLanguage = await runtime.sendRaw('PUT', '/admin/pages/31', {
        as: 'admin',
        body: { pageId: '31', title: 'No language' },
      });

      // Assess
      expect(written.status).toBe(200);
      expect(read.body).toMatchObject({ pageId: '30', language: 'fr', title: 'Printemps' });
      expect(withoutLanguage.status).toBe(400);
      expect(withoutLanguage.json.error.field).toBe('body.language');
    });

    it.each([
      ['an unknown grant', 'body.grants.0', { ...user, grants: ['superuser'] }],
      ['a misspelt access field', 'body.toolsAccess', { ...user, toolsAccess: ['x'] }],
      ['an id that differs from the path', 'body.userId', { ...user, userId: 'someone-else' }],
      ['a page access that is neither a list nor "*"', 'body.pageAccess', { ...user, pageAccess: 'all' }],
    ])('answers 400 for %s, naming %s', async (_name, field, body) => {
      // Act
      // raw: a user record the body schema refuses, on purpose
      const response = await runtime.sendRaw('PUT', '/admin/users/late-approver', { as: 'admin', body });

      // Assess
      expect(response.status).toBe(400);
      expect(response.json.error.field).toBe(field);
    });

    it('answers 403 to everyone but an admin', async () => {
      // Act
      const responses = await Promise.all(
        ['editor', 'approver', 'ops-approver'].map((as) =>
          runtime.client(as).putUser({ path: { id: 'editor' }, body: { ...user, userId: 'editor' } }),
        ),
      );
      const list = await runtime.client('approver').listUsers();

      // Assess
      for (const response of [...responses, list]) {
        expect(response.status).toBe(403);
        expect(refusalOf(response).error.message).toBe(TEXTS.grantRefused('admin'));
      }
      expect((await runtime.dependencies.users.getUser('editor'))?.grants).toEqual(['agent_run']);
    });

    it('answers 404 for an unknown item, collection or deletion', async () => {
      // Act
      const [unknownUser, unknownTask, unknownDeletion] = await Promise.all([
        runtime.client('admin').getUser({ path: { id: 'nobody' } }),
        runtime.client('admin').deleteTask({ path: { id: 'no-such-task' } }),
        // Users may be deleted now (DELETE /admin/users/{id}); an unknown one is a 404.
        runtime.client('admin').deleteUser({ path: { id: 'nobody' } }),
      ]);
      const unknownPaths = await Promise.all([
        // raw: paths that are no route of the API, on purpose
        runtime.sendRaw('GET', '/admin/widgets', { as: 'admin' }),
        runtime.sendRaw('GET', '/admin/users/a/b', { as: 'admin' }),
      ]);

      // Assess
      expect(
        [unknownUser, ...unknownPaths, unknownTask, unknownDeletion].map((response) => response?.status),
      ).toEqual([404, 404, 404, 404, 404]);
      expect(refusalOf(unknownUser).error.message).toBe('No user "nobody".');
      expect(refusalOf(unknownDeletion).error.message).toBe('No user "nobody".');
    });
  });
});
