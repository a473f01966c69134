import { Duration } from 'aws-cdk-lib';
import { GraphWidget, type IMetric, MathExpression } from 'aws-cdk-lib/aws-cloudwatch';
import type { CfnFunction, IFunction } from 'aws-cdk-lib/aws-lambda';
import { COUNTERSIGN_METRICS_NAMESPACE, type MetricName } from '../lambdas/core/metric-names.js';
import type { ApplicationMetricReader } from './application-metrics.js';
import type { HandlerName } from './handler-names.js';

/**
 * The AWS list prices the spend estimate uses, in US dollars (us-east-1, arm64, without free
 * tiers): a Standard workflow's state transition, a Lambda GB-second and a Lambda request.
 * The estimate is an estimate: other regions, savings plans and free tiers differ, and the
 * model's share comes from the team's own `modelPrices`.
 */
export const AWS_PRICES_FOR_ESTIMATE = {
  stateTransition: 0.000_025,
  lambdaGbSecond: 0.000_013_333_4,
  lambdaRequest: 0.000_000_2,
} as const;

/**
 * State transitions are counted by no metric, so they are estimated from the step invocations:
 * each Lambda step is one transition, and the Choice or end state after it another.
 */
export const STATE_TRANSITIONS_PER_STEP_INVOCATION = 2;

const PERIOD = Duration.hours(1);

/** What the spend widgets read. */
export interface SpendEstimateProps {
  readonly functions: Readonly<Record<HandlerName, IFunction>>;
  /** The step handlers, whose invocations stand for the state transitions. */
  readonly stepHandlers: readonly HandlerName[];
  readonly serviceName: string;
  readonly metric: ApplicationMetricReader;
}

/**
 * The dashboard's spend row (docs/runbook.md, "Spend and model health"): the estimated cost of
 * the deployment per hour and per run started, its model share by configuration, and the model
 * calls' tokens, latency, errors and throttles by configuration and provider.
 *
 * @example
 * dashboard.addWidgets(...createSpendWidgets({ functions, stepHandlers, serviceName, metric }));
 */
export function createSpendWidgets(props: SpendEstimateProps): GraphWidget[] {
  const search = (name: MetricName, statistic: string) =>
    searchByConfiguration(props.serviceName, name, statistic);
  const handlers = Object.entries(props.functions) as Array<[HandlerName, IFunction]>;
  const usingMetrics: Record<string, IMetric> = {
    model: props.metric('ModelCost', { period: PERIOD }),
    runs: props.metric('RunsStarted', { period: PERIOD }),
  };
  const lambdaTerms: string[] = [];
  const stepInvocations: string[] = [];
  handlers.forEach(([name, handler], index) => {
    usingMetrics[`duration${index}`] = handler.metricDuration({ statistic: 'Sum', period: PERIOD });
    usingMetrics[`invocations${index}`] = handler.metricInvocations({ period: PERIOD });
    const gigabytes = memoryOf(handler) / 1024;
    lambdaTerms.push(
      `duration${index} / 1000 * ${decimal(gigabytes)} * ${decimal(AWS_PRICES_FOR_ESTIMATE.lambdaGbSecond)} + invocations${index} * ${decimal(AWS_PRICES_FOR_ESTIMATE.lambdaRequest)}`,
    );
    if (props.stepHandlers.includes(name)) stepInvocations.push(`invocations${index}`);
  });
  const lambda = `(${lambdaTerms.join(' + ')})`;
  const stateMachine = `((${stepInvocations.join(' + ')}) * ${STATE_TRANSITIONS_PER_STEP_INVOCATION} * ${decimal(AWS_PRICES_FOR_ESTIMATE.stateTransition)})`;
  const total = `(FILL(model, 0) + ${lambda} + ${stateMachine})`;
  const estimate = (label: string, expression: string): MathExpression =>
    new MathExpression({ label, expression, usingMetrics, period: PERIOD });
  return [
    new GraphWidget({
      title: 'Estimated spend per hour (USD): model, Lambda, Step Functions',
      width: 12,
      left: [
        estimate('total', total),
        estimate('model (modelPrices)', 'FILL(model, 0)'),
        estimate('Lambda (GB-seconds, requests)', lambda),
        estimate('Step Functions (transitions, estimated)', stateMachine),
      ],
    }),
    new GraphWidget({
      title: 'Estimated spend per run started (USD)',
      width: 12,
      left: [estimate('per run', `IF(runs > 0, ${total} / runs, 0)`)],
    }),
    new GraphWidget({
      title: 'Estimated model cost by configuration (USD, modelPrices)',
      width: 8,
      left: [search('ModelCost', 'Sum')],
    }),
    new GraphWidget({
      title: 'Model tokens by configuration (input, output)',
      width: 8,
      left: [search('ModelInputTokens', 'Sum')],
      right: [search('ModelOutputTokens', 'Sum')],
    }),
    new GraphWidget({
      title: 'Model latency p90 by configuration (ms)',
      width: 8,
      left: [search('ModelLatency', 'p90')],
    }),
    new GraphWidget({
      title: 'Model calls, errors, throttles and retries',
      width: 24,
      left: [search('ModelCalls', 'Sum'), search('ModelErrors', 'Sum')],
      right: [search('ModelThrottles', 'Sum'), search('ModelRetries', 'Sum')],
    }),
  ];
}

/** One line per configuration and provider of one deployment's metric. */
function searchByConfiguration(serviceName: string, name: MetricName, statistic: string): MathExpression {
  const seconds = PERIOD.toSeconds();
  return new MathExpression({
    label: name,
    expression: `SEARCH('{${COUNTERSIGN_METRICS_NAMESPACE},configuration,provider,service} MetricName="${name}" service="${serviceName}"', '${statistic}', ${seconds})`,
    usingMetrics: {},
    period: PERIOD,
  });
}

/** A number as metric math reads it: plain decimals (JavaScript writes 0.0000002 as `2e-7`, an identifier there). */
function decimal(value: number): string {
  return value.toFixed(12).replace(/\.?0+$/, '');
}

/** A function's memory in MB, as synthesized (what it is billed by). */
function memoryOf(handler: IFunction): number {
  const memorySize = (handler.node.defaultChild as CfnFunction | undefined)?.memorySize;
  return typeof memorySize === 'number' ? memorySize : 128;
}
