import { LogLevelThreshold, Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import type { Logger } from '../core/ports.js';
import { CountersignLogFormatter } from './countersign-log-formatter.js';

/** The log levels countersign configures (the construct's `logLevel` prop). */
export type StructuredLogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/** Where finished JSON lines go: stdout (CloudWatch Logs) by default, a capture in tests. */
export type LogLineWriter = (line: string) => void;

export interface StructuredLoggerOptions {
  /** @default - POWERTOOLS_SERVICE_NAME, else 'countersign' (with `writeLine`: 'countersign') */
  readonly service?: string;
  /** @default - POWERTOOLS_LOG_LEVEL (set by the construct), else 'INFO' (with `writeLine`: 'INFO') */
  readonly level?: StructuredLogLevel;
  /**
   * Where each line goes instead of stdout (the local mode's stderr, a test's capture).
   * @default - Powertools Logger prints each line on stdout
   */
  readonly writeLine?: LogLineWriter;
}

/** Writes one line to stdout: what Lambda ships to CloudWatch Logs and `npm start` prints. */
export const writeLineToStdout: LogLineWriter = (line) => {
  process.stdout.write(`${line}\n`);
};

/**
 * Structured JSON logs, one line per entry, shaped by {@link CountersignLogFormatter}: the
 * invocation's identifiers on every line, fields named like secrets dropped at any depth, an
 * error logged as its class only.
 *
 * Without `writeLine` (every Lambda), Powertools Logger prints the lines: level, sampling and
 * service from the POWERTOOLS_* variables the construct sets. Powertools offers no documented
 * way to send its lines elsewhere, so with `writeLine` the same formatter shapes the same line
 * and this class writes it.
 *
 * @example
 * const logger = new StructuredLogger({ service: 'countersign' });
 * logger.info('run started', { runId }); // {"level":"INFO","message":"run started",...,"runId":"..."}
 */
export class StructuredLogger implements Logger {
  private readonly print: (
    level: StructuredLogLevel,
    message: string,
    fields?: Record<string, unknown>,
  ) => void;

  public constructor(options: StructuredLoggerOptions = {}) {
    const formatter = new CountersignLogFormatter();
    const { writeLine } = options;
    if (writeLine === undefined) {
      const powertools = new PowertoolsLogger({
        logFormatter: formatter,
        ...(options.service === undefined ? {} : { serviceName: options.service }),
        ...(options.level === undefined ? {} : { logLevel: options.level }),
      });
      const methods = {
        DEBUG: powertools.debug,
        INFO: powertools.info,
        WARN: powertools.warn,
        ERROR: powertools.error,
      } as const;
      this.print = (level, message, fields) => methods[level].call(powertools, message, fields ?? {});
      return;
    }
    const serviceName = options.service ?? 'countersign';
    const threshold = LogLevelThreshold[options.level ?? 'INFO'];
    this.print = (level, message, fields = {}) => {
      if (LogLevelThreshold[level] < threshold) return;
      const item = formatter.formatAttributes(
        { logLevel: level, message, timestamp: new Date(), serviceName, sampleRateValue: 0, awsRegion: '' },
        fields,
      );
      item.prepareForPrint();
      writeLine(JSON.stringify(item.getAttributes()));
    };
  }

  public debug(message: string, fields?: Record<string, unknown>): void {
    this.print('DEBUG', message, fields);
  }
  public info(message: string, fields?: Record<string, unknown>): void {
    this.print('INFO', message, fields);
  }
  public warn(message: string, fields?: Record<string, unknown>): void {
    this.print('WARN', message, fields);
  }
  public error(message: string, fields?: Record<string, unknown>): void {
    this.print('ERROR', message, fields);
  }
}
