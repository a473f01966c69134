import type { EscalationTimer } from '../core/approvals/escalation-ladder.js';
import { nameErrorClass } from '../core/errors.js';
import type { Clock, EscalationTimers, Logger } from '../core/ports.js';

/** Node's longest timeout (about 24.8 days); a later time is reached in hops. */
const LONGEST_TIMEOUT_MILLISECONDS = 2 ** 31 - 1;
/** A failed delivery is tried again, as Scheduler's retry policy does deployed. */
const DELIVERY_ATTEMPTS = 3;
const RETRY_DELAY_MILLISECONDS = 1_000;

export interface LocalEscalationTimersOptions {
  /** The escalate-card handler a due timer invokes, with the identifiers it carries. */
  readonly fire: (timer: Omit<EscalationTimer, 'at'>) => Promise<unknown>;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * `EscalationTimers` in the local process: one timer per step, invoking the same handler the
 * deployed schedule invokes (no polling). Keyed by run, turn and step, so arming a step again
 * changes nothing. A stopped process loses its timers; the restart re-enters each waiting run's
 * pause, which arms what its card still needs (a step already due fires at once).
 *
 * @example
 * const timers = new LocalEscalationTimers({ fire: (timer) => escalate(timer), clock, logger });
 * await timers.arm([{ runId, turn: 2, digest, step: 0, at: '2026-03-02T09:45:00.000Z' }]);
 */
export class LocalEscalationTimers implements EscalationTimers {
  private readonly armed = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  public constructor(private readonly options: LocalEscalationTimersOptions) {}

  public async arm(timers: readonly EscalationTimer[]): Promise<void> {
    for (const timer of timers) {
      const key = `${timer.runId}#${timer.turn}#${timer.step}`;
      if (this.stopped || this.armed.has(key)) continue;
      this.wait(key, timer);
    }
  }

  /** Clears every armed timer (the runtime stops). */
  public stop(): void {
    this.stopped = true;
    for (const timeout of this.armed.values()) clearTimeout(timeout);
    this.armed.clear();
  }

  private wait(key: string, timer: EscalationTimer): void {
    const remaining = Date.parse(timer.at) - this.options.clock.now().getTime();
    const hop = Math.min(Math.max(remaining, 0), LONGEST_TIMEOUT_MILLISECONDS);
    const timeout = setTimeout(() => {
      if (remaining > LONGEST_TIMEOUT_MILLISECONDS) return this.wait(key, timer);
      void this.deliver(key, timer, 1);
    }, hop);
    // A timer alone never keeps the process alive: the server does.
    timeout.unref();
    this.armed.set(key, timeout);
  }

  private async deliver(key: string, timer: EscalationTimer, attempt: number): Promise<void> {
    const { at: _at, ...identifiers } = timer;
    try {
      await this.options.fire(identifiers);
      this.armed.delete(key);
    } catch (error) {
      this.options.logger.warn('escalation timer delivery failed', {
        runId: timer.runId,
        attempt,
        errorClass: nameErrorClass(error),
      });
      if (this.stopped || attempt >= DELIVERY_ATTEMPTS) {
        this.armed.delete(key);
        return;
      }
      const retry = setTimeout(() => void this.deliver(key, timer, attempt + 1), RETRY_DELAY_MILLISECONDS);
      retry.unref();
      this.armed.set(key, retry);
    }
  }
}
