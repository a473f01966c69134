// npm start: countersign's local embedded mode on 127.0.0.1, with demo data.
import '../lambdas/local/promise-with-resolvers.js';
import { DEMO_USERS } from '../lambdas/local/demo-data.js';
import { startEmbeddedRuntime } from '../lambdas/local/embedded-runtime.js';
import { synthesizeStateMachineDefinition } from '../lib/state-machine-definition.js';

const environment = process.env;
// Node 20 is this project's floor; the SDK's notice about its own future floor is noise here.
environment.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const port = Number(environment.COUNTERSIGN_PORT ?? 8787);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`COUNTERSIGN_PORT must be a port number, not "${environment.COUNTERSIGN_PORT}".`);
  process.exit(2);
}
const openAiCompatible =
  environment.COUNTERSIGN_OPENAI_BASE_URL && environment.COUNTERSIGN_OPENAI_API_KEY
    ? { baseUrl: environment.COUNTERSIGN_OPENAI_BASE_URL, apiKey: environment.COUNTERSIGN_OPENAI_API_KEY }
    : undefined;

// The same ASL the CDK app deploys, synthesized from the same construct (bundling skipped).
const definition = synthesizeStateMachineDefinition();
const runtime = await startEmbeddedRuntime({
  definition,
  baseDirectory: process.cwd(),
  ...(environment.COUNTERSIGN_DATA_DIR ? { dataDirectory: environment.COUNTERSIGN_DATA_DIR } : {}),
  port,
  ...(openAiCompatible ? { openAiCompatible } : {}),
  // The Lambdas' own JSON lines, warnings and errors only, on stderr; metric lines are for CloudWatch.
  logLevel: 'WARN',
  writeLogLine: (line) => process.stderr.write(`${line}\n`),
  writeMetricLine: () => {},
});

const ROLES: Record<string, string> = {
  editor: 'starts runs (agent_run) on pages 12 and 14',
  approver: 'approves (agent_approve), rights on the demo pages: sees previews',
  reviewer: 'a second approver: with approver, releases demo-two-approvers runs',
  'ops-approver': 'approves (agent_approve), no page rights: previews withheld',
  admin: 'administers everything (admin)',
};
const variableOf = (userId: string) => userId.toUpperCase().replace(/-/g, '_');

const lines = [
  '',
  `countersign is running at ${runtime.url}`,
  `Inbox page: ${runtime.url}/  (sign in by pasting a token below)`,
  '',
  'Demo users (tokens valid 12 hours, sent as "Authorization: Bearer <token>"):',
  ...DEMO_USERS.map(
    (user) => `  ${user.userId.padEnd(13)} ${user.displayName.padEnd(15)} ${ROLES[user.userId] ?? ''}`,
  ),
  '',
  'Their tokens, ready to paste into a shell:',
  ...DEMO_USERS.map((user) => `  export ${variableOf(user.userId)}=${runtime.tokens[user.userId]}`),
  '',
  'Then try:',
  `  curl -s -X POST ${runtime.url}/runs -H "Authorization: Bearer $EDITOR" -H 'content-type: application/json' \\`,
  `    -d '{"taskId":"page-metadata","input":"Set the description of page 12 to '"'"'Spring sale'"'"'"}'`,
  `  curl -s ${runtime.url}/inbox -H "Authorization: Bearer $APPROVER"`,
  `  curl -s -X POST ${runtime.url}/runs/<runId>/decision -H "Authorization: Bearer $APPROVER" \\`,
  `    -H 'content-type: application/json' -d '{"digest":"<digest from the card>","decision":"approve"}'`,
  '',
  'Press Ctrl+C to stop. Waiting runs survive a restart.',
];
console.log(lines.join('\n'));

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    runtime.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
