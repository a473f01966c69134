// npm start: countersign's local embedded mode on 127.0.0.1, with demo data.
import { DEMO_USERS } from '../lambdas/local/demo-data.js';
import { startEmbeddedRuntime } from '../lambdas/local/embedded-runtime.js';
import { composeStartBanner } from '../lambdas/local/start-banner.js';
import { synthesizeStateMachineDefinition } from '../lib/state-machine-definition.js';

const environment = process.env;
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

console.log(composeStartBanner({ url: runtime.url, users: DEMO_USERS, tokens: runtime.tokens }));

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
