import type { Logger } from '../core/ports.js';

type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/**
 * Structured JSON logs, one line per entry, with persistent keys (service, correlation id).
 * Callers pass only safe fields; this logger also drops keys whose names say they are
 * secret, as a second line of defence.
 */
export class JsonLogger implements Logger {
  private readonly persistent: Record<string, unknown>;

  public constructor(
    private readonly options: {
      service: string;
      level?: Level;
      write?: (line: string) => void;
      persistent?: Record<string, unknown>;
    },
  ) {
    this.persistent = { ...options.persistent };
  }

  /** A logger that adds keys (run id, correlation id) to every entry. */
  public child(fields: Record<string, unknown>): JsonLogger {
    return new JsonLogger({ ...this.options, persistent: { ...this.persistent, ...fields } });
  }

  public debug(message: string, fields?: Record<string, unknown>): void {
    this.log('debug', message, fields);
  }
  public info(message: string, fields?: Record<string, unknown>): void {
    this.log('info', message, fields);
  }
  public warn(message: string, fields?: Record<string, unknown>): void {
    this.log('warn', message, fields);
  }
  public error(message: string, fields?: Record<string, unknown>): void {
    this.log('error', message, fields);
  }

  private log(level: Level, message: string, fields: Record<string, unknown> = {}): void {
    if (ORDER[level] < ORDER[this.options.level ?? 'info']) return;
    const entry = {
      level: level.toUpperCase(),
      timestamp: new Date().toISOString(),
      service: this.options.service,
      message,
      ...this.persistent,
      ...withoutSecretKeys(fields),
    };
    (this.options.write ?? ((line: string) => process.stdout.write(`${line}\n`)))(JSON.stringify(entry));
  }
}

const SECRET_KEY = /token|secret|password|authorization|preview|transcript|body|arguments/i;

function withoutSecretKeys(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([key]) => !SECRET_KEY.test(key)));
}
