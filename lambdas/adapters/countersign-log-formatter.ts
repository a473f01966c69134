import { LogFormatter, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { currentInvocationFields } from './invocation-scope.js';

/**
 * The shape of every countersign log line, as a Powertools `LogFormatter` (its documented
 * extension point): Powertools' own keys (level, message, timestamp, service, sampling_rate,
 * xray_trace_id, the Lambda context), then the current invocation's identifiers (correlation
 * id, run id, execution, turn, operation), then the caller's fields without any secret.
 *
 * The invocation fields come from {@link runInInvocationScope}, not from Powertools'
 * `appendKeys`: outside Lambda's own invoke store those keys are shared by every concurrent
 * request of a process, and the local mode runs many runs at once.
 *
 * @example
 * new Logger({ logFormatter: new CountersignLogFormatter() }).info('run started', { runId });
 */
export class CountersignLogFormatter extends LogFormatter {
  public formatAttributes(
    attributes: UnformattedAttributes,
    additionalLogAttributes: LogAttributes,
  ): LogItem {
    return new LogItem({
      attributes: {
        level: attributes.logLevel,
        message: attributes.message,
        timestamp: this.formatTimestamp(attributes.timestamp),
        service: attributes.serviceName,
        cold_start: attributes.lambdaContext?.coldStart,
        function_name: attributes.lambdaContext?.functionName,
        function_request_id: attributes.lambdaContext?.awsRequestId,
        sampling_rate: attributes.sampleRateValue,
        xray_trace_id: attributes.xRayTraceId,
      },
    }).addAttributes({ ...currentInvocationFields(), ...withoutSecretKeys(additionalLogAttributes) });
  }
}

const SECRET_KEY =
  /token|secret|password|authorization|cookie|preview|transcript|body|arguments|content|prompt/i;

/**
 * Drops fields (at any depth) whose names say they carry a secret or a person's text: callers
 * pass identifiers only, and this is the second line of defence.
 */
function withoutSecretKeys(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields)
      .filter(([key]) => !SECRET_KEY.test(key))
      .map(([key, value]) => [key, withoutSecretValues(value)]),
  );
}

function withoutSecretValues(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecretValues);
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return withoutSecretKeys(value as Record<string, unknown>);
  }
  // An Error's message may quote a tool's exception: only its class is logged.
  if (value instanceof Error) return value.name;
  return value;
}
