import { type DecisionRecord, readCardShown } from '../approvals/decision-record.js';
import type { ConfigurationRepository } from '../configurations.js';
import { isAdmin } from '../identity.js';
import type { RunRepository, UserDirectory } from '../ports.js';
import {
  type PolicyProposal,
  type RecordedDecision,
  type ReplayedDecision,
  replayDecision,
} from './policy-replay.js';

/** Port: the decisions on record, read only and a page at a time (a Scan deployed). */
export interface RecordedDecisionSource {
  /** Approve and reject decisions decided at or after `since`, in pages of at most `pageSize`. */
  pages(options: { since: Date; pageSize: number }): AsyncIterable<DecisionRecord[]>;
}

export interface ReplayDependencies {
  decisions: RecordedDecisionSource;
  runs: Pick<RunRepository, 'getRunRecord'>;
  configurations: Pick<ConfigurationRepository, 'getConfiguration' | 'getTask'>;
  users: Pick<UserDirectory, 'getUser'>;
}

/** One page of the replay: each decision under the proposal, and those whose run is gone (retention). */
export interface ReplayPage {
  replayed: ReplayedDecision[];
  withoutRun: number;
}

/**
 * `npm run policy:replay`: every approve and reject decision since `since`, page by page, under the
 * proposed policy (policy-replay.ts says how). Reads only: the decisions, and once each the run,
 * its configuration and task as they are today, and the decider's record. A cancel decided
 * nothing and is not replayed.
 *
 * @example
 * for await (const page of replayRecordedDecisions(dependencies, proposal, { since, pageSize: 100 })) print(page);
 */
export async function* replayRecordedDecisions(
  dependencies: ReplayDependencies,
  proposal: PolicyProposal,
  options: { since: Date; pageSize: number },
): AsyncGenerator<ReplayPage> {
  const lookups = new Lookups(dependencies);
  for await (const page of dependencies.decisions.pages(options)) {
    const replayed: ReplayedDecision[] = [];
    let withoutRun = 0;
    for (const record of page) {
      // An edit decided nothing a policy gates: the fresh card it made is replayed as decided.
      if (record.decision === 'cancel' || record.decision === 'edit') continue;
      const recorded = await lookups.describe({ ...record, decision: record.decision });
      if (recorded) replayed.push(replayDecision(proposal, recorded));
      else withoutRun += 1;
    }
    yield { replayed, withoutRun };
  }
}

/** Each run, configuration, task and user read once per replay. */
class Lookups {
  private readonly cache = new Map<string, Promise<unknown>>();

  public constructor(private readonly dependencies: ReplayDependencies) {}

  public async describe(record: RecordedDecision['record']): Promise<RecordedDecision | undefined> {
    const run = await this.once(`run:${record.runId}`, () =>
      this.dependencies.runs.getRunRecord(record.runId),
    );
    if (!run) return undefined;
    const [configuration, task, decider] = await Promise.all([
      this.once(`configuration:${run.configurationId}`, () =>
        this.dependencies.configurations.getConfiguration(run.configurationId),
      ),
      run.taskId === undefined
        ? undefined
        : this.once(`task:${run.taskId}`, () => this.dependencies.configurations.getTask(run.taskId ?? '')),
      this.once(`user:${record.decidedBy}`, () => this.dependencies.users.getUser(record.decidedBy)),
    ]);
    return {
      record,
      run: {
        owner: run.owner,
        configurationId: run.configurationId,
        policy: run.policy,
        approverGroups: run.policy.approverGroups ?? [],
      },
      toolNames: toolNamesOf(record),
      today: {
        ...(configuration
          ? {
              policy: {
                fourEyes: configuration.options.fourEyes,
                requiredApprovals: configuration.options.requiredApprovals,
                decisionGate: configuration.options.decisionGate,
              },
              approverGroups: configuration.approverGroups ?? [],
            }
          : {}),
        ...(task?.approverGroups ? { taskApproverGroups: task.approverGroups } : {}),
      },
      ...(decider ? { decider: { groups: decider.groups ?? [], admin: isAdmin(decider) } } : {}),
    };
  }

  private once<Value>(key: string, read: () => Promise<Value>): Promise<Value> {
    let value = this.cache.get(key) as Promise<Value> | undefined;
    if (!value) {
      value = read();
      this.cache.set(key, value);
    }
    return value;
  }
}

/** The tools of the calls the decision's card showed; an account that cannot be read shows none. */
function toolNamesOf(record: DecisionRecord): string[] {
  try {
    return [...new Set(readCardShown(record.cardShown).calls.map((call) => call.tool))];
  } catch {
    return [];
  }
}
