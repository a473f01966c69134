import { surfaceTransientFaults } from '../../adapters/aws-faults.js';
import { DynamoApproverResponseStore } from '../../adapters/dynamo/approver-response-store.js';
import { DynamoReceiptChainStore } from '../../adapters/dynamo/receipt-chain-store.js';
import { RunTable } from '../../adapters/dynamo/run-table.js';
import { systemClock } from '../../core/ports.js';
import type { ReceiptSigner } from '../../core/receipts/receipt-ports.js';
import type { ReceiptDependencies } from '../../core/receipts/receipt-recording.js';
import { lambdaEnvironment } from '../config.js';
import { awsRunStoreOptions } from './aws-base-dependencies.js';

let receipts: ReceiptDependencies | undefined;
let signing: ReceiptDependencies | undefined;

/**
 * Receipt chains and approver responses on the run table (docs/receipts.md): what the functions
 * that cancel or expire runs append to, GET /runs/{id}/receipt and the admin's analytics read.
 * No signer.
 */
export function awsReceipts(): ReceiptDependencies {
  receipts ??= createReceiptStores();
  return receipts;
}

/**
 * The deciding function's receipts: the chain and the KMS signer over the receipt key, whose ARN
 * only this function is told (a cold start without it fails, naming the variable).
 */
export function awsSigningReceipts(): ReceiptDependencies {
  const keyArn = lambdaEnvironment().COUNTERSIGN_RECEIPT_KEY_ARN;
  if (!keyArn) {
    throw new Error('countersign configuration is invalid: COUNTERSIGN_RECEIPT_KEY_ARN is not set.');
  }
  signing ??= { ...awsReceipts(), signer: createOnDemandKmsSigner(keyArn) };
  return signing;
}

/**
 * The KMS signer, loaded at the first signature: a request that records nothing (a refusal, a
 * repeat) never evaluates the KMS client, so the cold start does not pay for it.
 */
function createOnDemandKmsSigner(keyArn: string): ReceiptSigner {
  let signer: Promise<ReceiptSigner> | undefined;
  const load = (): Promise<ReceiptSigner> => {
    signer ??= Promise.all([
      import('@aws-sdk/client-kms'),
      import('../../adapters/kms-receipt-signer.js'),
    ]).then(
      ([{ KMSClient }, { KmsReceiptSigner }]) =>
        // A throttled or failing Sign is 'unavailable' (503), like the other clients' faults.
        new KmsReceiptSigner({ client: surfaceTransientFaults(new KMSClient({})), keyArn }),
    );
    return signer;
  };
  return {
    signingKeyId: async () => keyArn,
    sign: async (message) => (await load()).sign(message),
  };
}

/** The chain and the approver responses, kept like decision records (the same removal stamp). */
function createReceiptStores(): ReceiptDependencies {
  const { client, tableName, retention } = awsRunStoreOptions();
  const table = new RunTable(client, tableName, retention, systemClock);
  const removeAfter = () => table.decisionRemoval();
  return {
    chain: new DynamoReceiptChainStore({ client, tableName, removeAfter }),
    responses: new DynamoApproverResponseStore({ client, tableName, removeAfter }),
  };
}
