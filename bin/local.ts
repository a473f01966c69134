// npm start: countersign's local embedded mode on 127.0.0.1, with demo data.
import { Duration, Errors } from 'aws-cdk-lib';
import { DEMO_USERS } from '../lambdas/local/demo-data.js';
import { startEmbeddedRuntime } from '../lambdas/local/embedded-runtime.js';
import { DEMO_MACHINE_CLIENT_ID } from '../lambdas/local/local-machine-clients.js';
import {
  LOCAL_START_VARIABLES,
  LocalStartSettingError,
  loadTeamToolsModule,
  parseApprovalTimeout,
  parseLocalChannels,
} from '../lambdas/local/local-start-settings.js';
import { composeStartBanner } from '../lambdas/local/start-banner.js';
import { synthesizeStateMachineDefinition } from '../lib/state-machine-definition.js';

// Files dynalite's LevelDB creates while the runtime runs are owner-only from the start; the
// data directory's check at every start (local-data-directory.ts) covers what exists already.
process.umask(0o077);

const environment = process.env;
const port = Number(environment.COUNTERSIGN_PORT ?? 8787);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`COUNTERSIGN_PORT must be a port number, not "${environment.COUNTERSIGN_PORT}".`);
  process.exit(2);
}
// The page's sign-in provider listens on its own port, as Cognito's managed login is another
// origin: the next one by default, so a restart keeps the issuer (and the banner's tokens) valid.
const signInPort = Number(environment.COUNTERSIGN_SIGN_IN_PORT ?? (port === 0 ? 0 : port + 1));
if (!Number.isInteger(signInPort) || signInPort < 0 || signInPort > 65_535) {
  console.error(
    `COUNTERSIGN_SIGN_IN_PORT must be a port number, not "${environment.COUNTERSIGN_SIGN_IN_PORT}".`,
  );
  process.exit(2);
}
const openAiCompatible =
  environment.COUNTERSIGN_OPENAI_BASE_URL && environment.COUNTERSIGN_OPENAI_API_KEY
    ? { baseUrl: environment.COUNTERSIGN_OPENAI_BASE_URL, apiKey: environment.COUNTERSIGN_OPENAI_API_KEY }
    : undefined;

// A team's tools and approval timeout, as its deployment would set `toolsModule` and
// `approvalTimeout`: the team tries its own tools on the real card before it deploys.
let settings: {
  approvalTimeoutSeconds?: number;
  extraTools: Awaited<ReturnType<typeof loadTeamToolsModule>>;
  channels: ReturnType<typeof parseLocalChannels>;
};
let definition: Record<string, unknown>;
try {
  const timeoutText = environment[LOCAL_START_VARIABLES.approvalTimeout];
  const modulePath = environment[LOCAL_START_VARIABLES.toolsModule];
  settings = {
    ...(timeoutText ? { approvalTimeoutSeconds: parseApprovalTimeout(timeoutText) } : {}),
    extraTools: modulePath ? await loadTeamToolsModule(modulePath, process.cwd()) : [],
    // Slack and email, as a deployment's `channels` props (docs/approvers.md).
    channels: parseLocalChannels(environment),
  };
  // The same ASL the CDK app deploys, synthesized from the same construct (bundling skipped),
  // with the same approval timeout: the runtime refuses a setting its ASL does not wait.
  definition = synthesizeStateMachineDefinition(
    settings.approvalTimeoutSeconds === undefined
      ? {}
      : { countersign: { approvalTimeout: Duration.seconds(settings.approvalTimeoutSeconds) } },
  );
} catch (error) {
  // A bad setting (or the construct refusing it) is the user's to fix: its message, no stack.
  const known = error instanceof LocalStartSettingError || Errors.isValidationError(error);
  if (!known) throw error;
  console.error((error as Error).message);
  process.exit(2);
}
const runtime = await startEmbeddedRuntime({
  definition,
  ...(settings.approvalTimeoutSeconds === undefined
    ? {}
    : { approvalTimeoutSeconds: settings.approvalTimeoutSeconds }),
  extraTools: settings.extraTools,
  channels: settings.channels,
  baseDirectory: process.cwd(),
  ...(environment.COUNTERSIGN_DATA_DIR ? { dataDirectory: environment.COUNTERSIGN_DATA_DIR } : {}),
  port,
  signIn: { port: signInPort },
  ...(openAiCompatible ? { openAiCompatible } : {}),
  // The Lambdas' own JSON lines, warnings and errors only, on stderr; metric lines are for CloudWatch.
  logLevel: 'WARN',
  writeLogLine: (line) => process.stderr.write(`${line}\n`),
  writeMetricLine: () => {},
});

const demoAgent = runtime.machine.clients.list().find((client) => client.clientId === DEMO_MACHINE_CLIENT_ID);
console.log(
  composeStartBanner({
    url: runtime.url,
    issuerUrl: runtime.issuerUrl,
    users: DEMO_USERS,
    tokens: runtime.tokens,
    ...(demoAgent ? { machine: { tokenUrl: runtime.machine.tokenUrl, ...demoAgent } } : {}),
  }),
);

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
