import type { Metrics, RunRepository } from '../core/ports.js';

/**
 * Measures the sealed bytes every write carries, so an operator sees state grow towards the
 * DynamoDB item limit (400 KB) before a write fails: `SealedStateBytes` per run state written,
 * `SealedCardBytes` per approval card (card and task token share one item and never overflow).
 *
 * A decorator, so neither the core nor the DynamoDB adapter carries metric code and both modes
 * measure the same thing.
 *
 * @example
 * const runs = meterRunRepository(new DynamoRunRepository({ ... }), metrics);
 */
export function meterRunRepository(runs: RunRepository, metrics: Metrics): RunRepository {
  return new Proxy(runs, {
    get(target, property, receiver) {
      if (property === 'createRun') {
        return (record: Parameters<RunRepository['createRun']>[0], sealedState: Uint8Array) => {
          metrics.observe('SealedStateBytes', sealedState.byteLength, 'Bytes');
          return target.createRun(record, sealedState);
        };
      }
      if (property === 'updateRun') {
        return (...args: Parameters<RunRepository['updateRun']>) => {
          const sealedState = args[2]?.sealedState;
          if (sealedState) metrics.observe('SealedStateBytes', sealedState.byteLength, 'Bytes');
          return target.updateRun(...args);
        };
      }
      if (property === 'putCard') {
        return (...args: Parameters<RunRepository['putCard']>) => {
          const [card] = args;
          metrics.observe(
            'SealedCardBytes',
            card.sealedCard.byteLength + card.sealedToken.byteLength,
            'Bytes',
          );
          return target.putCard(...args);
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
