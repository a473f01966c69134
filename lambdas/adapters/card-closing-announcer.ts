import { nameErrorClass } from '../core/errors.js';
import type { Clock, Logger, Metrics, RunNotifier, RunRepository } from '../core/ports.js';

/**
 * Tells the notifier (`Card Closed`) when a card stops taking decisions, on every path that
 * closes one (a decision delivered, a cancel, an expiry, a failure, a card reopened for review):
 * the channels update their messages from it. The repository says whether this closing was the
 * one that found the card open, so each card is announced once.
 *
 * Best effort: a notifier failure is logged and counted (`CardEventFailures`, which alarms) and
 * never fails the closing. A decision stands whether or not a channel hears of it, and a button
 * on a message that was not updated is refused by the decision itself.
 *
 * @example
 * const runs = announceClosedCards(meterRunRepository(repository, metrics), { notifier, clock, logger, metrics });
 */
export function announceClosedCards(
  runs: RunRepository,
  dependencies: {
    readonly notifier: Pick<RunNotifier, 'cardClosed'>;
    readonly clock: Clock;
    readonly logger: Logger;
    readonly metrics: Metrics;
  },
): RunRepository {
  const closeCard = async (...args: Parameters<RunRepository['closeCard']>) => {
    const [runId, because] = args;
    // The repository's own method, read at each call: a test may stand in for it.
    const outcome = await runs.closeCard(...args);
    if (outcome.kind !== 'closed') return outcome;
    try {
      await dependencies.notifier.cardClosed({
        runId,
        turn: outcome.turn,
        because,
        closedAt: dependencies.clock.now().toISOString(),
        approverGroups: outcome.approverGroups,
      });
    } catch (error) {
      dependencies.logger.error('card closed event failed', {
        runId,
        because,
        errorClass: nameErrorClass(error),
      });
      dependencies.metrics.count('CardEventFailures');
    }
    return outcome;
  };
  return new Proxy(runs, {
    get(target, property, receiver) {
      if (property === 'closeCard') return closeCard;
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    set(target, property, value, receiver) {
      // Setting the announcing method back (what a stand-in read and now restores) restores the
      // repository's own, instead of making the announcer call itself.
      if (property === 'closeCard' && value === closeCard) {
        return Reflect.deleteProperty(target, property);
      }
      return Reflect.set(target, property, value, receiver);
    },
  });
}
