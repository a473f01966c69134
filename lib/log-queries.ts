import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { CfnQueryDefinition } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { HANDLER_NAMES, type HandlerName } from './handler-names.js';
import { FUNCTION_GROUPS } from './limits.js';

/** One saved Logs Insights query: what it answers, its query and the handlers whose logs it reads. */
export interface SavedLogQuery {
  /** What the runbook calls it, and the last part of its name in the console. */
  readonly name: string;
  readonly description: string;
  readonly queryString: string;
  /** The handlers whose log groups it reads; `all`: every handler's. */
  readonly handlers: readonly HandlerName[] | 'all';
  /** A value the console asks for before it runs (`{{name}}` in the query). */
  readonly parameter?: { readonly name: string; readonly description: string };
}

/**
 * The runbook's investigations as saved queries (docs/runbook.md names each). They filter on the
 * log lines' `message`, which the Lambdas write as fixed text: test/infra/log-queries.test.ts
 * checks every message filtered on here is still written by a Lambda.
 */
export const SAVED_LOG_QUERIES: readonly SavedLogQuery[] = [
  {
    name: 'run-timeline',
    description: 'Every line of one run, in order: its steps, requests, failures.',
    queryString:
      "fields @timestamp, level, message, operation, turn, errorClass, code | filter runId = '{{runId}}' | sort @timestamp asc",
    handlers: 'all',
    parameter: { name: 'runId', description: 'The run id (GET /runs/{id}, or the execution name).' },
  },
  {
    name: 'failed-runs',
    description: 'Runs that failed: the state that failed, its error, and whether a redrive may resume it.',
    queryString:
      "fields @timestamp, runId, failedStep, turn, error, transient | filter message = 'run failed' | sort @timestamp desc",
    handlers: ['mark-failed'],
  },
  {
    name: 'step-failures',
    description: 'State machine steps that threw, with their error class and code (retried ones included).',
    queryString:
      "fields @timestamp, operation, runId, turn, errorClass, code | filter message = 'step failed' | sort @timestamp desc",
    handlers: HANDLER_NAMES.filter((name) => FUNCTION_GROUPS[name] === 'steps'),
  },
  {
    name: 'api-errors',
    description: 'Every 5XX answer of the API: one line each, by request id.',
    queryString:
      "fields @timestamp, operation, requestId, status, errorClass, code | filter message = 'request failed' | sort @timestamp desc",
    handlers: HANDLER_NAMES.filter((name) => name.startsWith('api-')),
  },
  {
    name: 'model-spend',
    description:
      'Model calls by configuration and provider: calls, failures, tokens, latency, estimated cost.',
    queryString:
      "filter message = 'model called' or message = 'model call failed' | stats count(*) as calls, sum(message = 'model call failed') as failed, sum(usage.input) as inputTokens, sum(usage.output) as outputTokens, avg(latencyMilliseconds) as averageLatencyMs, sum(estimatedCostUsd) as estimatedCostUsd by configuration, provider",
    handlers: ['model-turn', 'api-generate'],
  },
  {
    name: 'preview-failures',
    description: 'Previews that failed at a pause, by tool and error class.',
    queryString: "filter message = 'preview failed' | stats count(*) as failures by tool, errorClass",
    handlers: ['await-approval'],
  },
  {
    name: 'sealed-state-rejections',
    description: 'Sealed blobs refused on read (a security incident): which run, where, which error class.',
    queryString:
      "fields @timestamp, operation, runId, errorClass | filter message = 'sealed state rejected' | sort @timestamp desc",
    handlers: 'all',
  },
  {
    name: 'errors-and-warnings',
    description: 'Every ERROR and WARN line, newest first.',
    queryString:
      "fields @timestamp, level, message, operation, runId, errorClass, code | filter level = 'ERROR' or level = 'WARN' | sort @timestamp desc",
    handlers: 'all',
  },
];

/**
 * The saved queries as `AWS::Logs::QueryDefinition`s in the console's folder `<prefix>/`, each
 * reading its handlers' log groups.
 *
 * @example
 * createSavedLogQueries(this, { prefix: 'Countersign-Countersign', logGroups });
 */
export function createSavedLogQueries(
  scope: Construct,
  props: { readonly prefix: string; readonly logGroups: Readonly<Record<HandlerName, ILogGroup>> },
): Record<string, CfnQueryDefinition> {
  const every = Object.values(props.logGroups);
  return Object.fromEntries(
    SAVED_LOG_QUERIES.map((query) => {
      const groups = query.handlers === 'all' ? every : query.handlers.map((name) => props.logGroups[name]);
      const definition = new CfnQueryDefinition(scope, `LogQuery-${query.name}`, {
        name: `${props.prefix}/${query.name}`,
        queryString: query.queryString,
        logGroupNames: groups.map((group) => group.logGroupName),
        ...(query.parameter === undefined
          ? {}
          : { parameters: [{ name: query.parameter.name, description: query.parameter.description }] }),
      });
      return [query.name, definition];
    }),
  );
}
