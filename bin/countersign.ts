// The `countersign` command of the published package (package.json `bin`): see bin/countersign-cli.ts.
import { PROCESS_IO, runCountersignCli } from './countersign-cli.js';

runCountersignCli(process.argv.slice(2), PROCESS_IO).then(
  (status) => {
    process.exitCode = status;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 2;
  },
);
