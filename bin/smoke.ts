// npm run smoke -- --url <api> --token <jwt>: drives one run through a deployed stack (or `npm start`).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { type ApiClient, createApiClient } from '../lambdas/contract/api-client.js';

const USAGE = `Usage: npm run smoke -- --url <ApiUrl> --token <JWT> [options]

Drives one run through the stack with the scripted model and prints each step's result and time:
setup (a configuration and a page of its own), start, pause, card, decide, completed, audit.
Exits 1 at the first step that fails.

  --url <ApiUrl>           the API's base URL (the stack output ApiUrl, or npm start's URL)
  --token <JWT>            a user with admin, agent_run and agent_approve and a user record
  --approver-token <JWT>   who approves instead (when a four-eyes floor refuses self-approval)
  --timeout <seconds>      how long to wait for the run at each step (default 120)
  --help                   this text

docs/runbook.md, "Smoke test".`;

/** The configuration and the page the smoke run uses: its own, so it touches nothing else. */
export const SMOKE_CONFIGURATION_ID = 'smoke-scripted';
export const SMOKE_PAGE_ID = 'countersign-smoke';

export interface SmokeIo {
  readonly print: (line: string) => void;
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
  readonly sleep?: (milliseconds: number) => Promise<void>;
}

/** One step's outcome: its line says what happened; a failed step stops the test. */
type StepOutcome = { ok: true; detail: string } | { ok: false; detail: string } | { skipped: string };

class StepFailed extends Error {}

/**
 * The smoke test: each step prints `ok|FAIL|skip  <step>  <result>  (<ms> ms)`. Returns the
 * process exit code (0 when every step passed or was skipped with its reason).
 *
 * @example
 * const code = await runSmokeTest(['--url', url, '--token', token], { print: console.log });
 */
export async function runSmokeTest(args: readonly string[], io: SmokeIo): Promise<number> {
  let options: ReturnType<typeof parseSmokeArgs>;
  try {
    options = parseSmokeArgs(args);
  } catch (error) {
    io.print(error instanceof Error ? error.message : String(error));
    io.print(USAGE);
    return 2;
  }
  if (options === 'help') {
    io.print(USAGE);
    return 0;
  }
  const now = io.now ?? Date.now;
  const sleep = io.sleep ?? ((milliseconds) => new Promise((done) => setTimeout(done, milliseconds)));
  const baseUrl = options.url.replace(/(?<!\/)\/+$/, '');
  const clientWith = (token: string): ApiClient =>
    createApiClient({ baseUrl, token, ...(io.fetch ? { fetch: io.fetch } : {}) });
  const owner = clientWith(options.token);
  const approver = clientWith(options.approverToken ?? options.token);
  const started = now();

  const step = async (name: string, work: () => Promise<StepOutcome>): Promise<void> => {
    const began = now();
    let outcome: StepOutcome;
    try {
      outcome = await work();
    } catch (error) {
      outcome = { ok: false, detail: error instanceof Error ? error.message : String(error) };
    }
    const milliseconds = now() - began;
    const mark = 'skipped' in outcome ? 'skip' : outcome.ok ? 'ok  ' : 'FAIL';
    const detail = 'skipped' in outcome ? outcome.skipped : outcome.detail;
    io.print(`${mark}  ${name.padEnd(9)}  ${detail}  (${milliseconds} ms)`);
    if (!('skipped' in outcome) && !outcome.ok) throw new StepFailed(name);
  };
  // Polls the run until `done` says so, or fails after the timeout.
  const waitForRun = async (runId: string, done: (view: RunViewLike) => boolean): Promise<RunViewLike> => {
    const deadline = now() + options.timeoutSeconds * 1000;
    for (;;) {
      const answer = await owner.getRun({ path: { id: runId } });
      const view = answer.body as RunViewLike;
      if (answer.status !== 200)
        throw new Error(`GET /runs/${runId} answered ${answer.status}: ${answer.text}`);
      if (done(view)) return view;
      if (['failed', 'expired', 'cancelled'].includes(view.status)) {
        throw new Error(`the run ended ${view.status}: ${view.failureReason ?? 'no reason given'}`);
      }
      if (now() > deadline) throw new Error(`still ${view.status} after ${options.timeoutSeconds} s`);
      await sleep(500);
    }
  };

  let runId = '';
  let digest = '';
  let turn = 0;
  try {
    await step('setup', async () => {
      const configuration = await owner.putConfiguration({
        path: { id: SMOKE_CONFIGURATION_ID },
        body: {
          configurationId: SMOKE_CONFIGURATION_ID,
          label: 'countersign smoke test (scripted model)',
          provider: 'scripted',
          model: 'scripted',
          allowedTools: ['update_page_metadata'],
          options: { fourEyes: false },
        },
      });
      if (configuration.status !== 200) return failed('PUT /admin/configurations', configuration);
      const page = await owner.putPage({
        path: { id: SMOKE_PAGE_ID },
        body: { pageId: SMOKE_PAGE_ID, language: 'en', title: 'countersign smoke test' },
      });
      if (page.status !== 200) return failed('PUT /admin/pages', page);
      return { ok: true, detail: `configuration ${SMOKE_CONFIGURATION_ID}, page ${SMOKE_PAGE_ID}` };
    });
    const description = `Smoke test ${new Date(now()).toISOString()}`;
    await step('start', async () => {
      const answer = await owner.startRun({
        body: {
          configurationId: SMOKE_CONFIGURATION_ID,
          input: `Set the description of page ${SMOKE_PAGE_ID} to '${description}'`,
        },
      });
      if (answer.status !== 202 || !answer.body || !('runId' in answer.body))
        return failed('POST /runs', answer);
      runId = answer.body.runId;
      return { ok: true, detail: `run ${runId} (202)` };
    });
    await step('pause', async () => {
      const view = await waitForRun(runId, (candidate) => candidate.status === 'waiting');
      digest = view.digest ?? '';
      turn = view.turn;
      return { ok: true, detail: `waiting at turn ${turn}, ${view.pendingTools?.length ?? 0} call(s)` };
    });
    await step('card', async () => {
      const inbox = await approver.listInbox({ query: {} });
      if (inbox.status !== 200 || !inbox.body || !('cards' in inbox.body)) return failed('GET /inbox', inbox);
      const card = inbox.body.cards.find((entry) => entry.runId === runId);
      if (!card || 'unopenable' in card) return { ok: false, detail: `the run's card is not in the inbox` };
      const [call] = card.pendingTools;
      return {
        ok: true,
        detail: `${call?.tool ?? 'no call'}, preview ${call?.preview.status ?? 'none'}, digest ${card.digest.slice(0, 12)}…`,
      };
    });
    await step('decide', async () => {
      const answer = await approver.decideRun({ path: { id: runId }, body: { digest, decision: 'approve' } });
      if (answer.status !== 200) return failed('POST /runs/{id}/decision', answer);
      return { ok: true, detail: 'approved (200)' };
    });
    await step('completed', async () => {
      const view = await waitForRun(runId, (candidate) => candidate.status === 'completed');
      const written = await owner.getPage({ path: { id: SMOKE_PAGE_ID } });
      const page = written.body as { description?: string } | undefined;
      if (page?.description !== description) {
        return { ok: false, detail: `completed, but the page's description is not the one approved` };
      }
      return {
        ok: true,
        detail: `completed after ${view.transcript.toolCalls} tool call(s); the write is on the page`,
      };
    });
    await step('audit', async () => {
      const answer = await owner.send({ method: 'GET', path: `/runs/${encodeURIComponent(runId)}/audit` });
      // A 404 from a deployment whose API does not describe the audit route: nothing to check there.
      if (answer.status === 404 && !(await servesPath(owner, AUDIT_PATH))) {
        return {
          skipped: `GET ${AUDIT_PATH} is not served by this deployment (404, not in its /openapi.json)`,
        };
      }
      if (answer.status !== 200) return failed('GET /runs/{id}/audit', answer);
      const recorded = JSON.stringify(answer.body);
      if (!recorded.includes(digest))
        return { ok: false, detail: 'the audit does not show the approved digest' };
      return { ok: true, detail: 'the approval is on record with the digest the card showed' };
    });
  } catch (error) {
    if (!(error instanceof StepFailed)) throw error;
    io.print(`smoke test FAILED at ${error.message} after ${now() - started} ms`);
    return 1;
  }
  io.print(`smoke test passed in ${now() - started} ms (run ${runId})`);
  return 0;
}

/** The run's audit (decision record, approvals, cancel, expiry), checked last. */
const AUDIT_PATH = '/runs/{id}/audit';

/** Whether the deployment's own OpenAPI document (GET /openapi.json) lists a path. */
async function servesPath(client: ApiClient, path: string): Promise<boolean> {
  const document = await client.getOpenApiDocument();
  const paths = (document.body as { paths?: Record<string, unknown> } | undefined)?.paths ?? {};
  return path in paths;
}

/** What the smoke test reads of GET /runs/{id}. */
interface RunViewLike {
  status: string;
  turn: number;
  digest?: string;
  failureReason?: string;
  pendingTools?: unknown[];
  transcript: { toolCalls: number };
}

/** A failed step naming the request and what the API answered (its own message, never a token). */
function failed(request: string, answer: { status: number; text: string }): StepOutcome {
  return { ok: false, detail: `${request} answered ${answer.status}: ${answer.text.slice(0, 300)}` };
}

function parseSmokeArgs(
  args: readonly string[],
): 'help' | { url: string; token: string; approverToken?: string; timeoutSeconds: number } {
  const { values } = parseArgs({
    args: [...args],
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      'approver-token': { type: 'string' },
      timeout: { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) return 'help';
  if (!values.url) throw new Error('--url is missing: the API base URL (the stack output ApiUrl).');
  if (!/^https?:\/\//.test(values.url))
    throw new Error(`--url ${JSON.stringify(values.url)} is not an http(s) URL.`);
  if (!values.token)
    throw new Error('--token is missing: a JWT of a user with admin, agent_run and agent_approve.');
  const timeoutSeconds = values.timeout === undefined ? 120 : Number(values.timeout);
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1) {
    throw new Error(`--timeout ${JSON.stringify(values.timeout)} is not a whole number of seconds.`);
  }
  return {
    url: values.url,
    token: values.token,
    ...(values['approver-token'] ? { approverToken: values['approver-token'] } : {}),
    timeoutSeconds,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  runSmokeTest(process.argv.slice(2), { print: (line) => console.log(line) })
    .then((code) => process.exit(code))
    .catch((error: unknown) => {
      console.error(error instanceof Error ? error.message : String(error));
      process.exit(1);
    });
}
