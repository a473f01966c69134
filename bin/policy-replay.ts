// npm run policy:replay -- --policy <file> [--days 90] (--table <name> [--region <region>] | --local [--data-dir <dir>])
// Replays the decisions on record under a proposed policy floor and configuration policies, and
// prints which would have been refused, needed more approvers, or gone to another group. Reads only.
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoConfigurationRepository } from '../lambdas/adapters/dynamo/configuration-repository.js';
import { DynamoRecordedDecisions } from '../lambdas/adapters/dynamo/recorded-decision-scan.js';
import { DynamoRunRepository } from '../lambdas/adapters/dynamo/run-repository.js';
import { DynamoUserDirectory } from '../lambdas/adapters/dynamo/user-directory.js';
import {
  type PolicyProposal,
  policyProposalSchema,
  type ReplayFinding,
} from '../lambdas/core/policy/policy-replay.js';
import { type ReplayDependencies, replayRecordedDecisions } from '../lambdas/core/policy/replay-decisions.js';
import { silentLogger } from '../lambdas/core/ports.js';
import { formatSchemaIssues } from '../lambdas/core/schema-messages.js';
import { LocalDataDirectory } from '../lambdas/local/local-data-directory.js';
import { startLocalDynamo } from '../lambdas/local/local-dynamo.js';

const USAGE = `Usage: npm run policy:replay -- --policy <file> [--days <n>] [--json]
         (--table <table name> [--region <region>]   a deployment, with the AWS SDK's default credentials
          | --local [--data-dir <dir>])             npm start's data (a copy: npm start may run)

Replays every approve and reject decision of the last <n> days (default 90) under the policy in
<file> ({"floor": {...}, "configurations": {"<id>": {...}}}, docs/runbook.md) and prints which would
have been refused, needed more approvers, needed the record check, or gone to another group.
Reads only (Scan, GetItem); nothing is changed.`;

const PAGE_SIZE = 200;

export interface PolicyReplayIo {
  readonly print: (line: string) => void;
  readonly printError: (line: string) => void;
  readonly now: () => Date;
  /** Where a relative --data-dir is resolved, as npm start resolves it. */
  readonly baseDirectory: string;
}

/**
 * Runs the replay and returns the exit status (0 replayed, 2 the command could not run).
 *
 * @example
 * process.exitCode = await runPolicyReplay(['--policy', 'stricter.json', '--local'], io);
 */
export async function runPolicyReplay(args: readonly string[], io: PolicyReplayIo): Promise<number> {
  let options: ReturnType<typeof parseReplayArguments>;
  try {
    options = parseReplayArguments(args);
  } catch (error) {
    io.printError(error instanceof Error ? error.message : String(error));
    io.printError(USAGE);
    return 2;
  }
  if (options.kind === 'help') {
    io.print(USAGE);
    return 0;
  }
  const proposal = await readProposal(options.policy);
  if (proposal.kind === 'refused') {
    io.printError(proposal.message);
    return 2;
  }
  const source = await openSource(options, io);
  if (source.kind === 'refused') {
    io.printError(source.message);
    return 2;
  }
  try {
    const since = new Date(io.now().getTime() - options.days * 86_400_000);
    await printReplay(
      source.dependencies,
      proposal.proposal,
      { since, json: options.json, where: source.where },
      io,
    );
    return 0;
  } finally {
    await source.close();
  }
}

function parseReplayArguments(args: readonly string[]) {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    strict: true,
    options: {
      policy: { type: 'string' },
      days: { type: 'string' },
      table: { type: 'string' },
      region: { type: 'string' },
      local: { type: 'boolean' },
      'data-dir': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return { kind: 'help' } as const;
  if (positionals.length > 0) throw new Error(`Unexpected argument "${positionals[0]}".`);
  if (values.policy === undefined) throw new Error('Name the proposed policy: --policy <file>.');
  const days = values.days === undefined ? 90 : Number(values.days);
  if (!Number.isInteger(days) || days < 1 || days > 3650) {
    throw new Error(`--days must be a whole number of days from 1 to 3650; it is "${values.days}".`);
  }
  if ((values.table === undefined) === (values.local !== true)) {
    throw new Error(
      'Say where the decisions are: --table <name> (a deployment) or --local (npm start), one of the two.',
    );
  }
  return {
    kind: 'replay',
    policy: values.policy,
    days,
    json: values.json === true,
    ...(values.table === undefined ? {} : { table: values.table }),
    ...(values.region === undefined ? {} : { region: values.region }),
    ...(values['data-dir'] === undefined ? {} : { dataDirectory: values['data-dir'] }),
  } as const;
}

async function readProposal(
  path: string,
): Promise<{ kind: 'read'; proposal: PolicyProposal } | { kind: 'refused'; message: string }> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    const problem =
      error instanceof SyntaxError ? 'not JSON' : ((error as NodeJS.ErrnoException).code ?? 'unreadable');
    return { kind: 'refused', message: `Could not read the proposed policy ${path}: ${problem}.` };
  }
  const parsed = policyProposalSchema.safeParse(json);
  if (!parsed.success) {
    return {
      kind: 'refused',
      message: `The proposed policy ${path} is not valid: ${formatSchemaIssues(parsed.error.issues)}.`,
    };
  }
  return { kind: 'read', proposal: parsed.data };
}

type OpenedSource =
  | { kind: 'open'; dependencies: ReplayDependencies; where: string; close: () => Promise<void> }
  | { kind: 'refused'; message: string };

/** The table, deployed (the SDK's default credentials) or npm start's dynalite on its data directory. */
async function openSource(
  options: { table?: string; region?: string; dataDirectory?: string },
  io: PolicyReplayIo,
): Promise<OpenedSource> {
  if (options.table !== undefined) {
    const client = new DynamoDBClient(options.region === undefined ? {} : { region: options.region });
    const documentClient = DynamoDBDocumentClient.from(client);
    return {
      kind: 'open',
      dependencies: stores(documentClient, options.table),
      where: `table ${options.table}${options.region ? ` in ${options.region}` : ''}`,
      close: async () => client.destroy(),
    };
  }
  const directory = LocalDataDirectory.resolve({
    baseDirectory: io.baseDirectory,
    configuredPath: options.dataDirectory,
  });
  // A copy of dynalite's files, without LevelDB's lock: npm start may keep running, and its data
  // is never opened for writing.
  const snapshot = await mkdtemp(join(tmpdir(), 'countersign-replay-'));
  const removeSnapshot = () => rm(snapshot, { recursive: true, force: true });
  try {
    await cp(directory.dynaliteDirectory, snapshot, {
      recursive: true,
      filter: (source) => basename(source) !== 'LOCK',
    });
    const dynamo = await startLocalDynamo({ path: snapshot, tableName: 'countersign', create: false });
    return {
      kind: 'open',
      dependencies: stores(dynamo.documentClient, dynamo.tableName),
      where: `npm start's data in ${directory.root}`,
      close: async () => {
        await dynamo.stop();
        await removeSnapshot();
      },
    };
  } catch (error) {
    await removeSnapshot();
    const problem =
      (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.name : 'unreadable');
    return {
      kind: 'refused',
      message: `Could not read npm start's data in ${directory.root} (${problem}); run npm start once to create it, or name it with --data-dir.`,
    };
  }
}

function stores(client: DynamoDBDocumentClient, tableName: string): ReplayDependencies {
  return {
    decisions: new DynamoRecordedDecisions({ client, tableName }),
    runs: new DynamoRunRepository({ client, tableName }),
    configurations: new DynamoConfigurationRepository({ client, tableName, logger: silentLogger }),
    users: new DynamoUserDirectory({ client, tableName }),
  };
}

async function printReplay(
  dependencies: ReplayDependencies,
  proposal: PolicyProposal,
  options: { since: Date; json: boolean; where: string },
  io: PolicyReplayIo,
): Promise<void> {
  const totals = {
    decisions: 0,
    affected: 0,
    withoutRun: 0,
    refused: 0,
    moreApprovers: 0,
    recordCheck: 0,
    otherGroup: 0,
  };
  if (!options.json)
    io.print(`Replaying decisions since ${options.since.toISOString()} from ${options.where}:`);
  for await (const page of replayRecordedDecisions(dependencies, proposal, {
    since: options.since,
    pageSize: PAGE_SIZE,
  })) {
    totals.withoutRun += page.withoutRun;
    for (const decision of page.replayed) {
      totals.decisions += 1;
      if (decision.findings.length === 0) continue;
      totals.affected += 1;
      for (const finding of decision.findings) {
        if (finding.kind === 'refused') totals.refused += 1;
        if (finding.kind === 'needed-more-approvers') totals.moreApprovers += 1;
        if (finding.kind === 'record-check') totals.recordCheck += 1;
        if (finding.kind === 'other-group') totals.otherGroup += 1;
      }
      if (options.json) {
        io.print(JSON.stringify(decision));
        continue;
      }
      io.print(
        `  run ${decision.runId} turn ${decision.turn}  ${decision.decidedAt}  ${decision.configurationId}  ${decision.decision === 'approve' ? 'approved' : 'rejected'} by ${decision.decidedBy}`,
      );
      for (const finding of decision.findings) io.print(`    - ${formatFinding(finding)}`);
    }
  }
  if (options.json) {
    io.print(JSON.stringify({ summary: totals }));
    return;
  }
  io.print(
    `${totals.decisions} decisions replayed: ${totals.refused} would have been refused, ${totals.moreApprovers} needed more approvers, ${totals.recordCheck} needed the record check, ${totals.otherGroup} gone to another group; ${totals.decisions - totals.affected} unaffected.` +
      (totals.withoutRun === 0
        ? ''
        : totals.withoutRun === 1
          ? ' 1 decision of a run no longer kept was left out.'
          : ` ${totals.withoutRun} decisions of runs no longer kept were left out.`),
  );
}

function formatFinding(finding: ReplayFinding): string {
  switch (finding.kind) {
    case 'refused':
      return 'refused: four-eyes (the run’s owner approved it)';
    case 'needed-more-approvers':
      return `needed more approvers: had ${finding.had} of ${finding.required}`;
    case 'record-check':
      return 'needed the record check of each call (the record gate), which a replay cannot run';
    case 'other-group': {
      const groups = (list: string[]) => (list.length === 0 ? 'every approver' : list.join(', '));
      return `gone to another group: ${groups(finding.from)} → ${groups(finding.to)}${finding.deciderOutside ? ' (the decider is in none of them)' : ''}`;
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  runPolicyReplay(process.argv.slice(2), {
    print: (line) => console.log(line),
    printError: (line) => console.error(line),
    now: () => new Date(),
    baseDirectory: process.cwd(),
  }).then(
    (status) => {
      process.exitCode = status;
    },
    (error: unknown) => {
      console.error(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
      process.exitCode = 2;
    },
  );
}
