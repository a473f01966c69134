import { type LogItem, Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import type { Logger } from '../core/ports.js';
import { currentInvocationFields } from './invocation-scope.js';

/** The log levels countersign configures (the construct's `logLevel` prop). */
export type StructuredLogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/** Where finished JSON lines go: stdout (CloudWatch Logs) by default, a capture in tests. */
export type LogLineWriter = (line: string) => void;

export interface StructuredLoggerOptions {
  /** @default - POWERTOOLS_SERVICE_NAME, else 'countersign' */
  readonly service?: string;
  /** @default - POWERTOOLS_LOG_LEVEL (set by the construct), else 'INFO' */
  readonly level?: StructuredLogLevel;
  /** @default - one line per entry on stdout */
  readonly writeLine?: LogLineWriter;
}

/** Writes one line to stdout: what Lambda ships to CloudWatch Logs and `npm start` prints. */
export const writeLineToStdout: LogLineWriter = (line) => {
  process.stdout.write(`${line}\n`);
};

/**
 * Structured JSON logs through Powertools Logger (level, message, timestamp, service,
 * xray_trace_id, sampling), one line per entry, with the current invocation's identifiers
 * (correlation id, run id, execution, turn, operation) on every line.
 *
 * The invocation fields come from {@link runInInvocationScope}, not from Powertools'
 * `appendKeys`: outside Lambda's own invoke store those keys are shared by every concurrent
 * request of a process, and the local mode runs many runs at once.
 *
 * Callers pass identifiers only; as a second line of defence, fields whose names say they hold
 * a secret or a text (token, preview, transcript, body, arguments, ...) are dropped, at any depth.
 *
 * @example
 * const logger = new StructuredLogger({ service: 'countersign' });
 * logger.info('run started', { runId }); // {"level":"INFO","message":"run started",...,"runId":"..."}
 */
export class StructuredLogger implements Logger {
  private readonly core: LineLogger;

  public constructor(options: StructuredLoggerOptions = {}) {
    this.core = new LineLogger(
      {
        ...(options.service === undefined ? {} : { serviceName: options.service }),
        ...(options.level === undefined ? {} : { logLevel: options.level }),
      },
      options.writeLine ?? writeLineToStdout,
    );
  }

  public debug(message: string, fields?: Record<string, unknown>): void {
    this.core.debug(message, this.entryFields(fields));
  }
  public info(message: string, fields?: Record<string, unknown>): void {
    this.core.info(message, this.entryFields(fields));
  }
  public warn(message: string, fields?: Record<string, unknown>): void {
    this.core.warn(message, this.entryFields(fields));
  }
  public error(message: string, fields?: Record<string, unknown>): void {
    this.core.error(message, this.entryFields(fields));
  }

  private entryFields(fields: Record<string, unknown> = {}): Record<string, unknown> {
    return { ...currentInvocationFields(), ...withoutSecretKeys(fields) };
  }
}

/** Powertools Logger whose finished lines go to a writer instead of its private console. */
class LineLogger extends PowertoolsLogger {
  private readonly lineWriter: LogLineWriter;

  public constructor(options: ConstructorParameters<typeof PowertoolsLogger>[0], writeLine: LogLineWriter) {
    super(options);
    this.lineWriter = writeLine;
  }

  protected override printLog(_logLevel: number, log: LogItem): void {
    log.prepareForPrint();
    // Powertools may warn from inside its own constructor, before the writer is assigned.
    (this.lineWriter ?? writeLineToStdout)(JSON.stringify(log.getAttributes(), this.getJsonReplacer()));
  }
}

const SECRET_KEY =
  /token|secret|password|authorization|cookie|preview|transcript|body|arguments|content|prompt/i;

/** Drops fields (at any depth) whose names say they carry a secret or a person's text. */
export function withoutSecretKeys(fields: Record<string, unknown>): Record<string, unknown> {
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
