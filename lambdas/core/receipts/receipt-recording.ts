import type { ApproverResponseStore } from '../analytics/approver-response.js';
import { recordApproverResponse } from '../analytics/record-approver-response.js';
import type { RunDependencies } from '../run-dependencies.js';
import type { ReceiptChainStore, ReceiptSigner } from './receipt-ports.js';
import { recordReceiptEntries } from './record-receipt-entries.js';

/** Where a function's receipt entries go and, in the deciding function alone, what signs them. */
export interface ReceiptDependencies {
  chain: ReceiptChainStore;
  /** Deployed, only the deciding function has one (kms:Sign is its alone). */
  signer?: ReceiptSigner;
  /** Approver analytics: each response an appended entry holds (and its metrics). */
  responses: ApproverResponseStore;
}

/** What a function that records receipt entries needs beside its use case's dependencies. */
export type RecordingDependencies = Pick<
  RunDependencies,
  'runs' | 'clock' | 'logger' | 'metrics' | 'settings' | 'receipts'
>;

/**
 * The dependencies of a function that records, with its run repository keeping the receipt
 * chain (record-receipt-entries.ts). `sign`: the deciding function, which records approvals and
 * decisions, signed; `append`: a function that cancels or expires runs, which may not sign (a
 * signer in its dependencies, as local mode shares one, is not used).
 *
 * @example
 * const routes = createDecisionRoutes(withReceiptRecording(dependencies, 'sign'));
 */
export function withReceiptRecording<Dependencies extends RecordingDependencies>(
  dependencies: Dependencies,
  role: 'sign' | 'append',
): Dependencies {
  const { receipts } = dependencies;
  // Read when used, not now: the rest of the dependencies stay live (a test moves the clock).
  const runs = recordReceiptEntries(dependencies.runs, {
    chain: receipts.chain,
    signer: role === 'sign' ? receipts.signer : undefined,
    clock: { now: () => dependencies.clock.now() },
    logger: dependencies.logger,
    get policyFloor() {
      return dependencies.settings.policyFloor;
    },
    ...(receipts.responses
      ? {
          onAppended: (entry) =>
            recordApproverResponse(
              {
                responses: receipts.responses as ApproverResponseStore,
                metrics: dependencies.metrics,
                logger: dependencies.logger,
              },
              entry,
            ),
        }
      : {}),
  });
  return new Proxy(dependencies, {
    get: (target, property, receiver) =>
      property === 'runs' ? runs : Reflect.get(target, property, receiver),
  });
}
